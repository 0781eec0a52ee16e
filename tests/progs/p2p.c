/* p2p.c - blocking point-to-point with known patterns, for any number of ranks >= 2.
 *
 * Ring Send/Recv, Ssend, Bsend, Rsend, Sendrecv, Sendrecv_replace,
 * MPI_PROC_NULL peers, MPI_ANY_SOURCE (once with MPI_STATUS_IGNORE) and
 * MPI_ANY_TAG, Probe / Iprobe / Mprobe+Mrecv / Improbe+Imrecv, and a derived
 * (MPI_Type_vector) datatype.  Every payload is pat(sender, seq) and checked.
 */
#include "oracle.h"

#define N 1000      /* ints in a ring message */
#define BIG 40000   /* ints in a rendezvous-sized message */

static int me, np, left, right;
static int sbuf[BIG], rbuf[BIG];

/* Receive n ints into rbuf and check them against pat(sender, seq). */
static void expect(int n, int sender, int seq, const char *what)
{
    pat_check(rbuf, sizeof(int) * (size_t)n, sender, seq, 0, what);
}

static void check_status(const MPI_Status *st, int src, int tag, int bytes, const char *what)
{
    int nb;
    MPI_Get_count(st, MPI_BYTE, &nb);
    if (st->MPI_SOURCE != src || st->MPI_TAG != tag || nb != bytes)
        fail("%s: status source %d tag %d bytes %d, expected %d %d %d", what, st->MPI_SOURCE,
             st->MPI_TAG, nb, src, tag, bytes);
}

static void ring_blocking(void)
{
    MPI_Status st;
    /* 1. Send/Recv ring, even ranks send first (also correct for odd np). */
    pat_fill(sbuf, sizeof(int) * N, me, 1, 0);
    if (me % 2 == 0) {
        O_Send(sbuf, N, MPI_INT, right, 10, MPI_COMM_WORLD);
        O_Recv(rbuf, N, MPI_INT, left, 10, MPI_COMM_WORLD, &st);
    } else {
        O_Recv(rbuf, N, MPI_INT, left, 10, MPI_COMM_WORLD, &st);
        O_Send(sbuf, N, MPI_INT, right, 10, MPI_COMM_WORLD);
    }
    check_status(&st, left, 10, 4 * N, "ring recv");
    expect(N, left, 1, "ring recv");

    /* 2. The same with a rendezvous-sized message, the other way round. */
    pat_fill(sbuf, sizeof(int) * BIG, me, 2, 0);
    if (me % 2 == 0) {
        O_Send(sbuf, BIG, MPI_INT, left, 11, MPI_COMM_WORLD);
        O_Recv(rbuf, BIG, MPI_INT, right, 11, MPI_COMM_WORLD, &st);
    } else {
        O_Recv(rbuf, BIG, MPI_INT, right, 11, MPI_COMM_WORLD, &st);
        O_Send(sbuf, BIG, MPI_INT, left, 11, MPI_COMM_WORLD);
    }
    expect(BIG, right, 2, "big ring recv");

    /* 3. Ssend ring. */
    pat_fill(sbuf, sizeof(int) * N, me, 3, 0);
    if (me % 2 == 0) {
        O_Ssend(sbuf, N, MPI_INT, right, 20, MPI_COMM_WORLD);
        O_Recv(rbuf, N, MPI_INT, left, 20, MPI_COMM_WORLD, &st);
    } else {
        O_Recv(rbuf, N, MPI_INT, left, 20, MPI_COMM_WORLD, &st);
        O_Ssend(sbuf, N, MPI_INT, right, 20, MPI_COMM_WORLD);
    }
    expect(N, left, 3, "ssend recv");

    /* 4. Bsend ring through an attached buffer. */
    int bsize = (int)sizeof(int) * N + MPI_BSEND_OVERHEAD;
    void *bbuf = malloc((size_t)bsize);
    MPI_Buffer_attach(bbuf, bsize);
    pat_fill(sbuf, sizeof(int) * N, me, 4, 0);
    O_Bsend(sbuf, N, MPI_INT, right, 30, MPI_COMM_WORLD);
    O_Recv(rbuf, N, MPI_INT, left, 30, MPI_COMM_WORLD, &st);
    expect(N, left, 4, "bsend recv");
    MPI_Buffer_detach(&bbuf, &bsize);
    free(bbuf);

    /* 5. Rsend: the receive is posted before the barrier, the send after it. */
    MPI_Request r;
    O_Irecv(rbuf, N, MPI_INT, left, 40, MPI_COMM_WORLD, &r);
    O_Barrier(MPI_COMM_WORLD);
    pat_fill(sbuf, sizeof(int) * N, me, 5, 0);
    O_Rsend(sbuf, N, MPI_INT, right, 40, MPI_COMM_WORLD);
    O_Wait(&r, &st);
    check_status(&st, left, 40, 4 * N, "rsend recv");
    expect(N, left, 5, "rsend recv");

    /* 6. Sendrecv right/left, then Sendrecv_replace left/right. */
    pat_fill(sbuf, sizeof(int) * 300, me, 6, 0);
    O_Sendrecv(sbuf, 300, MPI_INT, right, 50, rbuf, N, MPI_INT, left, 50, MPI_COMM_WORLD, &st);
    check_status(&st, left, 50, 4 * 300, "sendrecv");
    expect(300, left, 6, "sendrecv");
    pat_fill(rbuf, sizeof(int) * 200, me, 7, 0);
    O_Sendrecv_replace(rbuf, 200, MPI_INT, left, 51, right, 51, MPI_COMM_WORLD, &st);
    check_status(&st, right, 51, 4 * 200, "sendrecv_replace");
    expect(200, right, 7, "sendrecv_replace");
}

