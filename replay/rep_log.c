/* rep_log.c - reading the message log, and the sources of wildcard receives.
 *
 * Log records come in event order; several may belong to one event (one per
 * completed request of a Waitall, in the order the recorder completed them).
 * When an event needs data, the records of that event are read into `cur`;
 * records of earlier events that nobody asked for (messages a subgroup replay
 * receives for real from a full log) are skipped.  Each record is copied
 * once, out of the reader's block, but a large one that ends its block
 * keeps the block instead: a message of 64 MiB or more is a block of its
 * own, and a copy would hold it twice.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "rep.h"
#include "rep_util.h"

typedef struct lrec {
    uint64_t event;
    uint32_t slot;
    uint64_t len;
    const uint8_t *data;
    void *mem; /* what holds data, to free: a copy, or the reader's block */
} lrec;

static struct {
    uint64_t event; /* the event whose records are in v */
    int loaded;
    lrec *v;
    size_t n, cap;
    size_t next; /* after the last record asked for: where the next one usually is */
} cur;
static lrec pend; /* read ahead: the first record of a later event */
static int have_pend, eof;

static int read_next(void)
{
    if (have_pend)
        return 1;
    if (eof)
        return 0;
    ph_log_record r;
    ph_err err;
    int rc = ph_log_next(rep.logr, &r, &err);
    if (rc < 0)
        rep_die("%s", err.msg);
    if (rc == 0) {
        eof = 1;
        return 0;
    }
    void *blk = r.len >= PH_BLOCK_DEFAULT ? ph_log_take_block(rep.logr, &r) : NULL;
    if (blk) {
        pend = (lrec){r.event, r.slot, r.len, r.data, blk};
    } else {
        uint8_t *copy = rep_xmalloc((size_t)r.len);
        memcpy(copy, r.data, (size_t)r.len);
        pend = (lrec){r.event, r.slot, r.len, copy, copy};
    }
    have_pend = 1;
    return 1;
}

static void load(uint64_t k)
{
    for (size_t i = 0; i < cur.n; i++)
        free(cur.v[i].mem);
    cur.n = 0;
    cur.next = 0;
    cur.event = k;
    cur.loaded = 1;
    while (read_next() && pend.event <= k) {
        have_pend = 0;
        if (pend.event < k) { /* data this replay did not need */
            free(pend.mem);
            continue;
        }
        if (cur.n == cur.cap) {
            cur.cap = cur.cap ? cur.cap * 2 : 8;
            lrec *v = realloc(cur.v, cur.cap * sizeof *v);
            if (!v)
                rep_die("out of memory");
            cur.v = v;
        }
        cur.v[cur.n++] = pend;
    }
}

const uint8_t *rep_log_data(uint64_t k, uint32_t slot, uint64_t *len)
{
    if (!cur.loaded || cur.event != k)
        load(k);
    /* From where the last one was: a replay asks for an event's records in
     * the order they were logged (clock reads, Wtimes, completed requests),
     * so a program that read its clock a million times between two calls
     * costs a million steps, not a million squared. */
    for (size_t j = 0, i = cur.next; j < cur.n; j++, i = i + 1 < cur.n ? i + 1 : 0)
        if (cur.v[i].slot == slot) {
            cur.next = i + 1 < cur.n ? i + 1 : 0;
            *len = cur.v[i].len;
            return cur.v[i].data;
        }
    *len = 0;
    return NULL;
}

void rep_log_prefetch(uint64_t k)
{
    if (rep.logr && (!cur.loaded || cur.event != k))
        load(k);
}

/* The i-th logged result of its kind before event rep.k (slot base + i),
 * or NULL: a log from before that kind was logged, or none.  The static
 * cursors are safe: a replay runs one thread (doc/replay.md §5). */
typedef struct logged_cursor {
    uint64_t event;
    uint32_t n;
} logged_cursor;

/* The program's clock reads before event rep.k that the log did not answer
 * (more reads than recorded, or another clock where the next recorded read
 * was): each read the real clock, which may have sent the program another
 * way; the divergence message says so. */
static logged_cursor unanswered = {UINT64_MAX, 0};

static void count_unanswered(void)
{
    if (unanswered.event != rep.k) {
        unanswered.event = rep.k;
        unanswered.n = 0;
    }
    unanswered.n++;
}

uint32_t rep_log_unanswered_reads(void)
{
    return unanswered.event == rep.k ? unanswered.n : 0;
}

static const uint8_t *logged_value(logged_cursor *lc, uint32_t base, uint64_t len)
{
    if (!rep.logr)
        return NULL;
    if (lc->event != rep.k) {
        lc->event = rep.k;
        lc->n = 0;
    }
    uint64_t have = 0;
    const uint8_t *d = rep_log_data(rep.k, base + lc->n, &have);
    if (!d || have != len) {
        count_unanswered();
        return NULL;
    }
    lc->n++;
    return d;
}

