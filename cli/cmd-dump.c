/* cmd-dump.c - `phantom dump DIR`: every event, one line each, like `perf script`.
 *
 * The --json form is what tests compare with what the test programs say they
 * did (tests/progs/oracle.h), so its keys and their presence are exact: an
 * event shows only the fields its op carries (lib/mpi-calls.def), in the
 * op's encoding order, and a communicator's definition line comes before the
 * first event of that rank that names it.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ph_clock.h"
#include "phantom.h"

static const char usage[] =
    "usage: phantom dump DIR [--rank R] [--json] [--log]\n"
    "\n"
    "Print every event of the trace in DIR, one line each, rank by rank:\n"
    "  rank seq t_entry dur op fields... site=S\n"
    "with t_entry in microseconds since the rank's MPI_Init and dur in\n"
    "microseconds.  A communicator's definition is printed before its first use.\n"
    "The first event has startup=US when the trace holds the process's CPU time\n"
    "before it (its start-up, in microseconds).\n"
    "\n"
    "options:\n"
    "  --rank R      only rank R\n"
    "  --json        JSON lines: {\"rank\":0,\"seq\":12,\"op\":\"MPI_Send\",\"t_entry\":ns,...}\n"
    "  --log         with each event, the message-log payloads it produced\n"
    "                (and the MPI_Wtime values the program read before it)\n"
    "                (JSON: slot, length and FNV-1a 64 hash; text: the first 16 bytes)\n"
    "  -h, --help    show this help\n";

/* One logged payload of the current event (the record's bytes do not outlive
 * the next ph_log_next, so what is shown is taken at once). */
typedef struct payload {
    uint64_t event, len, fnv;
    uint32_t slot;
    uint8_t head[PH_USAGE_RUSAGE_LEN]; /* the longest value read whole: a getrusage result */
} payload;

typedef struct dumper {
    ph_trace *t;
    int json, log;
    uint32_t rank;
    uint64_t t0;
    uint8_t *seen; /* per communicator id: definition already printed on this rank */
    ph_log_reader *lr;
    payload pending;
    int has_pending, log_done;
    payload *items;
    size_t nitems, capitems;
} dumper;

