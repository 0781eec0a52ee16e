/* standalone.c - runs a libFuzzer target over the files named on its command
 * line, without libFuzzer: how `make check` builds the fuzz targets with the
 * build's compiler and sanitizers, so that tests/fuzz-seeds.sh runs the seed
 * corpus through them (the targets keep building, and the seeds keep decoding
 * as they did).  Fuzzing itself needs clang: tests/fuzz/README.md. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static uint8_t *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    size_t cap = 0, n = 0;
    while (f) {
        if (n == cap) {
            uint8_t *more = realloc(buf, cap = cap ? 2 * cap : 65536);
            if (!more)
                break;
            buf = more;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) {
            int ok = !ferror(f);
            fclose(f);
            if (ok) {
                *size = n;
                return buf;
            }
            f = NULL;
        }
    }
    if (f)
        fclose(f);
    free(buf);
    return NULL;
}

int main(int argc, char **argv)
{
    if (LLVMFuzzerInitialize)
        LLVMFuzzerInitialize(&argc, &argv);
    for (int i = 1; i < argc; i++) {
        size_t size = 0;
        uint8_t *data = slurp(argv[i], &size);
        if (!data) {
            fprintf(stderr, "%s: cannot read\n", argv[i]);
            return 2;
        }
        LLVMFuzzerTestOneInput(data, size);
        free(data);
    }
    return 0;
}
