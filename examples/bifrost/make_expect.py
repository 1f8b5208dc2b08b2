#!/usr/bin/env python3
"""Writes the "expect" section of every Bifrost example replay file.

The expected results are computed here from the kernels' meaning (IEEE-754
arithmetic in Python, exact integer arithmetic), independently of gpurc, so
`gpurc replay` checks the interpreter against them. Run after editing an
example's inputs: python3 examples/bifrost/make_expect.py
"""
import json
import fractions
import math
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def f32_bits(x):
    return struct.unpack('<I', struct.pack('<f', x))[0]


def bits_f32(b):
    return struct.unpack('<f', struct.pack('<I', b & 0xffffffff))[0]


def f16_bits(x):
    if math.isnan(x):
        return 0x7e00
    try:
        return struct.unpack('<H', struct.pack('<e', x))[0]
    except OverflowError:
        return 0x7c00 if x > 0 else 0xfc00


def bits_f16(b):
    return struct.unpack('<e', struct.pack('<H', b & 0xffff))[0]


def init_values(buf, kind, count):
    init = buf.get('init', {})
    if 'iota' in init:
        return [float(i) if kind == 'f32' else i for i in range(count)]
    for key in ('f32', 'u32', 'u64'):
        if key in init:
            vals = []
            for v in init[key]:
                if isinstance(v, str):
                    if v == 'inf':
                        v = math.inf
                    elif v == '-inf':
                        v = -math.inf
                    elif key == 'f32':
                        v = bits_f32(int(v, 16))
                    else:
                        v = int(v, 16)
                vals.append(v)
            return vals + [0] * (count - len(vals))
    return [0] * count


def buffer(doc, name):
    return next(b for b in doc['memory'] if b['name'] == name)


def hexes(vals):
    return ['0x%08x' % v for v in vals]


def vector_add(doc):
    n = 48
    a = init_values(buffer(doc, 'a'), 'f32', n)
    b = init_values(buffer(doc, 'b'), 'f32', n)
    return {'memory': [{'name': 'c', 'u32': hexes(f32_bits(x + y) for x, y in zip(a, b))}]}


def reduction(doc):
    a = init_values(buffer(doc, 'a'), 'f32', 32)
    out = []
    for g in range(32):
        grp = a[(g // 16) * 16:(g // 16) * 16 + 16]
        out.append(f32_bits(sum(grp)))  # integers: exact in any order
    return {'memory': [{'name': 'out', 'u32': hexes(out)}]}


def divergent(doc):
    a = init_values(buffer(doc, 'a'), 'f32', 20)
    out = [f32_bits((x + x if g % 2 else x + 100.0) + 1.0) for g, x in enumerate(a)]
    return {'memory': [{'name': 'out', 'u32': hexes(out)}]}


def loop(doc):
    return {'memory': [{'name': 'out', 'u32': [sum(range(g + 3)) for g in range(13)]}]}


def fp16(doc):
    a = init_values(buffer(doc, 'a'), 'u32', 8)
    out = []
    for v in a:
        lo, hi = v & 0xffff, v >> 16
        halves = []
        for h, other in ((lo, hi), (hi, lo)):
            x = bits_f16(h)
            y = bits_f16(f16_bits(x * x + 1.0))  # one rounding (exact in double)
            r = y + bits_f16(other)
            halves.append(f16_bits(r))
        out.append(halves[0] | (halves[1] << 16))
    return {'memory': [{'name': 'out', 'u32': hexes(out)}]}


def rcp_rsqrt(doc):
    a = init_values(buffer(doc, 'a'), 'f32', 16)
    rcp, rsq = [], []
    for x in a:
        rcp.append(f32_bits(math.inf if x == 0 else 1.0 / x))
        rsq.append(f32_bits(math.inf if x == 0 else 0.0 if math.isinf(x) else 1.0 / math.sqrt(x)))
    return {'memory': [{'name': 'rcp', 'f32': hexes(rcp)}, {'name': 'rsq', 'f32': hexes(rsq)}],
            'tolerance': {'ulp': 2}}


def int64(doc):
    a = init_values(buffer(doc, 'a'), 'u64', 8)
    b = init_values(buffer(doc, 'b'), 'u64', 8)
    c = []
    for x, y in zip(a, b):
        s = (x + y) & (2**64 - 1)
        c += [s & 0xffffffff, s >> 32]
    return {'memory': [{'name': 'c', 'u32': hexes(c)}]}


def f32_round(x):
    """The f32 nearest to the float x (x must be the exact value), NaN canonical."""
    if math.isnan(x):
        return 0x7fc00000
    try:
        return f32_bits(x)
    except OverflowError:
        return 0x7f800000 if x > 0 else 0xff800000


def pair64(doc):
    # Every operation runs on the low words and on the high words (a 64-bit clause).
    a = init_values(buffer(doc, 'a'), 'f32', 16)
    b = init_values(buffer(doc, 'b'), 'f32', 16)
    u = doc['state']['uniforms']
    k = [bits_f32(int(u['u6'], 16)), bits_f32(int(u['u7'], 16))]
    c, d, e = [], [], []
    for i in range(16):
        x, y = bits_f32(f32_bits(a[i])), bits_f32(f32_bits(b[i]))
        prod = x * y  # exact in double (24 + 24 bits)
        s = prod + k[i % 2]
        # Rounding to double then to f32 equals one rounding unless the double
        # is exactly halfway between two f32 values (the exact sum and the
        # double are on the same side of every f32 midpoint, itself a double).
        if math.isfinite(s) and abs(s) < 3.4e38:
            lo = bits_f32(f32_bits(s))
            nxt = bits_f32(f32_bits(s) + (1 if (s > lo) == (s > 0) else -1) * (1 if s != lo else 0))
            assert s == lo or fractions.Fraction(s) * 2 != fractions.Fraction(lo) + fractions.Fraction(nxt), 'tie'
        c.append(f32_round(s))
        # FMAX.f32 (nan_suppress: a NaN operand loses; -0 below +0)
        if math.isnan(x):
            m = y
        elif math.isnan(y):
            m = x
        elif x == y == 0:
            m = x if math.copysign(1, x) > 0 else y
        else:
            m = max(x, y)
        d.append(f32_round(m))
        e.append((f32_bits(x) + f32_bits(y)) & 0xffffffff)
    return {'memory': [{'name': 'c', 'u32': hexes(c)}, {'name': 'd', 'u32': hexes(d)},
                       {'name': 'e', 'u32': hexes(e)}]}


def atomic(doc):
    threads = 3 * 24
    return {'memory': [{'name': 'counters', 'u32': [1000 + threads * (threads + 1) // 2, threads]}]}


KERNELS = {'vector_add': vector_add, 'reduction': reduction, 'divergent': divergent, 'loop': loop,
           'fp16': fp16, 'rcp_rsqrt': rcp_rsqrt, 'int64': int64, 'atomic': atomic,
           'pair64': pair64}

for name, fn in KERNELS.items():
    path = os.path.join(HERE, name + '.json')
    with open(path) as f:
        doc = json.load(f)
    doc['expect'] = fn(doc)
    with open(path, 'w') as f:
        json.dump(doc, f, indent=2)
        f.write('\n')
