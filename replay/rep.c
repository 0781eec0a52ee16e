/* rep.c - the replayer's side of the generated wrappers: set-up at MPI_Init,
 * one recorded event per call, the divergence check, and the dispatch of
 * each kind of call to the code that answers it. */
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rep.h"

rep_state rep = {.stop_at = UINT64_MAX};

_Static_assert(sizeof(MPI_Fint) == sizeof(int), "Fortran integers are C ints here");

void *rep_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        rep_die("out of memory (%zu bytes)", n);
    return p;
}

/* Why the replay stops, one line: to PHANTOM_REPLAY_OUT/err-PID, which
 * `phantom replay` prints after the job has ended, so that it comes after
 * the launcher's banner about the abort instead of above it; to stderr
 * when it cannot be stored there. */
static void say_why(const char *line)
{
    const char *dir = getenv("PHANTOM_REPLAY_OUT");
    char path[PATH_MAX];
    int fd = -1;
    if (dir && *dir && snprintf(path, sizeof path, "%s/err-%ld", dir, (long)getpid()) < (int)sizeof path)
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    size_t n = strlen(line);
    if (fd >= 0) {
        int stored = write(fd, line, n) == (ssize_t)n;
        if (close(fd) == 0 && stored)
            return;
        unlink(path); /* a part of the line is no use to the front end */
    }
    fputs(line, stderr);
    fflush(stderr);
}

