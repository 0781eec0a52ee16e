/* rep_comm.c - virtual communicators.
 *
 * The application sees one real communicator per recorded one, so that it
 * can pass it anywhere; rank and size queries answer as recorded (rep_group.c).
 * That handle is also the *carrier*: a real communicator among the members
 * replayed in this job (only this process under --isolated), created with
 * MPI_Comm_create_group on a private duplicate of the job's world, which only
 * the processes that must take part call - as every member of a new
 * communicator took part in creating it in the recorded run.  Point-to-point
 * traffic with a member replayed here goes through the carrier with the rank
 * translated; a collective runs for real when all members are replayed here.
 */
#include <stdlib.h>
#include <string.h>

#include "rep.h"
#include "rep_topo.h"
#include "rep_util.h"

static rep_comm **table; /* by MPI_Comm_c2f index */
static size_t ntable;

rep_comm *rep_comm_of(MPI_Comm h)
{
    if (h == MPI_COMM_NULL)
        return NULL;
    int f = PMPI_Comm_c2f(h);
    return f >= 0 && (size_t)f < ntable && table[f] && table[f]->handle == h ? table[f] : NULL;
}

static void put(rep_comm *k)
{
    int f = PMPI_Comm_c2f(k->handle);
    if (f < 0)
        rep_die("a communicator without a Fortran index");
    if ((size_t)f >= ntable) {
        size_t n = (size_t)f * 2 + 16;
        rep_comm **t = realloc(table, n * sizeof *t);
        if (!t)
            rep_die("out of memory");
        memset(t + ntable, 0, (n - ntable) * sizeof *t);
        table = t;
        ntable = n;
    }
    table[f] = k;
}

static void drop(rep_comm *k)
{
    int f = PMPI_Comm_c2f(k->handle);
    if (f >= 0 && (size_t)f < ntable && table[f] == k)
        table[f] = NULL;
    free(k->to_carrier);
    rep_topo_free(k->topo);
    free(k);
}

static int index_of(const int32_t *v, uint32_t n, int32_t x)
{
    for (uint32_t i = 0; i < n; i++)
        if (v[i] == x)
            return (int)i;
    return -1;
}

/* A virtual communicator for recorded communicator id, held as handle. */
static rep_comm *make(MPI_Comm handle, uint32_t id)
{
    const ph_comm_info *ci = ph_trace_comm(rep.t, id);
    if (!ci)
        rep_die("communicator %u is not in the trace's table", id);
    rep_comm *k = calloc(1, sizeof *k);
    if (!k)
        rep_die("out of memory");
    k->handle = handle;
    k->carrier = MPI_COMM_NULL;
    k->id = id;
    k->ci = ci;
    k->size = (int)ci->size;
    k->rsize = (int)ci->remote_size;
    k->rank = index_of(ci->members, ci->size, rep.rank);
    if (k->rank < 0)
        rep_die("rank %d is not a member of communicator %u", rep.rank, id);
    return k;
}

static int present(int32_t world) { return !rep.isolated && rep.proc_of[world] >= 0; }

