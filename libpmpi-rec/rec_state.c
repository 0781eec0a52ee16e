/* rec_state.c - the recorder's per-rank state: files, meta.json, and the
 * tables that turn MPI handles into trace ids (communicators, datatypes,
 * call sites, requests). */
#include <dlfcn.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "rec.h"

/* ---- hashing: gids must be the same on every rank for the same thing ---- */

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h ^= h >> 31;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 27;
    return h;
}

static uint64_t mix_str(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = mix(h, (unsigned char)*s);
    return h;
}

/* ---- event stream plumbing ------------------------------------------------ */

static size_t block_start(void *ctx, uint8_t *out)
{
    (void)ctx;
    uint8_t *p = out;
    p = ph_put_uv(p, rec.next_index);
    p = ph_put_uv(p, rec.prev_exit);
    p = ph_put_uv(p, rec.next_req);
    return (size_t)(p - out);
}

uint8_t *rec_reserve(size_t n)
{
    if (!rec.active)
        return NULL;
    uint8_t *p = ph_stream_reserve(rec.evt, n);
    if (!p)
        rec_fail("%s", ph_stream_error(rec.evt) ? ph_stream_error(rec.evt) : "cannot write the trace");
    return p;
}

void rec_commit(size_t n) { ph_stream_commit(rec.evt, n); }

/* ---- communicators -------------------------------------------------------------- */

static MPI_Group world_group = MPI_GROUP_NULL;

static int32_t *world_ranks_of(MPI_Group g, int *n)
{
    PMPI_Group_size(g, n);
    int *in = malloc(((size_t)*n + 1) * sizeof *in);
    int32_t *out = malloc(((size_t)*n + 1) * sizeof *out);
    if (!in || !out) {
        free(in);
        free(out);
        return NULL;
    }
    for (int i = 0; i < *n; i++)
        in[i] = i;
    PMPI_Group_translate_ranks(g, *n, in, world_group, (int *)out);
    free(in);
    return out;
}

static rec_comm *comm_slot(MPI_Comm comm)
{
    int f = PMPI_Comm_c2f(comm);
    if (f < 0)
        return NULL;
    if ((size_t)f >= rec.ncomms) {
        size_t n = (size_t)f * 2 + 16;
        rec_comm *c = realloc(rec.comms, n * sizeof *c);
        if (!c)
            return NULL;
        memset(c + rec.ncomms, 0, (n - rec.ncomms) * sizeof *c);
        rec.comms = c;
        rec.ncomms = n;
    }
    return &rec.comms[f];
}

/* How many communicators with this base hash this rank created so far: the
 * members of a new communicator all count the same creations in the same
 * order, so (base, occurrence) names it consistently without communicating. */
static uint32_t occurrence(uint64_t base)
{
    for (size_t i = 0; i < rec.nocc; i++)
        if (rec.occ[i].base == base)
            return ++rec.occ[i].n;
    if (rec.nocc == rec.occcap) {
        size_t cap = rec.occcap ? rec.occcap * 2 : 32;
        void *p = realloc(rec.occ, cap * sizeof *rec.occ);
        if (!p)
            return 0;
        rec.occ = p;
        rec.occcap = cap;
    }
    rec.occ[rec.nocc].base = base;
    rec.occ[rec.nocc].n = 1;
    return rec.occ[rec.nocc++].n;
}

static int in_set_all(const int32_t *m, int n)
{
    for (int i = 0; i < n; i++)
        if (!rec.log_set[m[i]])
            return 0;
    return 1;
}

static void emit_comm_def(rec_comm *k)
{
    size_t bound = 40 + 5 * ((size_t)k->size + (size_t)k->rsize);
    uint8_t *p0 = rec_reserve(bound), *p = p0;
    if (!p)
        return;
    *p++ = PH_REC_COMM_DEF;
    p = ph_put_uv(p, k->local - 1);
    for (int i = 0; i < 8; i++)
        *p++ = (uint8_t)(k->gid >> (8 * i));
    p = ph_put_uv(p, k->rsize > 0);
    p = ph_put_uv(p, (uint64_t)k->size);
    for (int i = 0; i < k->size; i++)
        p = ph_put_uv(p, (uint64_t)k->members[i]);
    if (k->rsize > 0) {
        p = ph_put_uv(p, (uint64_t)k->rsize);
        for (int i = 0; i < k->rsize; i++)
            p = ph_put_uv(p, (uint64_t)k->remote[i]);
    }
    rec_commit((size_t)(p - p0));
}

