/* fuzz_platform.c - libFuzzer target for the platform file parser
 * (simmpi/platform.c), the one input of phantom's that users write by hand.
 *
 * The input is the file, as on disk.  simmpi_platform_load must either load
 * it or fail with one line that names the file; a crash, a sanitizer report,
 * a leak, a timeout or an error message without the file name is a bug, and
 * so is a loaded platform that breaks what the simulator relies on: names
 * that are C strings, at least one core a node, duplex and CPU shares from 0
 * to 1, noise pauses shorter than their period, a price that is a number.
 * Build and run: tests/fuzz/README.md.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "simmpi.h"

static char path[64];

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_platform: loaded, but %s\n", what);
        abort();
    }
}

static int terminated(const char *s, size_t cap) { return memchr(s, 0, cap) != NULL; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!path[0])
        snprintf(path, sizeof path, "/dev/shm/phantom-fuzz-platform.%d.conf", (int)getpid());
    FILE *f = fopen(path, "w");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0) {
        perror(path);
        abort();
    }
    simmpi_platform p;
    ph_err err = {{0}};
    if (simmpi_platform_load(path, &p, &err) < 0) {
        if (!err.msg[0] || !strstr(err.msg, path) || strchr(err.msg, '\n')) {
            fprintf(stderr, "fuzz_platform: unclear error: [%s]\n", err.msg);
            abort();
        }
        return 0;
    }
    check(terminated(p.name, sizeof p.name) && terminated(p.network_model, sizeof p.network_model) &&
              terminated(p.calibrated, sizeof p.calibrated), "a name is not a C string");
    check(p.cores_per_node >= 1, "no core a node");
    check(p.inter.half_duplex_ppm <= 1000000 && p.intra.half_duplex_ppm <= 1000000, "a duplex share past 1");
    check(p.cpu_share >= 0 && p.cpu_share <= 1, "cpu_share outside 0..1");
    check(!p.noise_period == !p.noise_pause && (!p.noise_period || p.noise_pause < p.noise_period),
          "noise pauses without a period, or as long as it");
    check(isfinite(p.price_per_node_hour) && p.price_per_node_hour >= 0, "the price is not a number");
    return 0;
}
