/* replay-membound.c - a memory-bound kernel for bench/replay (PHANTOM Fig. 6).
 *
 * Each rank sweeps three arrays of MiB/3 MiB each (the STREAM triad
 * a = b + s*c) several times per iteration, then exchanges a small halo with
 * its ring neighbours and agrees on a residual with Allreduce.  Alone on a
 * node a rank has the memory bandwidth and the shared cache to itself; with
 * other ranks sweeping beside it, each sweep takes longer.  Rank 0 prints a
 * checksum of everything it received, so a replay can be checked.
 *
 *   mpirun -np N replay-membound [MiB per rank (48)] [iterations (20)] [sweeps (4)]
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    size_t mib = argc > 1 ? (size_t)atol(argv[1]) : 48;
    int iters = argc > 2 ? atoi(argv[2]) : 20, sweeps = argc > 3 ? atoi(argv[3]) : 4;
    size_t n = mib * 1024 * 1024 / 3 / sizeof(double);
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
    if (!a || !b || !c)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (size_t i = 0; i < n; i++) {
        a[i] = 0;
        b[i] = (double)(i % 1000) + me;
        c[i] = 1.0 / (double)(1 + i % 7);
    }
    uint64_t sum = 0;
    double halo[64], in[64], res = 0;
    for (int it = 0; it < iters; it++) {
        for (int s = 0; s < sweeps; s++) /* the memory-bound part */
            for (size_t i = 0; i < n; i++)
                a[i] = b[i] + 0.5 * c[i] + a[i] * 1e-9;
        for (int k = 0; k < 64; k++)
            halo[k] = a[(size_t)k * (n / 64)];
        MPI_Sendrecv(halo, 64, MPI_DOUBLE, (me + 1) % np, 1, in, 64, MPI_DOUBLE, (me + np - 1) % np, 1,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        double local = in[it % 64];
        MPI_Allreduce(&local, &res, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        for (int k = 0; k < 64; k++)
            sum = sum * 1099511628211ull ^ (uint64_t)(in[k] * 1e6);
        sum = sum * 1099511628211ull ^ (uint64_t)(res * 1e6);
    }
    if (me == 0)
        printf("membound: %d ranks, %zu MiB each, %d iterations, checksum 0x%016llx\n", np, mib, iters,
               (unsigned long long)sum);
    free(a);
    free(b);
    free(c);
    MPI_Finalize();
    return 0;
}
