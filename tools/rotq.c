/*
 * rotq: the command-line tool.
 *   rotq info | check | bench | demo | accuracy   (rotq <command> --help for each)
 * Exit codes: 0 success, 1 a failure (a failed case, row or library call),
 * 2 bad arguments.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

typedef struct cli_command {
    const char *name;
    int (*run)(int argc, char **argv);
    void (*usage)(FILE *f);
    const char *summary;
} cli_command;

static const cli_command commands[] = {
    {"info", cli_cmd_info, cli_usage_info, "version, build, backends and CUDA devices"},
    {"check", cli_cmd_check, cli_usage_check, "run the op suite against the float64 reference"},
    {"bench", cli_cmd_bench, cli_usage_bench, "benchmark table (JSON, SVG plot) vs same-run baselines"},
    {"demo", cli_cmd_demo, cli_usage_demo, "info, quick op suite, quick benchmark, outlier/SNR example"},
    {"accuracy", cli_cmd_accuracy, cli_usage_accuracy, "SNR of int8/fp8/int4 with and without rotations"},
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *f) {
    fprintf(f, "usage: rotq <command> [options]\n"
               "       rotq --version | --help | help <command>\n\ncommands:\n");
    for (size_t i = 0; i < N_COMMANDS; i++)
        fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\nEvery command takes --help. Exit status: 0 success, 1 failure, 2 bad arguments.\n");
}

static const cli_command *find_command(const char *name) {
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0) return &commands[i];
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "rotq: error: no command given\n\n");
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (cli_is_help(cmd)) {
        usage(stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
        printf("rotq %s\n", rotq_version());
        return CLI_EXIT_OK;
    }
    if (strcmp(cmd, "help") == 0) {
        if (argc < 3) {
            usage(stdout);
            return CLI_EXIT_OK;
        }
        const cli_command *c = find_command(argv[2]);
        if (!c) {
            fprintf(stderr, "rotq: error: unknown command '%s'\n\n", argv[2]);
            usage(stderr);
            return CLI_EXIT_USAGE;
        }
        c->usage(stdout);
        return CLI_EXIT_OK;
    }
    const cli_command *c = find_command(cmd);
    if (!c) {
        fprintf(stderr, "rotq: error: unknown command '%s'\n\n", cmd);
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    return c->run(argc - 1, argv + 1);
}

/* ---- helpers shared by the commands -------------------------------------- */

int cli_usage_error(const char *cmd, void (*usage_fn)(FILE *), const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "rotq %s: error: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\n\n", stderr);
    usage_fn(stderr);
    return CLI_EXIT_USAGE;
}

int cli_is_help(const char *arg) { return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0; }

const char *cli_option_value(int argc, char **argv, int *i) {
    if (*i + 1 >= argc) return NULL;
    return argv[++*i];
}

int cli_parse_u64(const char *s, uint64_t *out) {
    if (!s || !*s || *s == '-' || *s == '+') return -1;
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || *end) return -1;
    *out = (uint64_t)v;
    return 0;
}

int cli_parse_int(const char *s, int min, int max, int *out) {
    if (!s || !*s) return -1;
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < min || v > max) return -1;
    *out = (int)v;
    return 0;
}

int cli_parse_backend(const char *s, rotq_backend *out) {
    if (s && strcmp(s, "cpu") == 0) *out = ROTQ_BACKEND_CPU;
    else if (s && strcmp(s, "cuda") == 0) *out = ROTQ_BACKEND_CUDA;
    else return -1;
    return 0;
}

rotq_backend cli_default_backend(void) {
    return rotq_backend_available(ROTQ_BACKEND_CUDA) ? ROTQ_BACKEND_CUDA : ROTQ_BACKEND_CPU;
}

int cli_require_backend(const char *cmd, rotq_backend backend) {
    if (rotq_backend_available(backend)) return 0;
    fprintf(stderr, "rotq %s: the %s backend is not available (%s)\n", cmd,
            backend == ROTQ_BACKEND_CUDA ? "cuda" : "cpu",
#ifdef ROTQ_WITH_CUDA
            "no usable CUDA device or driver"
#else
            "this build has no CUDA backend"
#endif
    );
    return CLI_EXIT_FAIL;
}

void cli_print_status(FILE *f, const char *what, rotq_status st) {
    fprintf(f, "%s: %s: %s\n", what, rotq_status_name(st), rotq_status_string(st));
}
