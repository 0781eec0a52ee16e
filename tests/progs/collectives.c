/* collectives.c - every blocking collective and ten nonblocking ones, any np >= 2.
 *
 * Rooted collectives use different roots; MPI_IN_PLACE is used for Allreduce,
 * Reduce (at the root), Gather (at the root) and Allgather.  Data-moving
 * collectives carry pat(sender, seq) and are checked byte for byte; reductions
 * use integers with a closed-form result.
 */
#include "oracle.h"

static int me, np;
static MPI_Comm W; /* MPI_COMM_WORLD */

#define MAXP 64 /* the programs run at 2..MAXP ranks */

static void barrier_bcast(void)
{
    static int b[1000];
    static unsigned char c[777];
    O_Barrier(W);

    if (me == 0)
        pat_fill(b, sizeof b, me, 100, 0);
    O_Bcast(b, 1000, MPI_INT, 0, W);
    pat_check(b, sizeof b, 0, 100, 0, "bcast");

    if (me == np - 1)
        pat_fill(c, sizeof c, me, 101, 0);
    O_Bcast(c, 777, MPI_BYTE, np - 1, W);
    pat_check(c, sizeof c, np - 1, 101, 0, "bcast bytes");
}

static void reductions(void)
{
    enum { R = 100 };
    int v[R], s[R];
    long lv[R], ls[R];

    /* Reduce to the last rank: sum of (rank+1)*i + 3. */
    for (int i = 0; i < R; i++)
        v[i] = (me + 1) * i + 3;
    memset(s, 0, sizeof s);
    O_Reduce(v, s, R, MPI_INT, MPI_SUM, np - 1, W);
    if (me == np - 1)
        for (int i = 0; i < R; i++)
            check_int(s[i], (long long)i * np * (np + 1) / 2 + 3 * np, "reduce");

    /* Reduce in place at root 0: max of (7*rank + i) % 13. */
    for (int i = 0; i < R; i++)
        v[i] = (7 * me + i) % 13;
    if (me == 0)
        O_Reduce(MPI_IN_PLACE, v, R, MPI_INT, MPI_MAX, 0, W);
    else
        O_Reduce(v, NULL, R, MPI_INT, MPI_MAX, 0, W);
    if (me == 0)
        for (int i = 0; i < R; i++) {
            int want = 0;
            for (int r = 0; r < np; r++)
                want = (7 * r + i) % 13 > want ? (7 * r + i) % 13 : want;
            check_int(v[i], want, "reduce in place");
        }

    /* Allreduce of longs, then in place. */
    for (int i = 0; i < R; i++)
        lv[i] = 1000L * me + i;
    O_Allreduce(lv, ls, R, MPI_LONG, MPI_SUM, W);
    for (int i = 0; i < R; i++)
        check_int(ls[i], 1000LL * np * (np - 1) / 2 + (long long)np * i, "allreduce");
    for (int i = 0; i < R; i++)
        v[i] = me * i - 5;
    O_Allreduce(MPI_IN_PLACE, v, R, MPI_INT, MPI_MIN, W);
    for (int i = 0; i < R; i++)
        check_int(v[i], -5, "allreduce in place");
}

static void gathers(void)
{
    enum { G = 16 };
    int root = 1 % np;
    static int sb[G], rb[MAXP * G];
    static int vb[MAXP * 64], counts[MAXP], displs[MAXP];

    /* Gather to rank 1. */
    pat_fill(sb, sizeof sb, me, 110, 0);
    O_Gather(sb, G, MPI_INT, rb, G, MPI_INT, root, W);
    if (me == root)
        for (int r = 0; r < np; r++)
            pat_check(rb + r * G, sizeof sb, r, 110, 0, "gather");

    /* Gather in place at rank 0. */
    pat_fill(sb, sizeof sb, me, 111, 0);
    if (me == 0) {
        memcpy(rb, sb, sizeof sb);
        O_Gather(MPI_IN_PLACE, G, MPI_INT, rb, G, MPI_INT, 0, W);
        for (int r = 0; r < np; r++)
            pat_check(rb + r * G, sizeof sb, r, 111, 0, "gather in place");
    } else {
        O_Gather(sb, G, MPI_INT, NULL, 0, MPI_INT, 0, W);
    }

    /* Gatherv to rank 0: rank i sends 4(i+1) ints, blocks 2 ints apart. */
    for (int r = 0, off = 0; r < np; r++) {
        counts[r] = 4 * (r + 1);
        displs[r] = off;
        off += counts[r] + 2;
    }
    pat_fill(vb, sizeof(int) * (size_t)counts[me], me, 112, 0);
    static int vr[MAXP * 140];
    memset(vr, 0, sizeof vr);
    O_Gatherv(vb, counts[me], MPI_INT, vr, counts, displs, MPI_INT, 0, W);
    if (me == 0)
        for (int r = 0; r < np; r++)
            pat_check(vr + displs[r], sizeof(int) * (size_t)counts[r], r, 112, 0, "gatherv");
}

