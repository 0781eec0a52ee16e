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
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/times.h>
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

/* The C library's getrusage and times, for the same reason as
 * ph_clock_gettime: the recorder and the replay library interpose the
 * application's (programs decide from CPU time too). */
int ph_getrusage(int who, struct rusage *ru);
clock_t ph_times(struct tms *buf);

/* A getrusage or times result as the message log holds it: int32_t kind
 * (PH_USAGE_RUSAGE or PH_USAGE_TIMES), int32_t who (getrusage's argument;
 * 0 for times), then int64_t fields: for getrusage the user and system
 * times' seconds and microseconds, then the fourteen counters from
 * ru_maxrss to ru_nivcsw in struct rusage's order (PH_USAGE_RUSAGE_LEN
 * bytes); for times its result, then tms_utime, tms_stime, tms_cutime and
 * tms_cstime (PH_USAGE_TIMES_LEN bytes). */
enum { PH_USAGE_RUSAGE = 1, PH_USAGE_TIMES = 2 };
#define PH_USAGE_RUSAGE_LEN (8 + 18 * 8)
#define PH_USAGE_TIMES_LEN (8 + 5 * 8)
void ph_usage_pack_rusage(uint8_t *out, int who, const struct rusage *ru);
void ph_usage_pack_times(uint8_t *out, clock_t rc, const struct tms *t);
/* Back from len bytes: 0 when they are a getrusage(who) result, else -1. */
int ph_usage_unpack_rusage(const uint8_t *in, uint64_t len, int who, struct rusage *ru);
/* ... a times result: 0 (*rc its result), else -1. */
int ph_usage_unpack_times(const uint8_t *in, uint64_t len, clock_t *rc, struct tms *t);

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
