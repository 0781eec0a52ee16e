/* comms.c - communicators and traffic on each of them, for any number of ranks >= 2.
 *
 * Comm_dup, Comm_split (even/odd, reversed key order), Comm_split_type(SHARED),
 * Comm_create from a reordered group, Comm_create_group, a periodic 2-D
 * Cart_create with a Cart_shift halo exchange and Cart_sub, a ring
 * Dist_graph_create_adjacent, Intercomm_create between the even and odd
 * halves with point-to-point and a Bcast across it, Intercomm_merge, a
 * chain of 24 Comm_dups, and Comm_free of all of them.  MPI_Pcontrol(1) /
 * MPI_Pcontrol(0) bracket the Cartesian part.  Ranks in a sub-communicator
 * differ from world ranks on purpose, so peer_world and the members lists
 * are really checked.
 */
#include "oracle.h"

static int me, np;
static MPI_Comm W;

/* Ring Sendrecv inside c: send pat(me, seq) to the next comm rank, check the previous. */
static void ring(MPI_Comm c, int seq, int tag)
{
    int r, n;
    int sb[64], rb[64];
    MPI_Status st;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &n);
    int next = (r + 1) % n, prev = (r + n - 1) % n;
    pat_fill(sb, sizeof sb, me, seq, 0);
    O_Sendrecv(sb, 64, MPI_INT, next, tag, rb, 64, MPI_INT, prev, tag, c, &st);
    pat_check(rb, sizeof rb, o_world(c, prev), seq, 0, "ring");
}

/* Allreduce inside c of the world ranks: checks who is in c. */
static void sum_members(MPI_Comm c, const char *what)
{
    int n, mine = me, sum, want = 0;
    MPI_Comm_size(c, &n);
    O_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, c);
    for (int r = 0; r < n; r++)
        want += o_world(c, r);
    check_int(sum, want, what);
}

