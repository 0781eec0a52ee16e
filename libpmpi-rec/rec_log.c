/* rec_log.c - the message log: what a replay must feed back to a rank.
 *
 * One record per received message or collective output, in event order:
 * (event index, slot, length, bytes in MPI_Pack layout).  With a subgroup
 * (PHANTOM_LOG_RANKS) only data entering the set from outside is logged;
 * the matching order inside the set is already in the events' statuses.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rec.h"

typedef struct region {
    const void *buf;
    int count;
    MPI_Datatype type;
} region;

int rec_log_source_wanted(int source_world)
{
    return !rec.log_set || source_world < 0 || !rec.log_set[source_world];
}

static int world_of(MPI_Comm comm, int rank)
{
    rec_comm *k = rec_comm_get(comm);
    if (!k || rank < 0)
        return -1;
    if (k->rsize)
        return rank < k->rsize ? k->remote[rank] : -1;
    return rank < k->size ? k->members[rank] : -1;
}

/* MPI_Pack takes an int size: more than 2 GiB goes in pieces of whole
 * elements (log_regions has turned away elements of more). */
static int pack_region(MPI_Comm comm, const region *rg, uint64_t size, uint8_t *out)
{
    MPI_Aint lb, extent;
    PMPI_Type_get_extent(rg->type, &lb, &extent);
    uint64_t per = INT_MAX / size, n = (uint64_t)rg->count;
    for (uint64_t i = 0; i < n; i += per) {
        int k = (int)(n - i < per ? n - i : per), pos = 0;
        /* by address: the buffer may be MPI_BOTTOM */
        const void *from = (const void *)((uintptr_t)rg->buf + (uintptr_t)((MPI_Aint)i * extent));
        if (PMPI_Pack(from, k, rg->type, out + i * size, (int)((uint64_t)k * size), &pos, comm) != MPI_SUCCESS ||
            (uint64_t)pos != (uint64_t)k * size)
            return -1;
    }
    return 0;
}

/* Write one record holding the regions packed back to back. */
static void log_regions(MPI_Comm comm, const region *rg, int n, uint32_t slot)
{
    uint64_t total = 0;
    for (int i = 0; i < n; i++) {
        if (rg[i].count <= 0 || rg[i].type == MPI_DATATYPE_NULL)
            continue;
        const rec_type *t = rec_type_get(rg[i].type);
        if (!t->contiguous && t->size > INT_MAX) {
            char why[200];
            snprintf(why, sizeof why, "a received message has elements of %llu bytes in a non-contiguous "
                     "datatype, which MPI_Pack cannot put in the message log (2 GiB at most)",
                     (unsigned long long)t->size);
            rec_stop(why);
            return;
        }
        total += (uint64_t)rg[i].count * t->size;
    }
    uint8_t *p0 = ph_stream_reserve(rec.log, total + 32), *p = p0;
    if (!p) {
        rec_fail("%s", ph_stream_error(rec.log) ? ph_stream_error(rec.log) : "cannot write the message log");
        return;
    }
    p = ph_put_uv(p, rec.next_index - 1); /* the event just written */
    p = ph_put_uv(p, slot);
    p = ph_put_uv(p, total);
    for (int i = 0; i < n; i++) {
        if (rg[i].count <= 0 || rg[i].type == MPI_DATATYPE_NULL)
            continue;
        rec_type *t = rec_type_get(rg[i].type);
        size_t bytes = (size_t)rg[i].count * (size_t)t->size;
        if (t->contiguous && rg[i].buf != MPI_BOTTOM) {
            memcpy(p, rg[i].buf, bytes);
        } else if (pack_region(comm, &rg[i], t->size, p) != 0) {
            rec_fail("cannot pack a received message for the log");
            return;
        }
        p += bytes;
    }
    ph_stream_commit(rec.log, (size_t)(p - p0));
}

static void log_received(MPI_Comm comm, void *buf, MPI_Datatype type, const MPI_Status *st, uint32_t slot)
{
    if (!st || st->MPI_SOURCE == MPI_PROC_NULL || !rec_log_source_wanted(world_of(comm, st->MPI_SOURCE)))
        return;
    int n = 0;
    PMPI_Get_count(st, type, &n);
    if (n == MPI_UNDEFINED) /* not a whole number of elements: nothing replayable */
        n = 0;
    region r = {buf, n, type};
    log_regions(comm, &r, 1, slot);
}

static MPI_Aint extent_of(MPI_Datatype t)
{
    MPI_Aint lb, ext;
    PMPI_Type_get_extent(t, &lb, &ext);
    return ext;
}

