/* nonblocking.c - requests and their completion, for any number of ranks >= 2.
 *
 * Isend/Irecv completed by Wait, Waitall (once with MPI_STATUSES_IGNORE),
 * Waitany (looped until MPI_UNDEFINED), Waitsome, a Test loop, Testall,
 * Testany, Testsome, and persistent Send_init/Recv_init reused through
 * Start/Startall, then Request_free, and requests with MPI_PROC_NULL peers.
 * Starts with MPI_Init_thread.
 *
 * Open MPI 4.1 returns one shared, already complete request object for every
 * send that completes at once and for MPI_PROC_NULL peers, so several live
 * requests can have the same handle value: null_peers() makes that happen.
 */
#include "oracle.h"

#define N 512
#define K 3 /* messages per direction in the any/some phases */

static int me, np, left, right;

static void check_status(const MPI_Status *st, int src, int tag, int bytes, const char *what)
{
    int nb;
    MPI_Get_count(st, MPI_BYTE, &nb);
    if (st->MPI_SOURCE != src || st->MPI_TAG != tag || nb != bytes)
        fail("%s: status source %d tag %d bytes %d, expected %d %d %d", what, st->MPI_SOURCE,
             st->MPI_TAG, nb, src, tag, bytes);
}

/* Message k of a phase: from sender s, (N + 16*k) ints, pattern seq base + k. */
static int msg_len(int k) { return N + 16 * k; }

static void wait_single(void)
{
    static int sb[N], rb[N];
    MPI_Request rr, sr;
    MPI_Status st;
    pat_fill(sb, sizeof sb, me, 1, 0);
    O_Irecv(rb, N, MPI_INT, left, 1, MPI_COMM_WORLD, &rr);
    O_Isend(sb, N, MPI_INT, right, 1, MPI_COMM_WORLD, &sr);
    O_Wait(&rr, &st);
    check_status(&st, left, 1, sizeof rb, "wait");
    pat_check(rb, sizeof rb, left, 1, 0, "wait");
    O_Wait(&sr, MPI_STATUS_IGNORE);
}

static void wait_all(void)
{
    static int sb[2][N], rb[2][N];
    MPI_Request r[4];
    MPI_Status st[4];
    for (int pass = 0; pass < 2; pass++) {
        int seq = 10 + 2 * pass;
        pat_fill(sb[0], sizeof sb[0], me, seq, 0);     /* to the left  */
        pat_fill(sb[1], sizeof sb[1], me, seq + 1, 0); /* to the right */
        O_Irecv(rb[0], N, MPI_INT, left, 2, MPI_COMM_WORLD, &r[0]);
        O_Irecv(rb[1], N, MPI_INT, right, 3, MPI_COMM_WORLD, &r[1]);
        O_Isend(sb[0], N, MPI_INT, left, 3, MPI_COMM_WORLD, &r[2]);
        O_Isend(sb[1], N, MPI_INT, right, 2, MPI_COMM_WORLD, &r[3]);
        if (pass == 0) {
            O_Waitall(4, r, st);
            check_status(&st[0], left, 2, 4 * N, "waitall 0");
            check_status(&st[1], right, 3, 4 * N, "waitall 1");
        } else {
            O_Waitall(4, r, MPI_STATUSES_IGNORE);
        }
        pat_check(rb[0], sizeof rb[0], left, seq + 1, 0, "waitall from left");
        pat_check(rb[1], sizeof rb[1], right, seq, 0, "waitall from right");
    }
}

/* K receives from the left and K sends to the right in one array. */
static int sbk[K][N + 16 * K], rbk[K][N + 16 * K];
static void post_k(MPI_Request *r, int seq, int tag0)
{
    for (int k = 0; k < K; k++)
        O_Irecv(rbk[k], N + 16 * K, MPI_INT, left, tag0 + k, MPI_COMM_WORLD, &r[k]);
    for (int k = 0; k < K; k++) {
        pat_fill(sbk[k], sizeof(int) * (size_t)msg_len(k), me, seq + k, 0);
        O_Isend(sbk[k], msg_len(k), MPI_INT, right, tag0 + k, MPI_COMM_WORLD, &r[K + k]);
    }
}
static void check_k(int k, const MPI_Status *st, int seq, int tag0, const char *what)
{
    if (st)
        check_status(st, left, tag0 + k, 4 * msg_len(k), what);
    pat_check(rbk[k], sizeof(int) * (size_t)msg_len(k), left, seq + k, 0, what);
}

static void wait_any(void)
{
    MPI_Request r[2 * K];
    MPI_Status st;
    int idx, done = 0;
    post_k(r, 20, 10);
    for (;;) {
        O_Waitany(2 * K, r, &idx, &st);
        if (idx == MPI_UNDEFINED)
            break;
        if (idx < K)
            check_k(idx, &st, 20, 10, "waitany");
        done++;
    }
    check_int(done, 2 * K, "waitany completions");
}

