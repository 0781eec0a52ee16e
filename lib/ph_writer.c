/* ph_writer.c - write a trace from decoded events, without MPI.
 *
 * The inverse of ph_reader.c: synthetic traces for tests and benchmarks, and
 * any stage that writes events of its own (e.g. the computation vectors a
 * replay measured) use it, so that only one piece of code per direction
 * knows the encoding.
 */
#include <errno.h>
#include <jansson.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ph_trace.h"

typedef struct wcomm {
    uint64_t gid;
    uint32_t size, rsize;
    int32_t *members, *remote;
} wcomm;

typedef struct wsite {
    char *function, *file;
    int line;
} wsite;

struct ph_writer {
    char *dir;
    uint32_t nranks;
    json_t *meta;
    wcomm *comms;
    uint32_t ncomms;
    wsite *sites;
    uint32_t nsites;
    _Atomic uint64_t events; /* of the closed rank writers (ranks may be written by threads) */
};

struct ph_rank_writer {
    ph_writer *w;
    uint32_t rank;
    ph_stream *s;
    uint64_t next_index, prev_exit, next_req;
    uint8_t *comm_defined, *site_defined;
    int module_defined;
    uint32_t ncomm_defined, nsite_defined;
    uint64_t *type_sizes; /* local datatype index -> element size; 0 = none */
    uint32_t ntypes;
    uint8_t *buf;
    size_t cap;
};

ph_writer *ph_writer_create(const char *dir, uint32_t nranks, const char *command, ph_err *err)
{
    if (nranks == 0) {
        ph_err_set(err, "%s: a trace needs at least one rank", dir);
        return NULL;
    }
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        ph_err_set(err, "%s: cannot create: %s", dir, strerror(errno));
        return NULL;
    }
    ph_writer *w = calloc(1, sizeof *w);
    if (!w) {
        ph_err_set(err, "%s: out of memory", dir);
        return NULL;
    }
    w->dir = strdup(dir);
    w->nranks = nranks;
    char ver[16];
    snprintf(ver, sizeof ver, "%d.%d", PH_FORMAT_MAJOR, PH_FORMAT_MINOR);
    w->meta = json_pack("{s:s, s:s, s:i, s:s, s:s, s:{s:s, s:s}, s:{s:s, s:i}, s:{s:b, s:i}}",
                        "format", "phantom-trace", "version", ver, "ranks", (int)nranks,
                        "command", command ? command : "", "host", "synthetic",
                        "mpi", "library", "none (written by ph_writer)", "version", "3.1",
                        "clock", "source", "CLOCK_MONOTONIC", "resolution_ns", 1,
                        "mode", "log", 0, "callsite_depth", 1);
    int32_t *world = malloc(nranks * sizeof *world);
    if (!w->dir || !w->meta || !world) {
        free(world);
        ph_writer_abort(w);
        ph_err_set(err, "%s: out of memory", dir);
        return NULL;
    }
    for (uint32_t i = 0; i < nranks; i++)
        world[i] = (int32_t)i;
    ph_writer_comm(w, nranks, world, 0, NULL);
    free(world);
    return w;
}

uint32_t ph_writer_comm(ph_writer *w, uint32_t size, const int32_t *members, uint32_t rsize,
                        const int32_t *remote)
{
    wcomm *c = realloc(w->comms, (w->ncomms + 1) * sizeof *c);
    if (!c)
        return PH_COMM_NULL;
    w->comms = c;
    c += w->ncomms;
    c->gid = w->ncomms; /* world is 0; ids are unique within a written trace */
    c->size = size;
    c->rsize = rsize;
    c->members = malloc((size + 1) * sizeof(int32_t));
    c->remote = malloc((rsize + 1) * sizeof(int32_t));
    if (!c->members || !c->remote)
        return PH_COMM_NULL;
    memcpy(c->members, members, size * sizeof(int32_t));
    if (rsize)
        memcpy(c->remote, remote, rsize * sizeof(int32_t));
    return w->ncomms++;
}

uint32_t ph_writer_site(ph_writer *w, const char *function, const char *file, int line)
{
    wsite *s = realloc(w->sites, (w->nsites + 1) * sizeof *s);
    if (!s)
        return UINT32_MAX;
    w->sites = s;
    s += w->nsites;
    s->function = function ? strdup(function) : NULL;
    s->file = file ? strdup(file) : NULL;
    s->line = line;
    return w->nsites++;
}