/* The output buffers a collective fills on this rank. */
static void log_collective(const ph_call *c, uint32_t slot)
{
    rec_comm *k = rec_comm_get(c->comm);
    if (!k || (rec.log_set && k->all_in_set))
        return;
    int inter = k->rsize > 0, n = inter ? k->rsize : k->size, me = 0;
    PMPI_Comm_rank(c->comm, &me);
    int is_root = inter ? c->root == MPI_ROOT : c->root == me;
    int leaf = inter ? (c->root != MPI_ROOT && c->root != MPI_PROC_NULL) : !is_root;
    region one[1], *rg = one;
    int nr = 0;
    switch (c->op) {
    case PH_OP_BCAST: case PH_OP_IBCAST:
        if (leaf)
            one[nr++] = (region){c->rbuf, c->count, c->dtype};
        break;
    case PH_OP_REDUCE: case PH_OP_IREDUCE:
        if (is_root)
            one[nr++] = (region){c->rbuf, c->count, c->dtype};
        break;
    case PH_OP_ALLREDUCE: case PH_OP_IALLREDUCE: case PH_OP_SCAN: case PH_OP_ISCAN:
    case PH_OP_EXSCAN: case PH_OP_IEXSCAN:
        one[nr++] = (region){c->rbuf, c->count, c->dtype};
        break;
    case PH_OP_REDUCE_SCATTER_BLOCK: case PH_OP_IREDUCE_SCATTER_BLOCK:
        one[nr++] = (region){c->rbuf, c->rcount, c->dtype};
        break;
    case PH_OP_REDUCE_SCATTER: case PH_OP_IREDUCE_SCATTER:
        one[nr++] = (region){c->rbuf, c->rcounts[me], c->dtype};
        break;
    case PH_OP_GATHER: case PH_OP_IGATHER:
        if (is_root)
            one[nr++] = (region){c->rbuf, c->rcount * n, c->rdtype};
        break;
    case PH_OP_SCATTER: case PH_OP_ISCATTER: case PH_OP_SCATTERV: case PH_OP_ISCATTERV:
        if ((leaf || !inter) && c->rbuf != MPI_IN_PLACE && !(inter && is_root))
            one[nr++] = (region){c->rbuf, c->rcount, c->rdtype};
        break;
    case PH_OP_ALLGATHER: case PH_OP_IALLGATHER: case PH_OP_ALLTOALL: case PH_OP_IALLTOALL:
        one[nr++] = (region){c->rbuf, c->rcount * n, c->rdtype};
        break;
    case PH_OP_GATHERV: case PH_OP_IGATHERV: case PH_OP_ALLGATHERV: case PH_OP_IALLGATHERV:
    case PH_OP_ALLTOALLV: case PH_OP_IALLTOALLV: case PH_OP_ALLTOALLW: case PH_OP_IALLTOALLW: {
        int gatherv = c->op == PH_OP_GATHERV || c->op == PH_OP_IGATHERV;
        if (gatherv && !is_root)
            break;
        rg = malloc((size_t)n * sizeof *rg);
        if (!rg) {
            rec_fail("out of memory logging a collective");
            return;
        }
        int w = c->op == PH_OP_ALLTOALLW || c->op == PH_OP_IALLTOALLW;
        MPI_Aint ext = w ? 1 : extent_of(c->rdtype);
        for (int i = 0; i < n; i++)
            rg[nr++] = (region){(char *)c->rbuf + (MPI_Aint)c->rdispls[i] * ext, c->rcounts[i],
                                w ? c->rtypes[i] : c->rdtype};
        break;
    }
    default:
        break;
    }
    if (nr)
        log_regions(c->comm, rg, nr, slot);
    if (rg != one)
        free(rg);
}

void rec_log_completion(ph_call *c, rec_req *q, const MPI_Status *st, uint32_t slot)
{
    (void)c;
    if (q->kind == RK_RECV)
        log_received(q->comm, q->buf, q->dtype, st, slot);
    else if (q->kind == RK_COLL && q->coll)
        log_collective(q->coll, slot);
}

void rec_log_call(ph_call *c)
{
    switch (ph_ops[c->op].kind) {
    case PH_K_RECV:
    case PH_K_MRECV:
        log_received(c->comm, c->rbuf, c->dtype, c->status, 0);
        break;
    case PH_K_SENDRECV:
        if (c->op == PH_OP_SENDRECV_REPLACE)
            log_received(c->comm, c->rbuf, c->dtype, c->status, 0);
        else
            log_received(c->comm, c->rbuf, c->rdtype, c->status, 0);
        break;
    case PH_K_COLL:
        log_collective(c, 0);
        break;
    default:
        break;
    }
}

/* One result of a non-deterministic call the program decides from, logged
 * as the i-th of its kind before the next event: slot base + i.  Called
 * with rec_lock held. */