/* Fill slot k for comm: membership from its groups (or the parent's, for a
 * dup whose handle may not be usable yet), then the gid and its definition. */
static uint64_t hash_group(uint64_t h, const int32_t *m, int n)
{
    h = mix(h, (uint64_t)n);
    for (int i = 0; i < n; i++)
        h = mix(h, (uint64_t)m[i]);
    return h;
}

static void end_streams(const char *why);

/* Whether a member translated to MPI_UNDEFINED: a process outside this
 * job's MPI_COMM_WORLD. */
static int has_outsider(const int32_t *m, int n)
{
    for (int i = 0; i < n; i++)
        if (m[i] < 0)
            return 1;
    return 0;
}

static rec_comm *define_comm(rec_comm *k, MPI_Comm comm, uint64_t parent_key)
{
    free(k->members);
    free(k->remote);
    memset(k, 0, sizeof *k);
    int inter = 0;
    PMPI_Comm_test_inter(comm, &inter);
    MPI_Group g;
    PMPI_Comm_group(comm, &g);
    k->members = world_ranks_of(g, &k->size);
    PMPI_Group_free(&g);
    if (inter) {
        PMPI_Comm_remote_group(comm, &g);
        k->remote = world_ranks_of(g, &k->rsize);
        PMPI_Group_free(&g);
    }
    if (!k->members || (inter && !k->remote)) {
        rec_fail("out of memory recording a communicator");
        return NULL;
    }
    /* A trace's ranks are one MPI_COMM_WORLD's: messages to processes
     * spawned or connected have nowhere to go in it, nor in a replay. */
    if (has_outsider(k->members, k->size) || has_outsider(k->remote, k->rsize)) {
        const char *why = "a communicator reaches processes outside MPI_COMM_WORLD, started by "
                          "MPI_Comm_spawn or met through MPI_Comm_connect, _accept or _join: "
                          "a trace cannot hold them";
        rec_stop(why);
        return NULL;
    }
    if (!inter) {
        uint64_t base = hash_group(mix(parent_key, 0x1a7a), k->members, k->size);
        k->gid = k->key = mix(base, occurrence(base));
    } else {
        /* Both sides must agree on the key (Intercomm_merge hashes it), but
         * each side's view (local vs remote group) is its own trace entry;
         * their gids differ in bit 0 only, so readers can pair them. */
        int low = k->members[0] < k->remote[0];
        uint64_t base = mix(0x17e2, (uint64_t)k->size + (uint64_t)k->rsize);
        base = hash_group(base, low ? k->members : k->remote, low ? k->size : k->rsize);
        base = hash_group(base, low ? k->remote : k->members, low ? k->rsize : k->size);
        k->key = mix(base, occurrence(base));
        k->gid = (k->key & ~1ull) | (low ? 0 : 1);
        if (k->gid < 2)
            k->gid = low ? 2 : 3;
    }
    if (k->gid == 0)
        k->gid = 1; /* 0 is MPI_COMM_WORLD */
    if (rec.log_set)
        k->all_in_set = in_set_all(k->members, k->size) && in_set_all(k->remote, k->rsize);
    k->local = ++rec.next_comm_local;
    emit_comm_def(k);
    return k;
}

rec_comm *rec_comm_get(MPI_Comm comm)
{
    if (comm == rec.last_comm && comm != MPI_COMM_NULL)
        return &rec.comms[rec.last_comm_slot];
    rec_comm *k = comm_slot(comm);
    if (!k)
        return NULL;
    if (k->local) {
        rec.last_comm = comm;
        rec.last_comm_slot = (size_t)(k - rec.comms);
        return k;
    }
    /* created by a call we do not sequence (e.g. MPI_COMM_SELF, Comm_connect) */
    return define_comm(k, comm, 0x5eed);
}

rec_comm *rec_comm_new(MPI_Comm parent, MPI_Comm comm, int idup)
{
    rec_comm *pk = parent != MPI_COMM_NULL ? rec_comm_get(parent) : NULL;
    uint64_t pgid = pk ? pk->key : 0x5eed;
    rec_comm *k = comm_slot(comm);
    if (!k)
        return NULL;
    /* Comm_idup's handle may not be usable before its request completes:
     * its membership is its parent's. */
    return define_comm(k, idup ? parent : comm, pgid);
}

