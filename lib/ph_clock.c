/* ph_clock.c - see ph_clock.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ph_clock.h"

int ph_clock_use_tsc(void)
{
    const char *mode = getenv("PHANTOM_CLOCK");
    if (mode && strcmp(mode, "monotonic") == 0)
        return 0;
    if (mode && *mode && strcmp(mode, "tsc") != 0) /* a typo would time with the TSC unsaid */
        fprintf(stderr, "phantom: PHANTOM_CLOCK=%s is not monotonic or tsc; using tsc where invariant\n", mode);
#if defined(__x86_64__)
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return 0;
    char *line = NULL; /* whole lines: a flags line can pass any fixed buffer */
    size_t cap = 0;
    int ok = 0;
    while (getline(&line, &cap, f) > 0)
        if (strncmp(line, "flags", 5) == 0) {
            ok = strstr(line, " constant_tsc") && strstr(line, " nonstop_tsc");
            break;
        }
    free(line);
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