static void proc_null(void)
{
    MPI_Status st;
    /* Sends to and receives from MPI_PROC_NULL complete at once; the status
     * of such a receive is source MPI_PROC_NULL, tag MPI_ANY_TAG, count 0. */
    O_Send(sbuf, 10, MPI_INT, MPI_PROC_NULL, 60, MPI_COMM_WORLD);
    O_Recv(rbuf, 10, MPI_INT, MPI_PROC_NULL, 60, MPI_COMM_WORLD, &st);
    check_status(&st, MPI_PROC_NULL, MPI_ANY_TAG, 0, "recv from PROC_NULL");

    /* A non-periodic chain: the ends talk to MPI_PROC_NULL. */
    int up = me + 1 < np ? me + 1 : MPI_PROC_NULL, down = me > 0 ? me - 1 : MPI_PROC_NULL;
    pat_fill(sbuf, sizeof(int) * 64, me, 8, 0);
    O_Sendrecv(sbuf, 64, MPI_INT, up, 61, rbuf, 64, MPI_INT, down, 61, MPI_COMM_WORLD, &st);
    if (down == MPI_PROC_NULL)
        check_status(&st, MPI_PROC_NULL, MPI_ANY_TAG, 0, "chain from PROC_NULL");
    else
        expect(64, down, 8, "chain");
}

