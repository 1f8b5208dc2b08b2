#!/usr/bin/env python3
"""Writes the replay files of examples/tesla and bench/tesla.

Expectations are computed here from what each kernel is meant to do (plain
Python arithmetic), independently of gpurc's interpreter and JIT. Run from
anywhere: python3 examples/tesla/make_replays.py
"""
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.join(HERE, "..", "..", "bench", "tesla")


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def lcg(n, seed):
    out, s = [], seed
    for _ in range(n):
        s = (s * 1103515245 + 12345) & 0xffffffff
        out.append(s >> 8)
    return out


def write(path, doc):
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


def doc(name, asm, grid, block, params, memory, expect=None, shared=None, desc=None, asm_dir=""):
    d = {"gpurc": 1, "isa": "tesla", "variant": "g200", "name": name}
    if desc:
        d["description"] = desc
    d["program"] = {"asm_file": asm_dir + asm}
    d["launch"] = {"grid": grid, "block": block}
    if shared:
        d["launch"]["shared_bytes"] = shared
    d["state"] = {"params": {"u32": params}}
    d["memory"] = memory
    if expect:
        d["expect"] = {"memory": expect}
    return d


def saxpy(threads_x, blocks, n, path, asm_dir=""):
    total = threads_x * blocks
    a = 2.0
    y = [f32(a * i + i) if i < n else float(i) for i in range(total)]
    return doc("saxpy", "saxpy.asm", [blocks], [threads_x], ["0x100000", "0x200000", "0x40000000", n],
               [{"name": "x", "address": "0x100000", "size": 4 * total, "init": {"iota": "f32"}},
                {"name": "y", "address": "0x200000", "size": 4 * total, "init": {"iota": "f32"}}],
               [{"name": "y", "f32": y}], desc="y = 2 x + y on iota inputs, the last threads past n", asm_dir=asm_dir)


def reduce(threads_x, blocks, asm_dir=""):
    total = threads_x * blocks
    out = [sum(range(b * threads_x, (b + 1) * threads_x)) & 0xffffffff for b in range(blocks)]
    return doc("reduce", "reduce.asm", [blocks], [threads_x], ["0x100000", "0x200000"],
               [{"name": "x", "address": "0x100000", "size": 4 * total, "init": {"iota": "u32"}},
                {"name": "out", "address": "0x200000", "size": 4 * blocks}],
               [{"name": "out", "u32": out}], shared=0x40 + 4 * threads_x,
               desc="per-block sums of iota in shared memory with bar", asm_dir=asm_dir)