static size_t block_start(void *ctx, uint8_t *out)
{
    ph_rank_writer *r = ctx;
    uint8_t *p = ph_put_uv(out, r->next_index);
    p = ph_put_uv(p, r->prev_exit);
    p = ph_put_uv(p, r->next_req);
    return (size_t)(p - out);
}

ph_rank_writer *ph_writer_rank(ph_writer *w, uint32_t rank, uint64_t t0, ph_err *err)
{
    if (rank >= w->nranks) {
        ph_err_set(err, "%s: no rank %u in a trace of %u ranks", w->dir, rank, w->nranks);
        return NULL;
    }
    ph_rank_writer *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->w = w;
    r->rank = rank;
    r->prev_exit = t0;
    char path[4200];
    snprintf(path, sizeof path, "%s/rank-%06u.evt", w->dir, rank);
    ph_file_header h = {.major = PH_FORMAT_MAJOR, .minor = PH_FORMAT_MINOR, .rank = rank,
                        .nranks = w->nranks, .t0 = t0};
    memcpy(h.magic, PH_MAGIC_EVT, 8);
    ph_stream_opts o = {.block_start = block_start, .ctx = r};
    r->s = ph_stream_open(path, &h, &o, err);
    if (!r->s) {
        free(r);
        return NULL;
    }
    return r;
}

/* Room for n more bytes in the scratch record. */
static uint8_t *room(ph_rank_writer *r, uint8_t *p, size_t n)
{
    size_t used = (size_t)(p - r->buf);
    if (used + n <= r->cap)
        return p;
    size_t cap = r->cap ? r->cap : 256;
    while (cap < used + n)
        cap *= 2;
    uint8_t *b = realloc(r->buf, cap);
    if (!b)
        return NULL;
    r->buf = b;
    r->cap = cap;
    return b + used;
}

static int put_record(ph_rank_writer *r, const uint8_t *rec, size_t n, ph_err *err)
{
    uint8_t *dst = ph_stream_reserve(r->s, n);
    if (!dst) {
        ph_err_set(err, "%s", ph_stream_error(r->s));
        return -1;
    }
    memcpy(dst, rec, n);
    ph_stream_commit(r->s, n);
    return 0;
}

static int mark(uint8_t **flags, uint32_t *n, uint32_t i)
{
    if (i >= *n) {
        uint32_t nn = i * 2 + 8;
        uint8_t *f = realloc(*flags, nn);
        if (!f)
            return -1;
        memset(f + *n, 0, nn - *n);
        *flags = f;
        *n = nn;
    }
    int was = (*flags)[i];
    (*flags)[i] = 1;
    return was;
}

static int define_comm(ph_rank_writer *r, uint32_t id, ph_err *err)
{
    if (id == 0 || id == PH_COMM_NULL)
        return 0;
    if (id >= r->w->ncomms) {
        ph_err_set(err, "rank %u: communicator %u was never defined", r->rank, id);
        return -1;
    }
    int was = mark(&r->comm_defined, &r->ncomm_defined, id);
    if (was)
        return was < 0 ? -1 : 0;
    const wcomm *c = &r->w->comms[id];
    uint8_t rec[64], *p;
    size_t n = 40 + 5 * ((size_t)c->size + c->rsize);
    uint8_t *b = n <= sizeof rec ? rec : malloc(n);
    if (!b)
        return -1;
    p = b;
    *p++ = PH_REC_COMM_DEF;
    p = ph_put_uv(p, id);
    for (int i = 0; i < 8; i++)
        *p++ = (uint8_t)(c->gid >> (8 * i));
    p = ph_put_uv(p, c->rsize > 0);
    p = ph_put_uv(p, c->size);
    for (uint32_t i = 0; i < c->size; i++)
        p = ph_put_uv(p, (uint64_t)c->members[i]);
    if (c->rsize) {
        p = ph_put_uv(p, c->rsize);
        for (uint32_t i = 0; i < c->rsize; i++)
            p = ph_put_uv(p, (uint64_t)c->remote[i]);
    }
    int rc = put_record(r, b, (size_t)(p - b), err);
    if (b != rec)
        free(b);
    return rc;
}

