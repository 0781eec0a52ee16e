/* rec_clock.c - CLOCK_MONOTONIC at the price of a TSC read.
 *
 * Every MPI call reads the clock twice.  Where the TSC is invariant
 * (constant_tsc and nonstop_tsc: one rate on every core, through frequency
 * changes and idle states) rec_now() reads it and maps it linearly onto
 * CLOCK_MONOTONIC (lib/ph_clock.h).  The mapping starts from a 2 ms
 * calibration at MPI_Init and is refined at each periodic flush from an ever
 * longer baseline, always re-anchored at the current time so that timestamps never jump back.
 */
#include "ph_clock.h"
#include "rec.h"

void rec_clock_init(void)
{
    rec.tsc_scale_q32 = 0;
    if (!ph_clock_use_tsc())
        return;
#if defined(__x86_64__)
    uint64_t c0, t0, c1, t1;
    ph_clock_pair(1, &c0, &t0);
    do
        ph_clock_pair(1, &c1, &t1);
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
    ph_clock_pair(1, &c, &t);
    if (c <= rec.tsc_base_c || t <= rec.tsc_base_t)
        return;
    /* the current mapping's value at c: the new mapping continues from it */
    uint64_t now = rec.tsc_t0 + (uint64_t)(((unsigned __int128)(c - rec.tsc_c0) * rec.tsc_scale_q32) >> 32);
    rec.tsc_scale_q32 = (uint64_t)(((unsigned __int128)(t - rec.tsc_base_t) << 32) / (c - rec.tsc_base_c));
    rec.tsc_c0 = c;
    rec.tsc_t0 = now > rec.prev_done ? now : rec.prev_done;
#endif
}