static void log_value(struct rec_logged_values *v, uint32_t base, uint32_t end, const void *val, size_t len)
{
    if (v->event != rec.next_index) {
        v->event = rec.next_index;
        v->n = 0;
    }
    if (!rec.active || !rec.logging || !rec.log || v->n >= end - base)
        return;
    uint8_t *p0 = ph_stream_reserve(rec.log, 32 + len), *p = p0; /* 3 varints, then the value */
    if (!p) {
        rec_fail("%s", ph_stream_error(rec.log) ? ph_stream_error(rec.log) : "cannot write the message log");
        return;
    }
    p = ph_put_uv(p, rec.next_index);
    p = ph_put_uv(p, base + v->n++);
    p = ph_put_uv(p, len);
    memcpy(p, val, len);
    ph_stream_commit(rec.log, (size_t)(p + len - p0));
}

double ph_wtime(void)
{
    /* Open MPI reads clock_gettime, and so may a preloaded allocator
     * (AddressSanitizer's does) while the recorder logs the value: not the
     * program's reads. */
    ph_mark_enter();
    double t = PMPI_Wtime();
    if (rec.active) {
        rec_lock();
        log_value(&rec.wtime, PH_LOG_SLOT_WTIME, UINT32_MAX, &t, sizeof t);
        rec_unlock();
    }
    ph_mark_leave();
    return t;
}

/* A clock value the application's own code read (ph_in_app_code), into
 * the log when it is kept; what libc functions the recorder interposes for
 * the whole process answer. */
static void log_app_value(struct rec_logged_values *v, uint32_t base, uint32_t end, const void *val, size_t len)
{
    if (!rec.active || !rec.logging || !ph_in_app_code())
        return;
    ph_mark_enter(); /* a signal handler's clock read meanwhile is not the program's flow */
    rec_lock();
    log_value(v, base, end, val, len);
    rec_unlock();
    ph_mark_leave();
}

/* time(): programs seed random choices with it (HPCC: srand(time(NULL)),
 * then broadcasts the process it drew), so a replay a second later must
 * see the recorded value. */
time_t time(time_t *tloc)
{
    int64_t t = ph_time_now();
    log_app_value(&rec.time, PH_LOG_SLOT_TIME, PH_LOG_SLOT_USAGE, &t, sizeof t);
    if (tloc)
        *tloc = (time_t)t;
    return (time_t)t;
}

/* getrusage and times, as time(): a program may repeat a trial until it
 * has used so much CPU time, or size its work by its peak memory, and a
 * replay must see what it saw.  One sequence for both (slot
 * PH_LOG_SLOT_USAGE + i: the i-th of either since the last call). */
int getrusage(__rusage_who_t who, struct rusage *ru)
{
    int rc = ph_getrusage(who, ru);
    if (rc == 0 && rec.active && rec.logging) {
        uint8_t v[PH_USAGE_RUSAGE_LEN];
        ph_usage_pack_rusage(v, who, ru);
        log_app_value(&rec.usage, PH_LOG_SLOT_USAGE, PH_LOG_SLOT_CLOCK, v, sizeof v);
    }
    return rc;
}

/* times(NULL) is Linux's cheap clock of ticks: logged as well, with the
 * CPU times it did not ask for. */
clock_t times(struct tms *buf)
{
    struct tms own;
    clock_t rc = ph_times(buf ? buf : &own);
    if (rc != (clock_t)-1 && rec.active && rec.logging) {
        uint8_t v[PH_USAGE_TIMES_LEN];
        ph_usage_pack_times(v, rc, buf ? buf : &own);
        log_app_value(&rec.usage, PH_LOG_SLOT_USAGE, PH_LOG_SLOT_CLOCK, v, sizeof v);
    }
    return rc;
}

/* clock_gettime and gettimeofday, as time(): programs time their own
 * trials with them and decide from what they measured (NetPIPE sizes each
 * trial with gettimeofday; a Fortran SYSTEM_CLOCK or omp_get_wtime loop
 * is a clock_gettime loop), so a replay must answer them as recorded.
 * Every clock id is logged, CPU clocks too: a replay answers them in the
 * order they were read. */
static void log_clock(clockid_t id, const struct timespec *ts)
{
    if (!rec.active || !rec.logging) /* the common case: nothing to pack */
        return;
    uint8_t v[PH_LOG_CLOCK_LEN];
    ph_clock_pack(v, id, ts);
    log_app_value(&rec.clock, PH_LOG_SLOT_CLOCK, PH_LOG_SLOT_WTIME, v, sizeof v);
}

int clock_gettime(clockid_t id, struct timespec *ts)
{
    int rc = ph_clock_gettime(id, ts);
    if (rc == 0)
        log_clock(id, ts);
    return rc;
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
    int rc = ph_gettimeofday(tv, tz);
    if (rc == 0) {
        struct timespec ts = {.tv_sec = tv->tv_sec, .tv_nsec = tv->tv_usec * 1000};
        log_clock(CLOCK_REALTIME, &ts);
    }
    return rc;
}
