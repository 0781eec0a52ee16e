/* synth-groups.c - synthetic traces with planted groups and a planted period,
 * for the cluster tests and benchmark (written with the MPI-free ph_writer).
 *
 *   synth-groups OUT [--pattern mg|lu|flat] [--ranks N] [--grid PXxPY]
 *                    [--iters N] [--period P] [--noise F] [--warmup F] [--seed S]
 *
 * Every rank runs: a prologue (Init, Bcasts), ITERS iterations of a loop
 * body, an epilogue (Allreduce, Barrier, Finalize).  The computation after
 * an event is base(position in the body) x factor(rank) x (1 + noise * u),
 * u uniform in [-1, 1] from a seeded generator, and x warmup in the first
 * iteration.  What is planted:
 *
 *   mg    NPB MG's two groups at 16 ranks: ranks with (rank / 4) even
 *         compute x1.0, the others x1.3; one communication sequence (ring
 *         Sendrecv, Allreduce, Bcast): only computation tells them apart.
 *   lu    LU's wavefront on a PX x PY grid: receive from north and west,
 *         send south and east, Allreduce.  Corners, edges and the interior
 *         are 9 classes with different sequences, each with its own factor
 *         (1.0 for the interior, +0.12 per class).
 *   flat  one group; a loop body of PERIOD events whose (operation, call
 *         site) sequence is pseudo-random, so its smallest period is PERIOD.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ph_trace.h"

typedef struct spec {
    const char *out, *pattern;
    uint32_t n, px, py, iters, period;
    double noise, warmup;
    uint64_t seed;
} spec;

typedef struct gen {
    ph_rank_writer *rw;
    uint64_t t, rng;
    uint32_t rank;
    const spec *s;
    ph_err *err;
} gen;

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static double uniform(gen *g) /* in [-1, 1] */
{
    g->rng = mix(g->rng);
    return (double)(g->rng >> 11) / 4503599627370496.0 - 1.0;
}

/* Writes one event, then `comp` ns of computation before the next. */
static int emit(gen *g, ph_event ev, double comp)
{
    ph_status st = {ev.rpeer >= 0 ? ev.rpeer : ev.peer, ev.rpeer >= 0 ? ev.rpeer : ev.peer, ev.tag,
                    ev.rbytes ? ev.rbytes : ev.bytes};
    if (ev.op == PH_OP_RECV || ev.op == PH_OP_SENDRECV) {
        ev.nstatus = 1;
        ev.status = &st;
    }
    ev.t_entry = g->t;
    ev.t_exit = g->t + 1000; /* 1 us inside MPI */
    g->t = ev.t_exit + (uint64_t)llround(comp > 0 ? comp : 0);
    return ph_rank_write(g->rw, &ev, g->err);
}

static ph_event base_event(uint16_t op, uint32_t site)
{
    return (ph_event){.op = op, .site = site, .peer = PH_NO_RANK, .rpeer = PH_NO_RANK,
                      .root = PH_NO_RANK, .flag = -1, .index = -1};
}

static ph_event p2p(uint16_t op, uint32_t site, int32_t peer, int32_t tag, uint64_t bytes)
{
    ph_event e = base_event(op, site);
    e.peer = e.peer_world = peer;
    e.tag = tag;
    e.count = (int64_t)bytes / 8;
    e.bytes = bytes;
    return e;
}

static ph_event coll(uint16_t op, uint32_t site, uint64_t bytes)
{
    ph_event e = base_event(op, site);
    e.count = (int64_t)bytes / 8;
    e.bytes = bytes;
    if (op == PH_OP_ALLREDUCE) {
        e.rcount = e.count;
        e.rbytes = bytes;
    }
    if (op == PH_OP_BCAST)
        e.root = 0;
    return e;
}

/* ---- the loop bodies ------------------------------------------------------------------- */

/* Computation after body position i of iteration it. */
static double comp(gen *g, uint32_t i, uint32_t it, double factor)
{
    double base = 20000 + 1500 * ((i * 7) % 11);
    return base * factor * (it == 0 ? g->s->warmup : 1) * (1 + g->s->noise * uniform(g));
}

static int body_mg(gen *g, uint32_t it)
{
    uint32_t n = g->s->n, r = g->rank;
    double f = (r / 4) % 2 ? 1.3 : 1.0;
    ph_event sr = p2p(PH_OP_SENDRECV, 1, (int32_t)((r + 1) % n), 7, 4096);
    sr.rpeer = sr.rpeer_world = (int32_t)((r + n - 1) % n);
    sr.rtag = 7;
    sr.rcount = 512;
    sr.rbytes = 4096;
    return emit(g, sr, comp(g, 0, it, f)) || emit(g, coll(PH_OP_ALLREDUCE, 2, 8), comp(g, 1, it, f)) ||
           emit(g, sr, comp(g, 2, it, f)) || emit(g, coll(PH_OP_BCAST, 3, 64), comp(g, 3, it, f));
}

/* LU class: 0 interior, 1..4 edges N, S, W, E, 5..8 corners NW, NE, SW, SE. */
static int lu_class(uint32_t x, uint32_t y, uint32_t px, uint32_t py)
{
    int n = y == 0, s = y == py - 1, w = x == 0, e = x == px - 1;
    if (n && w) return 5;
    if (n && e) return 6;
    if (s && w) return 7;
    if (s && e) return 8;
    return n ? 1 : s ? 2 : w ? 3 : e ? 4 : 0;
}