static int cmp_int(const void *a, const void *b)
{
    return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

/* The members replayed here, as processes of the job, in carrier order:
 * communicator rank order, or for an intercommunicator world rank order (both
 * sides must build the same carrier).  Fills k->to_carrier and all_inside. */
static int carrier_members(rep_comm *k, int *procs)
{
    const ph_comm_info *ci = k->ci;
    int n = 0, total = k->size + k->rsize;
    if (rep.isolated) {
        procs[0] = rep.me;
        return 1;
    }
    int32_t *all = rep_xmalloc((size_t)total * sizeof *all);
    memcpy(all, ci->members, ci->size * sizeof *all);
    if (k->rsize)
        memcpy(all + k->size, ci->remote, ci->remote_size * sizeof *all);
    if (k->rsize)
        qsort(all, (size_t)total, sizeof *all, cmp_int);
    for (int i = 0; i < total; i++)
        if (present(all[i]))
            procs[n++] = rep.proc_of[all[i]];
    k->all_inside = n == total && !k->rsize;
    int npeers = k->rsize ? k->rsize : k->size;
    const int32_t *peers = k->rsize ? ci->remote : ci->members;
    k->to_carrier = rep_xmalloc((size_t)npeers * sizeof *k->to_carrier);
    for (int r = 0; r < npeers; r++) {
        k->to_carrier[r] = -1;
        for (int i = 0; present(peers[r]) && i < n; i++)
            if (procs[i] == rep.proc_of[peers[r]])
                k->to_carrier[r] = i;
    }
    free(all);
    return n;
}

int rep_comm_setup_world(void)
{
    rep_comm *w = make(MPI_COMM_WORLD, 0);
    if (!rep.isolated) {
        w->carrier = MPI_COMM_WORLD;
        int *procs = rep_xmalloc((size_t)rep.nranks * sizeof *procs);
        carrier_members(w, procs);
        free(procs);
    }
    put(w);
    /* Communicators are created on a private duplicate: MPI_Comm_create_group
     * talks on its parent, which must carry no traffic of the application. */
    PMPI_Comm_dup(rep.isolated ? MPI_COMM_SELF : MPI_COMM_WORLD, &rep.create_base);
    PMPI_Comm_group(rep.create_base, &rep.base_group);
    return 0;
}

/* A handle the application got elsewhere (MPI_COMM_SELF, Comm_connect, ...),
 * first used in a call recorded on communicator id: it stands for that one.
 * Only MPI_COMM_SELF-like communicators carry real traffic (to oneself). */
rep_comm *rep_comm_bind(MPI_Comm h, uint32_t id)
{
    rep_comm *k = make(h, id);
    int real = 0;
    PMPI_Comm_size(h, &real);
    if (!rep.isolated && real == 1 && k->size == 1 && !k->rsize) {
        k->carrier = h;
        k->to_carrier = rep_xmalloc(sizeof *k->to_carrier);
        k->to_carrier[0] = 0;
        k->all_inside = 1;
    }
    put(k);
    return k;
}

/* The tag of a carrier's creation, the same on every participant.  An
 * intracommunicator's trace id is; the two sides of an intercommunicator have
 * one id each, so they use a hash of both groups and of how many such
 * intercommunicators this process created before (as the recorder's gids). */
static int creation_tag(const rep_comm *k)
{
    static rep_map seen;
    if (!k->rsize)
        return (int)(k->id & 0x3fffffff);
    uint64_t h = 0x1e7e, lo = (uint64_t)k->ci->members[0] < (uint64_t)k->ci->remote[0];
    const int32_t *a = lo ? k->ci->members : k->ci->remote, *b = lo ? k->ci->remote : k->ci->members;
    uint32_t na = lo ? k->ci->size : k->ci->remote_size, nb = lo ? k->ci->remote_size : k->ci->size;
    for (uint32_t i = 0; i < na + nb; i++)
        h = (h ^ (uint64_t)(i < na ? a[i] : b[i - na])) * 0x100000001b3ull;
    uintptr_t n = (uintptr_t)rep_map_get(&seen, h) + 1;
    rep_map_put(&seen, h, (void *)n);
    return (int)((h ^ (uint64_t)n * 0x9e3779b97f4a7c15ull) >> 34) | 0x20000000;
}

/* The carrier: MPI_Comm_create_group among the participants, with a tag of
 * its own so that concurrent creations never mix. */
static MPI_Comm create_carrier(rep_comm *k)
{
    int *procs = rep_xmalloc((size_t)(k->size + k->rsize) * sizeof *procs);
    int n = carrier_members(k, procs);
    MPI_Group g;
    MPI_Comm nc = MPI_COMM_NULL;
    if (rep.isolated)
        procs[0] = 0; /* the base is this process alone */
    PMPI_Group_incl(rep.base_group, n, procs, &g);
    int rc = PMPI_Comm_create_group(rep.create_base, g, creation_tag(k), &nc);
    PMPI_Group_free(&g);
    free(procs);
    if (rc != MPI_SUCCESS || nc == MPI_COMM_NULL)
        rep_die("cannot create communicator %u among the replayed ranks", k->id);
    return nc;
}

void rep_comm_create(ph_call *c)
{
    uint32_t id = rep.ev.newcomm;
    if (ph_ops[c->op].kind == PH_K_COMM_IDUP)
        rep_req_new(c, RQ_OTHER); /* completes whenever it is waited for */
    if (id == PH_COMM_NULL) {
        *c->newcomm_p = MPI_COMM_NULL;
        return;
    }
    rep_comm *k = make(MPI_COMM_NULL, id);
    MPI_Comm nc = create_carrier(k);
    k->handle = nc;
    if (!rep.isolated)
        k->carrier = nc;
    k->topo = rep_topo_new(c, rep_comm_of(c->comm), k);
    rep_comm *old = rep_comm_of(nc);
    if (old) /* a handle the application freed without telling us */
        drop(old);
    put(k);
    *c->newcomm_p = nc;
}

void rep_comm_free(ph_call *c)
{
    rep_comm *k = rep_comm_of(c->comm);
    if (k && k->handle != MPI_COMM_WORLD)
        drop(k);
    c->rc = PMPI_Comm_free(c->commp);
}