static void wait_some(void)
{
    MPI_Request r[2 * K];
    MPI_Status st[2 * K];
    int idx[2 * K], out, done = 0;
    post_k(r, 30, 20);
    while (done < 2 * K) {
        O_Waitsome(2 * K, r, &out, idx, st);
        for (int i = 0; i < out; i++)
            if (idx[i] < K)
                check_k(idx[i], &st[i], 30, 20, "waitsome");
        done += out;
    }
}

static void tests(void)
{
    static int sb[N], rb[N];
    MPI_Request r[2 * K], rr, sr;
    MPI_Status st, sts[2 * K];
    int flag, idx[2 * K], out, done;

    /* Test loop on a receive. */
    pat_fill(sb, sizeof sb, me, 40, 0);
    O_Irecv(rb, N, MPI_INT, left, 40, MPI_COMM_WORLD, &rr);
    O_Isend(sb, N, MPI_INT, right, 40, MPI_COMM_WORLD, &sr);
    do
        O_Test(&rr, &flag, &st);
    while (!flag);
    check_status(&st, left, 40, sizeof rb, "test");
    pat_check(rb, sizeof rb, left, 40, 0, "test");
    do
        O_Test(&sr, &flag, MPI_STATUS_IGNORE);
    while (!flag);

    /* Testall loop. */
    post_k(r, 50, 50);
    do
        O_Testall(2 * K, r, &flag, sts);
    while (!flag);
    for (int k = 0; k < K; k++)
        check_k(k, &sts[k], 50, 50, "testall");

    /* Testany loop until every request completed. */
    post_k(r, 60, 60);
    for (done = 0; done < 2 * K;) {
        int i;
        O_Testany(2 * K, r, &i, &flag, &st);
        if (!flag)
            continue;
        if (i < K)
            check_k(i, &st, 60, 60, "testany");
        done++;
    }

    /* Testsome loop until every request completed. */
    post_k(r, 70, 70);
    for (done = 0; done < 2 * K;) {
        O_Testsome(2 * K, r, &out, idx, sts);
        for (int i = 0; i < out; i++)
            if (idx[i] < K)
                check_k(idx[i], &sts[i], 70, 70, "testsome");
        done += out;
    }
}

static void persistent(void)
{
    static int sb[N], rb[N];
    MPI_Request r[2];
    MPI_Status st[2];
    enum { ITERS = 5 };
    O_Recv_init(rb, N, MPI_INT, left, 80, MPI_COMM_WORLD, &r[0]);
    O_Send_init(sb, N, MPI_INT, right, 80, MPI_COMM_WORLD, &r[1]);
    for (int it = 0; it < ITERS; it++) {
        pat_fill(sb, sizeof sb, me, 80 + it, 0);
        if (it % 2 == 0) {
            O_Startall(2, r);
        } else {
            O_Start(&r[0]);
            O_Start(&r[1]);
        }
        if (it == 3) {
            O_Wait(&r[0], &st[0]);
            O_Wait(&r[1], &st[1]);
        } else {
            O_Waitall(2, r, st);
        }
        check_status(&st[0], left, 80, sizeof rb, "persistent");
        pat_check(rb, sizeof rb, left, 80 + it, 0, "persistent");
    }
    O_Request_free(&r[0]);
    O_Request_free(&r[1]);
}

/* Requests with MPI_PROC_NULL peers and tiny sends, completed by one Waitall. */
static void null_peers(void)
{
    int a[4], b[4] = {0}, t[3][2], tr[3][2];
    MPI_Request r[5];
    MPI_Status st[5];
    O_Irecv(a, 4, MPI_INT, MPI_PROC_NULL, 90, MPI_COMM_WORLD, &r[0]);
    O_Isend(b, 4, MPI_INT, MPI_PROC_NULL, 90, MPI_COMM_WORLD, &r[1]);
    for (int k = 0; k < 3; k++) {
        pat_fill(t[k], sizeof t[k], me, 90 + k, 0);
        O_Isend(t[k], 2, MPI_INT, right, 91 + k, MPI_COMM_WORLD, &r[2 + k]);
    }
    for (int k = 0; k < 3; k++) {
        O_Recv(tr[k], 2, MPI_INT, left, 91 + k, MPI_COMM_WORLD, &st[0]);
        pat_check(tr[k], sizeof tr[k], left, 90 + k, 0, "tiny");
    }
    O_Waitall(5, r, st);
    check_status(&st[0], MPI_PROC_NULL, MPI_ANY_TAG, 0, "Irecv from MPI_PROC_NULL");
}

int main(int argc, char **argv)
{
    int provided;
    O_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (np < 2)
        fail("needs at least 2 ranks");
    right = (me + 1) % np;
    left = (me + np - 1) % np;

    wait_single();
    wait_all();
    wait_any();
    wait_some();
    tests();
    persistent();
    null_peers();

    O_Finalize();
    return 0;
}