/* ---- datatypes ---------------------------------------------------------------------- */

rec_type *rec_type_get(MPI_Datatype t)
{
    static rec_type none = {0, 0, 1};
    if (t == rec.last_type && t != MPI_DATATYPE_NULL)
        return &rec.types[rec.last_type_slot];
    int f = PMPI_Type_c2f(t);
    if (f < 0)
        return &none;
    if ((size_t)f >= rec.ntypes) {
        size_t n = (size_t)f * 2 + 64;
        rec_type *v = realloc(rec.types, n * sizeof *v);
        if (!v)
            return &none;
        memset(v + rec.ntypes, 0, (n - rec.ntypes) * sizeof *v);
        rec.types = v;
        rec.ntypes = n;
    }
    rec_type *ty = &rec.types[f];
    rec.last_type = t;
    rec.last_type_slot = (size_t)f;
    if (ty->local)
        return ty;
    MPI_Aint lb, ext;
    ty->size = ph_mpi_type_bytes(t);
    PMPI_Type_get_extent(t, &lb, &ext);
    ty->contiguous = ph_mpi_type_is_plain(t, ty->size);
    ty->local = ++rec.next_type_local;
    uint8_t *p0 = rec_reserve(40), *p = p0;
    if (p) {
        *p++ = PH_REC_TYPE_DEF;
        p = ph_put_uv(p, ty->local);
        p = ph_put_uv(p, (uint64_t)ty->size);
        p = ph_put_sv(p, (int64_t)ext);
        p = ph_put_uv(p, (uint64_t)ty->contiguous);
        rec_commit((size_t)(p - p0));
    }
    return ty;
}

/* ---- call sites --------------------------------------------------------------------- */

static uint32_t module_index(const char *path)
{
    for (size_t i = 0; i < rec.nmods; i++)
        if (strcmp(rec.mods[i].path, path) == 0)
            return (uint32_t)i;
    void *m = realloc(rec.mods, (rec.nmods + 1) * sizeof *rec.mods);
    if (!m)
        return 0;
    rec.mods = m;
    rec.mods[rec.nmods].path = strdup(path);
    size_t len = strlen(path);
    uint8_t *p0 = rec_reserve(len + 24), *p = p0;
    if (p) {
        *p++ = PH_REC_MODULE_DEF;
        p = ph_put_uv(p, rec.nmods);
        p = ph_put_uv(p, len);
        memcpy(p, path, len);
        p += len;
        rec_commit((size_t)(p - p0));
    }
    return (uint32_t)rec.nmods++;
}

static void module_of(void *pc, const char **path, uintptr_t *base)
{
    static char exe[PATH_MAX];
    Dl_info info;
    if (!dladdr(pc, &info) || !info.dli_fname) {
        *path = "?";
        *base = 0;
        return;
    }
    *base = (uintptr_t)info.dli_fbase;
    *path = info.dli_fname;
    if (!info.dli_fname[0] || info.dli_fname[0] != '/') { /* the main program */
        if (!exe[0]) {
            ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
            exe[n > 0 ? n : 0] = 0;
        }
        *path = exe[0] ? exe : info.dli_fname;
    }
}

