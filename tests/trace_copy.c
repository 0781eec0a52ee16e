/* trace_copy.c - copy a trace through ph_reader and ph_writer.
 *
 *   trace_copy IN OUT [RANK:SEQ:FIELD=VALUE | RANK:SEQ:drop | RANK:gaps-of:REP | RANK:no-end]...
 *
 * Used by tests/roundtrip.sh: a recorded trace copied this way must dump
 * identically, which checks that the writer encodes exactly what the reader
 * decodes, for every op the test programs use.
 *
 * With edits it crafts a semantically wrong trace from a valid one (the
 * tests/fault-semantic.sh cases): event SEQ of rank RANK gets FIELD = VALUE
 * before it is written, or is left out.  FIELD: op (a name, MPI_Wait), peer,
 * tag, count, bytes, comm, root, t_entry, t_exit, reqs (ids, comma-separated).
 * Request ids stay those of the original as long as no event that creates
 * one is dropped or changed into another op.
 *
 * RANK:gaps-of:REP gives RANK's computation to REP's timing (the
 * tests/cluster-predict.sh check of predict --groups): every gap between two
 * of RANK's calls becomes REP's gap before the event of the same index, each
 * call keeping its own duration.  The two ranks must have as many events.
 *
 * RANK:no-end leaves out RANK's end record, as when a job is killed (the
 * tests/cli.sh check of incomplete ranks in stats). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ph_trace.h"

static int die(const char *msg)
{
    fprintf(stderr, "trace_copy: %s\n", msg);
    return 1;
}

#define MAXREQS 64

/* Applies edit `e` if it is for this event: 0 no, 1 applied, -1 malformed,
 * 2 drop the event. */
static int apply(const char *e, uint32_t rank, ph_event *ev, uint64_t *reqs)
{
    unsigned long r;
    unsigned long long seq;
    int n = 0;
    if (sscanf(e, "%lu:%llu:%n", &r, &seq, &n) != 2 || !n)
        return -1;
    if (r != rank || seq != ev->seq)
        return 0;
    const char *f = e + n, *v = strchr(f, '=');
    if (!strcmp(f, "drop"))
        return 2;
    if (!v)
        return -1;
    size_t fl = (size_t)(v++ - f);
#define IS(name) (fl == strlen(name) && !strncmp(f, name, fl))
    if (IS("op")) {
        for (unsigned op = 0; op < PH_OP_LIMIT; op++)
            if (ph_op(op) && !strcmp(ph_op(op)->name, v)) {
                ev->op = (uint16_t)op;
                return 1;
            }
        return -1;
    }
    if (IS("reqs")) {
        uint32_t k = 0;
        for (const char *p = v; *p; p += *p == ',') {
            char *end;
            reqs[k++] = strtoull(p, &end, 0);
            if (end == p || k == MAXREQS || (*end && *end != ','))
                return -1;
            p = end;
        }
        ev->reqs = reqs;
        ev->nreqs = k;
        return 1;
    }
    long long x = strtoll(v, NULL, 0);
    unsigned long long u = strtoull(v, NULL, 0);
    if (IS("peer"))
        ev->peer = (int32_t)x;
    else if (IS("tag"))
        ev->tag = (int32_t)x;
    else if (IS("count"))
        ev->count = x;
    else if (IS("bytes"))
        ev->bytes = u;
    else if (IS("comm"))
        ev->comm = (uint32_t)u;
    else if (IS("root"))
        ev->root = (int32_t)x;
    else if (IS("t_entry"))
        ev->t_entry = u;
    else if (IS("t_exit"))
        ev->t_exit = u;
    else
        return -1;
    return 1;
#undef IS
}

/* The rank whose gaps RANK takes (a RANK:gaps-of:REP edit), or RANK itself. */
static uint32_t gaps_source(int argc, char **argv, uint32_t rank)
{
    for (int i = 3; i < argc; i++) {
        unsigned long r, rep;
        int n = 0;
        if (sscanf(argv[i], "%lu:gaps-of:%lu%n", &r, &rep, &n) == 2 && !argv[i][n] && r == rank)
            return (uint32_t)rep;
    }
    return rank;
}

