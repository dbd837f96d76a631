/* rotq bench: benchmark tables (bench/bench.h), as text, JSON and an SVG chart. */
#include <string.h>

#include "bench.h"
#include "cli.h"

void cli_usage_bench(FILE *f) {
    fprintf(f,
            "usage: rotq bench [--backend cpu|cuda] [--op hadamard|quant|all] [--quick]\n"
            "                  [--json FILE|-] [--plot FILE.svg] [--reps N] [--filter S]\n"
            "                  [--threads N]\n\n"
            "Times each op configuration and, in the same run, a baseline moving the same\n"
            "bytes (CPU: memcpy; CUDA: device-to-device copy, or an empty kernel launch for\n"
            "decode sizes). Prints us, GB/s (bytes read + written), the baseline, the ratio\n"
            "op/baseline, the target ratio and a geometric mean per group.\n\n"
            "  --backend B   cpu or cuda (default: cuda when available, else cpu)\n"
            "  --op O        hadamard, quant or all (default all)\n"
            "  --quick       a small subset (seconds)\n"
            "  --json FILE   also write the rows as a JSON array; '-' writes it to stdout\n"
            "                and moves the table to stderr\n"
            "  --plot FILE   write an SVG bar chart of the ratios\n"
            "  --reps N      timed repetitions per row (CUDA uses at least 20)\n"
            "  --filter S    only rows whose label ('group op dtype n=N elements=E') contains S\n"
            "                (alternatives separated by '|': any of them)\n"
            "  --threads N   CPU worker threads (default: one per core)\n\n"
            "Exit status: 0 success, 1 a row failed (error or wrong output) or the backend is\n"
            "unavailable, 2 bad arguments. 'not supported' rows are not failures.\n");
}

int cli_cmd_bench(int argc, char **argv) {
    rotq_bench_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = cli_default_backend();
    const char *json_path = NULL, *plot_path = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) {
            cli_usage_bench(stdout);
            return CLI_EXIT_OK;
        } else if (strcmp(a, "--backend") == 0) {
            const char *v = cli_option_value(argc, argv, &i);
            if (cli_parse_backend(v, &opt.backend) != 0)
                return cli_usage_error("bench", cli_usage_bench, "--backend needs cpu or cuda (got '%s')",
                                       v ? v : "");
        } else if (strcmp(a, "--op") == 0) {
            const char *v = cli_option_value(argc, argv, &i);
            if (v && strcmp(v, "hadamard") == 0) opt.ops = ROTQ_BENCH_OP_HADAMARD;
            else if (v && strcmp(v, "quant") == 0) opt.ops = ROTQ_BENCH_OP_QUANT;
            else if (v && strcmp(v, "all") == 0) opt.ops = ROTQ_BENCH_OP_ALL;
            else
                return cli_usage_error("bench", cli_usage_bench,
                                       "--op needs hadamard, quant or all (got '%s')", v ? v : "");
        } else if (strcmp(a, "--quick") == 0) {
            opt.quick = 1;
        } else if (strcmp(a, "--json") == 0) {
            json_path = cli_option_value(argc, argv, &i);
            if (!json_path || !*json_path)
                return cli_usage_error("bench", cli_usage_bench, "--json needs a file name or '-'");
        } else if (strcmp(a, "--plot") == 0) {
            plot_path = cli_option_value(argc, argv, &i);
            if (!plot_path || !*plot_path || strcmp(plot_path, "-") == 0)
                return cli_usage_error("bench", cli_usage_bench, "--plot needs a file name");
        } else if (strcmp(a, "--reps") == 0) {
            const char *v = cli_option_value(argc, argv, &i);
            if (cli_parse_int(v, 1, 100000, &opt.reps) != 0)
                return cli_usage_error("bench", cli_usage_bench, "--reps needs an integer in 1..100000 (got '%s')",
                                       v ? v : "");
        } else if (strcmp(a, "--filter") == 0) {
            opt.filter = cli_option_value(argc, argv, &i);
            if (!opt.filter) return cli_usage_error("bench", cli_usage_bench, "--filter needs a value");
        } else if (strcmp(a, "--threads") == 0) {
            const char *v = cli_option_value(argc, argv, &i);
            if (cli_parse_int(v, 1, 4096, &opt.threads) != 0)
                return cli_usage_error("bench", cli_usage_bench, "--threads needs an integer in 1..4096 (got '%s')",
                                       v ? v : "");
        } else {
            return cli_usage_error("bench", cli_usage_bench, "unknown argument '%s'", a);
        }
    }

    if (cli_require_backend("bench", opt.backend)) return CLI_EXIT_FAIL;

    int json_stdout = json_path && strcmp(json_path, "-") == 0;
    FILE *table = json_stdout ? stderr : stdout;
    FILE *json = NULL, *plot = NULL;
    if (json_path && !json_stdout && !(json = fopen(json_path, "w"))) {
        perror(json_path);
        return CLI_EXIT_FAIL;
    }
    if (json_stdout) json = stdout;
    if (plot_path && !(plot = fopen(plot_path, "w"))) {
        perror(plot_path);
        if (json && !json_stdout) fclose(json);
        return CLI_EXIT_FAIL;
    }

    fprintf(table, "rotq %s bench, backend %s%s\n", rotq_version(), rotq_bench_backend_name(opt.backend),
            opt.quick ? ", quick subset" : "");
    rotq_bench_results res;
    memset(&res, 0, sizeof res);
    int rc = rotq_bench_collect(&opt, table, &res);
    if (rc == ROTQ_BENCH_UNAVAILABLE || rc == ROTQ_BENCH_BAD_OPTIONS) {
        fprintf(stderr, "rotq bench: %s\n",
                rc == ROTQ_BENCH_BAD_OPTIONS ? "invalid options" : "the backend is not available");
    } else {
        fprintf(table, "\n## summary (%s)\n", res.device);
        rotq_bench_print_geomeans(&res, table);
        if (res.failures) fprintf(table, "%d row(s) FAILED\n", res.failures);
        if (json) rotq_bench_write_json(&res, json);
        if (plot) rotq_bench_write_svg(&res, plot);
    }
    int io_error = 0;
    if (json && !json_stdout) io_error |= fclose(json) != 0;
    if (plot) io_error |= fclose(plot) != 0;
    if (io_error) fprintf(stderr, "rotq bench: writing the output files failed\n");
    else if (rc == ROTQ_BENCH_OK || rc == ROTQ_BENCH_FAILED) {
        if (json_path && !json_stdout) fprintf(table, "wrote %s\n", json_path);
        if (plot_path) fprintf(table, "wrote %s\n", plot_path);
    }
    rotq_bench_results_free(&res);
    return rc == ROTQ_BENCH_OK && !io_error ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}