uint32_t rec_site_local(ph_call *c)
{
    /* a cheap key: distinct stacks differ in some return address */
    uint64_t key = (uint64_t)c->site_depth;
    for (int i = 0; i < c->site_depth; i++)
        key = (key << 7 | key >> 57) ^ (uint64_t)(uintptr_t)c->site_pc[i];
    key = mix(key, 0x517e);
    if (rec.nsites * 2 >= rec.sitecap) {
        size_t cap = rec.sitecap ? rec.sitecap * 2 : 256;
        struct site *t = calloc(cap, sizeof *t);
        if (!t) {
            rec_fail("out of memory for call sites");
            return 0;
        }
        for (size_t i = 0; i < rec.sitecap; i++)
            if (rec.sites[i].local) {
                size_t j = rec.sites[i].key & (cap - 1);
                while (t[j].local)
                    j = (j + 1) & (cap - 1);
                t[j] = rec.sites[i];
            }
        free(rec.sites);
        rec.sites = t;
        rec.sitecap = cap;
    }
    size_t j = key & (rec.sitecap - 1);
    while (rec.sites[j].local) {
        if (rec.sites[j].key == key)
            return rec.sites[j].local - 1;
        j = (j + 1) & (rec.sitecap - 1);
    }
    /* New site: normalise to (module, offset) so that ASLR does not matter. */
    uint32_t mods[REC_MAX_DEPTH];
    uint64_t offs[REC_MAX_DEPTH];
    uint64_t gid = 0x5173;
    for (int i = 0; i < c->site_depth; i++) {
        const char *path;
        uintptr_t base;
        module_of(c->site_pc[i], &path, &base);
        mods[i] = module_index(path);
        offs[i] = (uint64_t)((uintptr_t)c->site_pc[i] - base - 1); /* inside the call insn */
        const char *slash = strrchr(path, '/');
        gid = mix(mix_str(gid, slash ? slash + 1 : path), offs[i]);
    }
    uint32_t local = (uint32_t)rec.nsites;
    rec.sites[j].key = key;
    rec.sites[j].local = local + 1;
    rec.nsites++;
    uint8_t *p0 = rec_reserve(32 + 20 * (size_t)c->site_depth), *p = p0;
    if (p) {
        *p++ = PH_REC_SITE_DEF;
        p = ph_put_uv(p, local);
        for (int i = 0; i < 8; i++)
            *p++ = (uint8_t)(gid >> (8 * i));
        p = ph_put_uv(p, (uint64_t)c->site_depth);
        for (int i = 0; i < c->site_depth; i++) {
            p = ph_put_uv(p, mods[i]);
            p = ph_put_uv(p, offs[i]);
        }
        rec_commit((size_t)(p - p0));
    }
    return local;
}

/* ---- requests: open addressing on the handle, backward-shift deletion --------------- */

static size_t req_hash(MPI_Request r)
{
    return (size_t)(mix(0, (uint64_t)(uintptr_t)r) & (rec.reqcap - 1));
}

rec_req *rec_req_find(MPI_Request r)
{
    if (!rec.reqcap || r == MPI_REQUEST_NULL)
        return NULL;
    for (size_t j = req_hash(r);; j = (j + 1) & (rec.reqcap - 1)) {
        if (!rec.reqs[j].used)
            return NULL;
        if (rec.reqs[j].key == r)
            return &rec.reqs[j];
    }
}

rec_req *rec_req_claim(MPI_Request r, uint64_t stamp)
{
    if (!rec.reqcap || r == MPI_REQUEST_NULL)
        return NULL;
    rec_req *any = NULL;
    pthread_t me = pthread_self();
    for (size_t j = req_hash(r); rec.reqs[j].used; j = (j + 1) & (rec.reqcap - 1)) {
        rec_req *q = &rec.reqs[j];
        if (q->key != r || q->stamp == stamp)
            continue;
        if (!rec.mt || pthread_equal(q->thread, me)) {
            any = q;
            break;
        }
        if (!any)
            any = q;
    }
    if (any)
        any->stamp = stamp;
    return any;
}

rec_req *rec_req_find_id(MPI_Request r, uint64_t id)
{
    if (!rec.reqcap || r == MPI_REQUEST_NULL)
        return NULL;
    for (size_t j = req_hash(r); rec.reqs[j].used; j = (j + 1) & (rec.reqcap - 1))
        if (rec.reqs[j].key == r && rec.reqs[j].id == id)
            return &rec.reqs[j];
    return NULL;
}

static int req_grow(void)
{
    size_t cap = rec.reqcap ? rec.reqcap * 2 : 1024, old = rec.reqcap;
    rec_req *t = calloc(cap, sizeof *t), *o = rec.reqs;
    if (!t)
        return -1;
    rec.reqs = t;
    rec.reqcap = cap;
    for (size_t i = 0; i < old; i++)
        if (o[i].used) {
            size_t j = req_hash(o[i].key);
            while (t[j].used)
                j = (j + 1) & (cap - 1);
            t[j] = o[i];
        }
    free(o);
    return 0;
}