static int define_site(ph_rank_writer *r, uint32_t id, ph_err *err)
{
    if (id >= r->w->nsites) {
        ph_err_set(err, "rank %u: call site %u was never defined", r->rank, id);
        return -1;
    }
    int was = mark(&r->site_defined, &r->nsite_defined, id);
    if (was)
        return was < 0 ? -1 : 0;
    uint8_t rec[64], *p = rec;
    /* one module, "synthetic"; a site's only frame is its id as offset */
    static const char mod[] = "synthetic";
    if (!r->module_defined) {
        r->module_defined = 1;
        *p++ = PH_REC_MODULE_DEF;
        p = ph_put_uv(p, 0);
        p = ph_put_uv(p, sizeof mod - 1);
        memcpy(p, mod, sizeof mod - 1);
        p += sizeof mod - 1;
    }
    *p++ = PH_REC_SITE_DEF;
    p = ph_put_uv(p, id);
    uint64_t gid = id;
    for (int i = 0; i < 8; i++)
        *p++ = (uint8_t)(gid >> (8 * i));
    p = ph_put_uv(p, 1);
    p = ph_put_uv(p, 0);
    p = ph_put_uv(p, id);
    return put_record(r, rec, (size_t)(p - rec), err);
}

/* Local datatype for elements of `size` bytes: defined on first use. */
static int type_for(ph_rank_writer *r, uint64_t size, uint8_t **recp)
{
    if (size == 0)
        return 0;
    for (uint32_t i = 1; i < r->ntypes; i++)
        if (r->type_sizes[i] == size)
            return (int)i;
    uint32_t n = r->ntypes ? r->ntypes : 1;
    uint64_t *t = realloc(r->type_sizes, (n + 1) * sizeof *t);
    if (!t)
        return -1;
    r->type_sizes = t;
    t[0] = 0;
    t[n] = size;
    r->ntypes = n + 1;
    uint8_t *p = *recp;
    *p++ = PH_REC_TYPE_DEF;
    p = ph_put_uv(p, n);
    p = ph_put_uv(p, size);
    p = ph_put_sv(p, (int64_t)size);
    p = ph_put_uv(p, 1);
    *recp = p;
    return (int)n;
}

static uint8_t *put_status(uint8_t *p, const ph_status *s)
{
    if (!s || s->source == PH_NO_RANK)
        return ph_put_sv(p, PH_NO_RANK);
    p = ph_put_sv(p, s->source);
    p = ph_put_sv(p, s->tag);
    return ph_put_uv(p, s->bytes);
}

static uint64_t req_ref(uint64_t id, uint64_t next_req)
{
    return id == 0 ? 0 : id == UINT64_MAX ? 1 : next_req - id + 2;
}