/* MPI_Wtime as recorded: the i-th call before event k gets the i-th value
 * logged there, so a program that decides from its clock (how many
 * repetitions fill a second) decides as it did.  Without a logged value
 * the clock answers. */
double ph_wtime(void)
{
    static logged_cursor c = {UINT64_MAX, 0};
    double t;
    const uint8_t *d = logged_value(&c, PH_LOG_SLOT_WTIME, sizeof t);
    if (d) {
        memcpy(&t, d, sizeof t);
        return t;
    }
    ph_mark_enter(); /* Open MPI reads clock_gettime: not the program's read */
    t = PMPI_Wtime();
    ph_mark_leave();
    return t;
}

/* time() as recorded, for the program's own code (ph_in_app_code): a seed
 * drawn from it (HPCC's srand(time(NULL))) draws what it drew. */
time_t time(time_t *tloc)
{
    static logged_cursor c = {UINT64_MAX, 0};
    int64_t t;
    const uint8_t *d = rep.active && ph_in_app_code() ? logged_value(&c, PH_LOG_SLOT_TIME, sizeof t) : NULL;
    if (d)
        memcpy(&t, d, sizeof t);
    else
        t = ph_time_now();
    if (tloc)
        *tloc = (time_t)t;
    return (time_t)t;
}

/* The next clock read of the program's own code before event rep.k, as
 * recorded: 1 when the log has it and it was read from the same clock. */
static int logged_clock(clockid_t id, struct timespec *ts)
{
    static logged_cursor c = {UINT64_MAX, 0};
    const uint8_t *d = rep.active && ph_in_app_code() ? logged_value(&c, PH_LOG_SLOT_CLOCK, PH_LOG_CLOCK_LEN)
                                                      : NULL;
    struct timespec rec_ts;
    if (!d)
        return 0;
    if (ph_clock_unpack(d, &rec_ts) != id) {
        count_unanswered(); /* another clock: the program went another way, which its calls will show */
        return 0;
    }
    *ts = rec_ts;
    return 1;
}

/* getrusage and times as recorded (rec_log.c says why): one sequence for
 * both, so one cursor.  A record of the other call, or of getrusage for
 * another `who`, answers nothing: the real call does, and the divergence
 * message counts it. */
static logged_cursor usage_cursor = {UINT64_MAX, 0};

int getrusage(__rusage_who_t who, struct rusage *ru)
{
    const uint8_t *d = ru && rep.active && ph_in_app_code() /* NULL: EFAULT, never logged */
                           ? logged_value(&usage_cursor, PH_LOG_SLOT_USAGE, PH_USAGE_RUSAGE_LEN)
                           : NULL;
    if (d && ph_usage_unpack_rusage(d, PH_USAGE_RUSAGE_LEN, who, ru) == 0)
        return 0;
    if (d)
        count_unanswered();
    return ph_getrusage(who, ru);
}

clock_t times(struct tms *buf)
{
    const uint8_t *d = rep.active && ph_in_app_code()
                           ? logged_value(&usage_cursor, PH_LOG_SLOT_USAGE, PH_USAGE_TIMES_LEN)
                           : NULL;
    clock_t rc;
    struct tms own;
    if (d && ph_usage_unpack_times(d, PH_USAGE_TIMES_LEN, &rc, buf ? buf : &own) == 0)
        return rc; /* times(NULL): the ticks alone, as recorded */
    if (d)
        count_unanswered();
    return ph_times(buf ? buf : &own);
}

/* clock_gettime and gettimeofday as recorded (rec_log.c says why). */
int clock_gettime(clockid_t id, struct timespec *ts)
{
    return logged_clock(id, ts) ? 0 : ph_clock_gettime(id, ts);
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
    int rc = ph_gettimeofday(tv, tz); /* the time zone, and the answer when nothing was logged */
    struct timespec ts;
    if (rc == 0 && logged_clock(CLOCK_REALTIME, &ts)) {
        tv->tv_sec = ts.tv_sec;
        tv->tv_usec = ts.tv_nsec / 1000;
    }
    return rc;
}

