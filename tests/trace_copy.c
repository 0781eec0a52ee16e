/* trace_copy.c - copy a trace through ph_reader and ph_writer.
 *
 *   trace_copy IN OUT
 *
 * Used by tests/roundtrip.sh: a recorded trace copied this way must dump
 * identically, which checks that the writer encodes exactly what the reader
 * decodes, for every op the test programs use. */
#include <stdio.h>
#include <stdlib.h>

#include "ph_trace.h"

static int die(const char *msg)
{
    fprintf(stderr, "trace_copy: %s\n", msg);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return die("usage: trace_copy IN OUT");
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
        while ((rc = ph_rank_next(rr, &ev, &err)) > 0)
            if (ph_rank_write(rw, &ev, &err) < 0)
                return die(err.msg);
        if (rc < 0 || ph_rank_writer_close(rw, ph_rank_complete(rr), &err) < 0)
            return die(err.msg);
        ph_rank_close(rr);
    }
    ph_trace_close(in);
    return ph_writer_close(w, &err) < 0 ? die(err.msg) : 0;
}
