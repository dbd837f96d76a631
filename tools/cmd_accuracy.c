/* rotq accuracy: SNR of each quantization format with and without rotations (check/accuracy.h). */
#include <string.h>

#include "accuracy.h"
#include "cli.h"

#define DEFAULT_SEED 1
#define DEFAULT_TOKENS 64
#define DEFAULT_CHANNELS 4096

void cli_usage_accuracy(FILE *f) {
    fprintf(f,
            "usage: rotq accuracy [--backend cpu|cuda] [--seed N] [--tokens T] [--channels C]\n"
            "                     [--json FILE|-]\n\n"
            "Generates synthetic activations with %d outlier channels 50-100x larger than the\n"
            "rest (docs/accuracy.md), quantizes them to int8 and fp8 per token and int4 per\n"
            "group of 32/64/128, with no rotation, an orthonormal Hadamard of size C, the same\n"
            "after random signs, and a block-diagonal Hadamard of size 128, and prints the\n"
            "SNR of each round trip and its gain over no rotation.\n\n"
            "  --backend B   cpu or cuda (default cpu: deterministic)\n"
            "  --seed N      seed of the activations and the signs (default %d)\n"
            "  --tokens T    rows, 1..65536 (default %d)\n"
            "  --channels C  row length: a multiple of 128 up to 65536 with a Hadamard\n"
            "                construction, e.g. 4096 or 14336 = 28*512 (default %d)\n"
            "  --json FILE   also write the results as JSON; '-' writes it to stdout and\n"
            "                moves the table to stderr\n\n"
            "Exit status: 0 success, 1 a library call failed or the backend is unavailable,\n"
            "2 bad arguments. 'not supported' cells are not failures.\n",
            ROTQ_ACCURACY_OUTLIERS, DEFAULT_SEED, DEFAULT_TOKENS, DEFAULT_CHANNELS);
}

int cli_cmd_accuracy(int argc, char **argv) {
    rotq_accuracy_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = ROTQ_BACKEND_CPU;
    opt.seed = DEFAULT_SEED;
    opt.tokens = DEFAULT_TOKENS;
    opt.channels = DEFAULT_CHANNELS;
    const char *json_path = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int v_int;
        if (cli_is_help(a)) {
            cli_usage_accuracy(stdout);
            return CLI_EXIT_OK;
        } else if (strcmp(a, "--backend") == 0) {
            const char *v = cli_option_value(argc, argv, &i);
            if (cli_parse_backend(v, &opt.backend) != 0)
                return cli_usage_error("accuracy", cli_usage_accuracy, "--backend needs cpu or cuda (got '%s')",
                                       v ? v : "");
        } else if (strcmp(a, "--seed") == 0) {
            const char *v = cli_option_value(argc, argv, &i);
            if (cli_parse_u64(v, &opt.seed) != 0)
                return cli_usage_error("accuracy", cli_usage_accuracy,
                                       "--seed needs a non-negative integer (got '%s')", v ? v : "");
        } else if (strcmp(a, "--tokens") == 0) {
            const char *v = cli_option_value(argc, argv, &i);
            if (cli_parse_int(v, 1, 65536, &v_int) != 0)
                return cli_usage_error("accuracy", cli_usage_accuracy, "--tokens needs an integer in 1..65536 (got '%s')",
                                       v ? v : "");
            opt.tokens = v_int;
        } else if (strcmp(a, "--channels") == 0) {
            const char *v = cli_option_value(argc, argv, &i);
            if (cli_parse_int(v, 1, 1 << 30, &v_int) != 0)
                return cli_usage_error("accuracy", cli_usage_accuracy, "--channels needs a positive integer (got '%s')",
                                       v ? v : "");
            opt.channels = v_int;
        } else if (strcmp(a, "--json") == 0) {
            json_path = cli_option_value(argc, argv, &i);
            if (!json_path || !*json_path)
                return cli_usage_error("accuracy", cli_usage_accuracy, "--json needs a file name or '-'");
        } else {
            return cli_usage_error("accuracy", cli_usage_accuracy, "unknown argument '%s'", a);
        }
    }
    const char *bad = rotq_accuracy_check_options(&opt);
    if (bad) return cli_usage_error("accuracy", cli_usage_accuracy, "%s (got --tokens %lld --channels %lld)", bad,
                                    (long long)opt.tokens, (long long)opt.channels);
    if (cli_require_backend("accuracy", opt.backend)) return CLI_EXIT_FAIL;

    int json_stdout = json_path && strcmp(json_path, "-") == 0;
    FILE *table = json_stdout ? stderr : stdout;
    FILE *json = json_stdout ? stdout : NULL;
    if (json_path && !json_stdout && !(json = fopen(json_path, "w"))) {
        perror(json_path);
        return CLI_EXIT_FAIL;
    }
    rotq_accuracy_results res;
    int rc = rotq_accuracy_measure(&opt, &res);
    rotq_accuracy_print(&res, table);
    if (json) rotq_accuracy_write_json(&res, json);
    int io_error = json && !json_stdout && fclose(json) != 0;
    if (io_error) fprintf(stderr, "rotq accuracy: writing %s failed\n", json_path);
    else if (json_path && !json_stdout) fprintf(table, "wrote %s\n", json_path);
    return rc == 0 && !io_error ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}