/* Does a RANK:no-end edit name rank? */
static int no_end(int argc, char **argv, uint32_t rank)
{
    for (int i = 3; i < argc; i++) {
        unsigned long r;
        int n = 0;
        if (sscanf(argv[i], "%lu:no-end%n", &r, &n) == 1 && n && !argv[i][n] && r == rank)
            return 1;
    }
    return 0;
}

/* Moves `ev` so that the gap before it is `rep`'s gap before its own event;
 * *last_exit (ev's predecessor, already moved) and *rep_exit follow along. */
static void take_gap(ph_event *ev, const ph_event *rep, uint64_t *last_exit, uint64_t *rep_exit)
{
    uint64_t len = ev->t_exit - ev->t_entry;
    if (ev->seq > 0)
        ev->t_entry = *last_exit + (rep->t_entry > *rep_exit ? rep->t_entry - *rep_exit : 0);
    ev->t_exit = ev->t_entry + len;
    *last_exit = ev->t_exit;
    *rep_exit = rep->t_exit;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return die("usage: trace_copy IN OUT [RANK:SEQ:FIELD=VALUE | RANK:SEQ:drop | RANK:gaps-of:REP | "
                   "RANK:no-end]...");
    ph_err err;
    ph_trace *in = ph_trace_open(argv[1], &err);
    if (!in)
        return die(err.msg);
    uint32_t n = ph_trace_nranks(in);
    ph_writer *w = ph_writer_create(argv[2], n, "trace_copy", &err);
    if (!w)
        return die(err.msg);
    for (uint32_t i = 1; i < ph_trace_ncomms(in); i++) {
        const ph_comm_info *c = ph_trace_comm(in, i);
        if (ph_writer_comm(w, c->size, c->members, c->remote_size, c->remote) != i)
            return die("communicator ids differ");
    }
    for (uint32_t i = 0; i < ph_trace_nsites(in); i++) {
        const ph_site_info *s = ph_trace_site(in, i);
        if (ph_writer_site(w, s->function, s->file, s->line) != i)
            return die("site ids differ");
    }
    for (uint32_t r = 0; r < n; r++) {
        uint32_t gr = gaps_source(argc, argv, r);
        ph_rank_reader *rr = ph_rank_open(in, r, &err);
        ph_rank_reader *gaps = rr && gr != r ? ph_rank_open(in, gr, &err) : NULL;
        ph_rank_writer *rw = rr && (gaps || gr == r) ? ph_writer_rank(w, r, 0, &err) : NULL;
        if (!rw)
            return die(err.msg);
        ph_event ev, rep;
        uint64_t last_exit = 0, rep_exit = 0;
        int rc;
        while ((rc = ph_rank_next(rr, &ev, &err)) > 0) {
            uint64_t reqs[MAXREQS];
            int drop = 0;
            if (gaps && ph_rank_next(gaps, &rep, &err) <= 0)
                return die("gaps-of: the representative has fewer events");
            if (gaps)
                take_gap(&ev, &rep, &last_exit, &rep_exit);
            for (int i = 3; i < argc; i++) {
                if (strstr(argv[i], ":gaps-of:") || strstr(argv[i], ":no-end"))
                    continue;
                int a = apply(argv[i], r, &ev, reqs);
                if (a < 0)
                    return die("bad edit (RANK:SEQ:FIELD=VALUE or RANK:SEQ:drop)");
                drop |= a == 2;
            }
            if (!drop && ph_rank_write(rw, &ev, &err) < 0)
                return die(err.msg);
        }
        if (rc < 0 || ph_rank_writer_close(rw, ph_rank_complete(rr) && !no_end(argc, argv, r), &err) < 0)
            return die(err.msg);
        if (gaps && ph_rank_next(gaps, &rep, &err) != 0)
            return die("gaps-of: the representative has more events");
        ph_rank_close(gaps);
        ph_rank_close(rr);
    }
    ph_trace_close(in);
    return ph_writer_close(w, &err) < 0 ? die(err.msg) : 0;
}