rec_req *rec_req_add(MPI_Request r, int kind)
{
    if (r == MPI_REQUEST_NULL)
        return NULL;
    /* A handle may already be live (see rec_req_claim): add another entry
     * after it, so that the probe run keeps creation order. */
    if ((rec.nreqs_live + 1) * 2 > rec.reqcap && req_grow() < 0) {
        rec_fail("out of memory for requests");
        return NULL;
    }
    size_t j = req_hash(r);
    while (rec.reqs[j].used)
        j = (j + 1) & (rec.reqcap - 1);
    rec_req *q = &rec.reqs[j];
    rec.nreqs_live++;
    memset(q, 0, sizeof *q);
    q->key = r;
    q->used = 1;
    q->thread = pthread_self();
    q->kind = (uint8_t)kind;
    return q;
}

void rec_req_remove(rec_req *q)
{
    free(q->coll);
    size_t i = (size_t)(q - rec.reqs), mask = rec.reqcap - 1;
    memset(q, 0, sizeof *q);
    rec.nreqs_live--;
    /* Backward-shift deletion: move later entries of the probe run into the
     * hole when their home slot does not lie between the hole and them. */
    for (size_t j = (i + 1) & mask; rec.reqs[j].used; j = (j + 1) & mask) {
        size_t h = req_hash(rec.reqs[j].key);
        int between = i <= j ? (i < h && h <= j) : (i < h || h <= j);
        if (!between) {
            rec.reqs[i] = rec.reqs[j];
            memset(&rec.reqs[j], 0, sizeof rec.reqs[j]);
            i = j;
        }
    }
}

/* ---- start and end ------------------------------------------------------------------- */

static long env_long(const char *name, long dflt, long lo, long hi)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return dflt;
    char *end;
    long x = strtol(v, &end, 10);
    if (*end || x < lo || x > hi) {
        fprintf(stderr, "phantom: %s=%s is not a number in [%ld, %ld]; using %ld\n", name, v, lo, hi, dflt);
        return dflt;
    }
    return x;
}

/* A yes/no variable: unset or empty is dflt; 1/yes/true/on and 0/no/false/off
 * in any case; anything else warns (on every rank, like env_long) and is
 * dflt.  "Set to anything but 0" would take PHANTOM_DISABLE= as on. */
static int env_flag(const char *name, int dflt)
{
    static const char *const on[] = {"1", "yes", "true", "on"}, *const off[] = {"0", "no", "false", "off"};
    const char *v = getenv(name);
    if (!v || !*v)
        return dflt;
    for (size_t i = 0; i < sizeof on / sizeof *on; i++) {
        if (strcasecmp(v, on[i]) == 0)
            return 1;
        if (strcasecmp(v, off[i]) == 0)
            return 0;
    }
    fprintf(stderr, "phantom: %s=%s is not 1/yes/true/on or 0/no/false/off; using %d\n", name, v, dflt);
    return dflt;
}

