/* pass-calls.c - the time of calls the recorder passes through (and times)
 * and of a local call it only counts, per call, from inside the program:
 * bench/pass-calls.sh runs it bare and recorded.  Rank 0 prints
 * "NAME ns-per-call" for each; 2 ranks.  Not a test. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { CALLS = 2000000 };

static double per_call_ns(double t0, double t1) { return (t1 - t0) * 1e9 / CALLS; }

int main(int argc, char **argv)
{
    int rank, size, sink = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double *mem;
    MPI_Win win;
    MPI_Win_allocate(sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    MPI_Win_lock_all(0, win);
    MPI_Fint world = MPI_Comm_c2f(MPI_COMM_WORLD);

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < CALLS; i++) /* one-sided, nothing pending: the call's own cost */
        MPI_Win_flush_all(win);
    double t1 = MPI_Wtime();
    for (int i = 0; i < CALLS; i++) /* a handle conversion: next to nothing inside MPI */
        sink += MPI_Comm_f2c(world) == MPI_COMM_WORLD;
    double t2 = MPI_Wtime();
    for (int i = 0; i < CALLS; i++) { /* local, counted only */
        int r;
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
        sink += r;
    }
    double t3 = MPI_Wtime();

    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    if (rank == 0)
        printf("MPI_Win_flush_all %.1f\nMPI_Comm_f2c %.1f\nMPI_Comm_rank %.1f\n", per_call_ns(t0, t1),
               per_call_ns(t1, t2), per_call_ns(t2, t3));
    MPI_Finalize();
    return sink < 0; /* keeps the loops */
}