int ph_rank_write(ph_rank_writer *r, const ph_event *ev, ph_err *err)
{
    const ph_op_info *info = ph_op(ev->op);
    if (!info) {
        ph_err_set(err, "rank %u: op %u is not in the op table", r->rank, ev->op);
        return -1;
    }
    if (r->next_index == 0 && ev->startup_ns) { /* STARTUP goes before the first event */
        uint8_t rec[PH_STARTUP_MAX];
        if (put_record(r, rec, (size_t)(ph_put_startup(rec, ev->startup_ns) - rec), err) < 0)
            return -1;
    }
    if (define_comm(r, ev->comm, err) < 0 || define_comm(r, ev->newcomm, err) < 0 ||
        define_site(r, ev->site, err) < 0)
        return -1;
    /* Datatype definitions go before the event; count x size = bytes. */
    uint8_t defs[64], *dp = defs;
    uint64_t esize = ev->count > 0 ? ev->bytes / (uint64_t)ev->count : 0;
    uint64_t rsize = ev->rcount > 0 ? ev->rbytes / (uint64_t)ev->rcount : 0;
    int has_rdtype = 0;
    for (const uint8_t *f = info->fields; *f; f++)
        has_rdtype |= *f == PH_F_RDTYPE;
    if (!esize && !has_rdtype) /* Reduce_scatter_block: one datatype for both sides */
        esize = rsize;
    int dt = type_for(r, esize, &dp), rdt = type_for(r, rsize, &dp);
    if (dt < 0 || rdt < 0 || (dp > defs && put_record(r, defs, (size_t)(dp - defs), err) < 0))
        return -1;
    size_t bound = 64 + 16 * PH_MAX_FIELDS + 11 * ((size_t)ev->nreqs + ev->nsbytes + ev->nrbytes) +
                   32 * ((size_t)ev->nstatus + 1);
    uint8_t *p = room(r, r->buf, bound);
    if (!p)
        return -1;
    uint64_t next_req = r->next_req;
    if (ev->op < PH_REC_ESCAPE) {
        *p++ = (uint8_t)ev->op;
    } else {
        *p++ = PH_REC_ESCAPE;
        p = ph_put_uv(p, ev->op);
    }
    p = ph_put_sv(p, (int64_t)(ev->t_entry - r->prev_exit));
    p = ph_put_uv(p, ev->t_exit - ev->t_entry);
    p = ph_put_uv(p, ev->site);
    int flag = ev->flag > 0;
    for (const uint8_t *f = info->fields; *f; f++) {
        switch (*f) {
        case PH_F_COMM: p = ph_put_uv(p, ev->comm); break;
        case PH_F_PEER: p = ph_put_sv(p, ev->peer); break;
        case PH_F_TAG: p = ph_put_sv(p, ev->tag); break;
        case PH_F_COUNT: p = ph_put_uv(p, (uint64_t)ev->count); break;
        case PH_F_DTYPE: p = ph_put_uv(p, (uint64_t)dt); break;
        case PH_F_RPEER: p = ph_put_sv(p, ev->rpeer); break;
        case PH_F_RTAG: p = ph_put_sv(p, ev->rtag); break;
        case PH_F_RCOUNT: p = ph_put_uv(p, (uint64_t)ev->rcount); break;
        case PH_F_RDTYPE: p = ph_put_uv(p, (uint64_t)rdt); break;
        case PH_F_ROOT: p = ph_put_sv(p, ev->root); break;
        case PH_F_SBYTESV:
        case PH_F_RBYTESV: {
            uint32_t n = *f == PH_F_SBYTESV ? ev->nsbytes : ev->nrbytes;
            const uint64_t *v = *f == PH_F_SBYTESV ? ev->sbytes : ev->rbytes_v;
            p = ph_put_uv(p, n);
            for (uint32_t i = 0; i < n; i++)
                p = ph_put_uv(p, v[i]);
            break;
        }
        case PH_F_INT: p = ph_put_sv(p, ev->ival); break;
        case PH_F_NEWCOMM: p = ph_put_uv(p, ev->newcomm == PH_COMM_NULL ? 0 : (uint64_t)ev->newcomm + 1); break;
        case PH_F_NEWREQ: next_req++; break;
        case PH_F_NEWREQ_IF_FLAG: next_req += flag; break;
        case PH_F_REQ: p = ph_put_uv(p, req_ref(ev->nreqs ? ev->reqs[0] : 0, next_req)); break;
        case PH_F_REQS:
            p = ph_put_uv(p, ev->nreqs);
            for (uint32_t i = 0; i < ev->nreqs; i++)
                p = ph_put_uv(p, req_ref(ev->reqs[i], next_req));
            break;
        case PH_F_FLAG: p = ph_put_uv(p, (uint64_t)flag); break;
        case PH_F_STATUS:
        case PH_F_STATUS_IF_FLAG:
            if (*f == PH_F_STATUS || flag)
                p = put_status(p, ev->nstatus ? &ev->status[0] : NULL);
            break;
        case PH_F_STATUSES:
        case PH_F_STATUSES_IF_FLAG:
            if (*f == PH_F_STATUSES || flag)
                for (uint32_t i = 0; i < ev->nreqs; i++)
                    p = put_status(p, i < ev->nstatus ? &ev->status[i] : NULL);
            break;
        case PH_F_ANY:
        case PH_F_ANY_IF_FLAG:
            if (*f == PH_F_ANY_IF_FLAG && !flag)
                break;
            p = ph_put_sv(p, ev->index);
            if (ev->index != PH_UNDEFINED)
                p = put_status(p, ev->nstatus ? &ev->status[0] : NULL);
            break;
        case PH_F_SOME:
            if (ev->ncompleted == UINT32_MAX) {
                p = ph_put_uv(p, 0);
                break;
            }
            p = ph_put_uv(p, (uint64_t)ev->ncompleted + 1);
            for (uint32_t i = 0; i < ev->ncompleted; i++) {
                p = ph_put_uv(p, (uint64_t)ev->completed[i]);
                p = put_status(p, i < ev->nstatus ? &ev->status[i] : NULL);
            }
            break;
        default:
            break;
        }
    }
    if (put_record(r, r->buf, (size_t)(p - r->buf), err) < 0)
        return -1;
    r->prev_exit = ev->t_exit;
    r->next_req = next_req;
    r->next_index++;
    return 0;
}

