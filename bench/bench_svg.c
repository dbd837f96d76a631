/*
 * The `rotq bench --plot` chart: a plain SVG, written with fprintf, one
 * horizontal bar per row (ratio = op time / baseline time, shorter is
 * better) on a log2 axis, a line at 1.0 (as fast as the baseline), a red tick at each row's
 * target and a header with the geometric mean for each group.
 */
#include <math.h>
#include <string.h>

#include "bench_internal.h"

#define LABEL_W 340.0
#define CHART_W 560.0
#define VALUE_W 170.0
#define ROW_H 16.0
#define TOP 64.0
#define BOTTOM 44.0

static void xml_text(FILE *f, const char *s) {
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

static const char *group_color(size_t group_index) {
    static const char *palette[] = {"#4c78a8", "#f58518", "#54a24b", "#b279a2",
                                    "#72b7b2", "#eeca3b", "#9d755d", "#ff9da6"};
    return palette[group_index % (sizeof palette / sizeof palette[0])];
}

static int measured(const rotq_bench_row *r) {
    return (r->state == ROTQ_BENCH_ROW_OK || r->state == ROTQ_BENCH_ROW_WRONG) && r->ratio > 0.0;
}

void rotq_bench_write_svg(const rotq_bench_results *r, FILE *f) {
    /* Log2 axis between powers of two around every ratio and target (at least
       0.5 .. 2, at most 2^-4 .. 2^12; bars beyond it are clipped). */
    double lo = 0.5, hi = 2.0;
    size_t groups = 0;
    for (size_t i = 0; i < r->count; i++) {
        const rotq_bench_row *row = &r->rows[i];
        if (measured(row)) {
            while (row->ratio > hi && hi < 4096.0) hi *= 2.0;
            while (row->ratio < lo && lo > 0.0625) lo /= 2.0;
        }
        while (row->target > hi && hi < 4096.0) hi *= 2.0;
        if (i == 0 || strcmp(row->group, r->rows[i - 1].group) != 0) groups++;
    }
    double llo = log2(lo), lspan = log2(hi) - llo;

    double width = LABEL_W + CHART_W + VALUE_W;
    double height = TOP + ROW_H * (double)(r->count + 2 * groups) + BOTTOM;
    double x0 = LABEL_W;
#define XPOS(v) (x0 + CHART_W * ((v) >= hi ? 1.0 : (v) <= lo ? 0.0 : (log2(v) - llo) / lspan))

    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
            "viewBox=\"0 0 %.0f %.0f\" font-family=\"monospace\" font-size=\"11\">\n",
            width, height, width, height);
    fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    fprintf(f, "<text x=\"8\" y=\"20\" font-size=\"15\" font-weight=\"bold\">rotq bench: time / "
               "baseline time (shorter is better; 1.0 = as fast as the baseline)</text>\n");
    fprintf(f, "<text x=\"8\" y=\"38\">");
    xml_text(f, r->device);
    fprintf(f, "</text>\n");
    fprintf(f, "<text x=\"8\" y=\"54\" fill=\"#c00\">red tick: target ratio</text>\n");

    /* Grid at each power of two; the baseline line at 1.0. */
    double grid_bottom = height - BOTTOM + 4.0;
    for (double v = lo; v <= hi * 1.0001; v *= 2.0) {
        double x = XPOS(v);
        int one = fabs(v - 1.0) < 1e-9;
        fprintf(f,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                "stroke-width=\"%s\"/>\n",
                x, TOP - 4.0, x, grid_bottom, one ? "#333" : "#ddd", one ? "1.5" : "1");
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g</text>\n", x,
                grid_bottom + 14.0, v);
    }
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">ratio vs baseline (log scale)</text>\n",
            x0 + CHART_W / 2.0, grid_bottom + 30.0);

    double y = TOP;
    size_t g = 0;
    for (size_t i = 0; i < r->count; i++) {
        const rotq_bench_row *row = &r->rows[i];
        if (i == 0 || strcmp(row->group, r->rows[i - 1].group) != 0) {
            if (i) g++;
            /* group header with its geometric mean */
            double s = 0.0;
            int n = 0;
            for (size_t j = i; j < r->count && strcmp(r->rows[j].group, row->group) == 0; j++)
                if (r->rows[j].state == ROTQ_BENCH_ROW_OK && r->rows[j].ratio > 0.0) {
                    s += log(r->rows[j].ratio);
                    n++;
                }
            y += ROW_H;
            fprintf(f, "<text x=\"8\" y=\"%.1f\" font-weight=\"bold\" fill=\"%s\">", y + 11.0,
                    group_color(g));
            xml_text(f, row->group);
            if (n) fprintf(f, "  (geomean %.3f over %d rows, vs %s)", exp(s / n), n, row->baseline);
            else fprintf(f, "  (nothing measured)");
            fprintf(f, "</text>\n");
            y += ROW_H;
        }
        char label[96], elems[32];
        if (row->elements > 0 && (row->elements & (row->elements - 1)) == 0) {
            int e = 0;
            while ((INT64_C(1) << e) < row->elements) e++;
            snprintf(elems, sizeof elems, "2^%d", e);
        } else {
            snprintf(elems, sizeof elems, "%lld", (long long)row->elements);
        }
        snprintf(label, sizeof label, "%s %s n=%ld E=%s", row->op, row->dtype, (long)row->n, elems);
        fprintf(f, "<text x=\"16\" y=\"%.1f\">", y + 11.0);
        xml_text(f, label);
        fprintf(f, "</text>\n");

        if (measured(row)) {
            int wrong = row->state == ROTQ_BENCH_ROW_WRONG;
            double xe = XPOS(row->ratio);
            fprintf(f,
                    "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"%s/>\n",
                    x0, y + 2.0, xe - x0, ROW_H - 4.0, group_color(g),
                    wrong ? " stroke=\"#c00\" stroke-width=\"2\"" : "");
            fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">%.3f%s  %.1f us</text>\n", x0 + CHART_W + 6.0,
                    y + 11.0, row->ratio, row->ratio > hi || row->ratio < lo ? " (clipped)" : "", row->us);
            if (wrong)
                fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#c00\">WRONG</text>\n", xe + 4.0, y + 11.0);
        } else {
            const char *what = row->state == ROTQ_BENCH_ROW_NOT_SUPPORTED ? "not supported" : "ERROR";
            fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" fill=\"%s\" font-style=\"italic\">%s</text>\n",
                    x0 + 4.0, y + 11.0, row->state == ROTQ_BENCH_ROW_NOT_SUPPORTED ? "#888" : "#c00",
                    what);
        }
        if (row->target > 0.0) {
            double xt = XPOS(row->target);
            fprintf(f,
                    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#c00\" "
                    "stroke-width=\"2\"/>\n",
                    xt, y + 1.0, xt, y + ROW_H - 1.0);
        }
        y += ROW_H;
    }
#undef XPOS
    fprintf(f, "</svg>\n");
}