static int mkdir_p(const char *dir)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s", dir);
    for (char *p = tmp + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
                return -1;
            *p = '/';
        }
    return mkdir(tmp, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

static json_t *command_line(void)
{
    const char *cmd = getenv("PHANTOM_COMMAND");
    if (cmd)
        return json_string(cmd);
    json_t *a = json_array();
    FILE *f = fopen("/proc/self/cmdline", "r");
    if (!f)
        return a;
    char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    for (size_t i = 0; i < n; i += strlen(buf + i) + 1)
        json_array_append_new(a, json_string(buf + i));
    return a;
}

/* The recorder's own time inside every gap it records: from the clock read
 * that ends its work on one call (prev_done) to the next call's entry read,
 * the lock's release, the returns, the wrapper's entry and the reads
 * themselves, which a trace counts as the application's computation.  About
 * 10 ns here: nothing beside a long computation, but HPCC's RandomAccess
 * polls with MPI_Testany once an update, 21 ns an iteration in a bare run
 * and 16 ns of gap in its trace: taken off, one recording's prediction
 * over shared memory came out 6.5% shorter (doc/simmpi.md section 8).
 * Timed on REC_PROBE_CALLS calls of MPI_Test on MPI_REQUEST_NULL back to back,
 * through the wrappers as the application calls them; post() notes their
 * gaps and records nothing; ph_probe_sum leaves out the warm-up and the
 * calls an interrupt hit.  Readers take it off every gap
 * (doc/trace-format.md section 7). */
static double probe_gap_ns(void)
{
    uint64_t *gaps = malloc(REC_PROBE_CALLS * sizeof *gaps), saved = rec.prev_done, sum, kept;
    if (!gaps)
        return -1;
    MPI_Request none = MPI_REQUEST_NULL;
    int flag;
    rec.nprobe = 0;
    rec.probe = gaps;
    rec.prev_done = rec_now();
    for (int i = 0; i < REC_PROBE_CALLS; i++)
        MPI_Test(&none, &flag, MPI_STATUS_IGNORE); /* the wrapper, as a program calls it */
    rec.probe = NULL;
    rec.prev_done = saved;
    int rc = ph_probe_sum(gaps, rec.nprobe, &sum, &kept); /* too few: recording stopped meanwhile */
    free(gaps);
    return rc < 0 ? -1 : (double)sum / (double)kept;
}

static void write_meta(int log_mode, const char *log_ranks)
{
    char host[256] = "", lib[MPI_MAX_LIBRARY_VERSION_STRING] = "", path[4200];
    char when[64], ver[32], mv[32];
    int len = 0, major = 0, minor = 0;
    gethostname(host, sizeof host - 1);
    PMPI_Get_library_version(lib, &len);
    lib[strcspn(lib, "\n")] = 0;
    PMPI_Get_version(&major, &minor);
    struct timespec res;
    clock_getres(CLOCK_MONOTONIC, &res);
    time_t now = time(NULL);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    snprintf(ver, sizeof ver, "%d.%d", PH_FORMAT_MAJOR, PH_FORMAT_MINOR);
    snprintf(mv, sizeof mv, "%d.%d", major, minor);
    json_t *m = json_object();
    json_object_set_new(m, "format", json_string("phantom-trace"));
    json_object_set_new(m, "version", json_string(ver));
    json_object_set_new(m, "ranks", json_integer(rec.nranks));
    json_object_set_new(m, "command", command_line());
    json_object_set_new(m, "host", json_string(host));
    json_object_set_new(m, "mpi", json_pack("{s:s, s:s}", "library", lib, "version", mv));
    json_t *clock = json_pack("{s:s, s:I}", "source", "CLOCK_MONOTONIC", "resolution_ns",
                              (json_int_t)(res.tv_sec * 1000000000 + res.tv_nsec));
    double probe = probe_gap_ns();
    if (probe >= 0)
        json_object_set_new(clock, "probe_gap_ns", json_real((double)(long)(probe * 10 + 0.5) / 10));
    json_object_set_new(m, "clock", clock);
    json_object_set_new(m, "mode", json_pack("{s:b, s:s?, s:i}", "log", log_mode,
                                             "log_ranks", log_ranks, "callsite_depth", rec.depth));
    json_object_set_new(m, "start_time", json_string(when));
    json_object_set_new(m, "phantom_version", json_string(PACKAGE_VERSION));
    json_object_set_new(m, "finished", json_false());
    snprintf(path, sizeof path, "%s/meta.json", rec.dir);
    ph_err err;
    if (ph_json_save(m, path, JSON_INDENT(2) | JSON_REAL_PRECISION(10), &err) < 0)
        rec_fail("%s", err.msg);
    json_decref(m);
}

/* A child forked by the program (no exec) is not the rank: it has the
 * rank's streams but not their writer thread, and closing them at its
 * exit() would wait for that thread forever (or write the rank's blocks
 * twice).  It records nothing. */
static void in_forked_child(void)
{
    rec.active = 0;
}

static void at_exit(void)
{
    if (rec.active) {
        rec_lock();
        if (rec.active)
            rec_finish(0);
        rec_unlock();
    }
}

/* inflight: bytes of blocks that may wait for the writer thread before a
 * call has to (as many as before blocks became 64 KiB: four of 1 MiB for
 * events, four of 4 MiB for the log), so a slow file system stalls the
 * rank no sooner; at least 4 blocks, at most 256. */
static ph_stream *open_stream(const char *ext, const char *magic, size_t block, size_t inflight,
                              int with_header)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/rank-%06d.%s", rec.dir, rec.rank, ext);
    ph_file_header h = {.major = PH_FORMAT_MAJOR, .minor = PH_FORMAT_MINOR,
                        .rank = (uint32_t)rec.rank, .nranks = (uint32_t)rec.nranks,
                        .flags = (rec.logging ? PH_FLAG_LOG : 0) | (rec.log_set ? PH_FLAG_SUBGROUP : 0),
                        .t0 = rec.t0};
    memcpy(h.magic, magic, 8);
    size_t nbuf = inflight / block;
    nbuf = nbuf < 4 ? 4 : nbuf > 256 ? 256 : nbuf;
    ph_stream_opts o = {.block_size = block, .nbuffers = (int)nbuf,
                        .level = (int)env_long("PHANTOM_ZSTD_LEVEL", 1, 1, 19), .background = 1,
                        .block_start = with_header ? block_start : NULL};
    ph_err err;
    ph_stream *s = ph_stream_open(path, &h, &o, &err);
    if (!s)
        rec_fail("%s", err.msg);
    return s;
}