int ph_rank_writer_note(ph_rank_writer *r, const char *note, ph_err *err)
{
    size_t len = strlen(note);
    uint8_t *rec = malloc(len + 16), *p = rec;
    if (!rec) {
        ph_err_set(err, "out of memory");
        return -1;
    }
    *p++ = PH_REC_NOTE;
    p = ph_put_uv(p, len);
    memcpy(p, note, len);
    int rc = put_record(r, rec, (size_t)(p + len - rec), err);
    free(rec);
    return rc;
}

int ph_rank_writer_close(ph_rank_writer *r, int complete, ph_err *err)
{
    if (!r)
        return 0;
    int rc = 0;
    if (complete) {
        uint8_t end = PH_REC_END;
        rc = put_record(r, &end, 1, err);
    }
    if (ph_stream_close(r->s, rc ? NULL : err) < 0)
        rc = -1;
    atomic_fetch_add(&r->w->events, r->next_index);
    free(r->comm_defined);
    free(r->site_defined);
    free(r->type_sizes);
    free(r->buf);
    free(r);
    return rc;
}

static void free_tables(ph_writer *w)
{
    for (uint32_t i = 0; i < w->ncomms; i++) {
        free(w->comms[i].members);
        free(w->comms[i].remote);
    }
    for (uint32_t i = 0; i < w->nsites; i++) {
        free(w->sites[i].function);
        free(w->sites[i].file);
    }
    free(w->comms);
    free(w->sites);
}

void ph_writer_abort(ph_writer *w)
{
    if (!w)
        return;
    free_tables(w);
    json_decref(w->meta);
    free(w->dir);
    free(w);
}

static json_t *int_array(const int32_t *v, uint32_t n)
{
    json_t *a = json_array();
    for (uint32_t i = 0; i < n; i++)
        json_array_append_new(a, json_integer(v[i]));
    return a;
}

int ph_writer_close(ph_writer *w, ph_err *err)
{
    json_t *comms = json_array(), *sites = json_array();
    char gid[32];
    for (uint32_t i = 0; i < w->ncomms; i++) {
        snprintf(gid, sizeof gid, "0x%016llx", (unsigned long long)w->comms[i].gid);
        json_t *c = json_pack("{s:i, s:s, s:o}", "id", (int)i, "gid", gid, "members",
                              int_array(w->comms[i].members, w->comms[i].size));
        if (w->comms[i].rsize)
            json_object_set_new(c, "remote", int_array(w->comms[i].remote, w->comms[i].rsize));
        json_array_append_new(comms, c);
    }
    for (uint32_t i = 0; i < w->nsites; i++) {
        snprintf(gid, sizeof gid, "0x%016llx", (unsigned long long)i);
        json_array_append_new(sites, json_pack("{s:i, s:s, s:[{s:s, s:i}], s:s?, s:s?, s:i}", "id", (int)i,
                                               "gid", gid, "frames", "module", "synthetic", "offset",
                                               (int)i, "function", w->sites[i].function, "file",
                                               w->sites[i].file, "line", w->sites[i].line));
    }
    json_object_set_new(w->meta, "comms", comms);
    json_object_set_new(w->meta, "sites", sites);
    json_object_set_new(w->meta, "finished", json_true());
    json_object_set_new(w->meta, "events", json_integer((json_int_t)atomic_load(&w->events)));
    char path[4200];
    snprintf(path, sizeof path, "%s/meta.json", w->dir);
    int rc = ph_json_save(w->meta, path, JSON_INDENT(2), err);
    ph_writer_abort(w);
    return rc;
}

void ph_writer_meta(ph_writer *w, const char *key, json_t *value)
{
    json_object_set_new(w->meta, key, value);
}
