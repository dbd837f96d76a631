#!/usr/bin/env python3
"""Largest errors the op suite saw, per backend, op and output dtype.

usage: rotq_test_ops --backend cuda --full --filter hadamard -v -v | scripts/error_summary.py

Reads the suite's verbose log (each case line followed by its
"error: norm A (tol B), max C (tol D)" note) and prints, for each (backend,
op, factor kind, output dtype), the worst norm-wise and element-wise relative
errors against the float64 reference and the share of the tolerance used.
"""
import re
import sys

case_re = re.compile(r"^(ok|FAIL)\s+\[(\w+)\]\s+(\w+)\s+(.*)$")
err_re = re.compile(r"error: norm ([0-9.e+-]+) \(tol ([0-9.e+-]+)\), max ([0-9.e+-]+) \(tol ([0-9.e+-]+)\)")
dtype_re = re.compile(r"\b(f32|f16|bf16)->(f32|f16|bf16)\b")
factor_re = re.compile(r"factor=(\w+)")

worst = {}
key = None
for line in sys.stdin:
    m = case_re.match(line.strip())
    if m:
        _, backend, op, rest = m.groups()
        d = dtype_re.search(rest)
        f = factor_re.search(rest)
        n = re.search(r"\bn=(\d+)", rest)
        kind = "pow2" if (f and f.group(1) == "pow2") or (n and (int(n.group(1)) & (int(n.group(1)) - 1)) == 0) else "K*2^m"
        key = (backend, op, kind, d.group(2) if d else "?")
        continue
    e = err_re.search(line)
    if e and key:
        norm, tn, mx, tm = map(float, e.groups())
        w = worst.setdefault(key, [0.0, 0.0, 0.0, 0.0, 0])
        w[0] = max(w[0], norm)
        w[1] = max(w[1], mx)
        w[2] = max(w[2], norm / tn if tn else 0.0)
        w[3] = max(w[3], mx / tm if tm else 0.0)
        w[4] += 1
        key = None

print("| backend | op | size kind | out dtype | cases | worst norm rel. error | worst max rel. error | share of tolerance |")
print("|---|---|---|---|---|---|---|---|")
for k in sorted(worst):
    w = worst[k]
    print(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} | {w[4]} | {w[0]:.2e} | {w[1]:.2e} | {max(w[2], w[3]):.0%} |")
