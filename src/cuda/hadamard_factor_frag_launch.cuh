// Host side of the fragment kernel (hadamard_factor_frag.cuh): the shared-memory
// plan (blocks per SM, slices, input slots), the split of row blocks into parts
// (rotq_frag_split_better) and the launch, for the Hadamard op and the fused
// quantize (QUANT).
#pragma once
#include "hadamard_factor_frag.cuh"

// Host: the shared memory plan of a launch whose blocks keep `rows` rows of W:
// blocks per SM, slices and slots. The most blocks (up to maxb) whose slots
// hold enough tiles ahead (1.5 with two blocks an SM, 1 with three, half a
// tile with one), then the most tiles ahead up to 2, then the widest slices
// (halves of a row where they fit: fewer, larger boxes), except that at 2^10
// quarter rows replace halves that hold more than two tiles: past two more slots
// buy nothing, while a smaller slot is refilled sooner (its last reader is one
// of half as many A tasks). Same-run A/Bs on the H100 (perf-notes, fragment
// kernel f34): 20 * 1024 whole (3.5 tiles of halves -> 2 of quarters) -2.6% at
// 2^25 elements, 28 * 1024 in two parts (3 -> 2) -1.5%; where halves hold two
// tiles or fewer quarters measured equal (12 * 1024, 60 * 1024) or worse
// (40 * 1024 in three parts: +1% at 2^25, +13% at 2^27). *ahead the tiles ahead
// (at most 4). tab: the sign masks' bytes (0 without signs). With them three
// blocks need 0.75 tiles ahead: 12 * 1024's 2 KB of masks leave no room for
// three blocks with a tile of slots, and 0.875 tiles in eighth-row slots ran
// 5% faster than two blocks (same-run on an H200, perf-notes f46). False if
// none fits.
template <int L, int KT>
static bool rotq_frag_plan_smem(int k, int rows, int maxb, unsigned tab, const rotq_cuda_device_info *dev, int *bps,
                                int *S, int *ls, double *ahead) {
    const size_t opt = (size_t)dev->max_smem_optin, sm = (size_t)dev->smem_per_sm;
    *bps = 0;
    *ahead = 0.0;
    for (int b = maxb; b >= 1 && !*bps; b--) {
        const double need = b == 1 ? 0.5 : b == 2 ? 1.5 : tab ? 0.75 : 1.0; // tiles ahead
        double best = 0.0; // tiles ahead, counted up to 2
        for (int l = L - 1; l >= L - 3 && l >= 6; l--) {
            int n = ROTQ_FRAG_MAX_SLOTS;
            for (; n >= 2; n--) {
                const size_t bytes = rotq_frag_smem<L>(k, KT, rows, n, l, tab);
                if (bytes <= opt && sm / (bytes + 1024) >= (size_t)b) break;
            }
            if (n < 2) continue;
            double tiles = (double)n / (double)(1 << (L - l));
            if (tiles < need) continue;
            if (tiles > 4.0) tiles = 4.0;
            const double counted = tiles < 2.0 ? tiles : 2.0;
            const bool quarters = L == 10 && l == L - 2 && *bps == b && *ahead > 2.0 + 1e-9; // halves past 2 tiles
            if (counted > best + 1e-9 || (quarters && counted > best - 1e-9))
                best = counted, *ahead = tiles, *bps = b, *S = n, *ls = l;
        }
    }
    return *bps != 0;
}

// Host: a launch of blocks that keep `rows` rows of W: the shared memory plan,
// the warps (at most 3 tiles of tasks per block's warps: the tile_done
// rotation) and the persistent grid for `tiles` tiles (INT64_MAX: the most
// resident blocks).
typedef struct rotq_frag_launch {
    int bps, S, ls, warps, tpt; // blocks an SM, slots, log2 slice columns, warps a block, tasks a tile
    size_t smem;
    double ahead; // tiles of input slots ahead
    int64_t grid;
} rotq_frag_launch;

template <int L, int KT>
static rotq_status rotq_frag_configure(const void *kernel, int *regs, int k, int rows, int maxb, unsigned tab,
                                       int64_t tiles, const rotq_cuda_device_info *dev, rotq_frag_launch *c) {
    if (!rotq_frag_plan_smem<L, KT>(k, rows, maxb, tab, dev, &c->bps, &c->S, &c->ls, &c->ahead))
        return ROTQ_ERR_NOT_SUPPORTED;
    c->smem = rotq_frag_smem<L>(k, KT, rows, c->S, c->ls, tab);
    c->tpt = (((rows + 15) >> 4) << (L - 6)) + (rows >> rotq_frag_plan<L>::RB);
    c->warps = 32 / c->bps < 3 * c->tpt ? 32 / c->bps : 3 * c->tpt;
    return rotq_persistent_grid(kernel, 32 * c->warps, c->smem, regs, dev, tiles, &c->grid);
}