static void scatters(void)
{
    enum { S = 24 };
    int root = np - 1;
    static int sb[MAXP * MAXP * 2], rb[MAXP * S], counts[MAXP], displs[MAXP];

    if (me == root)
        pat_fill(sb, sizeof(int) * S * (size_t)np, me, 120, 0);
    O_Scatter(sb, S, MPI_INT, rb, S, MPI_INT, root, W);
    pat_check(rb, sizeof(int) * S, root, 120, sizeof(int) * S * (size_t)me, "scatter");

    /* Scatterv from rank 0: rank i gets 3(i+2) ints. */
    for (int r = 0, off = 0; r < np; r++) {
        counts[r] = 3 * (r + 2);
        displs[r] = off;
        off += counts[r];
    }
    if (me == 0)
        pat_fill(sb, sizeof(int) * (size_t)(displs[np - 1] + counts[np - 1]), me, 121, 0);
    O_Scatterv(sb, counts, displs, MPI_INT, rb, counts[me], MPI_INT, 0, W);
    pat_check(rb, sizeof(int) * (size_t)counts[me], 0, 121, sizeof(int) * (size_t)displs[me],
              "scatterv");
}

static void allgathers(void)
{
    enum { A = 20 };
    static int sb[A], rb[MAXP * A], counts[MAXP], displs[MAXP];

    pat_fill(sb, sizeof sb, me, 130, 0);
    O_Allgather(sb, A, MPI_INT, rb, A, MPI_INT, W);
    for (int r = 0; r < np; r++)
        pat_check(rb + r * A, sizeof sb, r, 130, 0, "allgather");

    memset(rb, 0, sizeof rb);
    pat_fill(rb + me * A, sizeof sb, me, 131, 0);
    O_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rb, A, MPI_INT, W);
    for (int r = 0; r < np; r++)
        pat_check(rb + r * A, sizeof sb, r, 131, 0, "allgather in place");

    for (int r = 0, off = 0; r < np; r++) {
        counts[r] = 5 * (r + 1);
        displs[r] = off;
        off += counts[r];
    }
    static int vs[MAXP * 5], vr[MAXP * MAXP * 5];
    pat_fill(vs, sizeof(int) * (size_t)counts[me], me, 132, 0);
    O_Allgatherv(vs, counts[me], MPI_INT, vr, counts, displs, MPI_INT, W);
    for (int r = 0; r < np; r++)
        pat_check(vr + displs[r], sizeof(int) * (size_t)counts[r], r, 132, 0, "allgatherv");
}

/* Alltoallv/w count and type from rank a to rank b (symmetric, so both agree). */
static int cv(int a, int b) { return a + b + 1; }
static MPI_Datatype tw(int a, int b) { return (a + b) % 2 ? MPI_CHAR : MPI_INT; }
static int cw(int a, int b) { return (a + b) % 2 ? 5 + a + b : 2 + a + b; }

