// A function of clustered cross-lane ops (docs/ir.md "Clusters") under
// a partial launch and a partial mask operand, with results worked out by
// hand. The IR interpreter test (tests/ir/cluster_test.cpp) and the JIT tier
// test (tests/backend_x64/control.cpp) run the same text against the same
// table.
#pragma once
#include <cstdint>

namespace irtest::cluster {

// Lanes 0 and 8..11 are not launched.
constexpr uint32_t kEntryMask = 0xFFFFF0FEu;
// Var "m" (the mask operand of the votes, reduces and scans) in each lane:
// every lane but 5 and 14. Lanes taking part (launched and in m):
// 1-4, 6, 7, 12, 13, 15, 16-31.
constexpr uint32_t kMaskLanes = ~((1u << 5) | (1u << 14));

// p = lane is odd, x = lane + 100, the cluster width is the immediate.
inline const char* const kProgram = R"(func "clusters" {
  var "m" i1
  var "ballot8" i32
  var "ballot1" i32
  var "ballot32" i32
  var "any4" i1
  var "any2" i1
  var "all2" i1
  var "all1" i1
  var "shuffle4" i32
  var "shuffle16" i32
  var "shuffle1" i32
  var "bcast8" i32
  var "reduce8" i32
  var "umax2" i32
  var "scan_incl4" i32
  var "scan_excl8" i32
  var "fsum16" f32
b0:
  %0 = load_var i1 #0x0
  %1 = lane_id i32
  %2 = trunc i1 %1
  %3 = const i32 #0x64
  %4 = iadd i32 %1, %3
  %5 = const i32 #0x1
  %6 = iadd i32 %1, %5
  %7 = const i32 #0x2
  %8 = iadd i32 %1, %7
  %9 = const i32 #0x25
  %10 = and i32 %1, %7
  %11 = const i32 #0x0
  %12 = icmp.ne i1 %10, %11
  %13 = itof.u f32 %1
  %20 = ballot i32 %2, %0, #0x8
  store_var %20, #0x1
  %21 = ballot i32 %2, %0, #0x1
  store_var %21, #0x2
  %22 = ballot i32 %2, %0, #0x20
  store_var %22, #0x3
  %23 = any i1 %2, %0, #0x4
  store_var %23, #0x4
  %24 = any i1 %2, %0, #0x2
  store_var %24, #0x5
  %25 = all i1 %2, %0, #0x2
  store_var %25, #0x6
  %26 = all i1 %2, %0, #0x1
  store_var %26, #0x7
  %27 = shuffle i32 %4, %6, #0x4
  store_var %27, #0x8
  %28 = shuffle i32 %4, %9, #0x10
  store_var %28, #0x9
  %29 = shuffle i32 %4, %9, #0x1
  store_var %29, #0xa
  %30 = broadcast i32 %4, %8, #0x8
  store_var %30, #0xb
  %31 = reduce.add i32 %1, %0, #0x8
  store_var %31, #0xc
  %32 = reduce.umax i32 %1, %12, #0x2
  store_var %32, #0xd
  %33 = scan_incl.add i32 %5, %0, #0x4
  store_var %33, #0xe
  %34 = scan_excl.add i32 %1, %0, #0x8
  store_var %34, #0xf
  %35 = reduce.fadd f32 %13, %0, #0x10
  store_var %35, #0x10
  return
}
)";

struct Expect {
  uint32_t var;
  unsigned lane;
  uint64_t value;
};