/* PHANTOM_LOG_UNTIL names a file of "RANK EVENT" lines (phantom record
 * --plan): this rank logs what events before EVENT receive, the first
 * iterations a partial replay needs, and nothing after. */
static uint64_t log_until(void)
{
    const char *path = getenv("PHANTOM_LOG_UNTIL");
    FILE *f = path && *path ? fopen(path, "r") : NULL;
    unsigned long long r, e, until = UINT64_MAX;
    while (f && fscanf(f, "%llu %llu", &r, &e) == 2)
        if (r == (unsigned long long)rec.rank)
            until = e;
    if (f)
        fclose(f);
    else if (path && *path)
        fprintf(stderr, "phantom: rank %d: PHANTOM_LOG_UNTIL=%s: %s; logging the whole run\n", rec.rank,
                path, strerror(errno));
    return until;
}

/* A process the job started with MPI_Comm_spawn has a world of its own,
 * whose rank files and meta.json would overwrite the job's: it records
 * nothing, and its rank 0 says so once. */
static int spawned_process(void)
{
    MPI_Comm parent = MPI_COMM_NULL;
    int rank = 0;
    if (PMPI_Comm_get_parent(&parent) != MPI_SUCCESS || parent == MPI_COMM_NULL)
        return 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        fprintf(stderr, "phantom: the processes this job started with MPI_Comm_spawn are not recorded; "
                        "the trace is the spawning job's\n");
    return 1;
}

/* STARTUP, before MPI_Init's event (doc/trace-format.md) */
static void write_startup(void)
{
    uint8_t *p = rec_reserve(PH_STARTUP_MAX);
    if (p)
        rec_commit((size_t)(ph_put_startup(p, rec.startup_ns) - p));
}