static void wildcards(void)
{
    MPI_Status st;
    enum { W = 128 };
    /* Everyone else sends W ints to rank 0 with tag 100+sender; rank 0 takes
     * them with MPI_ANY_SOURCE, the first one with MPI_STATUS_IGNORE. */
    if (me == 0) {
        int seen[4096] = {0};
        for (int k = 1; k < np; k++) {
            int src;
            if (k == 1) {
                O_Recv(rbuf, W, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                       MPI_STATUS_IGNORE);
                for (src = 1; src < np; src++)
                    if (pat_matches(rbuf, 4 * W, src, 9, 0))
                        break;
                if (src == np)
                    fail("ANY_SOURCE message from nobody");
            } else {
                O_Recv(rbuf, W, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
                src = st.MPI_SOURCE;
                check_status(&st, src, 100 + src, 4 * W, "any source");
                expect(W, src, 9, "any source");
            }
            if (seen[src]++)
                fail("two ANY_SOURCE messages from %d", src);
        }
    } else {
        pat_fill(sbuf, 4 * W, me, 9, 0);
        O_Send(sbuf, W, MPI_INT, 0, 100 + me, MPI_COMM_WORLD);
    }

    /* Rank 0 sends 10*dest ints to each other rank with tag 200+dest; they
     * receive from 0 with MPI_ANY_TAG and a larger posted count. */
    if (me == 0) {
        for (int d = 1; d < np; d++) {
            pat_fill(sbuf, sizeof(int) * 10 * (size_t)d, 0, 10 + d, 0);
            O_Send(sbuf, 10 * d, MPI_INT, d, 200 + d, MPI_COMM_WORLD);
        }
    } else {
        O_Recv(rbuf, BIG, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        check_status(&st, 0, 200 + me, 40 * me, "any tag");
        expect(10 * me, 0, 10 + me, "any tag");
    }
}

static void probes(void)
{
    MPI_Status st;
    MPI_Request sr[4], r;
    MPI_Message m;
    int flag, n;
    static int out[4][256];
    /* Four messages to the right, tags 300..303, sizes vary with sender and tag. */
    for (int k = 0; k < 4; k++) {
        n = 10 * (me + 1) + k;
        pat_fill(out[k], sizeof(int) * (size_t)n, me, 20 + k, 0);
        O_Isend(out[k], n, MPI_INT, right, 300 + k, MPI_COMM_WORLD, &sr[k]);
    }
    int want = 10 * (left + 1);

    O_Probe(left, 300, MPI_COMM_WORLD, &st);
    check_status(&st, left, 300, 4 * want, "probe");
    MPI_Get_count(&st, MPI_INT, &n);
    O_Recv(rbuf, n, MPI_INT, left, 300, MPI_COMM_WORLD, &st);
    expect(want, left, 20, "probed recv");

    do
        O_Iprobe(MPI_ANY_SOURCE, 301, MPI_COMM_WORLD, &flag, &st);
    while (!flag);
    check_status(&st, left, 301, 4 * (want + 1), "iprobe");
    O_Recv(rbuf, want + 1, MPI_INT, st.MPI_SOURCE, 301, MPI_COMM_WORLD, &st);
    expect(want + 1, left, 21, "iprobed recv");

    O_Mprobe(left, 302, MPI_COMM_WORLD, &m, &st);
    check_status(&st, left, 302, 4 * (want + 2), "mprobe");
    O_Mrecv(rbuf, want + 2, MPI_INT, &m, &st);
    check_status(&st, left, 302, 4 * (want + 2), "mrecv");
    expect(want + 2, left, 22, "mrecv");

    do
        O_Improbe(left, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &m, &st);
    while (!flag);
    check_status(&st, left, 303, 4 * (want + 3), "improbe");
    O_Imrecv(rbuf, BIG, MPI_INT, &m, &r);
    O_Wait(&r, &st);
    check_status(&st, left, 303, 4 * (want + 3), "imrecv");
    expect(want + 3, left, 23, "imrecv");

    O_Waitall(4, sr, MPI_STATUSES_IGNORE);
}

static void derived(void)
{
    MPI_Status st;
    MPI_Datatype vec;
    enum { COUNT = 8, BLOCK = 3, STRIDE = 5, NV = 2 };
    /* NV vectors of COUNT blocks of BLOCK ints, STRIDE ints apart: the packed
     * message is pat(me, 30) laid into the strided slots. */
    MPI_Type_vector(COUNT, BLOCK, STRIDE, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int packed[NV * COUNT * BLOCK], strided[NV * COUNT * STRIDE];
    size_t pbytes = sizeof packed;
    pat_fill(packed, pbytes, me, 30, 0);
    memset(strided, 0xee, sizeof strided);
    int pos = 0;
    MPI_Unpack(packed, (int)pbytes, &pos, strided, NV, vec, MPI_COMM_WORLD);

    /* Strided to strided, right to left. */
    int got[NV * COUNT * STRIDE];
    memset(got, 0, sizeof got);
    O_Sendrecv(strided, NV, vec, right, 70, got, NV, vec, left, 70, MPI_COMM_WORLD, &st);
    check_status(&st, left, 70, (int)pbytes, "vector sendrecv");
    int back[NV * COUNT * BLOCK];
    pos = 0;
    MPI_Pack(got, NV, vec, back, (int)sizeof back, &pos, MPI_COMM_WORLD);
    pat_check(back, pbytes, left, 30, 0, "vector type");
    /* The gaps between the blocks must stay untouched. */
    int ones[NV * COUNT * BLOCK], mask[NV * COUNT * STRIDE];
    memset(ones, 0xff, sizeof ones);
    memset(mask, 0, sizeof mask);
    pos = 0;
    MPI_Unpack(ones, (int)sizeof ones, &pos, mask, NV, vec, MPI_COMM_WORLD);
    for (int i = 0; i < NV * COUNT * STRIDE; i++)
        if (!mask[i] && got[i] != 0)
            fail("vector receive wrote into a gap at int %d", i);

    /* Strided sent, received contiguous (same type signature: NV*COUNT*BLOCK ints). */
    if (me % 2 == 0) {
        O_Send(strided, NV, vec, right, 71, MPI_COMM_WORLD);
        O_Recv(rbuf, NV * COUNT * BLOCK, MPI_INT, left, 71, MPI_COMM_WORLD, &st);
    } else {
        O_Recv(rbuf, NV * COUNT * BLOCK, MPI_INT, left, 71, MPI_COMM_WORLD, &st);
        O_Send(strided, NV, vec, right, 71, MPI_COMM_WORLD);
    }
    expect(NV * COUNT * BLOCK, left, 30, "vector to contiguous");
    MPI_Type_free(&vec);
}

int main(int argc, char **argv)
{
    O_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (np < 2)
        fail("needs at least 2 ranks");
    right = (me + 1) % np;
    left = (me + np - 1) % np;

    ring_blocking();
    proc_null();
    wildcards();
    probes();
    derived();

    O_Finalize();
    return 0;
}
