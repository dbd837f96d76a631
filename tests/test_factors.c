/*
 * The built-in Hadamard factor matrices against the shared data files
 * (hadK.txt: K lines of K '+'/'-' characters, row-major). The op suite's
 * reference reads H_K from the library, so this is what ties both to the
 * matrices QuaRot/SpinQuant/QuIP# ship. Exits 77 (skipped) without the files.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rotq.h"

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : "/work/shared/data/hadamard-factors";
    int passed = 0, failed = 0, skipped = 0;
    int n = rotq_hadamard_factor_count();
    for (int i = 0; i < n; i++) {
        int32_t k = rotq_hadamard_factor_at(i);
        char path[1024];
        snprintf(path, sizeof path, "%s/had%d.txt", dir, k);
        FILE *f = fopen(path, "r");
        if (!f) {
            printf("skip K=%d: %s not readable\n", k, path);
            skipped++;
            continue;
        }
        int8_t *lib = malloc((size_t)(k * k));
        char *line = malloc((size_t)k + 16);
        int bad = rotq_hadamard_factor_matrix(k, lib, (size_t)(k * k)) != ROTQ_OK;
        for (int r = 0; r < k && !bad; r++) {
            if (!fgets(line, k + 16, f) || (int)strcspn(line, "\r\n") != k) {
                printf("FAIL K=%d: %s line %d is not %d characters\n", k, path, r + 1, k);
                bad = 1;
                break;
            }
            for (int c = 0; c < k; c++) {
                int want = line[c] == '+' ? 1 : line[c] == '-' ? -1 : 0;
                if (lib[r * k + c] != want) {
                    printf("FAIL K=%d: entry (%d, %d) is %d, the file says %c\n", k, r, c, lib[r * k + c], line[c]);
                    bad = 1;
                    break;
                }
            }
        }
        fclose(f);
        free(lib);
        free(line);
        if (bad) failed++;
        else passed++, printf("ok   K=%d matches %s\n", k, path);
    }
    printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    if (failed) return 1;
    return passed == 0 ? 77 : 0;
}
