/* cpu-split.c - where a rank's time goes: in MPI calls or between them,
 * and how much of each it had the CPU (not a test; doc/accuracy.md).
 *
 *   mpicc -O2 -shared -fPIC -o cpu-split.so bench/cpu-split.c
 *   mpirun -np 2 -x LD_PRELOAD=$PWD/cpu-split.so ./app ...
 *
 * A PMPI shim around the calls LAMMPS's melt makes (Send, Irecv, Wait,
 * Sendrecv, Allreduce, Bcast, Barrier; others count as outside).  From
 * MPI_Init's return to MPI_Finalize each rank prints to stderr its wall and
 * thread CPU time in all, inside those calls, and outside them, with the
 * share of the time outside that it had the CPU: on a CPU quota, where
 * the quota's pauses fell.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <time.h>

static double t0, c0, in_cpu, in_wall;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double cpu(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#define TIMED(call)                                                                                  \
    double w_ = now(), c_ = cpu();                                                                   \
    int r_ = call;                                                                                   \
    in_wall += now() - w_;                                                                           \
    in_cpu += cpu() - c_;                                                                            \
    return r_

int MPI_Init(int *argc, char ***argv)
{
    int r = PMPI_Init(argc, argv);
    t0 = now();
    c0 = cpu();
    return r;
}

int MPI_Send(const void *b, int n, MPI_Datatype d, int p, int t, MPI_Comm c) { TIMED(PMPI_Send(b, n, d, p, t, c)); }
int MPI_Irecv(void *b, int n, MPI_Datatype d, int p, int t, MPI_Comm c, MPI_Request *q)
{
    TIMED(PMPI_Irecv(b, n, d, p, t, c, q));
}
int MPI_Wait(MPI_Request *q, MPI_Status *s) { TIMED(PMPI_Wait(q, s)); }
int MPI_Sendrecv(const void *a, int n, MPI_Datatype d, int p, int t, void *b, int m, MPI_Datatype e, int q,
                 int u, MPI_Comm c, MPI_Status *s)
{
    TIMED(PMPI_Sendrecv(a, n, d, p, t, b, m, e, q, u, c, s));
}
int MPI_Allreduce(const void *a, void *b, int n, MPI_Datatype d, MPI_Op o, MPI_Comm c)
{
    TIMED(PMPI_Allreduce(a, b, n, d, o, c));
}
int MPI_Bcast(void *b, int n, MPI_Datatype d, int root, MPI_Comm c) { TIMED(PMPI_Bcast(b, n, d, root, c)); }
int MPI_Barrier(MPI_Comm c) { TIMED(PMPI_Barrier(c)); }

int MPI_Finalize(void)
{
    double w = now() - t0, c = cpu() - c0;
    int rank;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fprintf(stderr,
            "cpu-split: rank %d wall %.3f s cpu %.3f s | in MPI: wall %.3f cpu %.3f | outside: wall %.3f "
            "cpu %.3f (had the CPU %.0f%% of it)\n",
            rank, w, c, in_wall, in_cpu, w - in_wall, c - in_cpu,
            w > in_wall ? 100 * (c - in_cpu) / (w - in_wall) : 0.0);
    return PMPI_Finalize();
}
