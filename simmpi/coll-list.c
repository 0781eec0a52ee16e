/* coll-list.c - print one collective's decomposition, message by message.
 *
 *   coll-list COLL ALG SIZE ROOT COUNT ESIZE [V0 V1 ...]
 *
 * ALG is Open MPI's number or name (0 or auto: the decision rule).  Prints
 * the algorithm chosen, then per rank and round "S src dst round bytes"
 * for sends and "R src dst round" for receives, in posting order.  The v
 * arguments are per-rank bytes of the v-collectives.  tests/simmpi-coll-model.py
 * checks this against its own implementation of each algorithm. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simmpi.h"

static void print_msg(void *ctx, const simmpi_coll_msg *m, int is_recv)
{
    (void)ctx;
    if (is_recv)
        printf("R %u %u %u\n", m->src, m->dst, m->round);
    else
        printf("S %u %u %u %llu\n", m->src, m->dst, m->round, (unsigned long long)m->bytes);
}

int main(int argc, char **argv)
{
    if (argc < 7) {
        fprintf(stderr, "usage: coll-list COLL ALG SIZE ROOT COUNT ESIZE [V...]\n");
        return 2;
    }
    int coll = simmpi_coll_from_name(argv[1]);
    int alg = coll < 0 ? -1 : strcmp(argv[2], "auto") == 0 ? 0 : simmpi_alg_from_name(coll, argv[2]);
    if (coll < 0 || alg < 0) {
        fprintf(stderr, "coll-list: unknown collective or algorithm '%s %s'\n", argv[1], argv[2]);
        return 2;
    }
    simmpi_coll_args a = {.coll = (simmpi_coll)coll, .alg = alg, .size = (uint32_t)atoi(argv[3]),
                          .root = (uint32_t)atoi(argv[4]), .count = strtoull(argv[5], NULL, 10),
                          .esize = (uint32_t)atoi(argv[6])};
    uint64_t *v = NULL;
    if (argc > 7) {
        if ((uint32_t)(argc - 7) != a.size) {
            fprintf(stderr, "coll-list: %d per-rank sizes for %u ranks\n", argc - 7, a.size);
            return 2;
        }
        v = calloc(a.size, sizeof *v);
        for (uint32_t i = 0; v && i < a.size; i++)
            v[i] = strtoull(argv[7 + i], NULL, 10);
        a.vbytes = v;
    }
    int used = simmpi_coll_messages(&a, print_msg, NULL, 1);
    if (used < 0) {
        fprintf(stderr, "coll-list: cannot decompose\n");
        return 1;
    }
    printf("alg %d %s\n", used, simmpi_alg_name((simmpi_coll)coll, used));
    free(v);
    return 0;
}