void rec_init(ph_call *c)
{
    if (rec.active || rec.evt)
        return;
    if (env_flag("PHANTOM_DISABLE", 0))
        return;
    ph_preload_forget((const void *)rec_init);
    if (spawned_process())
        return;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rec.rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &rec.nranks);
    PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
    int provided = MPI_THREAD_SINGLE;
    PMPI_Query_thread(&provided);
    rec.mt = provided == MPI_THREAD_MULTIPLE;
    const char *dir = getenv("PHANTOM_TRACE_DIR");
    snprintf(rec.dir, sizeof rec.dir, "%s", dir && *dir ? dir : "phantom.trace");
    rec.depth = (int)env_long("PHANTOM_CALLSITE_DEPTH", 2, 1, REC_MAX_DEPTH);
    rec.flush_secs = (double)env_long("PHANTOM_FLUSH_SECS", 1, 0, 86400);
    rec.t0 = c->t_entry;
    rec.prev_exit = rec.prev_done = c->t_entry;
    rec.last_comm = MPI_COMM_NULL;
    rec.last_type = MPI_DATATYPE_NULL;
    rec_clock_init();
    /* libunwind reads the unwind tables of each object on its first walk
     * through it (milliseconds): do it here, not in the first call site. */
    void *pcs[REC_MAX_DEPTH + 1];
    (void)unw_backtrace(pcs, REC_MAX_DEPTH + 1);
    rec.counts = calloc(ph_ncounted, sizeof *rec.counts);
    rec.count_ns = calloc(ph_ncounted, sizeof *rec.count_ns);
    rec.active = 1; /* from here on, any failure goes through rec_fail */

    const char *log_ranks = getenv("PHANTOM_LOG_RANKS");
    if (log_ranks && !*log_ranks)
        log_ranks = NULL;
    int log_mode = env_flag("PHANTOM_LOG", 0);
    rec.logging = log_mode;
    if (log_mode && log_ranks) {
        ph_err err;
        rec.log_set = malloc((size_t)rec.nranks);
        if (!rec.log_set || ph_parse_ranks(log_ranks, (uint32_t)rec.nranks, rec.log_set, &err) < 0) {
            rec_fail("PHANTOM_LOG_RANKS: %s", rec.log_set ? err.msg : "out of memory");
            return;
        }
        rec.logging = rec.log_set[rec.rank];
    }
    rec.log_until = rec.logging ? log_until() : UINT64_MAX;
    if (mkdir_p(rec.dir) != 0) {
        rec_fail("cannot create trace directory %s: %s", rec.dir, strerror(errno));
        return;
    }
    if (rec.rank == 0)
        write_meta(log_mode, log_mode ? log_ranks : NULL);
    size_t block = (size_t)env_long("PHANTOM_BLOCK_KB", PH_BLOCK_DEFAULT >> 10, 1, 65536) << 10;
    rec.evt = open_stream("evt", PH_MAGIC_EVT, block, 4u << 20, 1);
    if (rec.evt && rec.logging)
        rec.log = open_stream("log", PH_MAGIC_LOG, block * 4, 16u << 20, 0);
    if (!rec.evt || (rec.logging && !rec.log))
        return;
    write_startup();
    /* MPI_COMM_WORLD is local 0 and trace id 0 without a definition record. */
    rec_comm *w = comm_slot(MPI_COMM_WORLD);
    if (!w || !(w->members = malloc((size_t)rec.nranks * sizeof *w->members))) {
        rec_fail("out of memory");
        return;
    }
    for (int i = 0; i < rec.nranks; i++)
        w->members[i] = i;
    w->size = rec.nranks;
    w->gid = w->key = 0;
    w->local = ++rec.next_comm_local;
    if (rec.log_set)
        w->all_in_set = in_set_all(w->members, w->size);
    rec.last_flush = c->t_entry;
    atexit(at_exit);
    pthread_atfork(NULL, NULL, in_forked_child);
}

static void write_counters(void)
{
    size_t bound = 16;
    unsigned n = 0;
    for (unsigned i = 0; i < ph_ncounted; i++)
        if (atomic_load(&rec.counts[i])) {
            bound += strlen(ph_counted_names[i]) + 34;
            n++;
        }
    uint8_t *p0 = rec_reserve(bound), *p = p0;
    if (!p)
        return;
    *p++ = PH_REC_COUNTERS_TIMED;
    p = ph_put_uv(p, n);
    for (unsigned i = 0; i < ph_ncounted; i++) {
        uint64_t v = atomic_load(&rec.counts[i]);
        if (!v)
            continue;
        size_t len = strlen(ph_counted_names[i]);
        p = ph_put_uv(p, len);
        memcpy(p, ph_counted_names[i], len);
        p += len;
        p = ph_put_uv(p, v);
        p = ph_put_uv(p, ph_counted_unknown[i]);
        p = ph_put_uv(p, rec.count_ns ? atomic_load(&rec.count_ns[i]) : 0);
    }
    rec_commit((size_t)(p - p0));
}

/* Ends the streams: with an END record, or with a NOTE saying WHY the
 * recording stopped before MPI_Finalize (then no END: the rank is
 * incomplete, and readers show the note). */
static void end_streams(const char *why)
{
    if (rec.active) {
        write_counters();
        size_t len = why ? strlen(why) : 0;
        uint8_t *p0 = rec_reserve(len + 16), *p = p0;
        if (p && why) {
            *p++ = PH_REC_NOTE;
            p = ph_put_uv(p, len);
            memcpy(p, why, len);
            p += len;
        } else if (p) {
            *p++ = PH_REC_END;
        }
        if (p)
            rec_commit((size_t)(p - p0));
    }
    rec.active = 0;
    ph_err err;
    if (rec.evt && ph_stream_close(rec.evt, &err) < 0)
        rec_fail("%s", err.msg);
    if (rec.log && ph_stream_close(rec.log, &err) < 0)
        rec_fail("%s", err.msg);
    rec.evt = rec.log = NULL;
}

void rec_stop(const char *why)
{
    end_streams(why);
    rec_fail("%s", why);
}

void rec_finish(int clean)
{
    end_streams(clean ? NULL : "the process exited without MPI_Finalize");
}
