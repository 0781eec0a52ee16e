/* ph_clock.h - CLOCK_MONOTONIC, and the invariant TSC that stands in for it.
 *
 * The recorder and the replay library time every MPI call twice.  A vDSO
 * clock_gettime costs about 20 ns here; where the TSC is invariant
 * (constant_tsc and nonstop_tsc: one rate on every core, through frequency
 * changes and idle states) one rdtsc costs a few, and a linear map from
 * (TSC, CLOCK_MONOTONIC) pairs turns ticks back into nanoseconds.
 * PHANTOM_CLOCK=monotonic forces clock_gettime everywhere.
 */
#ifndef PH_CLOCK_H
#define PH_CLOCK_H

#include <stdint.h>
#include <sys/time.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

/* The C library's clock_gettime.  The recorder and the replay library
 * interpose the application's clock_gettime (its results are logged and
 * answered, like MPI_Wtime's), so their own clock reads call this one,
 * which is never taken for the application's. */
int ph_clock_gettime(clockid_t id, struct timespec *ts);
/* The C library's gettimeofday, for the same reason. */
int ph_gettimeofday(struct timeval *tv, void *tz);
/* A clock reading as the message log holds it (PH_LOG_CLOCK_LEN bytes). */
void ph_clock_pack(uint8_t *out, clockid_t id, const struct timespec *ts);
/* ... and back: the clock id it was read from. */
clockid_t ph_clock_unpack(const uint8_t *in, struct timespec *ts);

/* CLOCK_MONOTONIC in nanoseconds. */
static inline uint64_t ph_clock_mono_ns(void)
{
    struct timespec ts;
    ph_clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Whether to time with the TSC: x86-64, an invariant TSC per /proc/cpuinfo,
 * and PHANTOM_CLOCK not "monotonic". */
int ph_clock_use_tsc(void);

/* Ticks of the chosen clock: the TSC if use_tsc, else CLOCK_MONOTONIC ns. */
static inline uint64_t ph_clock_ticks(int use_tsc)
{
#if defined(__x86_64__)
    if (use_tsc)
        return __rdtsc();
#else
    (void)use_tsc;
#endif
    return ph_clock_mono_ns();
}

/* A (ticks, CLOCK_MONOTONIC ns) pair read as close together as possible:
 * the best of five tries, the ticks taken half-way through the read. */
void ph_clock_pair(int use_tsc, uint64_t *ticks, uint64_t *ns);

#endif
