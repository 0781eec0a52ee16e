/* intercoll.c - collectives across an intercommunicator, for
 * tests/simmpi-recorded.sh: the even ranks (group A) against the odd ones
 * (group B), A's rank 0 the root.  A Gather of 16 ints from every rank of
 * B, an Iscatter of 16 ints to every rank of B (completed by MPI_Wait), an
 * Alltoall of 16 ints between every pair of ranks of A and B, an Allgather
 * both ways, a Reduce_scatter_block both ways (with groups of one size: Open
 * MPI sizes its messages by the local group), an Allgatherv both ways, a
 * Gatherv to and a Scatterv from A's rank 0 (rank r of a group sends or
 * receives 4 to 16 ints: vcount), an Alltoallv and an Alltoallw of 0, 4
 * or 8 ints between each pair, and a Reduce_scatter of 32 ints both ways, scattered
 * unevenly in each group.
 * Every rank checks what it received and exits 1 if it is wrong.  Any
 * number of ranks of at least 2. */
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

/* The ints rank r of a group sends in the Allgatherv and Gatherv, or
 * receives in the Scatterv: 4, 8, 12 or 16. */
static int vcount(int r) { return (r % 4 + 1) * 4; }

/* The remote group's counts (vcount) and displacements, packed. */
static void vlayout(int rn, int *counts, int *displs)
{
    for (int r = 0, at = 0; r < rn; at += counts[r], r++)
        counts[r] = vcount(r), displs[r] = at;
}

/* The ints from rank i of group A to rank j of group B, and back: 0, 4 or 8. */
static int a_to_b(int i, int j) { return (i + 2 * j) % 3 * 4; }
static int b_to_a(int j, int i) { return (2 * i + j + 1) % 3 * 4; }

/* What local rank lr got from each remote rank r in an Alltoallv or Alltoallw. */
static int alltoallv_check(const int *got, const int *rc, const int *rd, int lr, int rn, const char *what)
{
    int bad = 0;
    for (int r = 0; r < rn; r++)
        for (int k = 0; k < rc[r]; k++)
            if (got[rd[r] + k] != 700 + r * 1000 + lr * 100000 + k) {
                fprintf(stderr, "intercoll: %s: element %d from %d is %d\n", what, k, r, got[rd[r] + k]);
                bad = 1;
            }
    return bad;
}

/* Alltoallv, then Alltoallw, of a_to_b / b_to_a ints, element k from local
 * rank lr to remote rank r being 700 + lr * 1000 + r * 100000 + k. */
static int alltoallv(MPI_Comm inter, int in_a, int lr, int rn)
{
    int *sc = malloc((size_t)rn * sizeof *sc), *sd = malloc((size_t)rn * sizeof *sd);
    int *rc = malloc((size_t)rn * sizeof *rc), *rd = malloc((size_t)rn * sizeof *rd);
    int *out = malloc((size_t)rn * 8 * sizeof *out), *got = malloc((size_t)rn * 8 * sizeof *got), bad = 0;
    if (!sc || !sd || !rc || !rd || !out || !got)
        MPI_Abort(MPI_COMM_WORLD, 3);
    for (int r = 0, so = 0, ro = 0; r < rn; r++) {
        sc[r] = in_a ? a_to_b(lr, r) : b_to_a(lr, r);
        rc[r] = in_a ? b_to_a(r, lr) : a_to_b(r, lr);
        sd[r] = so, rd[r] = ro;
        for (int k = 0; k < sc[r]; k++)
            out[so + k] = 700 + lr * 1000 + r * 100000 + k;
        so += sc[r], ro += rc[r];
    }
    MPI_Alltoallv(out, sc, sd, MPI_INT, got, rc, rd, MPI_INT, inter);
    bad |= alltoallv_check(got, rc, rd, lr, rn, "alltoallv");
    /* Alltoallw: the same, its displacements in bytes and a type per peer */
    MPI_Datatype *types = malloc((size_t)rn * sizeof *types);
    if (!types)
        MPI_Abort(MPI_COMM_WORLD, 3);
    for (int r = 0; r < rn; r++)
        sd[r] *= (int)sizeof(int), rd[r] *= (int)sizeof(int), types[r] = MPI_INT;
    for (int i = 0; i < rn * 8; i++)
        got[i] = -1;
    MPI_Alltoallw(out, sc, sd, types, got, rc, rd, types, inter);
    for (int r = 0; r < rn; r++)
        rd[r] /= (int)sizeof(int);
    bad |= alltoallv_check(got, rc, rd, lr, rn, "alltoallw");
    free(types);
    free(sc), free(sd), free(rc), free(rd), free(out), free(got);
    return bad;
}