// Only launched lanes, and no result that reads an unlaunched lane's value.
inline const Expect kExpect[] = {
    // ballot, 8 lanes: the cluster's taking-part odd lanes, from bit 0.
    {1, 1, 0x8A}, {1, 7, 0x8A},    // lanes 1, 3, 7 of 0..7
    {1, 12, 0xA0}, {1, 15, 0xA0},  // lanes 13, 15 of 8..15 (14 not in m)
    {1, 20, 0xAA}, {1, 31, 0xAA},
    // ballot, 1 lane: the lane's own bit.
    {2, 3, 1}, {2, 4, 0}, {2, 5, 0}, {2, 13, 1}, {2, 14, 0},
    // ballot, whole warp: the same bits as the 8-lane clusters side by side.
    {3, 1, 0xAAAAA08Au}, {3, 30, 0xAAAAA08Au},
    // any, 4 lanes: every cluster has a taking-part odd lane (lane 4 is even).
    {4, 4, 1}, {4, 12, 1}, {4, 16, 1},
    // any, 2 lanes: in lanes 4-5 only 4 takes part, and it is even.
    {5, 1, 1}, {5, 4, 0}, {5, 5, 0}, {5, 6, 1}, {5, 14, 1},
    // all, 2 lanes: 0-1 (only 1 takes part) and 14-15 (only 15) hold.
    {6, 1, 1}, {6, 2, 0}, {6, 3, 0}, {6, 4, 0}, {6, 5, 0}, {6, 14, 1}, {6, 15, 1}, {6, 16, 0},
    // all, 1 lane: a lane outside m holds vacuously.
    {7, 3, 1}, {7, 4, 0}, {7, 5, 1}, {7, 12, 0}, {7, 14, 1},
    // shuffle, 4 lanes, index lane + 1: wraps inside the cluster.
    {8, 2, 103}, {8, 6, 107}, {8, 7, 104}, {8, 13, 114}, {8, 15, 112}, {8, 31, 128},
    // shuffle, 16 lanes, index 37: lane 5 of each half.
    {9, 2, 105}, {9, 15, 105}, {9, 20, 121}, {9, 31, 121},
    // shuffle, 1 lane: the lane itself.
    {10, 7, 107}, {10, 25, 125},
    // broadcast, 8 lanes, index lane + 2 read from the cluster's first
    // launched lane: 1 -> lane 3, 12 -> lane 14, 16 -> lane 18, 24 -> lane 26.
    {11, 1, 103}, {11, 7, 103}, {11, 12, 114}, {11, 15, 114}, {11, 23, 118}, {11, 24, 126},
    // reduce add of the lane number, 8 lanes.
    {12, 1, 23}, {12, 7, 23},  // 1 + 2 + 3 + 4 + 6 + 7
    {12, 13, 40},              // 12 + 13 + 15
    {12, 16, 156}, {12, 31, 220},
    // reduce umax, 2 lanes, over lanes with bit 1 set: none in 4-5 or 12-13 (identity 0).
    {13, 2, 3}, {13, 4, 0}, {13, 5, 0}, {13, 6, 7}, {13, 13, 0}, {13, 14, 15},
    // inclusive scan of 1, 4 lanes: taking-part lanes from the cluster start.
    {14, 1, 1}, {14, 2, 2}, {14, 3, 3}, {14, 4, 1}, {14, 5, 1}, {14, 6, 2}, {14, 7, 3},
    {14, 12, 1}, {14, 13, 2}, {14, 14, 2}, {14, 15, 3}, {14, 16, 1}, {14, 19, 4},
    // exclusive scan of the lane number, 8 lanes.
    {15, 1, 0}, {15, 2, 1}, {15, 3, 3}, {15, 4, 6}, {15, 5, 10}, {15, 6, 10}, {15, 7, 16},
    {15, 12, 0}, {15, 13, 12}, {15, 14, 25}, {15, 15, 25}, {15, 16, 0}, {15, 17, 16}, {15, 23, 133},
    // reduce fadd, 16 lanes: 63.0 (1+2+3+4+6+7+12+13+15) and 376.0 (16+...+31).
    {16, 3, 0x427C0000u}, {16, 15, 0x427C0000u}, {16, 16, 0x43BC0000u}, {16, 30, 0x43BC0000u},
};

}  // namespace irtest::cluster
