/* rec_clock.c - CLOCK_MONOTONIC at the price of a TSC read.
 *
 * Every MPI call reads the clock twice.  Where the TSC is invariant
 * (constant_tsc and nonstop_tsc: one rate on every core, through frequency
 * changes and idle states) rec_now() reads it and maps it linearly onto
 * CLOCK_MONOTONIC.  The mapping starts from a 2 ms calibration at MPI_Init
 * and is refined at each periodic flush from an ever longer baseline, always
 * re-anchored at the current time so that timestamps never jump back.
 * PHANTOM_CLOCK=monotonic forces clock_gettime.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rec.h"

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int invariant_tsc(void)
{
#if defined(__x86_64__)
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

#if defined(__x86_64__)
/* A (TSC, CLOCK_MONOTONIC) pair read as close together as possible. */
static void pair(uint64_t *c, uint64_t *t)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 5; i++) {
        uint64_t c0 = __rdtsc(), m = mono_ns(), c1 = __rdtsc();
        if (c1 - c0 < best) {
            best = c1 - c0;
            *c = c0 + (c1 - c0) / 2;
            *t = m;
        }
    }
}
#endif

void rec_clock_init(void)
{
    rec.tsc_scale_q32 = 0;
    const char *mode = getenv("PHANTOM_CLOCK");
    if ((mode && strcmp(mode, "monotonic") == 0) || !invariant_tsc())
        return;
#if defined(__x86_64__)
    uint64_t c0, t0, c1, t1;
    pair(&c0, &t0);
    do
        pair(&c1, &t1);
    while (t1 - t0 < 2000000);
    if (c1 <= c0)
        return;
    rec.tsc_base_c = rec.tsc_c0 = c0;
    rec.tsc_base_t = rec.tsc_t0 = t0;
    rec.tsc_scale_q32 = (uint64_t)(((unsigned __int128)(t1 - t0) << 32) / (c1 - c0));
#endif
}

void rec_clock_refine(void)
{
#if defined(__x86_64__)
    /* Under MPI_THREAD_MULTIPLE other threads read the mapping without the
     * lock; keep the first calibration there rather than risk a torn read. */
    if (!rec.tsc_scale_q32 || rec.mt)
        return;
    uint64_t c, t;
    pair(&c, &t);
    if (c <= rec.tsc_base_c || t <= rec.tsc_base_t)
        return;
    /* the current mapping's value at c: the new mapping continues from it */
    uint64_t now = rec.tsc_t0 + (uint64_t)(((unsigned __int128)(c - rec.tsc_c0) * rec.tsc_scale_q32) >> 32);
    rec.tsc_scale_q32 = (uint64_t)(((unsigned __int128)(t - rec.tsc_base_t) << 32) / (c - rec.tsc_base_c));
    rec.tsc_c0 = c;
    rec.tsc_t0 = now > rec.prev_exit ? now : rec.prev_exit;
#endif
}