static int body_lu(gen *g, uint32_t it)
{
    uint32_t px = g->s->px, py = g->s->py, r = g->rank, x = r % px, y = r / px;
    double f = 1.0 + 0.12 * lu_class(x, y, px, py);
    uint32_t i = 0;
    int rc = 0;
    if (y > 0)
        rc |= emit(g, p2p(PH_OP_RECV, 11, (int32_t)(r - px), 3, 8192), comp(g, i++, it, f));
    if (x > 0)
        rc |= emit(g, p2p(PH_OP_RECV, 12, (int32_t)(r - 1), 3, 8192), comp(g, i++, it, f));
    if (y + 1 < py)
        rc |= emit(g, p2p(PH_OP_SEND, 13, (int32_t)(r + px), 3, 8192), comp(g, i++, it, f));
    if (x + 1 < px)
        rc |= emit(g, p2p(PH_OP_SEND, 14, (int32_t)(r + 1), 3, 8192), comp(g, i++, it, f));
    return rc || emit(g, coll(PH_OP_ALLREDUCE, 15, 40), comp(g, i, it, f));
}

static int body_flat(gen *g, uint32_t it)
{
    static const uint16_t ops[] = {PH_OP_ALLREDUCE, PH_OP_BCAST, PH_OP_BARRIER};
    for (uint32_t i = 0; i < g->s->period; i++) {
        uint64_t h = mix(i);
        if (emit(g, coll(ops[(h >> 8) % 3], 20 + (uint32_t)(h % 40), 8), comp(g, i, it, 1.0)))
            return -1;
    }
    return 0;
}

/* ---- one rank, one trace ------------------------------------------------------------------ */

static int write_rank(ph_writer *w, const spec *s, uint32_t rank, ph_err *err)
{
    gen g = {ph_writer_rank(w, rank, 1000000, err), 1000000, mix(s->seed ^ (rank * 0x100000001ull)),
             rank, s, err};
    if (!g.rw)
        return -1;
    int rc = emit(&g, base_event(PH_OP_INIT, 0), 5000);
    for (uint32_t k = 0; k < 3 && !rc; k++)
        rc = emit(&g, coll(PH_OP_BCAST, 4 + k, 16), 5000);
    for (uint32_t it = 0; it < s->iters && !rc; it++)
        rc = strcmp(s->pattern, "mg") == 0 ? body_mg(&g, it)
           : strcmp(s->pattern, "lu") == 0 ? body_lu(&g, it) : body_flat(&g, it);
    if (!rc)
        rc = emit(&g, coll(PH_OP_ALLREDUCE, 8, 8), 5000) || emit(&g, coll(PH_OP_BARRIER, 9, 0), 5000) ||
             emit(&g, base_event(PH_OP_FINALIZE, 10), 0);
    return ph_rank_writer_close(g.rw, 1, rc ? NULL : err) < 0 || rc ? -1 : 0;
}

static int usage(void)
{
    fprintf(stderr, "usage: synth-groups OUT [--pattern mg|lu|flat] [--ranks N] [--grid PXxPY] "
                    "[--iters N] [--period P] [--noise F] [--warmup F] [--seed S]\n");
    return 2;
}

static int parse(spec *s, int argc, char **argv)
{
    *s = (spec){.pattern = "mg", .n = 16, .px = 4, .py = 4, .iters = 20, .period = 250,
                .noise = 0.01, .warmup = 1.0, .seed = 1};
    int grid = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (a[0] != '-') {
            s->out = a;
            continue;
        }
        if (!v)
            return -1;
        i++;
        if (strcmp(a, "--pattern") == 0) s->pattern = v;
        else if (strcmp(a, "--ranks") == 0) s->n = (uint32_t)atol(v);
        else if (strcmp(a, "--grid") == 0) grid = sscanf(v, "%ux%u", &s->px, &s->py) == 2;
        else if (strcmp(a, "--iters") == 0) s->iters = (uint32_t)atol(v);
        else if (strcmp(a, "--period") == 0) s->period = (uint32_t)atol(v);
        else if (strcmp(a, "--noise") == 0) s->noise = atof(v);
        else if (strcmp(a, "--warmup") == 0) s->warmup = atof(v);
        else if (strcmp(a, "--seed") == 0) s->seed = strtoull(v, NULL, 0);
        else return -1;
    }
    if (strcmp(s->pattern, "lu") == 0 || grid)
        s->n = s->px * s->py;
    return s->out && s->n ? 0 : -1;
}

int main(int argc, char **argv)
{
    spec s;
    if (parse(&s, argc, argv) < 0)
        return usage();
    ph_err err;
    char cmd[256];
    snprintf(cmd, sizeof cmd, "synth-groups --pattern %s --ranks %u --iters %u", s.pattern, s.n, s.iters);
    ph_writer *w = ph_writer_create(s.out, s.n, cmd, &err);
    for (int site = 0; w && site < 64; site++) /* ids 0..63: every site the bodies use */
        ph_writer_site(w, "synthetic", "synth-groups.c", site);
    for (uint32_t r = 0; w && r < s.n; r++)
        if (write_rank(w, &s, r, &err) < 0) {
            ph_writer_abort(w);
            w = NULL;
        }
    if (!w || ph_writer_close(w, &err) < 0) {
        fprintf(stderr, "synth-groups: %s\n", err.msg);
        return 1;
    }
    return 0;
}
