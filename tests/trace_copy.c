/* trace_copy.c - copy a trace through ph_reader and ph_writer.
 *
 *   trace_copy IN OUT [RANK:SEQ:FIELD=VALUE | RANK:SEQ:drop]...
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
 * one is dropped or changed into another op. */
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

int main(int argc, char **argv)
{
    if (argc < 3)
        return die("usage: trace_copy IN OUT [RANK:SEQ:FIELD=VALUE | RANK:SEQ:drop]...");
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
        ph_rank_reader *rr = ph_rank_open(in, r, &err);
        ph_rank_writer *rw = rr ? ph_writer_rank(w, r, 0, &err) : NULL;
        if (!rw)
            return die(err.msg);
        ph_event ev;
        int rc;
        while ((rc = ph_rank_next(rr, &ev, &err)) > 0) {
            uint64_t reqs[MAXREQS];
            int drop = 0;
            for (int i = 3; i < argc; i++) {
                int a = apply(argv[i], r, &ev, reqs);
                if (a < 0)
                    return die("bad edit (RANK:SEQ:FIELD=VALUE or RANK:SEQ:drop)");
                drop |= a == 2;
            }
            if (!drop && ph_rank_write(rw, &ev, &err) < 0)
                return die(err.msg);
        }
        if (rc < 0 || ph_rank_writer_close(rw, ph_rank_complete(rr), &err) < 0)
            return die(err.msg);
        ph_rank_close(rr);
    }
    ph_trace_close(in);
    return ph_writer_close(w, &err) < 0 ? die(err.msg) : 0;
}
