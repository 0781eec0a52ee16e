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