/* Reduce_scatter_block of N ints a rank (block), or Reduce_scatter of 2N
 * ints spread over the ln local ranks as evenly as they go: every rank
 * sends element j as 500 + lr + j, and local rank lr gets the sums over the
 * remote ranks of its part. */
static int reduce_scatter(MPI_Comm inter, int lr, int ln, int rn, int block)
{
    int total = block ? ln * N : 2 * N, *counts = malloc((size_t)ln * sizeof *counts), first = 0;
    int *in = malloc((size_t)total * sizeof *in), *mine = malloc((size_t)total * sizeof *mine), bad = 0;
    if (!counts || !in || !mine)
        MPI_Abort(MPI_COMM_WORLD, 3);
    for (int i = 0; i < ln; i++) {
        counts[i] = block ? N : total / ln + (i < total % ln);
        first += i < lr ? counts[i] : 0;
    }
    for (int j = 0; j < total; j++)
        in[j] = 500 + lr + j;
    if (block)
        MPI_Reduce_scatter_block(in, mine, N, MPI_INT, MPI_SUM, inter);
    else
        MPI_Reduce_scatter(in, mine, counts, MPI_INT, MPI_SUM, inter);
    for (int i = 0; i < counts[lr]; i++) /* the sum over the remote ranks r of 500 + r + first + i */
        if (mine[i] != rn * (500 + first + i) + rn * (rn - 1) / 2) {
            fprintf(stderr, "intercoll: reduce_scatter%s: element %d is %d\n", block ? "_block" : "", i,
                    mine[i]);
            bad = 1;
        }
    free(counts), free(in), free(mine);
    return bad;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, n, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (n < 2) {
        if (me == 0)
            fprintf(stderr, "intercoll: run on 2 ranks or more\n");
        MPI_Finalize();
        return 2;
    }
    MPI_Comm half, inter;
    MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half);
    /* the remote leader: world rank 1 for A, 0 for B */
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, me % 2 ? 0 : 1, 7, &inter);
    int lr, ln, rn;
    MPI_Comm_rank(inter, &lr);
    MPI_Comm_size(inter, &ln);
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
    if (ln == rn)
        bad |= reduce_scatter(inter, lr, ln, rn, 1);

    /* Allgatherv: every rank gets the remote group's blocks of vcount ints. */
    int *counts = malloc((size_t)rn * sizeof *counts), *displs = malloc((size_t)rn * sizeof *displs);
    if (!counts || !displs)
        MPI_Abort(MPI_COMM_WORLD, 3);
    vlayout(rn, counts, displs);
    for (int i = 0; i < N; i++)
        mine[i] = 600 + lr * 1000 + i;
    MPI_Allgatherv(mine, vcount(lr), MPI_INT, all, counts, displs, MPI_INT, inter);
    for (int r = 0; r < rn; r++)
        bad |= check(all + displs[r], counts[r], r, 600, "allgatherv");

    /* Gatherv: B's ranks send vcount ints each to A's rank 0. */
    for (int i = 0; i < N; i++)
        mine[i] = 800 + lr * 1000 + i;
    MPI_Gatherv(mine, in_a ? 0 : vcount(lr), MPI_INT, all, counts, displs, MPI_INT, root, inter);
    for (int r = 0; root == MPI_ROOT && r < rn; r++)
        bad |= check(all + displs[r], counts[r], r, 800, "gatherv");

    /* Scatterv: A's rank 0 sends vcount ints to each of B's ranks. */
    for (int r = 0; root == MPI_ROOT && r < rn; r++)
        for (int i = 0; i < counts[r]; i++)
            all[displs[r] + i] = 900 + r * 1000 + i;
    MPI_Scatterv(all, counts, displs, MPI_INT, mine, in_a ? 0 : vcount(lr), MPI_INT, root, inter);
    if (!in_a)
        bad |= check(mine, vcount(lr), lr, 900, "scatterv");
    free(counts);
    free(displs);

    bad |= alltoallv(inter, in_a, lr, rn);
    /* Reduce_scatter: the other group's sums of 2N ints, spread over this group */
    bad |= reduce_scatter(inter, lr, ln, rn, 0);

    free(all);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
    MPI_Finalize();
    return bad;
}
