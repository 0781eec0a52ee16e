/* ph_clock.c - see ph_clock.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ph_clock.h"

int ph_clock_use_tsc(void)
{
#if defined(__x86_64__)
    const char *mode = getenv("PHANTOM_CLOCK");
    if (mode && strcmp(mode, "monotonic") == 0)
        return 0;
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return 0;
    char line[4096];
    int ok = 0;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "flags", 5) == 0) {
            ok = strstr(line, " constant_tsc") && strstr(line, " nonstop_tsc");
            break;
        }
    fclose(f);
    return ok;
#else
    return 0;
#endif
}

void ph_clock_pair(int use_tsc, uint64_t *ticks, uint64_t *ns)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 5; i++) {
        uint64_t a = ph_clock_ticks(use_tsc), m = ph_clock_mono_ns(), b = ph_clock_ticks(use_tsc);
        if (b - a < best) {
            best = b - a;
            *ticks = a + (b - a) / 2;
            *ns = m;
        }
    }
}
