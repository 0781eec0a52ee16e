/* quota-gaps.c - where a CPU quota's pauses fall: in the computation or in
 * the MPI calls after it (doc/replay.md, "Throttled nodes").
 *
 *   mpirun -np 2 [--mca btl tcp,self] [sh bench/slow-cpu.sh] quota-gaps BYTES ITERS WORK
 *
 * Two ranks, ITERS times: compute (WORK iterations of a fixed floating-point
 * loop, about 0.7 ns each here), then exchange BYTES both ways (Irecv, Send,
 * Wait).  Each rank prints the wall and CPU time (CLOCK_THREAD_CPUTIME_ID)
 * of its computation and of its MPI calls, and the share of the run it had
 * its CPU.  A uniformly slower CPU would stretch both parts alike; a quota
 * that the kernel enforces at its tick and at system calls stretches the
 * calls after a computation shorter than a tick.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double clock_s(clockid_t c)
{
    struct timespec t;
    clock_gettime(c, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static volatile double sink;

static void work(long n)
{
    double x = 0;
    for (long i = 0; i < n; i++)
        x += (double)i * 1e-9;
    sink = x;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (np != 2 || argc != 4) {
        if (me == 0)
            fprintf(stderr, "usage: mpirun -np 2 quota-gaps BYTES ITERS WORK\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long n = atol(argv[1]), wn = atol(argv[3]);
    int iters = atoi(argv[2]);
    char *sb = calloc((size_t)n, 1), *rb = malloc((size_t)n);
    const clockid_t W = CLOCK_MONOTONIC, C = CLOCK_THREAD_CPUTIME_ID;
    double comp_w = 0, comp_c = 0, mpi_w = 0, mpi_c = 0, t0 = clock_s(W), c0 = clock_s(C);
    for (int i = 0; i < iters; i++) {
        double a = clock_s(W), ac = clock_s(C);
        work(wn);
        double b = clock_s(W), bc = clock_s(C);
        MPI_Request q;
        MPI_Irecv(rb, (int)n, MPI_BYTE, 1 - me, 0, MPI_COMM_WORLD, &q);
        MPI_Send(sb, (int)n, MPI_BYTE, 1 - me, 0, MPI_COMM_WORLD);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        double e = clock_s(W), ec = clock_s(C);
        comp_w += b - a, comp_c += bc - ac, mpi_w += e - b, mpi_c += ec - bc;
    }
    double run_w = clock_s(W) - t0, run_c = clock_s(C) - c0;
    printf("rank %d: run wall %.3f s, cpu %.3f s (share %.3f) | computation wall %.3f s, cpu %.3f s "
           "(wall/cpu %.3f) | MPI wall %.3f s, cpu %.3f s\n",
           me, run_w, run_c, run_c / run_w, comp_w, comp_c, comp_w / comp_c, mpi_w, mpi_c);
    free(sb);
    free(rb);
    MPI_Finalize();
    return 0;
}
