#!/usr/bin/env python3
"""Writes the replay files of examples/g13 and bench/g13 with expectations
computed here, independently of gpurc (plain Python integer/float rules:
IEEE binary32/binary16 round-to-nearest-even via struct). Run from anywhere:
    python3 examples/g13/make_replays.py
"""
import json
import os
import random
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.join(HERE, "..", "..", "bench", "g13")
A, B, C, D = 0x100000, 0x200000, 0x300000, 0x400000
M32 = 0xFFFFFFFF


def uni(*addrs):
    """Uniform registers: each 64-bit address occupies u(2k), u(2k+1), low first."""
    u = {}
    for k, a in enumerate(addrs):
        u["u%d" % (2 * k)] = "0x%X" % (a & M32)
        u["u%d" % (2 * k + 1)] = "0x%X" % (a >> 32)
    return u


def buf(name, addr, size, init=None):
    b = {"name": name, "space": "global", "address": "0x%X" % addr, "size": size}
    if init is not None:
        b["init"] = init
    return b


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def f16_bits(x):
    """Round to binary16 (nearest even, gradual underflow); overflow -> inf, NaN -> G13's default NaN."""
    if x != x:
        return 0x7E00
    try:
        return struct.unpack("<H", struct.pack("<e", x))[0]
    except OverflowError:
        return 0xFC00 if x < 0 else 0x7C00


def f16_val(bits):
    return struct.unpack("<e", struct.pack("<H", bits))[0]


def write(path, doc):
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


def doc(name, asm, grid, block, uniforms, memory, expect, shared=0, asm_dir=""):
    launch = {"grid": grid, "block": block}
    if shared:
        launch["shared_bytes"] = shared
    return {"gpurc": 1, "isa": "g13", "name": name, "program": {"asm_file": asm_dir + asm},
            "launch": launch, "state": {"uniforms": uniforms}, "memory": memory, "expect": expect}


def vector_add(n_groups=4, block=100, seed=1, name="vector_add", asm_dir=""):
    rng = random.Random(seed)
    n = n_groups * block
    a = [f32(rng.uniform(-100, 100)) for _ in range(n)]
    b = [f32(rng.uniform(-100, 100)) for _ in range(n)]
    c = [f32(x + y) for x, y in zip(a, b)]  # exact sum of two floats, rounded once
    return doc(name, "vector_add.s", [n_groups], [block], uni(A, B, C),
               [buf("a", A, 4 * n, {"f32": a}), buf("b", B, 4 * n, {"f32": b}), buf("c", C, 4 * n)],
               {"memory": [{"name": "c", "f32": c}]}, asm_dir=asm_dir)


def reduction(groups=4, seed=2, name="reduction", asm_dir=""):
    rng = random.Random(seed)
    x = [rng.getrandbits(32) for _ in range(64 * groups)]
    sums = [sum(x[64 * g:64 * g + 64]) & M32 for g in range(groups)]
    return doc(name, "reduction.s", [groups], [64], uni(A, B),
               [buf("in", A, 4 * len(x), {"u32": x}), buf("sums", B, 4 * groups)],
               {"memory": [{"name": "sums", "u32": sums}]}, shared=256, asm_dir=asm_dir)


def nested(groups=2, block=80, seed=3, name="nested_if_while", asm_dir=""):
    rng = random.Random(seed)
    n = groups * block
    x = [rng.randrange(0, 160) for _ in range(n)]
    ys, ns, ts = [], [], []
    for v in x:
        ys.append((v + 1000 if v < 50 else v + 2000) if v < 100 else 7)
        t, k = v, 0
        while t >= 8:
            t -= 3
            k += 1
        ns.append(k)
        ts.append(t)
    return doc(name, "nested_if_while.s", [groups], [block], uni(A, B, C, D),
               [buf("x", A, 4 * n, {"u32": x}), buf("y", B, 4 * n), buf("n", C, 4 * n), buf("t", D, 4 * n)],
               {"memory": [{"name": "y", "u32": ys}, {"name": "n", "u32": ns}, {"name": "t", "u32": ts}]},
               asm_dir=asm_dir)


def loop_break(seed=4, name="loop_break"):
    rng = random.Random(seed)
    table = rng.sample(range(100), 16)
    n = 70  # 2 full SIMD-groups and a partial one
    keys = [rng.choice(table) if rng.random() < 0.7 else rng.randrange(100, 200) for _ in range(n)]
    out, steps = [], []
    for k in keys:
        idx, j = 99, 0
        while j < 16:
            if table[j] == k:
                idx = j
                break
            j += 1
        out.append(idx)
        steps.append(j)
    return doc(name, "loop_break.s", [1], [n], uni(A, B, C, D),
               [buf("key", A, 4 * n, {"u32": keys}), buf("table", B, 64, {"u32": table}),
                buf("out", C, 4 * n), buf("steps", D, 4 * n)],
               {"memory": [{"name": "out", "u32": out}, {"name": "steps", "u32": steps}]})


