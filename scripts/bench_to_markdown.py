#!/usr/bin/env python3
"""Turns `rotq bench --json` output into the markdown tables of docs/perf.md.

usage: scripts/bench_to_markdown.py BENCH.json [--date YYYY-MM-DD] > table.md

One table per benchmark group, every row with its time, GB/s, the baseline
measured in the same run, the ratio and the target, then the group's geometric
mean. Uses only the standard library.
"""
import argparse
import json
import math
import sys
from collections import OrderedDict


def fmt_elems(e):
    return f"2^{int(math.log2(e))}" if e > 0 and e & (e - 1) == 0 else str(e)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("--date", default="")
    args = ap.parse_args()
    rows = json.load(open(args.json))
    groups = OrderedDict()
    for r in rows:
        groups.setdefault(r["group"], []).append(r)
    device = next((r.get("device") for r in rows if r.get("device")), "unknown device")
    out = sys.stdout
    out.write(f"Device: {device}" + (f"; measured {args.date}" if args.date else "") + ".\n\n")
    for g, rs in groups.items():
        base = rs[0].get("baseline", "")
        out.write(f"### {g} (baseline: {base})\n\n")
        out.write("| op | dtype | n | elements | µs | GB/s | baseline µs | ratio | target | met |\n")
        out.write("|---|---|---|---|---|---|---|---|---|---|\n")
        ratios = []
        for r in rs:
            if r.get("status") != "ok":
                out.write(f"| {r['op']} | {r['dtype']} | {r['n']} | {fmt_elems(r['elements'])} | "
                          f"{r.get('status', '-')} | | | | {r.get('target') or ''} | |\n")
                continue
            t = r.get("target")
            met = "" if not t else ("yes" if r["ratio"] <= t else "no")
            if "disturbed" in (r.get("note") or ""):  # rotq_bench_flag_disturbed
                met = (met + " " if met else "") + "(baseline disturbed)"
            ratios.append(r["ratio"])
            out.write(f"| {r['op']} | {r['dtype']} | {r['n']} | {fmt_elems(r['elements'])} | {r['us']:.2f} | "
                      f"{r['gbps']:.0f} | {r['baseline_us']:.2f} | {r['ratio']:.3f} | "
                      f"{'≤ %.2f' % t if t else ''} | {met} |\n")
        if ratios:
            gm = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
            out.write(f"\nGeometric mean ratio: **{gm:.3f}** over {len(ratios)} rows.\n\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
