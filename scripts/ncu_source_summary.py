#!/usr/bin/env python3
"""Summary of an ncu source-page CSV (scripts/gpu_profile.sh, ROTQ_PROFILE_SOURCE=1):
stall reasons over the kernel, executed instructions by opcode, and the SASS lines
with the most stall samples (with their two main reasons).
usage: ncu_source_summary.py FILE.csv [TOP]"""
import collections
import csv
import sys


def main():
    rows = list(csv.reader(open(sys.argv[1])))
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    start = next((i for i, r in enumerate(rows) if r and r[0] == 'Address'), None)
    if start is None:
        print('no source table in', sys.argv[1])
        return
    hdr = rows[start]
    col = {h: j for j, h in enumerate(hdr)}
    data = rows[start + 1:]
    stalls = [h for h in hdr if h.startswith('stall_') and 'Not Issued' not in h]
    samp = 'Warp Stall Sampling (All Samples)'

    def num(r, k):
        try:
            return int(float(r[col[k]]))
        except (ValueError, IndexError):
            return 0

    total = sum(num(r, samp) for r in data)
    instr = sum(num(r, 'Instructions Executed') for r in data)
    print(f'samples {total}, warp instructions {instr / 1e6:.2f}M, SASS lines {len(data)}')
    agg = collections.Counter()
    ops = collections.Counter()
    for r in data:
        for s in stalls:
            agg[s] += num(r, s)
        words = [w for w in r[col['Source']].split() if not w.startswith('@')]
        if words:
            ops[words[0].split('.')[0]] += num(r, 'Instructions Executed')
    print('stalls:', ', '.join(f'{k[6:]} {100 * v / max(total, 1):.1f}%' for k, v in agg.most_common(10)))
    print('opcodes:', ', '.join(f'{k} {v / 1e6:.2f}M' for k, v in ops.most_common(16)))
    print(f'top {top} lines by stall samples (index, source, executed, samples, reasons):')
    order = sorted(range(len(data)), key=lambda j: -num(data[j], samp))[:top]
    for j in sorted(order):
        r = data[j]
        why = sorted(stalls, key=lambda s: -num(r, s))[:2]
        print(f'{j:5d} {r[col["Source"]].strip()[:60]:60s} {num(r, "Instructions Executed"):9d} {num(r, samp):5d} '
              + ' '.join(f'{s[6:]}:{num(r, s)}' for s in why))


if __name__ == '__main__':
    main()