// Host: parts. With `parts` > 1 each tile (row block) goes to `parts` blocks,
// every block computing `part_rows` rows of H_K's output from the whole tile
// (its K step on those rows of H_K, the power-of-two part on them only): the
// input is read once per part (from L2 after the first), W shrinks to the
// part's rows, and the K step's m tiles are rounded up per part. At 2^10
// with K >= 20 (the Hadamard, out of place):
// - a call of at most half a round (2 tiles <= the G blocks of the whole-tile
//   grid; 40 * 1024 at 2^20 elements: 26 tiles on 132 one-block SMs): up to
//   G / tiles parts (at most 8), rows a multiple of 2^RB and at least 8;
// - otherwise the split with the least K-step work a tile, from whole tiles
//   and 2 to 4 parts (rotq_frag_split_better), at least two parts where the
//   call is under 4 rounds. Same-run A/Bs on the H100, f16, 2^25 elements
//   (perf-notes, fragment kernel f17, f18, f21): 40 * 1024 in three parts of
//   14 rows (three m tiles, two tiles of slots ahead) 60.9 -> 59.3 us against
//   two of 20 (four m tiles, the last half empty, 1.75 ahead), 44 * 1024
//   61.7 -> 56.6, 28 * 1024 in two parts of 14 58.0 -> 57.3 (1.75 -> 3 tiles
//   ahead, in half-row slots; 2 in quarter-row ones since f34), while
//   20 * 1024 in two parts of 10 rows (two full m tiles against one and a
//   half) lost 2%, and in three 23%; in calls of 16 rounds or more, fewer
//   parts first among splits with 1.75 tiles ahead.
// Signed calls split as unsigned ones: each A task signs its own fragments.
// (When the A tasks of m tile 0 signed the stage, every part signed all of it,
// and signed calls took two parts only where they had to.)
// Returns the parts (1: whole tiles).
typedef struct rotq_frag_split {
    int parts, rows; // rows: H_K's output rows a part computes
    int mtiles;      // A-task m tiles a tile, over its parts
    int mrows;       // of which rows computed, a last half-empty m tile's 8
    double ahead;    // tiles of input slots ahead (rotq_frag_plan_smem)
} rotq_frag_split;

// Whether split s does less K-step work than t, or as much with more slots
// ahead. Less than a tile ahead stalls the K step on its loads (60 * 1024 in
// two parts, 0.75 ahead, ran 6% slower than three with more m tiles), so it
// comes last. The A tasks (an m tile of a 64-column block each: the operand
// loads, the dispatch, the butterflies) set a tile's work; a half-empty m tile
// saves its mma and half its butterflies, not its loads.
// In a long call (long_call: 16 rounds or more) two splits into parts that
// both hold 1.75 tiles ahead go by fewer parts first: 40 * 1024 at 2^27
// elements (25 rounds) in two parts of 20 rows ran 201-203 us, steadily, and
// in three of 14 205-220 us from one repetition to the next, while at 2^25
// three are 3% faster (perf-notes, fragment kernel f33, f34); 44 * 1024 in two parts
// holds 1.5 tiles and stays in three (two: +6% at 2^27).
static bool rotq_frag_split_better(const rotq_frag_split *s, const rotq_frag_split *t, bool long_call) {
    const bool s_ok = s->ahead >= 1.0, t_ok = t->ahead >= 1.0;
    if (s_ok != t_ok) return s_ok;
    if (long_call && s->parts > 1 && t->parts > 1 && s->parts != t->parts && s->ahead >= 1.75 && t->ahead >= 1.75)
        return s->parts < t->parts;
    if (!s_ok && s->ahead != t->ahead) return s->ahead > t->ahead;
    if (s->mtiles != t->mtiles) return s->mtiles < t->mtiles;
    if (s->mrows != t->mrows) return s->mrows < t->mrows;
    const double sa = s->ahead < 2.0 ? s->ahead : 2.0, ta = t->ahead < 2.0 ? t->ahead : 2.0;
    if (sa != ta) return sa > ta;
    return s->parts < t->parts;
}

