/* intercoll.c - rooted collectives across an intercommunicator, for
 * tests/simmpi-recorded.sh: the even ranks (group A) against the odd ones
 * (group B), A's rank 0 the root.  A Gather of 16 ints from every rank of
 * B, an Iscatter of 16 ints to every rank of B (completed by MPI_Wait), an
 * Alltoall of 16 ints between every pair of ranks of A and B, an Allgather
 * and a Reduce_scatter_block both ways, and an Allgatherv both ways
 * (phantom predict does not simulate that one on an intercommunicator, and
 * counts it).  Every rank checks what it received
 * and exits 1 if it is wrong.  Any even number of ranks of at least 2. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define N 16

static int check(const int *v, int n, int from, int base, const char *what)
{
    for (int i = 0; i < n; i++)
        if (v[i] != base + from * 1000 + i % N) {
            fprintf(stderr, "intercoll: %s: element %d is %d, want %d\n", what, i, v[i],
                    base + from * 1000 + i % N);
            return 1;
        }
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, n, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (n < 2 || n % 2) {
        if (me == 0)
            fprintf(stderr, "intercoll: run on an even number of ranks\n");
        MPI_Finalize();
        return 2;
    }
    MPI_Comm half, inter;
    MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half);
    /* the remote leader: world rank 1 for A, 0 for B */
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, me % 2 ? 0 : 1, 7, &inter);
    int lr, rn;
    MPI_Comm_rank(inter, &lr);
    MPI_Comm_remote_size(inter, &rn);
    int in_a = me % 2 == 0, root = in_a ? (lr == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    int *all = malloc((size_t)rn * N * sizeof *all), mine[N];
    if (!all)
        MPI_Abort(MPI_COMM_WORLD, 3);

    /* Gather: B's ranks send 16 ints each to A's rank 0. */
    for (int i = 0; i < N; i++)
        mine[i] = 100 + lr * 1000 + i;
    MPI_Gather(mine, in_a ? 0 : N, MPI_INT, all, N, MPI_INT, root, inter);
    for (int r = 0; root == MPI_ROOT && r < rn; r++)
        bad |= check(all + r * N, N, r, 100, "gather");

    /* Iscatter: A's rank 0 sends 16 ints to each of B's ranks. */
    for (int r = 0; root == MPI_ROOT && r < rn; r++)
        for (int i = 0; i < N; i++)
            all[r * N + i] = 200 + r * 1000 + i;
    MPI_Request req;
    MPI_Iscatter(all, N, MPI_INT, mine, in_a ? 0 : N, MPI_INT, root, inter, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    if (!in_a)
        bad |= check(mine, N, lr, 200, "iscatter");

    /* Alltoall: block r of every rank goes to rank r of the other group. */
    int *out = malloc((size_t)rn * N * sizeof *out);
    if (!out)
        MPI_Abort(MPI_COMM_WORLD, 3);
    for (int r = 0; r < rn; r++)
        for (int i = 0; i < N; i++)
            out[r * N + i] = 400 + lr * 1000 + r * 100000 + i;
    MPI_Alltoall(out, N, MPI_INT, all, N, MPI_INT, inter);
    for (int r = 0; r < rn; r++) /* from rank r: its block for me */
        bad |= check(all + r * N, N, r, 400 + lr * 100000, "alltoall");
    free(out);

    /* Allgather: every rank gets the remote group's blocks. */
    for (int i = 0; i < N; i++)
        mine[i] = 300 + lr * 1000 + i;
    MPI_Allgather(mine, N, MPI_INT, all, N, MPI_INT, inter);
    for (int r = 0; r < rn; r++)
        bad |= check(all + r * N, N, r, 300, "allgather");

    /* Reduce_scatter_block: the other group's sums, block lr to local rank lr. */
    int *in = malloc((size_t)n / 2 * N * sizeof *in); /* a block for each rank of a group */
    if (!in)
        MPI_Abort(MPI_COMM_WORLD, 3);
    for (int j = 0; j < n / 2 * N; j++)
        in[j] = 500 + lr + j;
    MPI_Reduce_scatter_block(in, mine, N, MPI_INT, MPI_SUM, inter);
    for (int i = 0; i < N; i++) /* sum over the remote ranks r of 500 + r + lr * N + i */
        if (mine[i] != rn * (500 + lr * N + i) + rn * (rn - 1) / 2) {
            fprintf(stderr, "intercoll: reduce_scatter_block: element %d is %d\n", i, mine[i]);
            bad = 1;
        }
    free(in);

    /* Allgatherv: the Allgather again, with per-rank counts and displacements. */
    int *counts = malloc((size_t)rn * sizeof *counts), *displs = malloc((size_t)rn * sizeof *displs);
    if (!counts || !displs)
        MPI_Abort(MPI_COMM_WORLD, 3);
    for (int r = 0; r < rn; r++)
        counts[r] = N, displs[r] = r * N;
    for (int i = 0; i < N; i++)
        mine[i] = 600 + lr * 1000 + i;
    MPI_Allgatherv(mine, N, MPI_INT, all, counts, displs, MPI_INT, inter);
    for (int r = 0; r < rn; r++)
        bad |= check(all + r * N, N, r, 600, "allgatherv");
    free(counts);
    free(displs);

    free(all);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
    MPI_Finalize();
    return bad;
}