static void alltoalls(void)
{
    enum { T = 8 };
    static int sb[MAXP * T], rb[MAXP * T];
    static int sc[MAXP], sd[MAXP], rc[MAXP], rd[MAXP];
    static int vs[MAXP * 2 * MAXP], vr[MAXP * 2 * MAXP];
    static char ws[MAXP * MAXP * 10], wr[MAXP * MAXP * 10];
    MPI_Datatype st[MAXP], rt[MAXP];

    /* Alltoall: block j of rank r's buffer goes to rank j. */
    pat_fill(sb, sizeof(int) * T * (size_t)np, me, 140, 0);
    O_Alltoall(sb, T, MPI_INT, rb, T, MPI_INT, W);
    for (int j = 0; j < np; j++)
        pat_check(rb + j * T, sizeof(int) * T, j, 140, sizeof(int) * T * (size_t)me, "alltoall");

    /* Alltoallv: rank a sends cv(a,b) ints to rank b. */
    for (int j = 0, so = 0, ro = 0; j < np; j++) {
        sc[j] = cv(me, j);
        sd[j] = so;
        so += sc[j];
        rc[j] = cv(j, me);
        rd[j] = ro;
        ro += rc[j];
    }
    pat_fill(vs, sizeof(int) * (size_t)(sd[np - 1] + sc[np - 1]), me, 141, 0);
    O_Alltoallv(vs, sc, sd, MPI_INT, vr, rc, rd, MPI_INT, W);
    for (int j = 0; j < np; j++) {
        int off = 0; /* where rank j's block for me starts in j's send buffer */
        for (int k = 0; k < me; k++)
            off += cv(j, k);
        pat_check(vr + rd[j], sizeof(int) * (size_t)rc[j], j, 141, sizeof(int) * (size_t)off,
                  "alltoallv");
    }

    /* Alltoallw: ints or chars depending on the pair, byte displacements. */
    for (int j = 0, so = 0, ro = 0; j < np; j++) {
        st[j] = tw(me, j);
        sc[j] = cw(me, j);
        sd[j] = so;
        so += sc[j] * (int)(st[j] == MPI_INT ? sizeof(int) : 1);
        rt[j] = tw(j, me);
        rc[j] = cw(j, me);
        rd[j] = ro;
        ro += rc[j] * (int)(rt[j] == MPI_INT ? sizeof(int) : 1);
    }
    pat_fill(ws, sizeof ws, me, 142, 0);
    O_Alltoallw(ws, sc, sd, st, wr, rc, rd, rt, W);
    for (int j = 0; j < np; j++) {
        int off = 0;
        for (int k = 0; k < me; k++)
            off += cw(j, k) * (int)(tw(j, k) == MPI_INT ? sizeof(int) : 1);
        pat_check(wr + rd[j], (size_t)rc[j] * (rt[j] == MPI_INT ? sizeof(int) : 1), j, 142,
                  (size_t)off, "alltoallw");
    }
}

static void reduce_scatters(void)
{
    static int sb[MAXP * MAXP], rb[MAXP], counts[MAXP];
    int total = 0, off = 0;
    for (int r = 0; r < np; r++) {
        counts[r] = r + 1;
        if (r < me)
            off += counts[r];
        total += counts[r];
    }
    for (int k = 0; k < total; k++)
        sb[k] = me + k;
    O_Reduce_scatter(sb, rb, counts, MPI_INT, MPI_SUM, W);
    for (int k = 0; k < counts[me]; k++)
        check_int(rb[k], (long long)np * (np - 1) / 2 + (long long)np * (off + k), "reduce_scatter");

    enum { B = 4 };
    for (int k = 0; k < B * np; k++)
        sb[k] = me * k;
    O_Reduce_scatter_block(sb, rb, B, MPI_INT, MPI_SUM, W);
    for (int k = 0; k < B; k++)
        check_int(rb[k], (long long)(me * B + k) * np * (np - 1) / 2, "reduce_scatter_block");
}

static void scans(void)
{
    enum { C = 5 };
    int v[C], s[C];
    for (int i = 0; i < C; i++)
        v[i] = me + 1 + i;
    O_Scan(v, s, C, MPI_INT, MPI_SUM, W);
    for (int i = 0; i < C; i++)
        check_int(s[i], (long long)(me + 1) * (me + 2) / 2 + (long long)(me + 1) * i, "scan");
    memset(s, 0, sizeof s);
    O_Exscan(v, s, C, MPI_INT, MPI_SUM, W);
    if (me > 0)
        for (int i = 0; i < C; i++)
            check_int(s[i], (long long)me * (me + 1) / 2 + (long long)me * i, "exscan");
}

