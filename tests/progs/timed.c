/* timed.c - control flow that depends on the clock, as in HPCC's b_eff:
 * each rank sends to MPI_PROC_NULL until its own MPI_Wtime says 5 ms have
 * passed (a local decision), then repeats a ring exchange until the ranks
 * agree (Allreduce) that 20 ms have passed.  How many calls that makes
 * differs from run to run, so a replay makes the recorded calls only if
 * MPI_Wtime answers as recorded.  Before that, as HPCC does, rank 0 seeds a
 * draw with time() and broadcasts it; the draw picks the ring's tag, so a
 * replay in a later second makes the recorded calls only if time() answers
 * as recorded too (every rank calls time() once; only rank 0's counts).
 * Between the two, the same sends for 3 ms by clock_gettime
 * (CLOCK_MONOTONIC), then by gettimeofday, as NetPIPE times its trials,
 * then for 3 ms of CPU time by clock() (which glibc computes from a
 * clock_gettime call inside libc, unseen by a preloaded one), by
 * getrusage(RUSAGE_SELF) and by times() (whose ticks of 10 ms make that
 * up to 10 ms; the run starts with a times(NULL), Linux's cheap tick
 * clock, whose ticks go into the checksum), then 100,000 clock_gettime reads in one gap between two
 * calls, whose nanoseconds' parities go into the checksum.  With
 * PH_TIMED_EXTRA_CLOCK set, one CLOCK_REALTIME read more comes first,
 * which a replay of a recording made without it cannot answer
 * (tests/replay-divergence.sh).
 * Prints "rank R checksum" of the counts, the seed and everything received. */
#define _DEFAULT_SOURCE /* gettimeofday and CLOCK_MONOTONIC under -std=c11 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/times.h>
#include <time.h>
#include <unistd.h>

static double monotonic_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double cpu_s(void) { return (double)clock() / CLOCKS_PER_SEC; }

static double rusage_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + 1e-6 * (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

static double times_s(void)
{
    struct tms t;
    times(&t);
    return (double)(t.tms_utime + t.tms_stime) / (double)sysconf(_SC_CLK_TCK);
}

static double timeofday_s(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + 1e-6 * (double)tv.tv_usec;
}

/* Sends to MPI_PROC_NULL until CLOCK says 3 ms have passed: how many. */
static int sends_for_3ms(double (*clock)(void), int tag)
{
    int n = 0;
    double t0 = clock();
    while (clock() - t0 < 0.003) {
        MPI_Send(&n, 1, MPI_INT, MPI_PROC_NULL, tag, MPI_COMM_WORLD);
        n++;
    }
    return n;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    uint64_t h = 0xcbf29ce484222325ull;
    long long ticks = (long long)times(NULL);
    h = fnv(h, &ticks, sizeof ticks);
    int rounds = 0, total = 0, local = 0;
    long long seed = (long long)time(NULL);
    MPI_Bcast(&seed, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    int ring_tag = 1 + (int)(seed % 1000);
    h = fnv(h, &seed, sizeof seed);
    double t0 = MPI_Wtime();
    while (MPI_Wtime() - t0 < 0.005) { /* decided by this rank's clock alone */
        MPI_Send(&local, 1, MPI_INT, MPI_PROC_NULL, 2, MPI_COMM_WORLD);
        local++;
    }
    h = fnv(h, &local, sizeof local);
    if (getenv("PH_TIMED_EXTRA_CLOCK")) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
    }
    int by_clock = sends_for_3ms(monotonic_s, 3), by_timeofday = sends_for_3ms(timeofday_s, 4);
    h = fnv(h, &by_clock, sizeof by_clock);
    h = fnv(h, &by_timeofday, sizeof by_timeofday);
    int by_cpu = sends_for_3ms(cpu_s, 5), by_rusage = sends_for_3ms(rusage_s, 6), by_times = sends_for_3ms(times_s, 7);
    h = fnv(h, &by_cpu, sizeof by_cpu);
    h = fnv(h, &by_rusage, sizeof by_rusage);
    h = fnv(h, &by_times, sizeof by_times);
    long odd = 0;
    for (int i = 0; i < 100000; i++) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        odd += ts.tv_nsec & 1;
    }
    h = fnv(h, &odd, sizeof odd);
    do { /* as many rounds as fit in 20 ms on this rank's clock */
        int out = me * 1000 + rounds, in = -1;
        MPI_Sendrecv(&out, 1, MPI_INT, (me + 1) % np, ring_tag, &in, 1, MPI_INT, (me + np - 1) % np,
                     ring_tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        h = fnv(h, &in, sizeof in);
        rounds++;
        /* every rank goes on while any rank wants another round */
        int more = MPI_Wtime() - t0 < 0.02, any = 0;
        MPI_Allreduce(&more, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
        if (!any)
            break;
    } while (1);
    MPI_Allreduce(&rounds, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    h = fnv(h, &total, sizeof total);
    printf("rank %d checksum 0x%016llx (%d+%d+%d+%d+%d+%d sends, %d rounds, seed %lld)\n", me, (unsigned long long)h,
           local, by_clock, by_timeofday, by_cpu, by_rusage, by_times, rounds, seed);
    MPI_Finalize();
    return 0;
}
