/* pingpong.c - the time an MPI call costs, for bench/record.
 *
 *   mpirun -np 2 pingpong [ITERS] [REPS] [NULLCALLS] [CLOCKREADS]
 *
 * Ranks 0 and 1 ping-pong 0-byte and 8-byte messages (MPI_Send/MPI_Recv),
 * ITERS round trips (default 100000) after 1000 of warm-up, REPS times
 * (default 5).  Each round trip is two calls on each rank, so
 *     ns per call = time of the round trips / (2 * ITERS)
 * (half a round trip: the one-way latency).  A third loop times NULLCALLS
 * (default 1000000, 0: no such loop) MPI_Send to MPI_PROC_NULL on each rank,
 * REPS times: a call that does no communication,
 * so its time is the cost of the MPI call itself (and of the recorder's
 * wrapper around it, when recorded).  A fourth times CLOCKREADS (default
 * 1000000, 0: none) clock_gettime(CLOCK_MONOTONIC) calls, REPS times: the
 * program's own clock, which the recorder interposes (and logs, with --log).
 * Rank 0 prints, per loop, the median of the REPS repetitions and the
 * number of MPI calls each rank made:
 *     pingpong: bytes=0 iters=100000 reps=5 ns_per_call=190.3
 *     pingpong: bytes=8 iters=100000 reps=5 ns_per_call=195.8
 *     pingpong: procnull iters=1000000 reps=5 ns_per_call=20.1
 *     pingpong: clock iters=1000000 reps=5 ns_per_call=21.0
 *     pingpong: calls_per_rank=4020043
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long ncalls; /* MPI calls the recorder turns into events, per rank */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    ncalls = 1;
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    long iters = argc > 1 ? atol(argv[1]) : 100000;
    int reps = argc > 2 ? atoi(argv[2]) : 5;
    if (np < 2 || iters < 1 || reps < 1 || reps > 100) {
        if (me == 0)
            fprintf(stderr, "usage: mpirun -np 2 pingpong [ITERS] [REPS] [NULLCALLS] [CLOCKREADS]\n");
        MPI_Finalize();
        return 2;
    }
    double t[100];
    int sizes[2] = {0, 8};
    for (int s = 0; s < 2; s++) {
        for (int r = 0; r < reps; r++) {
            /* the round trips proper: from just after the barrier to the end */
            double t0 = 0;
            char buf[8] = {0};
            for (long i = -1000; i < iters; i++) {
                if (i == 0) {
                    MPI_Barrier(MPI_COMM_WORLD);
                    ncalls++;
                    t0 = now();
                }
                if (me == 0) {
                    MPI_Send(buf, sizes[s], MPI_BYTE, 1, 0, MPI_COMM_WORLD);
                    MPI_Recv(buf, sizes[s], MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                } else if (me == 1) {
                    MPI_Recv(buf, sizes[s], MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    MPI_Send(buf, sizes[s], MPI_BYTE, 0, 0, MPI_COMM_WORLD);
                }
                ncalls += me < 2 ? 2 : 0;
            }
            t[r] = (now() - t0) / (2.0 * (double)iters);
        }
        qsort(t, (size_t)reps, sizeof *t, cmp);
        if (me == 0)
            printf("pingpong: bytes=%d iters=%ld reps=%d min_ns=%.1f ns_per_call=%.1f\n", sizes[s],
                   iters, reps, t[0], t[reps / 2]);
    }
    long n = argc > 3 ? atol(argv[3]) : 1000000;
    for (int r = 0; n > 0 && r < reps; r++) {
        char buf[8] = {0};
        MPI_Barrier(MPI_COMM_WORLD);
        ncalls++;
        double t0 = now();
        for (long i = 0; i < n; i++)
            MPI_Send(buf, 8, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
        ncalls += n;
        t[r] = (now() - t0) / (double)n;
    }
    qsort(t, (size_t)reps, sizeof *t, cmp);
    if (me == 0 && n > 0)
        printf("pingpong: procnull iters=%ld reps=%d min_ns=%.1f ns_per_call=%.1f\n", n, reps, t[0],
               t[reps / 2]);
    long nclock = argc > 4 ? atol(argv[4]) : 1000000;
    for (int r = 0; nclock > 0 && r < reps; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        ncalls++;
        struct timespec ts;
        double t0 = now();
        for (long i = 0; i < nclock; i++)
            clock_gettime(CLOCK_MONOTONIC, &ts);
        t[r] = (now() - t0) / (double)nclock;
    }
    qsort(t, (size_t)reps, sizeof *t, cmp);
    if (me == 0 && nclock > 0)
        printf("pingpong: clock iters=%ld reps=%d min_ns=%.1f ns_per_call=%.1f\n", nclock, reps, t[0],
               t[reps / 2]);
    ncalls++; /* MPI_Finalize */
    if (me == 0)
        printf("pingpong: calls_per_rank=%ld\n", ncalls);
    MPI_Finalize();
    return 0;
}