def divergent(threads_x, blocks, n, asm_dir=""):
    total = threads_x * blocks
    y = [(3 * i + 1 if i % 2 else i // 2) if i < n else 0xdeadbeef for i in range(total)]
    return doc("divergent", "divergent.asm", [blocks], [threads_x], ["0x100000", "0x200000", n],
               [{"name": "x", "address": "0x100000", "size": 4 * total, "init": {"iota": "u32"}},
                {"name": "y", "address": "0x200000", "size": 4 * total, "init": {"fill": "0xdeadbeef"}}],
               [{"name": "y", "u32": y}], desc="one Collatz step: odd and even lanes take different sides",
               asm_dir=asm_dir)


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def hash_out(v):
    """hash.asm for one thread: f32 ops are IEEE round-to-nearest (a double
    product or sum of two floats rounded once to f32 is correctly rounded);
    every value stays normal, so flush-to-zero never applies."""
    h = v
    a = f32(float(h & 0xff) + 1.0)
    y = f32(1.0 / 256)
    for k in range(32, 0, -1):
        h ^= h >> 13
        h = ((h & 0xffffff) * 0x1b3c6d) & 0xffffffff
        h = (h + k) & 0xffffffff
        t = f32(a * y)
        t = f32(2.0 - t)
        y = f32(y * t)
    return h ^ f32_bits(y)


def hash_kernel(threads_x, blocks, n, xs, full=True, asm_dir=""):
    total = threads_x * blocks
    out = [hash_out(xs[i]) if i < n else 0 for i in range(total)]
    if not full:
        out = out[:64]
    return doc("hash", "hash.asm", [blocks], [threads_x], ["0x100000", "0x200000", n],
               [{"name": "x", "address": "0x100000", "size": 4 * total, "init": {"u32": xs}},
                {"name": "out", "address": "0x200000", "size": 4 * total}],
               [{"name": "out", "u32": out}],
               desc="ALU-bound: 32 rounds of an integer hash and an f32 Newton step per thread", asm_dir=asm_dir)


def collatz_steps(v):
    s = 0
    while v > 1:
        v = 3 * v + 1 if v % 2 else v // 2
        s += 1
    return s


ex = {}
ex["saxpy"] = saxpy(64, 4, 250, None)
ex["reduce"] = reduce(128, 8)
total = 4 * 128
ex["scan"] = doc("scan", "scan.asm", [4], [128], ["0x100000", "0x200000"],
                 [{"name": "x", "address": "0x100000", "size": 4 * total, "init": {"iota": "u32"}},
                  {"name": "y", "address": "0x200000", "size": 4 * total}],
                 [{"name": "y", "u32": [sum(range(i - i % 128, i + 1)) for i in range(total)]}], shared=0x40 + 4 * 128,
                 desc="inclusive prefix sums of iota within each block")
ex["divergent"] = divergent(96, 2, 190)
xs = [i + 1 for i in range(128)]
ex["collatz"] = doc("collatz", "collatz.asm", [2], [64], ["0x100000", "0x200000", 128],
                    [{"name": "x", "address": "0x100000", "size": 512, "init": {"u32": xs}},
                     {"name": "steps", "address": "0x200000", "size": 512}],
                    [{"name": "steps", "u32": [collatz_steps(v) for v in xs]}],
                    desc="data-dependent loop left with break (Collatz step counts of 1..128)")
ex["call"] = doc("call", "call.asm", [2], [64], ["0x100000", "0x200000", 120],
                 [{"name": "x", "address": "0x100000", "size": 512, "init": {"iota": "u32"}},
                  {"name": "y", "address": "0x200000", "size": 512}],
                 [{"name": "y", "u32": [(i * i + 7 + (i + 1) * (i + 1) + 7) if i < 120 else 0 for i in range(128)]}],
                 desc="a subroutine called twice per thread")
hx = lcg(1024, 7)
bins = [0] * 16
for v in hx[:1000]:
    bins[v & 15] += 1
h = doc("histogram", "histogram.asm", [8], [128], ["0x100000", "0x200000", "0x300000", 1000],
        [{"name": "x", "address": "0x100000", "size": 4096, "init": {"u32": hx}},
         {"name": "bins", "address": "0x200000", "size": 64},
         {"name": "total", "address": "0x300000", "size": 4}],
        [{"name": "bins", "u32": bins}, {"name": "total", "u32": [1000]}],
        desc="red add / atomic add from every block (blocks may run on several host threads)")
h["state"]["const"] = {"c0": {"u32": [15]}}
ex["histogram"] = h
T = 128
ex["dot64"] = doc("dot64", "dot64.asm", [4], [32], ["0x100000", "0x200000", "0x300000", "0x400000", T],
                  [{"name": "x", "address": "0x100000", "size": 8 * 4 * T, "init": {"iota": "f64"}},
                   {"name": "y", "address": "0x200000", "size": 8 * 4 * T, "init": {"fill": "0x3FE0000000000000"}},
                   {"name": "partial", "address": "0x300000", "size": 8 * T},
                   {"name": "out", "address": "0x400000", "size": 8 * 4}],
                  [{"name": "partial", "f64": [0.5 * sum(t + T * k for k in range(4)) for t in range(T)]},
                   {"name": "out", "f64": [0.5 * sum(t + T * k for t in range(32 * b, 32 * b + 32) for k in range(4))
                                           for b in range(4)]}],
                  desc="f64 fma dot product of iota and 0.5 (exact sums), G200")
vx = [float(i) for i in range(200)]
ex["vecadd"] = {"gpurc": 1, "isa": "tesla", "name": "vecadd", "description": "the text .cubin with its kernel name",
                "program": {"binary_file": "vecadd.cubin", "kernel": "vecadd"},
                "launch": {"grid": [2], "block": [128]},
                "state": {"params": {"u32": ["0x100000", "0x200000", "0x300000", 200]}},
                "memory": [{"name": "a", "address": "0x100000", "size": 1024, "init": {"iota": "f32"}},
                           {"name": "b", "address": "0x200000", "size": 1024, "init": {"iota": "f32"}},
                           {"name": "c", "address": "0x300000", "size": 1024}],
                "expect": {"memory": [{"name": "c", "f32": [2 * v for v in vx] + [0.0] * 56}]}}
ex["hash"] = hash_kernel(64, 3, 180, lcg(192, 11))

# Real CUDA 1.0 nvcc output for sm_10, byte for byte from decuda's tests
# (github.com/laanwj/decuda tests/test8r.cubin and tests/test30.cubin, next to
# their .cu sources). That compiler addresses global memory as g14[]: the
# buffers live at (14 << 32) + the pointer; pointer parameters are 8 bytes
# apart (a 64-bit host).
G14 = 14 << 32


def s24(v):
    v &= 0xffffff
    return v - (1 << 24) if v >> 23 else v


def nvcc10(name, kernel, grid, block, params, memory, expect, desc):
    return {"gpurc": 1, "isa": "tesla", "variant": "g80", "name": name, "description": desc,
            "program": {"binary_file": name + ".cubin", "kernel": kernel},
            "launch": {"grid": grid, "block": block}, "state": {"params": {"u32": params}},
            "memory": memory, "expect": {"memory": expect}}


my, mz = 0xff923456, (-3) & 0xffffffff
ex["nvcc10_mul24"] = nvcc10(
    "nvcc10_mul24", "my_kernel", [2], [64], [0x100, 0, 0x200, 0, 0x300, 0],
    [{"name": "x", "address": hex(G14 + 0x100), "size": 4},
     {"name": "y", "address": hex(G14 + 0x200), "size": 4, "init": {"u32": [my]}},
     {"name": "z", "address": hex(G14 + 0x300), "size": 4, "init": {"u32": [mz]}}],
    [{"name": "x", "u32": [(s24(my) * s24(mz)) & 0xffffffff]}],
    "*x = __mul24(*y, *z): the top byte of *y is ignored, 24-bit signed product")
ex["nvcc10_bra_test"] = nvcc10(
    "nvcc10_bra_test", "bra_test", [1], [1], [0x100, 0],
    [{"name": "data", "address": hex(G14 + 0x100), "size": 24, "init": {"fill": "0xabcd"}}],
    [{"name": "data", "u16": [0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1]}],
    "short data[12] = blockIdx, threadIdx, blockDim, gridDim (one thread: more would race on the shorts)")


def vertex_transform(blocks, threads_x):
    """Vertex program: o[0..3] = M p (row-major M in c0, each row summed in
    the program's order: the products are exact, so fmad's truncated product
    and rounding do not show), o[4..7] = the colour a[4..7]."""
    m = [0, -1, 0, 2,  1, 0, 0, -3,  0, 0, 2, 0.5,  0, 0, 0, 1]
    n = blocks * threads_x
    attrs, outs = [], []
    for i in range(n):
        p = [(i % 7) - 3, ((i * 3) % 5) - 2, i * 0.5, 1.0]
        col = [i / 8, 1 - i / 64, 0.25 * (i % 4), 1.0]
        o = []
        for r in range(4):
            acc = p[0] * m[4 * r]
            for k in range(1, 4):
                acc = p[k] * m[4 * r + k] + acc
            o.append(acc)
        attrs.append(p + col)
        outs.append(o + col)
    return {"gpurc": 1, "isa": "tesla", "variant": "g200:vp", "name": "vertex_transform",
            "description": "vertex program: a[] position times the c0 matrix into o[], colour copied through $a1",
            "program": {"asm_file": "vertex_transform.asm", "attr_bytes": 32},
            "launch": {"grid": [blocks], "block": [threads_x]},
            "state": {"const": {"c0": {"f32": m}}},
            "inputs": {"a": {"f32x8": attrs}},
            "expect": {"outputs": {"o": {"f32x8": outs}}}}


ex["vertex_transform"] = vertex_transform(2, 40)


def device_vars():
    """decuda test36 (nvcc 1.0; source in decuda's svn tree, tests/test36.cu):
    for x < 10: y = data[x-2]; data2[x] = data[x]; data2[x+2] = y >> 16;
    data[0] = uu; data[1] = vv; data[x] = ww[x] for x < 10; xx = uu; xx2 = &xx.
    data points 8 bytes into its buffer (data[-2], data[-1] are read). The
    __device__ variables follow the g14 buffers in the cubin's order: xx2 at
    0x210 (data2 ends at 0x20c; 16-byte aligned), xx at 0x220."""
    base = [((j + 1) * 0x01000000 + (j + 3) * 0x00110000 + j * 0x100 + 0x40 + j) & 0xffffffff for j in range(12)]
    data = lambda x: base[x + 2]
    data2 = [0] * 12
    for x in range(10):
        y = data(x - 2)
        data2[x] = data(x) & 0xff
        data2[x + 2] = (y >> 16) & 0xff
    uu, ww = 0xdeadbeef, [1000 + 7 * i for i in range(10)]
    out = base[:2] + ww
    xx_addr = 0x220
    return {"gpurc": 1, "isa": "tesla", "variant": "g80", "name": "nvcc10_device_vars",
            "description": "decuda test36: __constant__ uu/vv/ww (state.symbols) and __device__ xx/xx2 (cubin reloc: "
                           "g14 buffers, addresses in c14)",
            "program": {"binary_file": "nvcc10_device_vars.cubin", "kernel": "f_test"},
            "launch": {"grid": [1], "block": [1]},
            "state": {"params": {"u32": [G14_OFF_DATA + 8, 0, G14_OFF_DATA2, 0]},
                      "symbols": {"uu": {"u32": [uu]}, "vv": {"i16": [-5]}, "ww": {"u32": ww}}},
            "memory": [{"name": "data", "address": hex(G14 + G14_OFF_DATA), "size": 48, "init": {"u32": base}},
                       {"name": "data2", "address": hex(G14 + G14_OFF_DATA2), "size": 12}],
            "expect": {"memory": [{"name": "data", "u32": out}, {"name": "data2", "u8": data2},
                                  {"name": "cubin module xx g14", "u32": [uu]},
                                  {"name": "cubin module xx2 g14", "u32": [xx_addr, 0]}]}}


G14_OFF_DATA, G14_OFF_DATA2 = 0x100, 0x200
ex["nvcc10_device_vars"] = device_vars()
for name, d in ex.items():
    write(os.path.join(HERE, name + ".json"), d)

# Benchmarks: 64K threads each (without full expect lists: a few values suffice).
os.makedirs(BENCH, exist_ok=True)
b = saxpy(256, 256, 65536, None, asm_dir="../../examples/tesla/")
b["expect"]["memory"][0]["f32"] = b["expect"]["memory"][0]["f32"][:64]
write(os.path.join(BENCH, "saxpy.json"), b)
b = reduce(256, 256, asm_dir="../../examples/tesla/")
write(os.path.join(BENCH, "reduce.json"), b)
b = divergent(256, 256, 65536, asm_dir="../../examples/tesla/")
b["expect"]["memory"][0]["u32"] = b["expect"]["memory"][0]["u32"][:64]
write(os.path.join(BENCH, "divergent.json"), b)
# The input is iota so the bench file stays small; x & 0xff still varies.
b = hash_kernel(256, 256, 65536, list(range(65536)), full=False, asm_dir="../../examples/tesla/")
b["memory"][0]["init"] = {"iota": "u32"}
write(os.path.join(BENCH, "hash.json"), b)
