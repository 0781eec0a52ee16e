/* cmd-finish.c - `phantom finish DIR`: write the trace-level tables into meta.json.
 *
 * An unfinished trace has its communicator and call-site definitions spread
 * over the rank streams; every tool would have to scan all ranks to number
 * them.  finish does that once (ph_trace_open's prescan), symbolises the call
 * sites and stores both tables in meta.json, in the reader's own order, so
 * that index i is id i whether a tool reads the table or rescans.  Re-running
 * it loads the tables back from meta.json and writes them unchanged.
 */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "phantom.h"

static const char usage[] =
    "usage: phantom finish DIR\n"
    "\n"
    "Build the trace-level tables of the trace in DIR into DIR/meta.json: the\n"
    "communicators (with their world-rank members), the call sites (symbolised\n"
    "to function, file and line where the binaries and their debug information\n"
    "are still there), and whether each rank's stream ended cleanly.\n"
    "\n"
    "`phantom record` runs this itself; run it by hand after recording with\n"
    "LD_PRELOAD directly, or again after installing debug information.  Running\n"
    "it twice is harmless: the ids stay the same.\n"
    "\n"
    "options:\n"
    "  -h, --help    show this help\n";

static json_t *int_array(const int32_t *v, uint32_t n)
{
    json_t *a = json_array();
    for (uint32_t i = 0; i < n; i++)
        json_array_append_new(a, json_integer(v[i]));
    return a;
}

static json_t *gid_string(uint64_t gid)
{
    char buf[24];
    snprintf(buf, sizeof buf, "0x%016llx", (unsigned long long)gid);
    return json_string(buf);
}

/* Index i is id i: the reader requires comm 0 = MPI_COMM_WORLD (gid 0). */
static json_t *comms_json(const ph_trace *t)
{
    json_t *a = json_array();
    for (uint32_t i = 0; i < ph_trace_ncomms(t); i++) {
        const ph_comm_info *c = ph_trace_comm(t, i);
        json_t *o = json_object();
        json_object_set_new(o, "id", json_integer(i));
        json_object_set_new(o, "gid", gid_string(c->gid));
        json_object_set_new(o, "members", int_array(c->members, c->size));
        if (c->remote_size)
            json_object_set_new(o, "remote", int_array(c->remote, c->remote_size));
        json_array_append_new(a, o);
    }
    return a;
}

/* The user frame's caller, as {"function", "file", "line"}; NULL when the
 * stack ends at the user frame or nothing of the caller resolves. */
static json_t *caller_json(const ph_site_info *s, symbolizer *sym)
{
    char *function = NULL, *file = NULL;
    int line = 0, f = sym_user_frame(s);
    if (s->caller_function || s->caller_file) {
        function = s->caller_function ? strdup(s->caller_function) : NULL;
        file = s->caller_file ? strdup(s->caller_file) : NULL;
        line = s->caller_line;
    } else if (f >= 0) {
        sym_resolve(sym, s, f + 1, &function, &file, &line); /* nothing past the last frame */
    }
    json_t *o = function || file ? cli_place_json(function, file, line) : NULL;
    free(function);
    free(file);
    return o;
}

/* One site; symbolised now unless an earlier finish already did it. */
static json_t *site_json(const ph_trace *t, uint32_t id, symbolizer *sym)
{
    const ph_site_info *s = ph_trace_site(t, id);
    json_t *o = json_object(), *frames = json_array();
    json_object_set_new(o, "id", json_integer(id));
    json_object_set_new(o, "gid", gid_string(s->gid));
    for (uint32_t k = 0; k < s->nframes; k++)
        json_array_append_new(frames, json_pack("{s:s, s:I}", "module", s->modules[k], "offset",
                                                (json_int_t)s->offsets[k]));
    json_object_set_new(o, "frames", frames);
    char *function = NULL, *file = NULL;
    int line = 0;
    if (s->function || s->file) {
        function = s->function ? strdup(s->function) : NULL;
        file = s->file ? strdup(s->file) : NULL;
        line = s->line;
    } else {
        sym_resolve(sym, s, sym_user_frame(s), &function, &file, &line);
    }
    json_object_update_new(o, cli_place_json(function, file, line)); /* "function", "file", "line" */
    free(function);
    free(file);
    json_t *caller = caller_json(s, sym);
    if (caller)
        json_object_set_new(o, "caller", caller);
    return o;
}

static json_t *sites_json(const ph_trace *t)
{
    symbolizer *sym = sym_new();
    json_t *a = json_array();
    for (uint32_t i = 0; i < ph_trace_nsites(t); i++)
        json_array_append_new(a, site_json(t, i, sym));
    sym_free(sym);
    return a;
}