// Rows of a part when K rows are asked in `want` parts: a multiple of 2^RB, at
// least 8 (the parts are then ceil(k / rows), which may be fewer than want).
template <int L>
static int rotq_frag_part_rows(int k, int want) {
    const int step = 1 << rotq_frag_plan<L>::RB;
    const int r = ((k + want - 1) / want + step - 1) / step * step;
    return r < 8 ? 8 : r;
}

template <int L, int KT>
static int rotq_frag_parts(int k, int64_t tiles, int64_t G, bool whole, double whole_ahead, unsigned tab, int maxb,
                           const rotq_cuda_device_info *dev, int *part_rows) {
    *part_rows = k;
    if (L != 10 || k < 16) return 1;
    int want = 1;
#ifdef ROTQ_FRAG_PARTS_ALL // A/B switch: this many parts for every call
    want = ROTQ_FRAG_PARTS_ALL;
#else
    if (2 * tiles <= G) {
        want = G / tiles < 8 ? (int)(G / tiles) : 8;
    } else {
        const bool few = tiles < 4 * G; // under 4 rounds: at least two parts
        const bool long_call = tiles >= 16 * G;
        rotq_frag_split best = {0, 0, 0, 0, 0.0};
        for (int p = few ? 2 : 1; p <= 4; p++) {
            rotq_frag_split s;
            s.rows = rotq_frag_part_rows<L>(k, p);
            s.parts = (k + s.rows - 1) / s.rows;
            if (s.parts != p) continue; // the same split as a smaller p
            const int full = s.rows / 16, rem = s.rows % 16;
            s.mtiles = p * (full + (rem != 0));
            s.mrows = p * (16 * full + (rem == 0 ? 0 : rem <= 8 ? 8 : 16));
            if (p == 1) {
                if (!whole) continue;
                s.ahead = whole_ahead;
            } else {
                int bps, S, ls;
                if (!rotq_frag_plan_smem<L, KT>(k, s.rows, maxb, tab, dev, &bps, &S, &ls, &s.ahead)) continue;
            }
            if (best.parts == 0 || rotq_frag_split_better(&s, &best, long_call)) best = s;
        }
        want = best.parts > 0 ? best.parts : 2;
    }
#endif
    const int r = rotq_frag_part_rows<L>(k, want);
    if (r >= k) return 1;
    *part_rows = r;
    return (k + r - 1) / r;
}

// Tiles a block at least for the Hadamard's dynamic tail (rotq_launch_frag).
#define ROTQ_FRAG_DYN_MIN_TILES 16