def half_float(seed=5, name="half_float"):
    rng = random.Random(seed)
    n = 96
    specials = [0.0, -0.0, 65504.0, 6.1e-5, 2.0 ** -24, 1.0, -1.0, 0.5]
    a = [f16_bits(specials[i] if i < len(specials) else rng.uniform(-300, 300)) for i in range(n)]
    b = [f16_bits(rng.uniform(-8, 8)) for _ in range(n)]
    d, e = [], []
    for x, y in zip(a, b):
        xa, yb = f16_val(x), f16_val(y)
        # f16 * f16 + f16 is exact in binary64, so one rounding to f16 models fmadd16.
        d.append(f16_bits(xa * yb + xa))
        s = f16_val(f16_bits(xa + yb))      # fadd16: rounded to f16
        e.append(f16_bits(s * 0.5))         # fmul16 by 0.5
    return doc(name, "half_float.s", [1], [n], uni(A, B, C, D),
               [buf("a", A, 2 * n, {"u16": a}), buf("b", B, 2 * n, {"u16": b}), buf("d", C, 2 * n), buf("e", D, 2 * n)],
               {"memory": [{"name": "d", "u16": d}, {"name": "e", "u16": e}]})


def shuffle_ballot(seed=6, name="shuffle_ballot"):
    rng = random.Random(seed)
    block = 48  # SIMD-group 1 has 16 launched threads
    groups = 2
    n = groups * block
    x = [rng.randrange(0, 100) for _ in range(n)]
    vote, mixed = [], []
    for g in range(groups):
        for sg in range(2):
            first = g * block + 32 * sg
            lanes = min(32, block - 32 * sg)
            bits = 0
            for l in range(lanes):
                if x[first + l] < 50:
                    bits |= 1 << l
            for l in range(lanes):
                vote.append(bits)
                mixed.append((x[first + (l ^ 1)] + x[first]) & M32)
    return doc(name, "shuffle_ballot.s", [groups], [block], uni(A, B, C),
               [buf("x", A, 4 * n, {"u32": x}), buf("vote", B, 4 * n), buf("mixed", C, 4 * n)],
               {"memory": [{"name": "vote", "u32": vote}, {"name": "mixed", "u32": mixed}]})


def call_ret(seed=7, name="call_ret"):
    rng = random.Random(seed)
    n = 64
    x = [rng.getrandbits(32) for _ in range(n)]
    out = [(4 * v + 21) & M32 for v in x]
    return doc(name, "call_ret.s", [2], [32], uni(A, B),
               [buf("x", A, 4 * n, {"u32": x}), buf("out", B, 4 * n)], {"memory": [{"name": "out", "u32": out}]})


def int64_accum(groups=1, block=40, seed=8, name="int64_accum", asm_dir=""):
    rng = random.Random(seed)
    n = groups * block
    a = [rng.getrandbits(32) | (0xF0000000 if rng.random() < 0.5 else 0) for _ in range(8 * n)]
    sums = [sum(a[8 * i:8 * i + 8]) for i in range(n)]
    return doc(name, "int64_accum.s", [groups], [block], uni(A, B),
               [buf("a", A, 4 * len(a), {"u32": a}), buf("sum", B, 8 * n)],
               {"memory": [{"name": "sum", "u64": sums}]}, asm_dir=asm_dir)


def int_hash(groups=2, block=48, seed=9, name="int_hash", asm_dir=""):
    rng = random.Random(seed)
    n = groups * block
    a = [rng.getrandbits(32) for _ in range(n)]
    h = []
    for x in a:
        for _ in range(64):
            x = (x * 1664525 + 1013904223) & M32
            x ^= (x + (x << 4)) & M32
        h.append(x)
    u = uni(A, B)
    u["u4"] = "0x%X" % 1664525
    u["u5"] = "0x%X" % 1013904223
    return doc(name, "int_hash.s", [groups], [block], u,
               [buf("a", A, 4 * n, {"u32": a}), buf("h", B, 4 * n)],
               {"memory": [{"name": "h", "u32": h}]}, asm_dir=asm_dir)


def main():
    examples = [vector_add(), reduction(), nested(), loop_break(), half_float(), shuffle_ballot(), call_ret(),
                int64_accum(), int_hash()]
    for d in examples:
        write(os.path.join(HERE, d["name"] + ".json"), d)
    # Benchmarks (measurements, not tests): bigger launches of four of the
    # kernels -- arithmetic (64-bit accumulation loop with a load per step;
    # `alu`: the integer hash, 64 rounds of 32-bit ALU work per load), memory
    # (vector add), divergent (nested if/else and a data-dependent while
    # loop) -- with generated inputs and no expect (the examples above check
    # the results).
    os.makedirs(BENCH, exist_ok=True)
    rel = "../../examples/g13/"

    def bench(d, inputs):
        d["program"]["asm_file"] = rel + d["program"]["asm_file"]
        for b in d["memory"]:
            b.pop("init", None)
            if b["name"] in inputs:
                b["init"] = {"random": inputs[b["name"]]}
        del d["expect"]
        return d

    write(os.path.join(BENCH, "arith.json"),
          bench(int64_accum(groups=64, block=256, name="arith"), {"a": {"seed": 11, "type": "u32"}}))
    write(os.path.join(BENCH, "alu.json"),
          bench(int_hash(groups=64, block=256, name="alu"), {"a": {"seed": 15, "type": "u32"}}))
    write(os.path.join(BENCH, "memory.json"),
          bench(vector_add(n_groups=256, block=256, name="memory"),
                {"a": {"seed": 12, "type": "f32", "min": -100, "max": 100},
                 "b": {"seed": 13, "type": "f32", "min": -100, "max": 100}}))
    write(os.path.join(BENCH, "divergent.json"),
          bench(nested(groups=64, block=256, name="divergent"), {"x": {"seed": 14, "type": "u32", "min": 0, "max": 159}}))

if __name__ == "__main__":
    main()