static void nonblocking(void)
{
    MPI_Request r[4];
    static int bb[300], red[50], reds[50], ar[50], ars[50];
    static int a2s[MAXP * 6], a2r[MAXP * 6], ags[7], agr[MAXP * 7];
    static int gvs[MAXP], gvr[MAXP * MAXP], counts[MAXP], displs[MAXP];
    static int scs[MAXP * 9], scr[9], sv[3], svr[3], rsb[MAXP * 2], rsr[2];

    O_Ibarrier(W, &r[0]);
    O_Wait(&r[0], MPI_STATUS_IGNORE);

    /* Ibcast from rank 1, Ireduce to rank 0, Iallreduce: one Waitall. */
    int broot = 1 % np;
    if (me == broot)
        pat_fill(bb, sizeof bb, me, 150, 0);
    O_Ibcast(bb, 300, MPI_INT, broot, W, &r[0]);
    for (int i = 0; i < 50; i++)
        red[i] = me + i, ar[i] = me * i;
    O_Ireduce(red, reds, 50, MPI_INT, MPI_SUM, 0, W, &r[1]);
    O_Iallreduce(ar, ars, 50, MPI_INT, MPI_SUM, W, &r[2]);
    O_Waitall(3, r, MPI_STATUSES_IGNORE);
    pat_check(bb, sizeof bb, broot, 150, 0, "ibcast");
    if (me == 0)
        for (int i = 0; i < 50; i++)
            check_int(reds[i], (long long)np * (np - 1) / 2 + (long long)np * i, "ireduce");
    for (int i = 0; i < 50; i++)
        check_int(ars[i], (long long)i * np * (np - 1) / 2, "iallreduce");

    /* Ialltoall and Iallgather, completed by Waitany. */
    pat_fill(a2s, sizeof(int) * 6 * (size_t)np, me, 151, 0);
    O_Ialltoall(a2s, 6, MPI_INT, a2r, 6, MPI_INT, W, &r[0]);
    pat_fill(ags, sizeof ags, me, 152, 0);
    O_Iallgather(ags, 7, MPI_INT, agr, 7, MPI_INT, W, &r[1]);
    for (int k = 0, idx; k < 2; k++)
        O_Waitany(2, r, &idx, MPI_STATUS_IGNORE);
    for (int j = 0; j < np; j++) {
        pat_check(a2r + 6 * j, 6 * sizeof(int), j, 151, 6 * sizeof(int) * (size_t)me, "ialltoall");
        pat_check(agr + 7 * j, sizeof ags, j, 152, 0, "iallgather");
    }

    /* Igatherv to the last rank: rank i sends i+1 ints. */
    for (int j = 0, off = 0; j < np; j++) {
        counts[j] = j + 1;
        displs[j] = off;
        off += counts[j];
    }
    pat_fill(gvs, sizeof(int) * (size_t)counts[me], me, 153, 0);
    O_Igatherv(gvs, counts[me], MPI_INT, gvr, counts, displs, MPI_INT, np - 1, W, &r[0]);
    O_Wait(&r[0], MPI_STATUS_IGNORE);
    if (me == np - 1)
        for (int j = 0; j < np; j++)
            pat_check(gvr + displs[j], sizeof(int) * (size_t)counts[j], j, 153, 0, "igatherv");

    /* Iscatter from rank 0, Iscan, Ireduce_scatter_block: Waitall with statuses. */
    MPI_Status sts[3];
    if (me == 0)
        pat_fill(scs, sizeof(int) * 9 * (size_t)np, me, 154, 0);
    O_Iscatter(scs, 9, MPI_INT, scr, 9, MPI_INT, 0, W, &r[0]);
    for (int i = 0; i < 3; i++)
        sv[i] = me + i;
    O_Iscan(sv, svr, 3, MPI_INT, MPI_MAX, W, &r[1]);
    for (int k = 0; k < 2 * np; k++)
        rsb[k] = k + me;
    O_Ireduce_scatter_block(rsb, rsr, 2, MPI_INT, MPI_SUM, W, &r[2]);
    O_Waitall(3, r, sts);
    pat_check(scr, sizeof scr, 0, 154, 9 * sizeof(int) * (size_t)me, "iscatter");
    for (int i = 0; i < 3; i++)
        check_int(svr[i], me + i, "iscan");
    for (int k = 0; k < 2; k++)
        check_int(rsr[k], (long long)np * (2 * me + k) + (long long)np * (np - 1) / 2,
                  "ireduce_scatter_block");
}

int main(int argc, char **argv)
{
    O_Init(&argc, &argv);
    W = MPI_COMM_WORLD;
    MPI_Comm_rank(W, &me);
    MPI_Comm_size(W, &np);
    if (np < 2 || np > MAXP)
        fail("needs 2 to %d ranks", MAXP);

    barrier_bcast();
    reductions();
    gathers();
    scatters();
    allgathers();
    alltoalls();
    reduce_scatters();
    scans();
    nonblocking();

    O_Finalize();
    return 0;
}
