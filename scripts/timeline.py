#!/usr/bin/env python3
"""Summarizes the tile timelines of a -DROTQ_TIMELINE build (src/cuda/timeline.cuh).

Input: files of one `rotq bench` row each, run on that build: the bench's table lines
and, per launch, one "TL kernel L block sm tiles g0 gdata gend s0..s3 f0..f3 l0..l3"
line per block. Launches are told apart by gaps in the blocks' start times.
For each row and launch:
  span      first block start to last block end (ns, global timer)
  fill      the median block's start after the first one, and its first stage's wait
  drain     last block end minus the median block end
  per SM    the median over SMs of (last - first end of the blocks on that SM):
            blocks that share an SM but finish apart (perf-notes, power-of-two v29),
            and how often they finish in block-id order (fragment kernel f28: the
            warp scheduler favours the older blocks)
  steady    per tile, mean clocks of the four segments over the tiles that are
            neither a block's first nor its last: 0 top barrier, 1 stage wait
            (copies issued, data awaited), 2 read + phase 0 + barrier, 3 the rest
  clock     SM clocks per ns, from each block's clocks and global-timer span
Medians over the row's launches are printed.
Usage: timeline.py FILE...
"""
import statistics as st
import sys


def launches(tl):
    tl.sort(key=lambda r: r["g0"])
    out, cur = [], []
    for r in tl:
        if cur and r["g0"] - cur[-1]["g0"] > 20000:  # 20 us: a new launch
            out.append(cur)
            cur = []
        cur.append(r)
    if cur:
        out.append(cur)
    return out


def summarize(rows):
    t0 = min(r["g0"] for r in rows)
    t_end = max(r["gend"] for r in rows)
    ends = sorted(r["gend"] for r in rows)
    starts = sorted(r["g0"] - t0 for r in rows)
    first_wait = sorted(r["gdata"] - r["g0"] for r in rows if r["gdata"])
    blocks_sm = {}
    for r in rows:
        blocks_sm.setdefault(r["sm"], []).append(r)
    shared = [b for b in blocks_sm.values() if len(b) > 1]
    in_order = sum(1 for b in shared
                   if [r["block"] for r in sorted(b, key=lambda r: r["gend"])] == sorted(r["block"] for r in b))
    clk = []
    steady = [[], [], [], []]
    for r in rows:
        tot = sum(r["s"])
        span = r["gend"] - r["g0"]
        if span > 0 and tot > 0:
            clk.append(tot / span)
        n = r["tiles"] - 2
        if n > 0:
            for k in range(4):
                steady[k].append((r["s"][k] - r["f"][k] - r["l"][k]) / n)
    return {
        "blocks": len(rows),
        "tiles": st.mean(r["tiles"] for r in rows),
        "span": t_end - t0,
        "fill": st.median(starts),
        "fill_max": starts[-1],
        "first_wait": st.median(first_wait) if first_wait else 0,
        "drain": t_end - st.median(ends),
        "drain_first": t_end - ends[0],
        "sm_spread": st.median(max(r["gend"] for r in b) - min(r["gend"] for r in b) for b in blocks_sm.values()),
        "sm_shared": len(shared),
        "sm_in_order": in_order,
        "clock": st.median(clk) if clk else 0,
        "steady": [st.mean(s) if s else 0 for s in steady],
        "first": [st.mean(r["f"][k] for r in rows) for k in range(4)],
        "last": [st.mean(r["l"][k] for r in rows) for k in range(4)],
    }


def main():
    results = []
    for path in sys.argv[1:]:  # one bench row a file: the device's printf and the table are not ordered
        tl, name = [], path
        for line in open(path, errors="replace"):
            p = line.split()
            if p and p[0] == "TL" and len(p) == 21:
                v = list(map(int, p[2:]))
                tl.append({"kernel": p[1], "L": v[0], "block": v[1], "sm": v[2], "tiles": v[3], "g0": v[4],
                           "gdata": v[5], "gend": v[6], "s": v[7:11], "f": v[11:15], "l": v[15:19]})
            elif len(p) > 9 and (p[0].startswith("hadamard") or p[0].startswith("quant")) and "copy" in p:
                name = " ".join(p[:5]) + "  op %s us, copy %s us" % (p[5], p[8])
        if tl:
            results.append((name, tl))
    for name, tl in results:
        ls = [summarize(x) for x in launches(tl)]
        med = lambda key: st.median(s[key] for s in ls)
        medk = lambda key, k: st.median(s[key][k] for s in ls)
        print(name)
        print("  launches %d, blocks %d, tiles a block %.2f, clock %.3f per ns" %
              (len(ls), med("blocks"), med("tiles"), med("clock")))
        print("  span %.1f us; fill: median start +%.2f us (last +%.2f), first stage wait %.2f us; "
              "drain: last end - median end %.2f us (- first end %.2f)" %
              (med("span") / 1e3, med("fill") / 1e3, med("fill_max") / 1e3, med("first_wait") / 1e3,
               med("drain") / 1e3, med("drain_first") / 1e3))
        shared = sum(s["sm_shared"] for s in ls)
        order = " (in block-id order on %d of %d)" % (sum(s["sm_in_order"] for s in ls), shared) if shared else ""
        print("  blocks sharing an SM end a median %.2f us apart%s" % (med("sm_spread") / 1e3, order))
        s = [medk("steady", k) for k in range(4)]
        tot = sum(s)
        f = [medk("first", k) for k in range(4)]
        print("  first tile:  %.0f clocks = %.0f / %.0f / %.0f / %.0f" % (sum(f), f[0], f[1], f[2], f[3]))
        if tot == 0:  # no tile is neither a block's first nor its last (< 3 tiles a block)
            print("  steady tile: none (fewer than three tiles a block)")
        else:
            print("  steady tile: %.0f clocks = barrier %.0f (%.1f%%), stage wait %.0f (%.1f%%), read+phase0 %.0f (%.1f%%), "
                  "rest %.0f (%.1f%%)" % (tot, s[0], 100 * s[0] / tot, s[1], 100 * s[1] / tot, s[2],
                                          100 * s[2] / tot, s[3], 100 * s[3] / tot))
        l = [medk("last", k) for k in range(4)]
        print("  last tile:   %.0f clocks = %.0f / %.0f / %.0f / %.0f" % (sum(l), l[0], l[1], l[2], l[3]))


if __name__ == "__main__":
    main()