void rep_log_unpack(uint32_t slot, void *buf, int count, MPI_Datatype t, uint64_t expect)
{
    uint64_t len = 0;
    const uint8_t *data = rep_log_data(rep.k, slot, &len);
    uint64_t size = ph_mpi_type_bytes(t);
    if (!data && expect == 0)
        return;
    if (!data)
        rep_die("the message log has no data for this receive (%llu bytes, request %u): the log is "
                "truncated, or not this run's", (unsigned long long)expect, slot);
    if (len != expect)
        rep_die("the message log holds %llu bytes for this receive, the recorded status %llu",
                (unsigned long long)len, (unsigned long long)expect);
    if (len == 0)
        return;
    if (size == 0 || len % size || len / size > (uint64_t)count)
        rep_die("%llu bytes from the log do not fit the receive (%d elements of %llu bytes)",
                (unsigned long long)len, count, (unsigned long long)size);
    if (ph_mpi_type_is_plain(t, size)) { /* as the recorder logs it */
        memcpy(buf, data, len);
        return;
    }
    MPI_Aint lb, extent;
    PMPI_Type_get_extent(t, &lb, &extent);
    /* MPI_Unpack takes an int size: more than 2 GiB goes in pieces of whole
     * elements.  The recorder logs no larger element of such a type. */
    if (size > INT_MAX)
        rep_die("a logged message of elements of %llu bytes: MPI_Unpack cannot take more than "
                "2 GiB at once", (unsigned long long)size);
    uint64_t per = INT_MAX / size, n = len / size;
    for (uint64_t i = 0; i < n; i += per) {
        int k = (int)(n - i < per ? n - i : per), pos = 0;
        void *to = (void *)((uintptr_t)buf + (uintptr_t)((MPI_Aint)i * extent)); /* may be MPI_BOTTOM */
        PMPI_Unpack(data + i * size, (int)((uint64_t)k * size), &pos, to, k, t, MPI_COMM_SELF);
    }
}

/* ---- wildcard receives (subgroup replay) ---------------------------------------------- */

/* A receive posted with MPI_ANY_SOURCE or MPI_ANY_TAG must be posted for real
 * if its message will come from a replayed rank, but which message it matched
 * is recorded only at its completion.  So at MPI_Init a second reader goes
 * through the whole stream once and notes, per wildcard request id, the
 * (source, tag) of each completion - several for a persistent request. */
typedef struct match {
    int n, cap, head;
    int32_t *v; /* (source, tag) pairs in completion order */
} match;

static rep_map wild; /* request id -> match */

static void note(uint64_t id, const ph_status *s)
{
    match *m = id ? rep_map_get(&wild, id) : NULL;
    if (!m || !s || s->source == PH_NO_RANK)
        return;
    if (m->n == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 2;
        int32_t *v = realloc(m->v, (size_t)m->cap * 2 * sizeof *v);
        if (!v)
            rep_die("out of memory");
        m->v = v;
    }
    m->v[2 * m->n] = s->source;
    m->v[2 * m->n + 1] = s->tag;
    m->n++;
}

static void scan_event(const ph_event *e)
{
    const ph_op_info *info = ph_op(e->op);
    int flag = e->flag > 0;
    switch (info->kind) {
    case PH_K_IRECV: case PH_K_PRECV:
        if (e->peer == PH_ANY_SOURCE || e->tag == PH_ANY_TAG) {
            match *m = calloc(1, sizeof *m);
            if (!m)
                rep_die("out of memory");
            rep_map_put(&wild, e->newreq, m);
        }
        break;
    case PH_K_WAIT: case PH_K_TEST:
        if ((info->kind == PH_K_WAIT || flag) && e->nreqs)
            note(e->reqs[0], e->nstatus ? &e->status[0] : NULL);
        break;
    case PH_K_WAITALL: case PH_K_TESTALL:
        for (uint32_t i = 0; (info->kind == PH_K_WAITALL || flag) && i < e->nreqs && i < e->nstatus; i++)
            note(e->reqs[i], &e->status[i]);
        break;
    case PH_K_WAITANY: case PH_K_TESTANY:
        if ((info->kind == PH_K_WAITANY || flag) && e->index >= 0 && e->nstatus)
            note(e->reqs[e->index], &e->status[0]);
        break;
    case PH_K_WAITSOME: case PH_K_TESTSOME:
        for (uint32_t j = 0; e->ncompleted != UINT32_MAX && j < e->ncompleted; j++)
            note(e->reqs[e->completed[j]], &e->status[j]);
        break;
    default:
        break;
    }
}

int rep_wildcards_scan(ph_err *err)
{
    ph_rank_reader *r = ph_rank_open(rep.t, (uint32_t)rep.rank, err);
    if (!r)
        return -1;
    ph_event e;
    int rc;
    while ((rc = ph_rank_next(r, &e, err)) > 0)
        scan_event(&e);
    ph_rank_close(r);
    return rc < 0 ? -1 : 0;
}

int rep_wildcard_match(uint64_t id, int32_t *source, int32_t *tag)
{
    match *m = rep_map_get(&wild, id);
    if (!m || m->head >= m->n)
        return 0;
    *source = m->v[2 * m->head];
    *tag = m->v[2 * m->head + 1];
    m->head++;
    return 1;
}
