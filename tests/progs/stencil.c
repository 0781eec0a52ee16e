/* stencil.c - the bundled example: a 2-D Jacobi heat solver.
 *
 * The grid is split into horizontal strips, one per rank.  Each iteration
 * exchanges halo rows with the neighbours (Irecv/Isend/Waitall), relaxes the
 * strip, and every 10 iterations agrees on the residual with Allreduce: the
 * communication pattern of many SPMD codes, small enough to read.
 *
 *   mpirun -np 4 ./stencil [N] [iterations]     (default 512 x 512, 200)
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int n = argc > 1 ? atoi(argv[1]) : 512;
    int iters = argc > 2 ? atoi(argv[2]) : 200;
    if (n < size || iters < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: stencil [N >= ranks] [iterations >= 1]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* rows [lo, hi) of the N x N grid, plus one halo row on each side */
    int lo = (int)((long)n * rank / size), hi = (int)((long)n * (rank + 1) / size);
    int rows = hi - lo;
    double *u = calloc((size_t)(rows + 2) * (size_t)n, sizeof *u);
    double *v = calloc((size_t)(rows + 2) * (size_t)n, sizeof *v);
    if (!u || !v)
        MPI_Abort(MPI_COMM_WORLD, 1);
    if (rank == 0) /* a hot top edge */
        for (int j = 0; j < n; j++)
            u[(size_t)n + j] = v[(size_t)n + j] = 100.0;
    int up = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    int down = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
    double residual = 0.0;
    for (int it = 0; it < iters; it++) {
        MPI_Request rq[4];
        MPI_Irecv(u, n, MPI_DOUBLE, up, 1, MPI_COMM_WORLD, &rq[0]);
        MPI_Irecv(u + (size_t)(rows + 1) * n, n, MPI_DOUBLE, down, 0, MPI_COMM_WORLD, &rq[1]);
        MPI_Isend(u + (size_t)n, n, MPI_DOUBLE, up, 0, MPI_COMM_WORLD, &rq[2]);
        MPI_Isend(u + (size_t)rows * n, n, MPI_DOUBLE, down, 1, MPI_COMM_WORLD, &rq[3]);
        MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
        double local = 0.0;
        for (int i = 1; i <= rows; i++) {
            int global = lo + i - 1;
            for (int j = 0; j < n; j++) {
                size_t k = (size_t)i * n + j;
                if (global == 0 || global == n - 1 || j == 0 || j == n - 1) {
                    v[k] = u[k];
                    continue;
                }
                v[k] = 0.25 * (u[k - n] + u[k + n] + u[k - 1] + u[k + 1]);
                local += fabs(v[k] - u[k]);
            }
        }
        double *t = u;
        u = v;
        v = t;
        if (it % 10 == 9 || it == iters - 1)
            MPI_Allreduce(&local, &residual, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    if (rank == 0)
        printf("stencil: %d x %d grid, %d ranks, %d iterations, residual %.6e\n", n, n, size, iters,
               residual);
    free(u);
    free(v);
    MPI_Finalize();
    return 0;
}