int main(int argc, char **argv)
{
    MPI_Comm dup, half, node, created, grp = MPI_COMM_NULL, cart, cartsub, graph, inter, merged;
    MPI_Group wg, g;
    int ranks[256];

    O_Init(&argc, &argv);
    W = MPI_COMM_WORLD;
    MPI_Comm_rank(W, &me);
    MPI_Comm_size(W, &np);
    if (np < 2 || np > 256)
        fail("needs 2 to 256 ranks");
    MPI_Comm_group(W, &wg);

    /* Dup of world. */
    O_Comm_dup(W, &dup, "dup");
    ring(dup, 1, 1);
    sum_members(dup, "dup");

    /* Even / odd halves, comm ranks in decreasing world rank. */
    O_Comm_split(W, me % 2, -me, &half, me % 2 ? "odd" : "even");
    {
        int b[32], hr;
        MPI_Comm_rank(half, &hr);
        if (hr == 0)
            pat_fill(b, sizeof b, me, 2, 0);
        O_Bcast(b, 32, MPI_INT, 0, half);
        pat_check(b, sizeof b, o_world(half, 0), 2, 0, "half bcast");
        ring(half, 3, 2);
        /* A nonblocking receive and a matched probe on the half: the Wait's
         * and the Mrecv's statuses hold ranks of `half`, which differ from
         * world ranks here. */
        int hn, nb_s[24], nb_r[24], from;
        MPI_Status st;
        MPI_Request rq;
        MPI_Message msg;
        MPI_Comm_size(half, &hn);
        from = (hr + hn - 1) % hn;
        pat_fill(nb_s, sizeof nb_s, me, 4, 0);
        O_Irecv(nb_r, 24, MPI_INT, from, 41, half, &rq);
        O_Send(nb_s, 24, MPI_INT, (hr + 1) % hn, 41, half);
        O_Wait(&rq, &st);
        pat_check(nb_r, sizeof nb_r, o_world(half, from), 4, 0, "half irecv");
        pat_fill(nb_s, sizeof nb_s, me, 5, 0);
        O_Send(nb_s, 24, MPI_INT, (hr + 1) % hn, 42, half);
        O_Mprobe(MPI_ANY_SOURCE, 42, half, &msg, &st);
        O_Mrecv(nb_r, 24, MPI_INT, &msg, &st);
        pat_check(nb_r, sizeof nb_r, o_world(half, st.MPI_SOURCE), 5, 0, "half mrecv");
    }

    /* Processes sharing memory (here: everyone). */
    O_Comm_split_type(W, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node, "node");
    sum_members(node, "node");

    /* Comm_create: everyone but world rank 1, in reverse order. */
    int n = 0;
    for (int r = np - 1; r >= 0; r--)
        if (r != 1)
            ranks[n++] = r;
    MPI_Group_incl(wg, n, ranks, &g);
    O_Comm_create(W, g, &created, "created");
    MPI_Group_free(&g);
    if (created != MPI_COMM_NULL) {
        int sb[8], rb[8 * 256], cr, cn;
        MPI_Comm_rank(created, &cr);
        MPI_Comm_size(created, &cn);
        ring(created, 4, 3);
        pat_fill(sb, sizeof sb, me, 5, 0);
        O_Gather(sb, 8, MPI_INT, rb, 8, MPI_INT, 0, created);
        if (cr == 0)
            for (int r = 0; r < cn; r++)
                pat_check(rb + 8 * r, sizeof sb, o_world(created, r), 5, 0, "created gather");
    } else if (me != 1) {
        fail("Comm_create gave MPI_COMM_NULL to a member");
    }

    /* Comm_create_group: only the even ranks take part, in reverse order. */
    if (me % 2 == 0) {
        n = 0;
        for (int r = np - 1; r >= 0; r--)
            if (r % 2 == 0)
                ranks[n++] = r;
        MPI_Group_incl(wg, n, ranks, &g);
        O_Comm_create_group(W, g, 77, &grp, "evens");
        MPI_Group_free(&g);
        int sb[4], rb[4 * 256];
        pat_fill(sb, sizeof sb, me, 6, 0);
        O_Allgather(sb, 4, MPI_INT, rb, 4, MPI_INT, grp);
        for (int r = 0; r < n; r++)
            pat_check(rb + 4 * r, sizeof sb, ranks[r], 6, 0, "evens allgather");
    }

    /* Periodic 2-D torus: halo exchange along both dimensions, then rows. */
    O_Pcontrol(1);
    int dims[2] = {0, 0}, periods[2] = {1, 1}, remain[2] = {0, 1};
    MPI_Dims_create(np, 2, dims);
    O_Cart_create(W, 2, dims, periods, 0, &cart, "cart");
    for (int d = 0; d < 2; d++) {
        int src, dst, sb[16], rb[16];
        MPI_Status st;
        MPI_Cart_shift(cart, d, 1, &src, &dst);
        pat_fill(sb, sizeof sb, me, 10 + d, 0);
        O_Sendrecv(sb, 16, MPI_INT, dst, 20 + d, rb, 16, MPI_INT, src, 20 + d, cart, &st);
        pat_check(rb, sizeof rb, o_world(cart, src), 10 + d, 0, "halo up");
        pat_fill(sb, sizeof sb, me, 12 + d, 0);
        O_Sendrecv(sb, 16, MPI_INT, src, 22 + d, rb, 16, MPI_INT, dst, 22 + d, cart, &st);
        pat_check(rb, sizeof rb, o_world(cart, dst), 12 + d, 0, "halo down");
    }
    O_Cart_sub(cart, remain, &cartsub, "cart_row");
    sum_members(cartsub, "cart_row");
    O_Pcontrol(0);

    /* Ring as a distributed graph. */
    int left = (me + np - 1) % np, right = (me + 1) % np, weight = 1;
    O_Dist_graph_create_adjacent(W, 1, &left, &weight, 1, &right, &weight, MPI_INFO_NULL, 0,
                                 &graph, "graph");
    ring(graph, 7, 4);

    /* Intercommunicator between the halves.  Each half's leader (comm rank 0)
     * is its highest world rank. */
    int top_odd = (np - 1) % 2 ? np - 1 : np - 2, top_even = (np - 1) % 2 ? np - 2 : np - 1;
    O_Intercomm_create(half, 0, W, me % 2 ? top_even : top_odd, 99, &inter, "inter");
    {
        int lr, ln, rn, sb[20], rb[20];
        MPI_Status st;
        MPI_Comm_rank(inter, &lr);
        MPI_Comm_size(inter, &ln);
        MPI_Comm_remote_size(inter, &rn);
        /* Local rank k and remote rank k swap a message, evens first. */
        if (lr < rn) {
            pat_fill(sb, sizeof sb, me, 30, 0);
            if (me % 2 == 0) {
                O_Send(sb, 20, MPI_INT, lr, 5, inter);
                O_Recv(rb, 20, MPI_INT, lr, 6, inter, &st);
            } else {
                /* a Wait whose status is a rank of the remote group */
                MPI_Request rq;
                O_Irecv(rb, 20, MPI_INT, lr, 5, inter, &rq);
                O_Wait(&rq, &st);
                O_Send(sb, 20, MPI_INT, lr, 6, inter);
            }
            pat_check(rb, sizeof rb, o_world(inter, lr), 30, 0, "intercomm p2p");
        }
        /* Bcast from the even leader to the odd half. */
        int b[40];
        int root = me % 2 ? 0 : lr == 0 ? MPI_ROOT : MPI_PROC_NULL;
        if (root == MPI_ROOT)
            pat_fill(b, sizeof b, me, 31, 0);
        O_Bcast(b, 40, MPI_INT, root, inter);
        if (me % 2)
            pat_check(b, sizeof b, top_even, 31, 0, "intercomm bcast");
        (void)ln;
    }

    /* Merge: evens low, odds high. */
    O_Intercomm_merge(inter, me % 2, &merged, "merged");
    sum_members(merged, "merged");
    {
        int mr;
        MPI_Comm_rank(merged, &mr);
        int want_even_first = me % 2 == 0 ? mr < (np + 1) / 2 : mr >= (np + 1) / 2;
        if (!want_even_first)
            fail("Intercomm_merge order: rank %d", mr);
    }
    O_Barrier(merged);

    /* A chain of dups, each of the one before: the recorder's table of
     * communicators grows (realloc) while it holds the parent's entry. */
    MPI_Comm chain[24];
    for (int i = 0; i < 24; i++) {
        char label[16];
        snprintf(label, sizeof label, "chain%d", i);
        O_Comm_dup(i ? chain[i - 1] : W, &chain[i], label);
    }
    sum_members(chain[23], "chain");
    for (int i = 23; i >= 0; i--)
        O_Comm_free(&chain[i]);

    O_Comm_free(&merged);
    O_Comm_free(&inter);
    O_Comm_free(&graph);
    O_Comm_free(&cartsub);
    O_Comm_free(&cart);
    if (grp != MPI_COMM_NULL)
        O_Comm_free(&grp);
    if (created != MPI_COMM_NULL)
        O_Comm_free(&created);
    O_Comm_free(&node);
    O_Comm_free(&half);
    O_Comm_free(&dup);
    MPI_Group_free(&wg);

    O_Finalize();
    return 0;
}