static uint64_t fnv1a(const uint8_t *p, uint64_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (uint64_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

/* ---- the message log, walked alongside the events ----------------------------------- */

static int next_payload(dumper *d, ph_err *err)
{
    ph_log_record rec;
    int rc = ph_log_next(d->lr, &rec, err);
    if (rc <= 0) {
        d->log_done = 1;
        return rc;
    }
    payload *p = &d->pending;
    p->event = rec.event;
    p->slot = rec.slot;
    p->len = rec.len;
    p->fnv = fnv1a(rec.data, rec.len);
    memset(p->head, 0, sizeof p->head);
    memcpy(p->head, rec.data, rec.len < sizeof p->head ? rec.len : sizeof p->head);
    d->has_pending = 1;
    return 1;
}

/* Collects the payloads of event seq into d->items. */
static int payloads_of(dumper *d, uint64_t seq, ph_err *err)
{
    d->nitems = 0;
    while (d->lr && !d->log_done) {
        if (!d->has_pending && next_payload(d, err) < 0)
            return -1;
        if (!d->has_pending || d->pending.event > seq)
            break;
        d->has_pending = 0;
        if (d->pending.event < seq)
            continue; /* its event is not in the stream (cut short): nothing to attach it to */
        if (d->nitems == d->capitems) {
            size_t cap = d->capitems ? d->capitems * 2 : 8;
            payload *v = realloc(d->items, cap * sizeof *v);
            if (!v) {
                ph_err_set(err, "out of memory");
                return -1;
            }
            d->items = v;
            d->capitems = cap;
        }
        d->items[d->nitems++] = d->pending;
    }
    return 0;
}

/* The rank's message log; absent is fine for ranks outside a --log-ranks subgroup. */
static int open_log(dumper *d, ph_err *err)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/rank-%06u.log", ph_trace_dir(d->t), d->rank);
    if ((ph_trace_flags(d->t) & PH_FLAG_SUBGROUP) && access(path, F_OK) != 0)
        return 0;
    d->lr = ph_log_open(d->t, d->rank, err);
    return d->lr ? 0 : -1;
}

/* t0 of the rank (its MPI_Init) from the file header, which the reader does not expose. */
static uint64_t rank_t0(const ph_trace *t, uint32_t rank)
{
    char path[4200];
    uint8_t buf[PH_HEADER_SIZE];
    ph_file_header h;
    snprintf(path, sizeof path, "%s/rank-%06u.evt", ph_trace_dir(t), rank);
    FILE *f = fopen(path, "rb");
    int ok = f && fread(buf, 1, sizeof buf, f) == sizeof buf &&
             ph_header_decode(buf, PH_MAGIC_EVT, &h, path, NULL) == 0;
    if (f)
        fclose(f);
    return ok ? h.t0 : 0;
}

/* ---- JSON lines ------------------------------------------------------------------------ */

static void jset(json_t *o, const char *k, json_int_t v) { json_object_set_new(o, k, json_integer(v)); }

static json_t *comm_def_json(const dumper *d, uint32_t id)
{
    const ph_comm_info *c = ph_trace_comm(d->t, id);
    json_t *o = json_object(), *m = json_array();
    jset(o, "rank", d->rank);
    jset(o, "comm_def", id);
    for (uint32_t i = 0; i < c->size; i++)
        json_array_append_new(m, json_integer(c->members[i]));
    json_object_set_new(o, "members", m);
    if (c->remote_size) {
        json_t *r = json_array();
        for (uint32_t i = 0; i < c->remote_size; i++)
            json_array_append_new(r, json_integer(c->remote[i]));
        json_object_set_new(o, "remote", r);
    }
    return o;
}

static json_t *u64_array(const uint64_t *v, uint32_t n)
{
    json_t *a = json_array();
    for (uint32_t i = 0; i < n; i++)
        json_array_append_new(a, json_integer((json_int_t)v[i]));
    return a;
}

/* Request ids as the format has them: 0 = MPI_REQUEST_NULL, -1 = not ours (foreign). */
static json_t *reqs_json(const ph_event *ev)
{
    json_t *a = json_array();
    for (uint32_t i = 0; i < ev->nreqs; i++)
        json_array_append_new(a, json_integer(ev->reqs[i] == UINT64_MAX ? -1 : (json_int_t)ev->reqs[i]));
    return a;
}

static json_t *status_json(const ph_status *s)
{
    if (s->source == PH_NO_RANK)
        return json_null();
    return json_pack("{s:i, s:i, s:i, s:I}", "source", s->source, "source_world", s->source_world,
                     "tag", s->tag, "bytes", (json_int_t)s->bytes);
}

static json_t *statuses_json(const ph_event *ev)
{
    json_t *a = json_array();
    for (uint32_t i = 0; i < ev->nstatus; i++)
        json_array_append_new(a, status_json(&ev->status[i]));
    return a;
}

static void completion_json(json_t *o, const ph_event *ev, unsigned f)
{
    int flagged = ev->flag > 0;
    switch (f) {
    case PH_F_STATUS:
    case PH_F_STATUS_IF_FLAG:
        /* A lone status that is absent (a send request, a null one) is left
         * out, as the test programs' oracle does; in arrays it is null. */
        if (ev->nstatus && ev->status[0].source != PH_NO_RANK)
            json_object_set_new(o, "status", status_json(&ev->status[0]));
        break;
    case PH_F_STATUSES:
    case PH_F_STATUSES_IF_FLAG:
        if (f == PH_F_STATUSES || flagged)
            json_object_set_new(o, "statuses", statuses_json(ev));
        break;
    case PH_F_ANY:
    case PH_F_ANY_IF_FLAG:
        if (f == PH_F_ANY || flagged) {
            jset(o, "index", ev->index);
            if (ev->nstatus && ev->status[0].source != PH_NO_RANK)
                json_object_set_new(o, "status", status_json(&ev->status[0]));
        }
        break;
    case PH_F_SOME: {
        json_t *c = json_array();
        for (uint32_t i = 0; ev->ncompleted != UINT32_MAX && i < ev->ncompleted; i++)
            json_array_append_new(c, json_integer(ev->completed[i]));
        if (ev->ncompleted == UINT32_MAX) { /* outcount MPI_UNDEFINED: only null requests */
            json_decref(c);
            c = json_null();
        }
        json_object_set_new(o, "completed", c);
        json_object_set_new(o, "statuses", statuses_json(ev));
        break;
    }
    }
}

static void field_json(json_t *o, const ph_event *ev, unsigned f)
{
    switch (f) {
    case PH_F_COMM:
        json_object_set_new(o, "comm", ev->comm == PH_COMM_NULL ? json_null() : json_integer(ev->comm));
        break;
    case PH_F_PEER: jset(o, "peer", ev->peer); jset(o, "peer_world", ev->peer_world); break;
    case PH_F_TAG: jset(o, "tag", ev->tag); break;
    case PH_F_COUNT: jset(o, "count", ev->count); jset(o, "bytes", (json_int_t)ev->bytes); break;
    case PH_F_RPEER: jset(o, "rpeer", ev->rpeer); jset(o, "rpeer_world", ev->rpeer_world); break;
    case PH_F_RTAG: jset(o, "rtag", ev->rtag); break;
    case PH_F_RCOUNT: jset(o, "rcount", ev->rcount); jset(o, "rbytes", (json_int_t)ev->rbytes); break;
    case PH_F_ROOT: jset(o, "root", ev->root); break;
    case PH_F_SBYTESV: json_object_set_new(o, "sbytes", u64_array(ev->sbytes, ev->nsbytes)); break;
    case PH_F_RBYTESV: json_object_set_new(o, "rbytes_v", u64_array(ev->rbytes_v, ev->nrbytes)); break;
    case PH_F_INT: jset(o, "ival", ev->ival); break;
    case PH_F_NEWCOMM:
        json_object_set_new(o, "newcomm",
                            ev->newcomm == PH_COMM_NULL ? json_null() : json_integer(ev->newcomm));
        break;
    case PH_F_NEWREQ: jset(o, "newreq", (json_int_t)ev->newreq); break;
    case PH_F_NEWREQ_IF_FLAG:
        if (ev->newreq)
            jset(o, "newreq", (json_int_t)ev->newreq);
        break;
    case PH_F_REQ:
    case PH_F_REQS: json_object_set_new(o, "reqs", reqs_json(ev)); break;
    case PH_F_FLAG: jset(o, "flag", ev->flag); break;
    default: completion_json(o, ev, f); break; /* PH_F_DTYPE/RDTYPE: in bytes already */
    }
}

/* An MPI_Wtime result logged before the event (slot PH_LOG_SLOT_WTIME + i)? */
static int wtime_of(const payload *p, double *t)
{
    if (p->slot < PH_LOG_SLOT_WTIME || p->len != sizeof *t)
        return 0;
    memcpy(t, p->head, sizeof *t);
    return 1;
}

/* A time() result logged before the event (slot PH_LOG_SLOT_TIME + i)? */
static int time_of(const payload *p, int64_t *t)
{
    if (p->slot < PH_LOG_SLOT_TIME || p->slot >= PH_LOG_SLOT_USAGE || p->len != sizeof *t)
        return 0;
    memcpy(t, p->head, sizeof *t);
    return 1;
}

/* A clock_gettime or gettimeofday result (slot PH_LOG_SLOT_CLOCK + i)? */
static int clock_of(const payload *p, struct timespec *ts, int *id)
{
    if (p->slot < PH_LOG_SLOT_CLOCK || p->slot >= PH_LOG_SLOT_WTIME || p->len != PH_LOG_CLOCK_LEN)
        return 0;
    *id = (int)ph_clock_unpack(p->head, ts);
    return 1;
}

/* A getrusage or times result (slot PH_LOG_SLOT_USAGE + i)?  1: getrusage
 * (*who set), 2: times (*ticks set), 0: neither. */
static int usage_of(const payload *p, int *who, struct rusage *ru, clock_t *ticks, struct tms *t)
{
    if (p->slot < PH_LOG_SLOT_USAGE || p->slot >= PH_LOG_SLOT_CLOCK)
        return 0;
    int32_t w; /* the record's own `who` (head is zero-filled past a short record) */
    memcpy(&w, p->head + 4, sizeof w);
    if (ph_usage_unpack_rusage(p->head, p->len, w, ru) == 0) {
        *who = w;
        return 1;
    }
    return ph_usage_unpack_times(p->head, p->len, ticks, t) == 0 ? 2 : 0;
}

static long long usecs(struct timeval tv) { return (long long)tv.tv_sec * 1000000 + tv.tv_usec; }

static json_t *usage_json(const payload *p)
{
    int who;
    struct rusage ru;
    clock_t ticks;
    struct tms t;
    json_int_t i = (json_int_t)(p->slot - PH_LOG_SLOT_USAGE);
    switch (usage_of(p, &who, &ru, &ticks, &t)) {
    case 1:
        return json_pack("{s:I, s:s, s:i, s:I, s:I, s:I}", "usage", i, "call", "getrusage", "who", who, "utime_us",
                         (json_int_t)usecs(ru.ru_utime), "stime_us", (json_int_t)usecs(ru.ru_stime), "maxrss_kb",
                         (json_int_t)ru.ru_maxrss);
    case 2:
        return json_pack("{s:I, s:s, s:I, s:I, s:I}", "usage", i, "call", "times", "ticks", (json_int_t)ticks,
                         "utime", (json_int_t)t.tms_utime, "stime", (json_int_t)t.tms_stime);
    default:
        return NULL;
    }
}

static int usage_text(const payload *p)
{
    int who;
    struct rusage ru;
    clock_t ticks;
    struct tms t;
    unsigned i = p->slot - PH_LOG_SLOT_USAGE;
    switch (usage_of(p, &who, &ru, &ticks, &t)) {
    case 1:
        printf(" getrusage[%u]=%d:%lld+%lldus,%ldkB", i, who, usecs(ru.ru_utime), usecs(ru.ru_stime), ru.ru_maxrss);
        return 1;
    case 2:
        printf(" times[%u]=%lld:%lld+%lld", i, (long long)ticks, (long long)t.tms_utime, (long long)t.tms_stime);
        return 1;
    default:
        return 0;
    }
}

static json_t *payloads_json(const dumper *d)
{
    json_t *a = json_array();
    for (size_t i = 0; i < d->nitems; i++) {
        double t;
        int64_t secs;
        struct timespec ts;
        int id;
        if (wtime_of(&d->items[i], &t)) {
            json_array_append_new(a, json_pack("{s:I, s:f}", "wtime", (json_int_t)(d->items[i].slot -
                                                                                   PH_LOG_SLOT_WTIME), "value", t));
            continue;
        }
        if (time_of(&d->items[i], &secs)) {
            json_array_append_new(a, json_pack("{s:I, s:I}", "time", (json_int_t)(d->items[i].slot - PH_LOG_SLOT_TIME),
                                               "value", (json_int_t)secs));
            continue;
        }
        json_t *u = usage_json(&d->items[i]);
        if (u) {
            json_array_append_new(a, u);
            continue;
        }
        if (clock_of(&d->items[i], &ts, &id)) {
            json_array_append_new(a, json_pack("{s:I, s:i, s:I, s:I}", "clock",
                                               (json_int_t)(d->items[i].slot - PH_LOG_SLOT_CLOCK), "id", id, "sec",
                                               (json_int_t)ts.tv_sec, "nsec", (json_int_t)ts.tv_nsec));
            continue;
        }
        char fnv[24];
        snprintf(fnv, sizeof fnv, "0x%016llx", (unsigned long long)d->items[i].fnv);
        json_array_append_new(a, json_pack("{s:I, s:I, s:s}", "slot", (json_int_t)d->items[i].slot,
                                           "len", (json_int_t)d->items[i].len, "fnv", fnv));
    }
    return a;
}

static void print_json_line(json_t *o)
{
    ph_json_dumpf(o, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER);
    putchar('\n');
    json_decref(o);
}

static void event_json(const dumper *d, const ph_event *ev)
{
    const ph_op_info *info = ph_op(ev->op);
    json_t *o = json_object();
    jset(o, "rank", d->rank);
    jset(o, "seq", (json_int_t)ev->seq);
    json_object_set_new(o, "op", json_string(info ? info->name : "?"));
    jset(o, "t_entry", (json_int_t)ev->t_entry);
    jset(o, "t_exit", (json_int_t)ev->t_exit);
    jset(o, "site", ev->site);
    if (ev->startup_ns)
        jset(o, "startup_ns", (json_int_t)ev->startup_ns);
    for (const uint8_t *f = info ? info->fields : (const uint8_t *)""; *f; f++)
        field_json(o, ev, *f);
    if (d->nitems)
        json_object_set_new(o, "log", payloads_json(d));
    print_json_line(o);
}

/* ---- text lines ---------------------------------------------------------------------- */

static void put_rank(const char *key, int32_t r, int32_t world)
{
    const char *special = r < 0 ? ph_rank_special_name(r) : NULL;
    if (special)
        printf(" %s=%s", key, special);
    else
        printf(" %s=%d(w%d)", key, r, world);
}

static void put_status(const ph_status *s)
{
    if (s->source == PH_NO_RANK) {
        fputs("-", stdout);
        return;
    }
    const char *special = s->source < 0 ? ph_rank_special_name(s->source) : NULL;
    if (special)
        printf("(src=%s", special);
    else
        printf("(src=%d(w%d)", s->source, s->source_world);
    printf(" tag=%d bytes=%llu)", s->tag, (unsigned long long)s->bytes);
}

static void put_statuses(const char *key, const ph_event *ev)
{
    printf(" %s=[", key);
    for (uint32_t i = 0; i < ev->nstatus; i++) {
        if (i)
            putchar(',');
        put_status(&ev->status[i]);
    }
    putchar(']');
}

static void put_u64s(const char *key, const uint64_t *v, uint32_t n)
{
    printf(" %s=[", key);
    for (uint32_t i = 0; i < n; i++)
        printf("%s%llu", i ? "," : "", (unsigned long long)v[i]);
    putchar(']');
}

static void put_reqs(const ph_event *ev)
{
    fputs(" reqs=[", stdout);
    for (uint32_t i = 0; i < ev->nreqs; i++) {
        fputs(i ? "," : "", stdout);
        if (ev->reqs[i] == 0)
            fputs("NULL", stdout);
        else if (ev->reqs[i] == UINT64_MAX)
            fputs("foreign", stdout);
        else
            printf("%llu", (unsigned long long)ev->reqs[i]);
    }
    putchar(']');
}

static void completion_text(const ph_event *ev, unsigned f)
{
    int flagged = ev->flag > 0;
    switch (f) {
    case PH_F_STATUS:
    case PH_F_STATUS_IF_FLAG:
        if (ev->nstatus || f == PH_F_STATUS) {
            fputs(" status=", stdout);
            if (ev->nstatus)
                put_status(&ev->status[0]);
            else
                fputs("-", stdout);
        }
        break;
    case PH_F_STATUSES:
    case PH_F_STATUSES_IF_FLAG:
        if (f == PH_F_STATUSES || flagged)
            put_statuses("statuses", ev);
        break;
    case PH_F_ANY:
    case PH_F_ANY_IF_FLAG:
        if (f == PH_F_ANY || flagged) {
            if (ev->index == PH_UNDEFINED) {
                fputs(" index=UNDEFINED", stdout);
                break;
            }
            printf(" index=%d status=", ev->index);
            if (ev->nstatus)
                put_status(&ev->status[0]);
            else
                fputs("-", stdout);
        }
        break;
    case PH_F_SOME:
        if (ev->ncompleted == UINT32_MAX) {
            fputs(" completed=UNDEFINED", stdout);
            break;
        }
        fputs(" completed=[", stdout);
        for (uint32_t i = 0; i < ev->ncompleted; i++)
            printf("%s%d", i ? "," : "", ev->completed[i]);
        putchar(']');
        put_statuses("statuses", ev);
        break;
    }
}

static void put_comm(const char *key, uint32_t id)
{
    if (id == PH_COMM_NULL)
        printf(" %s=NULL", key);
    else
        printf(" %s=%u", key, id);
}

static void put_tag(const char *key, int32_t tag)
{
    if (tag == PH_ANY_TAG) /* negative tags are invalid elsewhere: this is a receive's */
        printf(" %s=ANY_TAG", key);
    else
        printf(" %s=%d", key, tag);
}

static void field_text(const ph_event *ev, unsigned f)
{
    switch (f) {
    case PH_F_COMM: put_comm("comm", ev->comm); break;
    case PH_F_PEER: put_rank("peer", ev->peer, ev->peer_world); break;
    case PH_F_TAG: put_tag("tag", ev->tag); break;
    case PH_F_COUNT: printf(" count=%lld bytes=%llu", (long long)ev->count, (unsigned long long)ev->bytes); break;
    case PH_F_RPEER: put_rank("rpeer", ev->rpeer, ev->rpeer_world); break;
    case PH_F_RTAG: put_tag("rtag", ev->rtag); break;
    case PH_F_RCOUNT: printf(" rcount=%lld rbytes=%llu", (long long)ev->rcount, (unsigned long long)ev->rbytes); break;
    case PH_F_ROOT:
        if (ev->root < 0 && ph_rank_special_name(ev->root))
            printf(" root=%s", ph_rank_special_name(ev->root));
        else
            printf(" root=%d", ev->root);
        break;
    case PH_F_SBYTESV: put_u64s("sbytes", ev->sbytes, ev->nsbytes); break;
    case PH_F_RBYTESV: put_u64s("rbytes_v", ev->rbytes_v, ev->nrbytes); break;
    case PH_F_INT: printf(" ival=%lld", (long long)ev->ival); break;
    case PH_F_NEWCOMM: put_comm("newcomm", ev->newcomm); break;
    case PH_F_NEWREQ:
    case PH_F_NEWREQ_IF_FLAG:
        if (ev->newreq || f == PH_F_NEWREQ)
            printf(" newreq=%llu", (unsigned long long)ev->newreq);
        break;
    case PH_F_REQ:
    case PH_F_REQS: put_reqs(ev); break;
    case PH_F_FLAG: printf(" flag=%d", ev->flag); break;
    default: completion_text(ev, f); break;
    }
}

static void comm_def_text(const dumper *d, uint32_t id)
{
    const ph_comm_info *c = ph_trace_comm(d->t, id);
    printf("%u comm_def %u members=[", d->rank, id);
    for (uint32_t i = 0; i < c->size; i++)
        printf("%s%d", i ? "," : "", c->members[i]);
    putchar(']');
    if (c->remote_size) {
        fputs(" remote=[", stdout);
        for (uint32_t i = 0; i < c->remote_size; i++)
            printf("%s%d", i ? "," : "", c->remote[i]);
        putchar(']');
    }
    putchar('\n');
}

static void event_text(const dumper *d, const ph_event *ev)
{
    const ph_op_info *info = ph_op(ev->op);
    printf("%u %llu %.3f %.3f %s", d->rank, (unsigned long long)ev->seq,
           (double)((int64_t)(ev->t_entry - d->t0)) / 1e3, (double)(ev->t_exit - ev->t_entry) / 1e3,
           info ? info->name : "?");
    for (const uint8_t *f = info ? info->fields : (const uint8_t *)""; *f; f++)
        field_text(ev, *f);
    if (ev->startup_ns)
        printf(" startup=%.3f", (double)ev->startup_ns / 1e3);
    printf(" site=%u", ev->site);
    for (size_t i = 0; i < d->nitems; i++) {
        const payload *p = &d->items[i];
        double t;
        int64_t secs;
        struct timespec ts;
        int id;
        if (wtime_of(p, &t)) { /* the program's MPI_Wtime before this call */
            printf(" wtime[%u]=%.9f", p->slot - PH_LOG_SLOT_WTIME, t);
            continue;
        }
        if (time_of(p, &secs)) { /* ... and its time() */
            printf(" time[%u]=%lld", p->slot - PH_LOG_SLOT_TIME, (long long)secs);
            continue;
        }
        if (usage_text(p)) /* ... its getrusage or times */
            continue;
        if (clock_of(p, &ts, &id)) { /* ... and its clock_gettime or gettimeofday */
            printf(" clock[%u]=%d:%lld.%09ld", p->slot - PH_LOG_SLOT_CLOCK, id, (long long)ts.tv_sec, ts.tv_nsec);
            continue;
        }
        printf(" log[%u]=%llu:", p->slot, (unsigned long long)p->len);
        for (uint64_t k = 0; k < p->len && k < 16; k++)
            printf("%02x", p->head[k]);
        if (p->len > 16)
            fputs("...", stdout);
    }
    putchar('\n');
}

/* ---- the verb ------------------------------------------------------------------------- */

static void define_comm(dumper *d, uint32_t id)
{
    if (id == 0 || id == PH_COMM_NULL || id >= ph_trace_ncomms(d->t) || d->seen[id])
        return; /* world needs no definition; an unknown id has none to give */
    d->seen[id] = 1;
    if (d->json)
        print_json_line(comm_def_json(d, id));
    else
        comm_def_text(d, id);
}

static int dump_rank(dumper *d, uint32_t rank)
{
    ph_err err;
    ph_rank_reader *r = ph_rank_open(d->t, rank, &err);
    if (!r)
        return cli_error("dump", "%s", err.msg);
    d->rank = rank;
    d->t0 = rank_t0(d->t, rank);
    d->lr = NULL;
    d->has_pending = d->log_done = 0;
    memset(d->seen, 0, ph_trace_ncomms(d->t) + 1);
    int rc = d->log ? open_log(d, &err) : 0;
    ph_event ev;
    uint64_t n = 0;
    while (rc == 0 && (rc = ph_rank_next(r, &ev, &err)) > 0) {
        if ((rc = payloads_of(d, ev.seq, &err)) < 0)
            break;
        if (n == 0 && !d->t0) /* no t0 in the header: times from the first event */
            d->t0 = ev.t_entry;
        define_comm(d, ev.comm);
        define_comm(d, ev.newcomm);
        if (d->json)
            event_json(d, &ev);
        else
            event_text(d, &ev);
        n++;
    }
    if (rc == 0)
        cli_warn_incomplete("dump", r, rank, n);
    ph_rank_close(r);
    ph_log_close(d->lr);
    d->lr = NULL;
    return rc < 0 ? cli_error("dump", "%s", err.msg) : CLI_OK;
}

static int dump(dumper *d, int64_t only)
{
    uint32_t nr = ph_trace_nranks(d->t);
    if (only >= 0 && (uint32_t)only >= nr)
        return cli_error("dump", "%s: no rank %lld (the trace has %u ranks)", ph_trace_dir(d->t),
                         (long long)only, nr);
    if (d->log && !(ph_trace_flags(d->t) & PH_FLAG_LOG))
        return cli_error("dump", "%s: recorded without --log: there is no message log to show",
                         ph_trace_dir(d->t));
    if (!(d->seen = calloc(ph_trace_ncomms(d->t) + 1, 1)))
        return cli_error("dump", "out of memory");
    for (uint32_t rank = only >= 0 ? (uint32_t)only : 0; rank < nr; rank++) {
        if (dump_rank(d, rank) != CLI_OK)
            return CLI_ERR;
        if (only >= 0)
            break;
    }
    return cli_flush_stdout("dump");
}

static int run(int argc, char **argv)
{
    static const struct option longopts[] = {{"json", no_argument, NULL, 'j'},
                                             {"log", no_argument, NULL, 'l'},
                                             {"rank", required_argument, NULL, 'r'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    dumper d = {0};
    int64_t only = -1;
    uint32_t r;
    for (int c; (c = cli_getopt("dump", argc, argv, ":hr:", longopts)) != -1;) {
        if (c == 'h')
            return cli_help(&cmd_dump);
        else if (c == 'j')
            d.json = 1;
        else if (c == 'l')
            d.log = 1;
        else if (c == 'r' && cli_parse_u32(optarg, 0, UINT32_MAX - 1, &r) == 0)
            only = r;
        else if (c == 'r')
            return cli_usage_error("dump", "--rank: '%s' is not a rank number", optarg);
        else
            return CLI_USAGE;
    }
    const char *path;
    if (cli_trace_arg("dump", argc, argv, &path) != CLI_OK)
        return CLI_USAGE;
    ph_err err;
    if (!(d.t = ph_trace_open(path, &err)))
        return cli_error("dump", "%s", err.msg);
    int rc = dump(&d, only);
    free(d.seen);
    free(d.items);
    ph_trace_close(d.t);
    return cli_end_warnings(rc);
}

const ph_verb cmd_dump = {"dump", "print every event of a trace, as text or JSON lines", usage, run};
