/* The rotq command-line tool: one file per command, shared helpers in rotq.c. */
#ifndef ROTQ_CLI_H
#define ROTQ_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "rotq.h"

/* Exit codes of every command. */
#define CLI_EXIT_OK 0
#define CLI_EXIT_FAIL 1  /* a failed case, row or library call */
#define CLI_EXIT_USAGE 2 /* bad arguments */

/* Commands: argv[0] is the command's name; return an exit code. */
int cli_cmd_info(int argc, char **argv);
int cli_cmd_check(int argc, char **argv);
int cli_cmd_bench(int argc, char **argv);
int cli_cmd_demo(int argc, char **argv);
int cli_cmd_accuracy(int argc, char **argv);

void cli_usage_info(FILE *f);
void cli_usage_check(FILE *f);
void cli_usage_bench(FILE *f);
void cli_usage_demo(FILE *f);
void cli_usage_accuracy(FILE *f);

/* Prints "rotq <cmd>: error: <message>", then the command's usage, to stderr;
   returns CLI_EXIT_USAGE. */
int cli_usage_error(const char *cmd, void (*usage)(FILE *), const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Whether argv[i] is -h or --help. */
int cli_is_help(const char *arg);
/* The value of an option that takes one: argv[*i + 1], advancing *i; NULL when missing. */
const char *cli_option_value(int argc, char **argv, int *i);
/* Strict parsers: the whole string must be a number in range; return 0 on success. */
int cli_parse_u64(const char *s, uint64_t *out);
int cli_parse_int(const char *s, int min, int max, int *out);
/* "cpu" or "cuda"; return 0 on success. */
int cli_parse_backend(const char *s, rotq_backend *out);

/* CUDA when the backend is usable now, else CPU. */
rotq_backend cli_default_backend(void);
/* Version, build, backends and CUDA devices, as `rotq info` prints them;
   returns 0, or 1 when a library call failed. */
int cli_print_info(FILE *f);
/* Unless `backend` is usable now, prints "rotq <cmd>: the <backend> backend is not
   available (<why>)" to stderr and returns CLI_EXIT_FAIL; otherwise returns 0. */
int cli_require_backend(const char *cmd, rotq_backend backend);
/* Prints "what: NAME: explanation" for a failed library call. */
void cli_print_status(FILE *f, const char *what, rotq_status st);

#endif