// Host: whether this kernel takes the call, and its launch. Needs compute
// capability 9.x and code built for it, 16-bit inputs whose row blocks sit at a
// fixed stride with 16-byte rows (TMA), K <= 64 (a multiple of 4, as every
// factor is). ROTQ_ERR_NOT_SUPPORTED otherwise: the general factor kernel runs.
// QUANT: qa holds the quantize arguments (per-row int8 / fp8 need every B
// task of a tile held at once: warps >= B tasks; whole tiles only, as the row
// absmax spans the tile). The Hadamard build out of place may share tiles
// between blocks (rotq_frag_parts). SG: the signed builds, for a.signs.
// dry: decide, launch nothing.
template <int L, int KT, bool QUANT, bool SG>
static rotq_status rotq_launch_frag_sg(const rotq_had_args &a, const rotq_had_factor &f0, const rotq_q_args *qa,
                                       cudaStream_t stream, const rotq_cuda_device_info *dev, bool dry) {
    typedef rotq_frag_plan<L> plan;
    // The builds with parts: the Hadamard at 2^10 with K > 16 (rotq_frag_parts).
    constexpr bool ROTQ_FRAG_PARTS_BUILD = !QUANT && L == 10 && KT >= 2;
    static int usable[64], usable_parts[64]; // per device (rotq_kernel_has_sm90)
    static int regs[64], regs_parts[64];
    if (dev->cc_major != 9 || f0.kt != KT || f0.k % 4 != 0) return ROTQ_ERR_NOT_SUPPORTED;
    const int64_t gstride = rotq_factor_tma_input(a);
    if (gstride <= 0) return ROTQ_ERR_NOT_SUPPORTED;
    const void *kernel = (const void *)rotq_had_frag_kernel<L, KT, QUANT, false, false, SG>;
    if (!rotq_kernel_has_sm90(kernel, usable, dev)) return ROTQ_ERR_NOT_SUPPORTED;
    // 32 warps an SM (the 64-register cap) over 1 to 3 blocks; the fused
    // per-row kinds need a block's warps to cover a tile's B tasks.
    int maxb = 3;
    if (QUANT && (qa->kind == ROTQ_QUANT_INT8_ROW || qa->kind == ROTQ_QUANT_FP8_ROW))
        maxb = 32 / (f0.k >> plan::RB) < 3 ? 32 / (f0.k >> plan::RB) : 3;
    // Whole tiles; parts where rotq_frag_parts picks them (not in place: the
    // parts of a tile read all of its rows while each writes its own), also
    // where whole tiles leave no room for input slots (44, 52, 60 * 1024).
    // With a sign vector, its fragment masks for every row-block position of a
    // row (rotq_frag_sign_table): block-diagonal rows of many blocks may leave
    // no room, and then the general kernel runs.
    if (SG && a.blocks_per_row > 1 && (a.blocks_per_row > 64 || a.groups > (int64_t)UINT32_MAX))
        return ROTQ_ERR_NOT_SUPPORTED;
    const unsigned tab = SG ? rotq_frag_sign_tab_bytes<L>(KT, a.blocks_per_row) : 0u;
    rotq_frag_launch c;
    rotq_status st = rotq_frag_configure<L, KT>(kernel, regs, f0.k, f0.k, maxb, tab, INT64_MAX, dev, &c);
    if (st != ROTQ_OK && st != ROTQ_ERR_NOT_SUPPORTED) return st;
    const bool whole = st == ROTQ_OK;
    int parts = 1, rows = f0.k;
#ifdef ROTQ_FRAG_PARTS_MAXB // A/B switch: at most this many blocks an SM with parts
    const int maxb_parts = maxb < ROTQ_FRAG_PARTS_MAXB ? maxb : ROTQ_FRAG_PARTS_MAXB;
#else
    const int maxb_parts = maxb;
#endif
    if (ROTQ_FRAG_PARTS_BUILD && a.x != a.y)
        parts = rotq_frag_parts<L, KT>(f0.k, a.groups, whole ? c.grid : dev->sm_count, whole, whole ? c.ahead : 0.0,
                                       tab, maxb_parts, dev, &rows);
    if (parts > 1) {
        kernel = (const void *)rotq_had_frag_kernel<L, KT, QUANT, ROTQ_FRAG_PARTS_BUILD, false, SG>;
        if (!rotq_kernel_has_sm90(kernel, usable_parts, dev)) return ROTQ_ERR_NOT_SUPPORTED;
        st = rotq_frag_configure<L, KT>(kernel, regs_parts, f0.k, rows, maxb_parts, tab, a.groups * parts, dev, &c);
        if (st != ROTQ_OK) return st;
        c.grid -= c.grid % parts; // the parts of a tile in consecutive blocks
        if (c.grid < parts) return ROTQ_ERR_NOT_SUPPORTED;
    } else if (!whole) {
        return ROTQ_ERR_NOT_SUPPORTED;
    } else if (c.grid > a.groups) {
        c.grid = a.groups;
    }
    // One block an SM: as many blocks as fill every round (rotq_balanced_grid).
    // 20 * 1024 at 2^25 elements (1639 tiles: 13 rounds on 132 or 127 blocks)
    // measured 2-2.5% faster on 127; with several blocks an SM, no change
    // (perf-notes, fragment kernel f25).
    if (c.bps == 1) c.grid = rotq_balanced_grid(c.grid / parts, a.groups) * parts;
    // rotq_frag_div is exact for task numbers t with t * tpt < 2^32.
    if ((double)(a.groups * parts / c.grid + 2) * c.tpt * c.tpt >= 4294967296.0) return ROTQ_ERR_NOT_SUPPORTED;
    rotq_had_factor f = f0;
    f.groups_per_block = 1;
    f.krows = f.k;
    f.slice_log = c.ls;
    f.wgmma = 0;
    f.half_rows = 0;
    f.stages = c.S;
    f.parts = parts;
    f.parts_magic = parts > 1 ? rotq_frag_magic((uint32_t)parts) : 0u;
    f.part_rows = rows;
    f.tasks = (uint32_t)c.tpt;
    f.tasks_magic = rotq_frag_magic((uint32_t)c.tpt);
    f.stages_magic = rotq_frag_magic((uint32_t)c.S);
    f.slot_bytes = rotq_frag_slot_bytes(f0.k, c.ls);
    f.w_off = rotq_frag_w_off(f0.k, c.ls, c.S);
    f.afr_off = rotq_frag_afr_off<L>(f0.k, c.ls, c.S, rows);
    f.tab_off = rotq_frag_tab_off<L>(f0.k, KT, c.ls, c.S, rows);
    f.dyn_from = INT32_MAX;
    CUtensorMap xmap;
    rotq_had_args t;
    if (!rotq_factor_tma_only_args(a, f, L, gstride, &xmap, &t)) return ROTQ_ERR_NOT_SUPPORTED;
    if (dry) return ROTQ_OK;
    t.tiles_next = NULL;
    // The Hadamard's dynamic tail (the DYN build, rotq_frag_claim) where blocks
    // share an SM and take at least ROTQ_FRAG_DYN_MIN_TILES tiles each: a block's
    // last quarter of tiles (and two more) from the counter, after at least E
    // static iterations; where the magic divisions stay exact for any tile count.
    // Same-run A/B on the H100 (perf-notes, fragment kernel f30): at 2^27 elements
    // 12 * 1024 -6.3%, 28 * 512 -2.5%; at 2^25 (6 and 8 tiles a block) it gained
    // nothing and the fused build lost 15%, hence the Hadamard at 16 tiles or more
    // (and unsigned: no signed build of it).
    bool dyn = false;
    if constexpr (!QUANT && !SG) {
        const int sl = L - c.ls;
        const int64_t per = a.groups / c.grid, E = rotq_frag_claim_distance((unsigned)c.S, sl);
        const int64_t ns = per - (per / 4 + 2);
        const double tmax = (double)a.groups + 2.0;
        static int usable_dyn[64], regs_dyn[64];
        const void *dkernel = (const void *)rotq_had_frag_kernel<L, KT, false, false, true>;
        int64_t dgrid = 0;
        if (parts == 1 && c.bps >= 2 && per >= ROTQ_FRAG_DYN_MIN_TILES && ns >= E && E + 2 <= ROTQ_FRAG_TILE_RING &&
            a.groups < INT32_MAX / 2 && tmax * c.tpt * c.tpt < 4294967296.0 &&
            tmax * (1 << sl) * c.S < 4294967296.0 && rotq_kernel_has_sm90(dkernel, usable_dyn, dev) &&
            rotq_persistent_grid(dkernel, 32 * c.warps, c.smem, regs_dyn, dev, INT64_MAX, &dgrid) == ROTQ_OK &&
            dgrid == c.grid && (t.tiles_next = rotq_cuda_tile_counter(dev, stream)) != NULL) {
            f.dyn_from = (int32_t)ns;
            dyn = true;
        }
    }
    const int os = a.out_dtype == ROTQ_DTYPE_F32 ? 4 : 2;
    t.vec_out = ((uintptr_t)a.y & 15u) == 0 && (a.y_stride * os) % 16 == 0 && ((int64_t)a.n * os) % 16 == 0;
    rotq_q_args q;
    if (QUANT)
        q = *qa;
    else
        memset(&q, 0, sizeof q);
    if (parts > 1) {
        if constexpr (ROTQ_FRAG_PARTS_BUILD)
            rotq_had_frag_kernel<L, KT, false, true, false, SG>
                <<<(unsigned)c.grid, 32 * c.warps, c.smem, stream>>>(t, f, q, xmap);
    } else if (dyn) {
        if constexpr (!QUANT && !SG)
            rotq_had_frag_kernel<L, KT, false, false, true><<<(unsigned)c.grid, 32 * c.warps, c.smem, stream>>>(t, f, q,
                                                                                                              xmap);
    } else {
        rotq_had_frag_kernel<L, KT, QUANT, false, false, SG>
            <<<(unsigned)c.grid, 32 * c.warps, c.smem, stream>>>(t, f, q, xmap);
    }
    return rotq_cuda_check_launch();
}

template <int L, int KT, bool QUANT>
static rotq_status rotq_launch_frag(const rotq_had_args &a, const rotq_had_factor &f0, const rotq_q_args *qa,
                                    cudaStream_t stream, const rotq_cuda_device_info *dev, bool dry) {
    if (a.signs) return rotq_launch_frag_sg<L, KT, QUANT, true>(a, f0, qa, stream, dev, dry);
    return rotq_launch_frag_sg<L, KT, QUANT, false>(a, f0, qa, stream, dev, dry);
}
