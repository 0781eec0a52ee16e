/* coll-list.c - print one collective's decomposition, message by message.
 *
 *   coll-list COLL ALG SIZE ROOT COUNT ESIZE [V0 V1 ...]
 *
 * ALG is Open MPI's number or name (0 or auto: the decision rule), or nbc:
 * the I-form, as coll/libnbc chooses and runs it.  Prints
 * the algorithm chosen, then per rank and round "S src dst round bytes"
 * for sends and "R src dst round" for receives, in posting order.  The v
 * arguments are per-rank bytes of the v-collectives.  tests/simmpi-coll-model.py
 * checks this against its own implementation of each algorithm.
 *
 *   coll-list -r RANK COLL ALG SIZE ROOT COUNT ESIZE
 *
 * sums up rank RANK's schedule alone ("rank R rounds N sends N recvs N bytes
 * B"), as the simulator asks for it, round after round: at sizes where
 * listing every rank's messages would take too long.
 *
 *   coll-list -i RSIZE COLL inter|nbc SIZE ROOT COUNT ESIZE [RBYTES | V...]
 *
 * lists one group's messages of a collective (nbc: its I-form, as libnbc
 * runs it) on an intercommunicator whose
 * local group has SIZE ranks and remote group RSIZE: ROOT is "root"
 * (MPI_ROOT), "none" (MPI_PROC_NULL) or the root's rank in the remote group,
 * a peer in the remote group is printed as rN, and a receive from it ends
 * with its bytes ("R rN dst round bytes"), which the remote group's
 * decomposition sends.  RBYTES: an Allgather's receive block (default
 * COUNT * ESIZE, the send block's).  V: an Alltoallv's bytes to each remote
 * rank then from each (2 x RSIZE), a Reduce_scatter's receive sizes in
 * the local group (SIZE), or a Gatherv's, Scatterv's or Allgatherv's bytes
 * of each rank of the local group, then of the remote group (SIZE +
 * RSIZE); every local rank is listed with these. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* A rank of the communicator, or rN for rank N of an intercommunicator's remote group. */
static const char *peer(uint32_t p, char *buf, size_t cap)
{
    snprintf(buf, cap, p & SIMMPI_REMOTE ? "r%u" : "%u", p & ~SIMMPI_REMOTE);
    return buf;
}

static void print_msg(void *ctx, const simmpi_coll_msg *m, int is_recv)
{
    (void)ctx;
    char s[16], d[16];
    if (is_recv && m->src & SIMMPI_REMOTE) /* its size comes from the remote group's decomposition */
        printf("R %s %s %u %llu\n", peer(m->src, s, sizeof s), peer(m->dst, d, sizeof d), m->round,
               (unsigned long long)m->bytes);
    else if (is_recv)
        printf("R %s %s %u\n", peer(m->src, s, sizeof s), peer(m->dst, d, sizeof d), m->round);
    else
        printf("S %s %s %u %llu\n", peer(m->src, s, sizeof s), peer(m->dst, d, sizeof d), m->round,
               (unsigned long long)m->bytes);
}

typedef struct tally {
    unsigned long long sends, recvs, bytes;
} tally;

static void count_msg(void *ctx, const simmpi_coll_msg *m, int is_recv)
{
    tally *t = ctx;
    if (is_recv) {
        t->recvs++;
    } else {
        t->sends++;
        t->bytes += m->bytes;
    }
}

/* One rank's rounds, as engine.c asks for them: totals only. */
static int one_rank(const simmpi_coll_args *a, uint32_t me)
{
    int alg = coll_args_alg(a);
    tally t = {0};
    coll_round cr = {0};
    int rounds = alg < 0 ? -1 : coll_rank_messages(a, alg, me, &cr, count_msg, &t, 1);
    free(cr.send);
    free(cr.recv);
    if (rounds < 0)
        return -1;
    printf("rank %u rounds %d sends %llu recvs %llu bytes %llu\n", me, rounds, t.sends, t.recvs, t.bytes);
    return alg;
}

/* n per-rank sizes from argv (NULL if out of memory). */
static uint64_t *sizes_of(char **argv, uint32_t n)
{
    uint64_t *v = calloc(n ? n : 1, sizeof *v);
    for (uint32_t i = 0; v && i < n; i++)
        v[i] = strtoull(argv[i], NULL, 10);
    return v;
}