void rep_die(const char *fmt, ...)
{
    char msg[1024], line[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fflush(stdout);
    if (rep.active)
        snprintf(line, sizeof line, "phantom replay: rank %d: event %llu: %s\n", rep.rank,
                 (unsigned long long)rep.k, msg);
    else
        snprintf(line, sizeof line, "phantom replay: %s\n", msg);
    say_why(line);
    rep.active = 0;
    PMPI_Abort(MPI_COMM_WORLD, 3);
    _exit(3); /* not reached */
}

/* ---- describing calls, for the divergence message ---------------------------- */

uint64_t rep_bytes(int count, MPI_Datatype t)
{
    return count > 0 ? (uint64_t)count * ph_mpi_type_bytes(t) : 0;
}

static int32_t norm_rank(int r)
{
    return r == MPI_ANY_SOURCE ? PH_ANY_SOURCE : r == MPI_PROC_NULL ? PH_PROC_NULL
         : r == MPI_ROOT ? PH_ROOT : r;
}

static int has_field(const ph_op_info *info, int f)
{
    for (const uint8_t *p = info->fields; *p; p++)
        if (*p == f)
            return 1;
    return 0;
}

/* A growing "a, b, c" list in a fixed buffer (truncated, never overrun). */
typedef struct list {
    char *p;
    size_t cap, n;
    const char *sep;
} list;

static void add(list *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(list *l, const char *fmt, ...)
{
    va_list ap;
    if (l->n < l->cap)
        l->n += (size_t)snprintf(l->p + l->n, l->cap - l->n, "%s", l->sep);
    va_start(ap, fmt);
    if (l->n < l->cap)
        l->n += (size_t)vsnprintf(l->p + l->n, l->cap - l->n, fmt, ap);
    va_end(ap);
    l->sep = ", ";
}

/* "MPI_Send(peer 3, tag 7, 800 bytes, comm 0)" from the fields an op has. */
static void describe(char *out, size_t cap, unsigned op, int32_t peer, int32_t tag, uint64_t bytes,
                     int32_t root, long comm, uint32_t nreqs)
{
    const ph_op_info *info = ph_op(op);
    int n = snprintf(out, cap, "%s(", info ? info->name : "MPI_?");
    list l = {out, cap, n > 0 ? (size_t)n : 0, ""};
    if (info && has_field(info, PH_F_PEER)) {
        const char *sp = ph_rank_special_name(peer);
        if (sp)
            add(&l, "peer %s", sp);
        else
            add(&l, "peer %d", peer);
    }
    if (info && has_field(info, PH_F_TAG))
        add(&l, "tag %d", tag);
    if (info && (has_field(info, PH_F_DTYPE) || has_field(info, PH_F_RDTYPE)))
        add(&l, "%llu bytes", (unsigned long long)bytes);
    if (info && has_field(info, PH_F_ROOT))
        add(&l, "root %d", root);
    if (info && has_field(info, PH_F_REQS))
        add(&l, "%u requests", nreqs);
    if (info && has_field(info, PH_F_COMM) && comm >= 0)
        add(&l, "comm %ld", comm);
    else if (info && has_field(info, PH_F_COMM))
        add(&l, "comm ?");
    l.sep = "";
    add(&l, ")");
}

static void recorded_site(char *out, size_t cap, uint32_t site)
{
    const ph_site_info *s = ph_trace_site(rep.t, site);
    if (s && s->function && s->file)
        snprintf(out, cap, "%s %s:%d", s->function, s->file, s->line);
    else if (s && s->nframes) {
        const char *m = strrchr(s->modules[0], '/');
        snprintf(out, cap, "%s+0x%llx", m ? m + 1 : s->modules[0], (unsigned long long)s->offsets[0]);
    } else
        snprintf(out, cap, "?");
}

static void actual_site(char *out, size_t cap, void *pc)
{
    Dl_info d;
    if (!pc || !dladdr(pc, &d) || !d.dli_fname) {
        snprintf(out, cap, "%p", pc);
        return;
    }
    const char *m = strrchr(d.dli_fname, '/');
    int len = snprintf(out, cap, "%s+0x%lx", m ? m + 1 : d.dli_fname,
                       (unsigned long)((uintptr_t)pc - (uintptr_t)d.dli_fbase - 1));
    if (d.dli_sname && len > 0 && (size_t)len < cap)
        snprintf(out + len, cap - (size_t)len, " (in %s)", d.dli_sname);
}

static uint64_t call_bytes(const ph_call *c, const ph_op_info *info)
{
    uint64_t b = 0, rb = 0;
    rep_comm *k = rep_comm_of(c->comm);
    if (info->cls == PH_C_COLL && k && rep_coll_bytes(c, k, &b, &rb) == 0)
        return b ? b : rb;
    b = rep_bytes(c->count, c->dtype);
    return b ? b : rep_bytes(c->rcount, c->rdtype);
}

void rep_diverge(const ph_call *c, const char *what)
{
    const ph_op_info *info = &ph_ops[c->op];
    char exp[300] = "the end of the recording", got[300], es[300] = "", gs[300];
    if (rep.ev.op) {
        describe(exp, sizeof exp, rep.ev.op, rep.ev.peer, rep.ev.tag,
                 rep.ev.bytes ? rep.ev.bytes : rep.ev.rbytes, rep.ev.root, (long)rep.ev.comm,
                 rep.ev.nreqs);
        char site[240];
        recorded_site(site, sizeof site, rep.ev.site);
        snprintf(es, sizeof es, " at %s", site);
    }
    rep_comm *k = rep_comm_of(c->comm);
    describe(got, sizeof got, c->op, norm_rank(c->peer), c->tag, call_bytes(c, info),
             norm_rank(c->root), k ? (long)k->id : -1, (uint32_t)c->nreqs);
    actual_site(gs, sizeof gs, c->site_pc[0]);
    char clocks[160] = "";
    uint32_t unanswered = rep_log_unanswered_reads();
    if (unanswered)
        snprintf(clocks, sizeof clocks, " (%u clock reads before it were not in the log as made, "
                                        "and read the real clock: doc/replay.md, section 5)", unanswered);
    rep_die("expected %s%s, got %s at %s%s%s%s", exp, es, got, gs, what && *what ? ": " : "",
            what ? what : "", clocks);
}

/* ---- the divergence check ------------------------------------------------------ */

static uint64_t req_id(MPI_Request h)
{
    if (h == MPI_REQUEST_NULL)
        return 0;
    rep_req *q = rep_req_find(h);
    return q ? q->id : UINT64_MAX;
}

static void check_requests(const ph_call *c, const ph_op_info *info)
{
    if (info->kind == PH_K_MRECV || info->kind == PH_K_IMRECV)
        return; /* message handles are not ours to name; the event says which */
    if (has_field(info, PH_F_REQS) && (uint32_t)c->nreqs != rep.ev.nreqs)
        rep_diverge(c, "a different number of requests");
    const MPI_Request *h = has_field(info, PH_F_REQS) ? c->reqs : &c->req;
    uint32_t n = has_field(info, PH_F_REQS) ? (uint32_t)c->nreqs : 1;
    for (uint32_t i = 0; i < n && i < rep.ev.nreqs; i++) {
        uint64_t id = req_id(h[i]);
        if (id != rep.ev.reqs[i] && !(id == UINT64_MAX && rep.ev.reqs[i] == UINT64_MAX)) {
            char why[120];
            snprintf(why, sizeof why, "request %u is not the one recorded", i);
            rep_diverge(c, why);
        }
    }
}

/* Operation, communicator, peers, tags, sizes, root, op-specific integer and
 * requests must be as recorded; anything else is another execution. */
static void check(const ph_call *c, const ph_op_info *info, const rep_comm *k)
{
    const ph_event *e = &rep.ev;
    if (e->op != c->op)
        rep_diverge(c, NULL);
    if (has_field(info, PH_F_COMM) && (!k || k->id != e->comm))
        rep_diverge(c, "another communicator");
    if (has_field(info, PH_F_PEER) && norm_rank(c->peer) != e->peer)
        rep_diverge(c, "another peer");
    if (has_field(info, PH_F_TAG) && c->tag != e->tag)
        rep_diverge(c, "another tag");
    if (has_field(info, PH_F_RPEER) && (norm_rank(c->rpeer) != e->rpeer || c->rtag != e->rtag))
        rep_diverge(c, "another source or tag to receive from");
    if (has_field(info, PH_F_ROOT) && norm_rank(c->root) != e->root)
        rep_diverge(c, "another root");
    if (has_field(info, PH_F_INT) && info->kind != PH_K_INIT && c->ival != e->ival)
        rep_diverge(c, "another argument (color, tag or level)");
    if (info->cls == PH_C_COLL) {
        uint64_t b = 0, rb = 0;
        if (k && rep_coll_bytes(c, k, &b, &rb) == 0 && (b != e->bytes || rb != e->rbytes))
            rep_diverge(c, "another amount of data");
    } else if (has_field(info, PH_F_DTYPE)) {
        if (rep_bytes(c->count, c->dtype) != e->bytes)
            rep_diverge(c, "another amount of data");
        if (has_field(info, PH_F_RDTYPE) && rep_bytes(c->rcount, c->rdtype) != e->rbytes)
            rep_diverge(c, "another amount of data to receive");
    }
    if (has_field(info, PH_F_REQ) || has_field(info, PH_F_REQS))
        check_requests(c, info);
}

/* ---- the end ------------------------------------------------------------------------ */

/* A clean end before MPI_Finalize: the partial-replay boundary or the end of
 * an incomplete recording.  The job finalizes and exits 0 here. */
static void __attribute__((noreturn)) stop_here(const ph_call *c, int how)
{
    if (how == 2)
        rep_out_event(c->t_entry, c->t_entry); /* the unit before this call is the last one */
    rep_out_close(how == 2 && rep.stop_is_end ? 3 : how);
    rep.active = 0;
    fflush(NULL);
    PMPI_Finalize();
    exit(0);
}

/* A child forked by the program (no exec) is not the rank: its exit()
 * must neither report the rank as ended early nor change its exit status,
 * and its clock reads are its own. */
static void in_forked_child(void)
{
    rep.active = 0;
}

/* The program ended without reaching the recorded MPI_Finalize. */
static void at_exit(void)
{
    if (!rep.active)
        return;
    fflush(stdout);
    char line[160];
    snprintf(line, sizeof line, "phantom replay: rank %d: the program exited after %llu events, before the "
             "recorded run's end\n", rep.rank, (unsigned long long)rep.k);
    say_why(line);
    _exit(3);
}

static void fetch(ph_call *c)
{
    if (rep.k == rep.stop_at)
        stop_here(c, 2);
    ph_err err;
    int rc = ph_rank_next(rep.evr, &rep.ev, &err);
    if (rc < 0)
        rep_die("%s", err.msg);
    if (rc == 0) {
        if (ph_rank_complete(rep.evr)) {
            memset(&rep.ev, 0, sizeof rep.ev);
            rep_diverge(c, "more MPI calls than recorded");
        }
        stop_here(c, 3);
    }
}

/* ---- set-up at MPI_Init ---------------------------------------------------------------- */

static const char *env(const char *name, int required)
{
    const char *v = getenv(name);
    if (required && (!v || !*v))
        rep_die("%s is not set: run the program through `phantom replay`", name);
    return v && *v ? v : NULL;
}

/* The --ranks list: process p of the job plays original rank procs[p]. */
static void set_ranks(const char *spec)
{
    ph_err err;
    uint8_t *in = rep_xmalloc((size_t)rep.nranks);
    if (ph_parse_ranks(spec, (uint32_t)rep.nranks, in, &err) < 0)
        rep_die("PHANTOM_REPLAY_RANKS: %s", err.msg);
    rep.procs = rep_xmalloc((size_t)rep.nranks * sizeof *rep.procs);
    rep.proc_of = rep_xmalloc((size_t)rep.nranks * sizeof *rep.proc_of);
    int n = 0;
    for (int r = 0; r < rep.nranks; r++) {
        rep.proc_of[r] = in[r] ? n : -1;
        if (in[r])
            rep.procs[n++] = r;
    }
    free(in);
    if (n != rep.nprocs)
        rep_die("the job has %d processes for %d listed ranks (%s)", rep.nprocs, n, spec);
    rep.rank = rep.procs[rep.me];
}

/* What the replay needs from the log: all of it (isolated), or what entered
 * the subgroup (a subgroup log recorded for exactly this set). */
static void open_log(void)
{
    ph_err err;
    rep.full_log = !(ph_trace_flags(rep.t) & PH_FLAG_SUBGROUP);
    if (rep.isolated && !rep.full_log)
        rep_die("%s: --isolated needs a full message log (recorded with `record --log`), this one "
                "is a subgroup log (--log-ranks %s)", rep.trace_dir,
                ph_trace_meta(rep.t, "mode.log_ranks"));
    if (!rep.full_log) {
        ph_err e2;
        uint8_t *set = rep_xmalloc((size_t)rep.nranks);
        const char *lr = ph_trace_meta(rep.t, "mode.log_ranks");
        if (!lr || ph_parse_ranks(lr, (uint32_t)rep.nranks, set, &e2) < 0)
            rep_die("%s/meta.json: unreadable mode.log_ranks", rep.trace_dir);
        for (int r = 0; r < rep.nranks; r++)
            if ((set[r] != 0) != (rep.proc_of[r] >= 0))
                rep_die("%s: the subgroup log covers ranks %s, not the replayed set (rank %d): "
                        "record with --log-ranks set to the --ranks of the replay", rep.trace_dir,
                        lr, r);
        free(set);
    }
    rep.logr = ph_log_open(rep.t, (uint32_t)rep.rank, &err);
    if (!rep.logr)
        rep_die("%s", err.msg);
}

static void setup(ph_call *c)
{
    const char *mode = env("PHANTOM_REPLAY_MODE", 0), *stop = env("PHANTOM_REPLAY_STOP", 0);
    rep.trace_dir = env("PHANTOM_REPLAY_TRACE", 1);
    rep.isolated = mode && strcmp(mode, "isolated") == 0;
    ph_preload_forget((const void *)setup);
    PMPI_Comm_rank(MPI_COMM_WORLD, &rep.me);
    PMPI_Comm_size(MPI_COMM_WORLD, &rep.nprocs);
    ph_err err;
    rep.t = ph_trace_open(rep.trace_dir, &err);
    if (!rep.t)
        rep_die("%s", err.msg);
    rep.nranks = (int)ph_trace_nranks(rep.t);
    set_ranks(env("PHANTOM_REPLAY_RANKS", 1));
    rep.evr = ph_rank_open(rep.t, (uint32_t)rep.rank, &err);
    if (!rep.evr)
        rep_die("%s", err.msg);
    open_log();
    rep.stop_is_end = stop && env("PHANTOM_REPLAY_STOP_IS_END", 0);
    if (stop) { /* one event index per listed rank, in list order */
        const char *p = stop;
        for (int i = 0; i <= rep.me && p; i++, p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
            if (i == rep.me)
                rep.stop_at = strtoull(p, NULL, 10);
    }
    rep.active = 1; /* from here on, errors name the rank and event */
    fetch(c);
    if (rep.ev.op != PH_OP_INIT && rep.ev.op != PH_OP_INIT_THREAD)
        rep_diverge(c, NULL);
    if (rep_comm_setup_world() < 0 || (!rep.isolated && rep_wildcards_scan(&err) < 0))
        rep_die("%s", err.msg);
    rep_out_units();
    if (rep_out_open(&err) < 0)
        rep_die("%s", err.msg);
    rep_out_probe();
    atexit(at_exit);
    pthread_atfork(NULL, NULL, in_forked_child);
}

/* ---- the wrappers' hooks ---------------------------------------------------------------- */

void ph_count_call(unsigned i) { (void)i; }
void ph_type_freed(MPI_Datatype t) { (void)t; }

static rep_comm *comm_for(ph_call *c, const ph_op_info *info)
{
    if (info->kind == PH_K_COMM_FREE && c->commp)
        c->comm = *c->commp;
    if (!has_field(info, PH_F_COMM) || c->comm == MPI_COMM_NULL)
        return NULL;
    rep_comm *k = rep_comm_of(c->comm);
    return k ? k : rep_comm_bind(c->comm, rep.ev.comm);
}

static void answer(ph_call *c, const ph_op_info *info, rep_comm *k)
{
    switch (info->kind) {
    case PH_K_PCONTROL: break;
    case PH_K_SEND: rep_send(c, k); break;
    case PH_K_RECV: rep_recv(c, k); break;
    case PH_K_ISEND: case PH_K_PSEND: rep_isend(c, k); break;
    case PH_K_IRECV: case PH_K_PRECV: rep_irecv(c, k); break;
    case PH_K_START: case PH_K_STARTALL: rep_start(c); break;
    case PH_K_SENDRECV: rep_sendrecv(c, k); break;
    case PH_K_PROBE: case PH_K_IPROBE: case PH_K_MPROBE: case PH_K_IMPROBE: rep_probe(c, k); break;
    case PH_K_MRECV: case PH_K_IMRECV: rep_mrecv(c); break;
    case PH_K_REQUEST_FREE: rep_request_free(c); break;
    case PH_K_CANCEL: rep_cancel(c); break;
    case PH_K_COLL: rep_coll(c, k); break;
    case PH_K_ICOLL: rep_icoll(c, k); break;
    case PH_K_COMM_DUP: case PH_K_COMM_NEW: case PH_K_COMM_IDUP: rep_comm_create(c); break;
    case PH_K_COMM_FREE: rep_comm_free(c); break;
    default: rep_wait_family(c); break;
    }
}

static int debug = -1; /* PHANTOM_REPLAY_DEBUG: one line per replayed call on stderr */

int ph_pre(ph_call *c)
{
    ph_mark_enter();
    if (rep.probing)
        return 1; /* the replayer's own call, not the program's: MPI answers */
    const ph_op_info *info = &ph_ops[c->op];
    if (info->kind == PH_K_INIT)
        return 1; /* the replay starts in ph_post, once the library is up */
    fetch(c);
    if (debug < 0)
        debug = getenv("PHANTOM_REPLAY_DEBUG") != NULL;
    if (debug)
        fprintf(stderr, "phantom replay: rank %d: event %llu: %s\n", rep.rank,
                (unsigned long long)rep.k, info->name);
    rep_comm *k = comm_for(c, info);
    check(c, info, k);
    if (info->kind == PH_K_FINALIZE || info->kind == PH_K_ABORT)
        return 1;
    c->rc = MPI_SUCCESS;
    answer(c, info, k);
    return 0;
}

static void post(ph_call *c)
{
    if (rep.probing) { /* a program's call does this much after its exit clock, and no more */
        rep_out_exit(c->site_pc[0]);
        rep_out_event(c->t_entry, rep_now());
        return;
    }
    const ph_op_info *info = &ph_ops[c->op];
    if (info->kind == PH_K_INIT) {
        if (c->rc != MPI_SUCCESS)
            return;
        setup(c); /* the set-up is part of MPI_Init, not of the first unit */
    }
    /* The program's MPI_Wtime calls before the next event look up its log
     * records: reading up to them (and past what a subgroup received for
     * real) is the replayer's work, inside this call, not computation. */
    rep_log_prefetch(rep.k + 1);
    rep_out_exit(c->site_pc[0]); /* before the clock: the reading is the call's */
    uint64_t t_exit = rep_now();
    rep_out_event(c->t_entry, t_exit);
    rep.k++;
    if (info->kind == PH_K_FINALIZE) {
        ph_err err;
        ph_event ev;
        int more = ph_rank_next(rep.evr, &ev, &err);
        rep_out_close(1);
        rep.active = 0;
        if (more > 0)
            fprintf(stderr, "phantom replay: rank %d: the recording goes on after MPI_Finalize "
                            "(event %llu)\n", rep.rank, (unsigned long long)rep.k);
    }
}

void ph_post(ph_call *c)
{
    post(c);
    ph_mark_leave();
}