/* Reads every rank to the end: counts its events and notes whether it ended cleanly. */
static int scan_ranks(const char *verb, ph_trace *t, json_t *complete, json_t *counts, finish_summary *sum)
{
    for (uint32_t rank = 0; rank < ph_trace_nranks(t); rank++) {
        ph_err err;
        ph_rank_reader *r = ph_rank_open(t, rank, &err);
        if (!r)
            return cli_error(verb, "%s", err.msg);
        ph_event ev;
        uint64_t n = 0;
        int rc;
        while ((rc = ph_rank_next(r, &ev, &err)) > 0)
            n++;
        if (rc == 0)
            cli_warn_incomplete(verb, r, rank, n);
        int ok = rc == 0 && ph_rank_complete(r);
        ph_rank_close(r);
        if (rc < 0)
            return cli_error(verb, "%s", err.msg);
        json_array_append_new(complete, json_boolean(ok));
        json_array_append_new(counts, json_integer((json_int_t)n));
        sum->events += n;
        sum->incomplete += !ok;
    }
    return CLI_OK;
}

/* Size of the files the trace consists of, for record's summary line. */
static uint64_t trace_bytes(const char *dir)
{
    DIR *d = opendir(dir);
    uint64_t total = 0;
    if (!d)
        return 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (strncmp(e->d_name, "rank-", 5) != 0 && strcmp(e->d_name, "meta.json") != 0)
            continue;
        struct stat st;
        if (fstatat(dirfd(d), e->d_name, &st, 0) == 0 && S_ISREG(st.st_mode))
            total += (uint64_t)st.st_size;
    }
    closedir(d);
    return total;
}

/* Temp file and rename (ph_json_save): a reader never sees half a meta.json. */
static int write_meta(const char *verb, const char *dir, json_t *meta)
{
    char *path = NULL;
    if (asprintf(&path, "%s/meta.json", dir) < 0)
        return cli_error(verb, "out of memory");
    ph_err err;
    /* 10 digits: the recorder's clock.probe_gap_ns (10.7) reads as written */
    int rc = ph_json_save(meta, path, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10), &err) < 0
                 ? cli_error(verb, "%s", err.msg)
                 : CLI_OK;
    free(path);
    return rc;
}

static json_t *load_meta(const char *verb, const char *dir)
{
    size_t n = strlen(dir) + 16;
    char *path = malloc(n);
    if (!path)
        return NULL;
    snprintf(path, n, "%s/meta.json", dir);
    ph_err err;
    json_t *m = ph_json_load(path, &err);
    if (!m)
        cli_error(verb, "%s", err.msg);
    free(path);
    return m;
}

int finish_trace(const char *verb, const char *dir, finish_summary *sum)
{
    return finish_trace_with(verb, dir, NULL, sum);
}

int finish_trace_with(const char *verb, const char *dir, json_t *extra, finish_summary *sum)
{
    memset(sum, 0, sizeof *sum);
    ph_err err;
    ph_trace *t = ph_trace_open(dir, &err);
    if (!t)
        return cli_error(verb, "%s", err.msg);
    sum->nranks = ph_trace_nranks(t);
    json_t *complete = json_array(), *counts = json_array(), *meta = NULL;
    int rc = scan_ranks(verb, t, complete, counts, sum);
    if (rc == CLI_OK && !(meta = load_meta(verb, dir)))
        rc = CLI_ERR;
    if (rc == CLI_OK) {
        json_object_set_new(meta, "comms", comms_json(t));
        json_object_set_new(meta, "sites", sites_json(t));
        json_object_set_new(meta, "ranks_complete", json_incref(complete));
        json_object_set_new(meta, "finished", json_true());
        json_object_set_new(meta, "events", json_integer((json_int_t)sum->events));
        json_object_set_new(meta, "rank_events", json_incref(counts));
        if (extra)
            json_object_update(meta, extra);
        rc = write_meta(verb, dir, meta);
    }
    sum->bytes = trace_bytes(dir);
    json_decref(complete);
    json_decref(counts);
    json_decref(meta);
    ph_trace_close(t);
    return cli_end_warnings(rc);
}

static int run(int argc, char **argv)
{
    static const struct option longopts[] = {{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    int c;
    while ((c = cli_getopt("finish", argc, argv, ":h", longopts)) != -1) {
        if (c == 'h')
            return cli_help(&cmd_finish);
        return CLI_USAGE;
    }
    const char *path;
    if (cli_trace_arg("finish", argc, argv, &path) != CLI_OK)
        return CLI_USAGE;
    finish_summary sum;
    int rc = finish_trace("finish", path, &sum);
    if (rc == CLI_OK)
        fprintf(stderr, "phantom finish: %s: %u ranks, %llu events%s\n", path, sum.nranks,
                (unsigned long long)sum.events, sum.incomplete ? " (some ranks incomplete)" : "");
    return rc;
}

const ph_verb cmd_finish = {"finish", "build the communicator and call-site tables of a trace",
                            usage, run};