/* coll-list -i RSIZE COLL inter SIZE ROOT COUNT ESIZE [RBYTES | V...] */
static int inter_main(int argc, char **argv)
{
    if (argc < 9 || (strcmp(argv[4], "inter") != 0 && strcmp(argv[4], "nbc") != 0)) {
        fprintf(stderr, "usage: coll-list -i RSIZE COLL inter|nbc SIZE ROOT|root|none COUNT ESIZE [RBYTES | V...]\n");
        return 2;
    }
    int coll = simmpi_coll_from_name(argv[3]);
    uint32_t root = strcmp(argv[6], "root") == 0   ? SIMMPI_ROOT_HERE
                    : strcmp(argv[6], "none") == 0 ? SIMMPI_ROOT_NONE
                                                   : (uint32_t)atoi(argv[6]);
    simmpi_coll_args a = {.coll = (simmpi_coll)coll, .size = (uint32_t)atoi(argv[5]), .root = root,
                          .count = strtoull(argv[7], NULL, 10), .esize = (uint32_t)atoi(argv[8]),
                          .remote_size = (uint32_t)atoi(argv[2]), .nonblocking = strcmp(argv[4], "nbc") == 0};
    int a2a = coll == SIMMPI_ALLTOALLV, rs = coll == SIMMPI_REDUCE_SCATTER;
    int grouped = coll >= 0 && simmpi_inter_group_sized((simmpi_coll)coll), sized = a2a || rs || grouped;
    uint32_t nv = a2a ? 2 * a.remote_size : rs ? a.size : grouped ? a.size + a.remote_size : coll == SIMMPI_ALLGATHER;
    if ((uint32_t)(argc - 9) > nv || (sized && (uint32_t)(argc - 9) != nv)) {
        fprintf(stderr, "coll-list: %d per-rank sizes for '%s' on groups of %u and %u\n", argc - 9, argv[3],
                a.size, a.remote_size);
        return 2;
    }
    a.rblock = argc == 10 && !sized ? strtoull(argv[9], NULL, 10) : a.count * a.esize;
    uint64_t *v = sized ? sizes_of(argv + 9, nv) : NULL;
    a.vbytes = v;
    a.rvbytes = !v ? NULL : a2a ? v + a.remote_size : grouped ? v + a.size : NULL;
    int used = coll < 0 || a.remote_size == 0 ? -1 : simmpi_coll_messages(&a, print_msg, NULL, 1);
    free(v);
    if (used < 0) {
        fprintf(stderr, "coll-list: cannot decompose '%s' on that intercommunicator\n", argv[3]);
        return 1;
    }
    printf("alg %d %s\n", used, simmpi_alg_name((simmpi_coll)coll, used));
    return 0;
}

int main(int argc, char **argv)
{
    long rank = -1;
    if (argc > 1 && strcmp(argv[1], "-i") == 0)
        return inter_main(argc, argv);
    if (argc > 2 && strcmp(argv[1], "-r") == 0) {
        rank = atol(argv[2]);
        argv += 2;
        argc -= 2;
        if (argc != 7) {
            fprintf(stderr, "usage: coll-list -r RANK COLL ALG SIZE ROOT COUNT ESIZE\n");
            return 2;
        }
    }
    if (argc < 7) {
        fprintf(stderr, "usage: coll-list COLL ALG SIZE ROOT COUNT ESIZE [V...]\n");
        return 2;
    }
    int coll = simmpi_coll_from_name(argv[1]), nbc = strcmp(argv[2], "nbc") == 0;
    int alg = coll < 0 ? -1 : strcmp(argv[2], "auto") == 0 || nbc ? 0 : simmpi_alg_from_name(coll, argv[2]);
    if (coll < 0 || alg < 0) {
        fprintf(stderr, "coll-list: unknown collective or algorithm '%s %s'\n", argv[1], argv[2]);
        return 2;
    }
    simmpi_coll_args a = {.coll = (simmpi_coll)coll, .alg = alg, .size = (uint32_t)atoi(argv[3]),
                          .root = (uint32_t)atoi(argv[4]), .count = strtoull(argv[5], NULL, 10),
                          .esize = (uint32_t)atoi(argv[6]), .nonblocking = nbc};
    if (rank >= 0 && (a.size == 0 || a.root >= a.size || (uint64_t)rank >= a.size)) {
        fprintf(stderr, "coll-list: rank or root out of range\n");
        return 2;
    }
    uint64_t *v = NULL;
    if (argc > 7) {
        if ((uint32_t)(argc - 7) != a.size) {
            fprintf(stderr, "coll-list: %d per-rank sizes for %u ranks\n", argc - 7, a.size);
            return 2;
        }
        a.vbytes = v = sizes_of(argv + 7, a.size);
    }
    int used = rank >= 0 ? one_rank(&a, (uint32_t)rank) : simmpi_coll_messages(&a, print_msg, NULL, 1);
    if (used < 0) {
        fprintf(stderr, "coll-list: cannot decompose\n");
        return 1;
    }
    printf("alg %d %s\n", used, simmpi_alg_name((simmpi_coll)coll, used));
    free(v);
    return 0;
}
