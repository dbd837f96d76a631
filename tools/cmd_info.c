/* rotq info: version, build, backends and CUDA devices. */
#include "cli.h"

void cli_usage_info(FILE *f) {
    fprintf(f, "usage: rotq info [--help]\n\n"
               "Prints the library version, its build description (rotq_build_info), which\n"
               "backends are usable and the CUDA devices visible to the process.\n");
}

int cli_print_info(FILE *f) {
    int rc = 0;
    fprintf(f, "rotq %s (version number %d)\n", rotq_version(), rotq_version_number());
    fprintf(f, "build: %s\n", rotq_build_info());
    fprintf(f, "backends:\n");
    fprintf(f, "  cpu   %s\n", rotq_backend_available(ROTQ_BACKEND_CPU) ? "available" : "NOT available");
#ifdef ROTQ_WITH_CUDA
    const char *cuda_why = "compiled in, but no usable CUDA device or driver";
#else
    const char *cuda_why = "not compiled in (configure with -DROTQ_CUDA=ON)";
#endif
    int cuda = rotq_backend_available(ROTQ_BACKEND_CUDA);
    fprintf(f, "  cuda  %s\n", cuda ? "available" : cuda_why);

    int count = 0;
    rotq_status st = rotq_cuda_device_count(&count);
    if (st != ROTQ_OK) {
        /* A build without CUDA or a machine without a driver is not a failure of `info`. */
        fprintf(f, "CUDA devices: none (%s: %s)\n", rotq_status_name(st), rotq_status_string(st));
        return rc;
    }
    fprintf(f, "CUDA devices: %d\n", count);
    for (int d = 0; d < count; d++) {
        char buf[256];
        st = rotq_cuda_device_describe(d, buf, sizeof buf);
        if (st == ROTQ_OK) {
            fprintf(f, "  [%d] %s\n", d, buf);
        } else {
            fprintf(f, "  [%d] ", d);
            cli_print_status(f, "rotq_cuda_device_describe", st);
            rc = 1;
        }
    }
    return rc;
}

int cli_cmd_info(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            cli_usage_info(stdout);
            return CLI_EXIT_OK;
        }
        return cli_usage_error("info", cli_usage_info, "unknown argument '%s'", argv[i]);
    }
    return cli_print_info(stdout) ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}
