#!/usr/bin/env python3
"""Per-instruction execution counts of JIT code, from callgrind.

Run a launch under callgrind with its installed code listed:
  GPURC_JIT_LISTINGS=/tmp/l.txt GPURC_X64_HIDE_AVX512=1 valgrind --tool=callgrind \
      --dump-instr=yes --callgrind-out-file=/tmp/cg.out \
      gpurc replay bench/tesla/saxpy.json --engine jit-avx2 --threads 1
then
  scripts/jit-profile.py /tmp/cg.out /tmp/l.txt [--per N] [--min C]
prints each installed function's listing with the times each instruction ran
(divided by N, e.g. the warps of the launch), hottest functions first.
Valgrind does not run AVX-512 code: profile the AVX2 tier.
"""
import argparse
import collections
import re


def callgrind_counts(path):
    """instruction address -> executed count, over every function of the dump."""
    counts = collections.Counter()
    pos = 0
    skip_call_line = False
    with open(path) as f:
        for line in f:
            if line.startswith('calls='):
                skip_call_line = True  # the next cost line is the call's inclusive cost
                continue
            m = re.match(r'^(0x[0-9a-f]+|[+-]\d+|\*)\s+\S+\s+(\d+)', line)
            if not m:
                continue
            p = m.group(1)
            if p.startswith('0x'):
                pos = int(p, 16)
            elif p != '*':
                pos += int(p)
            if skip_call_line:
                skip_call_line = False
                continue
            counts[pos] += int(m.group(2))
    return counts


def listings(path):
    """[(entry address, [(offset, text)])] in the order the run installed them."""
    out = []
    with open(path) as f:
        for line in f:
            m = re.match(r'^entry ([0-9a-f]+) ', line)
            if m:
                out.append((int(m.group(1), 16), []))
                continue
            m = re.match(r'^\s*([0-9a-f]+)\s\s(.*)', line)
            if m and out:
                out[-1][1].append((int(m.group(1), 16), m.group(2)))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('callgrind_out')
    ap.add_argument('listings')
    ap.add_argument('--per', type=float, default=1.0, help='divide counts by this (e.g. warps run)')
    ap.add_argument('--min', type=float, default=0.0, help='print only instructions run at least this often')
    a = ap.parse_args()
    counts = callgrind_counts(a.callgrind_out)
    funcs = []
    for entry, insts in listings(a.listings):
        rows = [(off, text, counts.get(entry + off, 0)) for off, text in insts]
        funcs.append((sum(c for _, _, c in rows), entry, rows))
    for total, entry, rows in sorted(funcs, key=lambda t: -t[0]):
        if total == 0:
            continue
        print(f'# entry {entry:#x}: {total / a.per:.1f} instructions (per {a.per:g})')
        for off, text, c in rows:
            if c / a.per >= a.min and c > 0:
                print(f'{c / a.per:10.2f} {off:8x}  {text}')


if __name__ == '__main__':
    main()
