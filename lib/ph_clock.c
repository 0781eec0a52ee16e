/* ph_clock.c - see ph_clock.h. */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ph_clock.h"

typedef int (*clock_gettime_fn)(clockid_t, struct timespec *);
typedef int (*gettimeofday_fn)(struct timeval *, void *);

/* The next definition of NAME after the object that holds this code: the
 * C library's (vDSO-backed) when that object is a preloaded runtime that
 * defines NAME itself.  Looked up once; FALLBACK if the lookup fails. */
static void *next_definition(_Atomic(void *) *cache, const char *name, void *fallback)
{
    void *f = atomic_load_explicit(cache, memory_order_relaxed);
    if (!f) {
        f = dlsym(RTLD_NEXT, name);
        if (!f)
            f = fallback;
        atomic_store_explicit(cache, f, memory_order_relaxed);
    }
    return f;
}

static int clock_syscall(clockid_t id, struct timespec *ts)
{
    return (int)syscall(SYS_clock_gettime, id, ts);
}

int ph_clock_gettime(clockid_t id, struct timespec *ts)
{
    static _Atomic(void *) real;
    return ((clock_gettime_fn)next_definition(&real, "clock_gettime", (void *)clock_syscall))(id, ts);
}

static int gettimeofday_from_clock(struct timeval *tv, void *tz)
{
    struct timespec ts;
    int rc = ph_clock_gettime(CLOCK_REALTIME, &ts);
    if (rc == 0) {
        tv->tv_sec = ts.tv_sec;
        tv->tv_usec = ts.tv_nsec / 1000;
    }
    if (tz)
        memset(tz, 0, sizeof(struct timezone));
    return rc;
}

int ph_gettimeofday(struct timeval *tv, void *tz)
{
    static _Atomic(void *) real;
    return ((gettimeofday_fn)next_definition(&real, "gettimeofday", (void *)gettimeofday_from_clock))(tv, tz);
}

void ph_clock_pack(uint8_t *out, clockid_t id, const struct timespec *ts)
{
    int64_t s = ts->tv_sec, ns = ts->tv_nsec;
    int32_t i = (int32_t)id;
    memcpy(out, &s, 8);
    memcpy(out + 8, &ns, 8);
    memcpy(out + 16, &i, 4);
}

clockid_t ph_clock_unpack(const uint8_t *in, struct timespec *ts)
{
    int64_t s, ns;
    int32_t i;
    memcpy(&s, in, 8);
    memcpy(&ns, in + 8, 8);
    memcpy(&i, in + 16, 4);
    ts->tv_sec = (time_t)s;
    ts->tv_nsec = (long)ns;
    return (clockid_t)i;
}

typedef int (*getrusage_fn)(int, struct rusage *);
typedef clock_t (*times_fn)(struct tms *);

static int getrusage_syscall(int who, struct rusage *ru) { return (int)syscall(SYS_getrusage, who, ru); }

int ph_getrusage(int who, struct rusage *ru)
{
    static _Atomic(void *) real;
    return ((getrusage_fn)next_definition(&real, "getrusage", (void *)getrusage_syscall))(who, ru);
}

static clock_t times_syscall(struct tms *buf) { return (clock_t)syscall(SYS_times, buf); }

clock_t ph_times(struct tms *buf)
{
    static _Atomic(void *) real;
    return ((times_fn)next_definition(&real, "times", (void *)times_syscall))(buf);
}

static uint8_t *put_i64(uint8_t *p, int64_t v)
{
    memcpy(p, &v, 8);
    return p + 8;
}

static const uint8_t *get_i64(const uint8_t *p, int64_t *v)
{
    memcpy(v, p, 8);
    return p + 8;
}

static uint8_t *put_kind(uint8_t *p, int32_t kind, int32_t who)
{
    memcpy(p, &kind, 4);
    memcpy(p + 4, &who, 4);
    return p + 8;
}

static int kind_is(const uint8_t *in, int32_t kind, int32_t who)
{
    int32_t k, w;
    memcpy(&k, in, 4);
    memcpy(&w, in + 4, 4);
    return k == kind && w == who;
}

/* struct rusage's counters after the two times, in declaration order (each
 * a long inside a union in glibc's header). */
#define RUSAGE_COUNTERS(X)                                                                             \
    X(ru_maxrss) X(ru_ixrss) X(ru_idrss) X(ru_isrss) X(ru_minflt) X(ru_majflt) X(ru_nswap)            \
    X(ru_inblock) X(ru_oublock) X(ru_msgsnd) X(ru_msgrcv) X(ru_nsignals) X(ru_nvcsw) X(ru_nivcsw)

void ph_usage_pack_rusage(uint8_t *out, int who, const struct rusage *ru)
{
    uint8_t *p = put_kind(out, PH_USAGE_RUSAGE, who);
    p = put_i64(p, ru->ru_utime.tv_sec);
    p = put_i64(p, ru->ru_utime.tv_usec);
    p = put_i64(p, ru->ru_stime.tv_sec);
    p = put_i64(p, ru->ru_stime.tv_usec);
#define PUT(f) p = put_i64(p, ru->f);
    RUSAGE_COUNTERS(PUT)
#undef PUT
}

int ph_usage_unpack_rusage(const uint8_t *in, uint64_t len, int who, struct rusage *ru)
{
    if (len != PH_USAGE_RUSAGE_LEN || !kind_is(in, PH_USAGE_RUSAGE, who))
        return -1;
    const uint8_t *p = in + 8;
    int64_t v[4];
    for (int i = 0; i < 4; i++)
        p = get_i64(p, &v[i]);
    memset(ru, 0, sizeof *ru);
    ru->ru_utime = (struct timeval){.tv_sec = (time_t)v[0], .tv_usec = (suseconds_t)v[1]};
    ru->ru_stime = (struct timeval){.tv_sec = (time_t)v[2], .tv_usec = (suseconds_t)v[3]};
    int64_t c;
#define GET(f) p = get_i64(p, &c), ru->f = (long)c;
    RUSAGE_COUNTERS(GET)
#undef GET
    return 0;
}

void ph_usage_pack_times(uint8_t *out, clock_t rc, const struct tms *t)
{
    uint8_t *p = put_kind(out, PH_USAGE_TIMES, 0);
    p = put_i64(p, rc);
    p = put_i64(p, t->tms_utime);
    p = put_i64(p, t->tms_stime);
    p = put_i64(p, t->tms_cutime);
    put_i64(p, t->tms_cstime);
}

int ph_usage_unpack_times(const uint8_t *in, uint64_t len, clock_t *rc, struct tms *t)
{
    if (len != PH_USAGE_TIMES_LEN || !kind_is(in, PH_USAGE_TIMES, 0))
        return -1;
    int64_t v[5];
    const uint8_t *p = in + 8;
    for (int i = 0; i < 5; i++)
        p = get_i64(p, &v[i]);
    *rc = (clock_t)v[0];
    *t = (struct tms){.tms_utime = (clock_t)v[1], .tms_stime = (clock_t)v[2], .tms_cutime = (clock_t)v[3],
                      .tms_cstime = (clock_t)v[4]};
    return 0;
}

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
