/*
 * The bench library's check for disturbed baselines (rotq_bench_flag_disturbed):
 * synthetic rows, no device. A row whose copy ran below 90% of the run's median
 * copy bandwidth is marked; small rows, other baselines and failed rows are not
 * counted or marked; fewer than 5 steady rows mark nothing. Likewise a row whose
 * empty-launch baseline took more than 1.25x the median of 5 or more such rows.
 */
#include <stdio.h>
#include <string.h>

#include "bench.h"

static int failures;

static void expect(int ok, const char *what) {
    if (!ok) {
        printf("FAIL: %s\n", what);
        failures++;
    }
}

/* A measured row of `mib` MiB whose copy baseline took `us` microseconds. */
static rotq_bench_row row(const char *baseline, double mib, double us) {
    rotq_bench_row r;
    memset(&r, 0, sizeof r);
    strcpy(r.group, "g");
    strcpy(r.op, "op");
    strcpy(r.dtype, "f16");
    r.n = 1024;
    r.bytes = mib * 1048576.0;
    strcpy(r.baseline, baseline);
    r.baseline_us = us;
    r.us = 1.1 * us;
    r.ratio = 1.1;
    r.state = ROTQ_BENCH_ROW_OK;
    return r;
}

int main(void) {
    rotq_bench_row rows[10];
    /* 128 MiB in 49.5 us is 2711 GB/s; the sixth row's copy took 60 us (2237 GB/s,
       82%), the seventh 54 us (2486, 92%: not marked). */
    for (int i = 0; i < 5; i++) rows[i] = row("copy", 128, 49.5 + 0.1 * i);
    rows[5] = row("copy", 128, 60.0);
    rows[6] = row("copy", 128, 54.0);
    rows[7] = row("copy", 32, 60.0);         /* under 64 MiB: not judged */
    rows[8] = row("empty-kernel", 128, 60.0); /* not a copy */
    rows[9] = row("copy", 128, 90.0);
    rows[9].state = ROTQ_BENCH_ROW_ERROR; /* not measured */
    rotq_bench_results r;
    memset(&r, 0, sizeof r);
    r.rows = rows;
    r.count = r.capacity = 10;

    size_t marked = rotq_bench_flag_disturbed(&r, 0, NULL);
    expect(marked == 1, "one row marked");
    expect(strstr(rows[5].note, "disturbed") != NULL, "the slow copy's row carries the note");
    for (int i = 0; i < 10; i++)
        if (i != 5) expect(rows[i].note[0] == 0, "no note on the other rows");

    /* An existing note is kept, the mark appended. */
    strcpy(rows[5].note, "remark");
    marked = rotq_bench_flag_disturbed(&r, 0, NULL);
    expect(marked == 1 && strncmp(rows[5].note, "remark; disturbed", 17) == 0, "note appended");

    /* Only rows from `first` on take part; under 5 steady rows nothing is marked. */
    memset(rows[5].note, 0, sizeof rows[5].note);
    expect(rotq_bench_flag_disturbed(&r, 3, NULL) == 0, "too few steady rows: none marked");
    expect(rows[5].note[0] == 0, "no note when too few steady rows");
    expect(rotq_bench_flag_disturbed(NULL, 0, NULL) == 0 && rotq_bench_flag_disturbed(&r, 10, NULL) == 0,
           "empty ranges");

    /* Empty-launch baselines: 3.1 .. 3.3 us, one of 12.96 us (marked), one of 3.8
       (1.22x the median: not marked). */
    rotq_bench_row dec[8];
    for (int i = 0; i < 6; i++) dec[i] = row("empty-kernel", 0.01, 3.1 + 0.04 * i);
    dec[6] = row("empty-kernel", 0.01, 12.96);
    dec[7] = row("empty-kernel", 0.01, 3.8);
    rotq_bench_results d;
    memset(&d, 0, sizeof d);
    d.rows = dec;
    d.count = d.capacity = 8;
    expect(rotq_bench_flag_disturbed(&d, 0, NULL) == 1, "one empty launch marked");
    expect(strstr(dec[6].note, "disturbed: empty launch") != NULL, "the slow launch's row carries the note");
    for (int i = 0; i < 8; i++)
        if (i != 6) expect(dec[i].note[0] == 0, "no note on the other launch rows");
    expect(rotq_bench_flag_disturbed(&d, 4, NULL) == 0, "too few launch rows: none marked");

    if (failures == 0) printf("bench: disturbed-baseline check ok\n");
    return failures == 0 ? 0 : 1;
}
