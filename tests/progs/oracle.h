/* oracle.h - what a test program did, written down by the program itself.
 *
 * The test programs in tests/progs call MPI through the O_* functions below.
 * Each O_X calls MPI_X exactly as given and then, when the environment
 * variable PH_EXPECT names a directory, appends one JSON line describing the
 * call to $PH_EXPECT/expect-<world rank>.jsonl (the "oracle").  The fields are
 * those of `phantom dump --json`; tests/check_trace.py compares the two.
 *
 *   {"op":"MPI_Send","peer":1,"peer_world":1,"tag":7,"count":100,"bytes":400,"comm":"world"}
 *
 * Conventions (see tests/check_trace.py for the full list):
 *   - only calls the recorder sequences get a line; local calls (Comm_rank,
 *     Type_*, Group_*, Pack, Get_count, Buffer_attach, ...) are made directly;
 *   - communicators are named by a label chosen by the program; the line
 *     {"comm_def":L,"members":[world ranks],"remote":[...]} precedes its first use;
 *   - requests and matched messages get labels too: the creating call carries
 *     "newreq":true,"reqlabel":"r3" and later calls list "reqs":["r3",null,..];
 *   - "payload_fnv" (or "payloads":[..] on Wait/Test) is the FNV-1a 64 of the
 *     packed bytes a receive produced, for the calls the recorder logs.
 *
 * Also here: the deterministic payload pattern (pat_*), and the running
 * checksum over every received byte that O_Finalize prints as
 *   rank R checksum 0x%016llx
 *
 * Header-only: each test program is a single translation unit.
 */
#ifndef PH_TEST_ORACLE_H
#define PH_TEST_ORACLE_H

#include <mpi.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define OAPI static __attribute__((unused))

/* ---- failure, hashing, payload pattern ------------------------------------ */

static int o_rank = -1, o_size = 0;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn, unused));
static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stdout, "FAIL rank %d: ", o_rank);
    vfprintf(stdout, fmt, ap);
    fputc('\n', stdout);
    va_end(ap);
    fflush(stdout);
    exit(1);
}

#define FNV_OFFSET 0xcbf29ce484222325ULL
#define FNV_PRIME 0x100000001b3ULL

static inline uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= FNV_PRIME;
    }
    return h;
}

/* Byte i of message `seq` sent by world rank `sender` (also used by the Fortran tests). */
static inline unsigned char pat_byte(int sender, int seq, size_t i)
{
    return (unsigned char)((unsigned)sender * 151u + (unsigned)seq * 53u + (unsigned)i * 7u +
                           (unsigned)(i >> 8) * 29u);
}

/* Fill n bytes with the pattern, starting at pattern offset off. */
OAPI void pat_fill(void *buf, size_t n, int sender, int seq, size_t off)
{
    unsigned char *b = buf;
    for (size_t i = 0; i < n; i++)
        b[i] = pat_byte(sender, seq, off + i);
}

OAPI int pat_matches(const void *buf, size_t n, int sender, int seq, size_t off)
{
    const unsigned char *b = buf;
    for (size_t i = 0; i < n; i++)
        if (b[i] != pat_byte(sender, seq, off + i))
            return 0;
    return 1;
}

OAPI void pat_check(const void *buf, size_t n, int sender, int seq, size_t off, const char *what)
{
    const unsigned char *b = buf;
    for (size_t i = 0; i < n; i++)
        if (b[i] != pat_byte(sender, seq, off + i))
            fail("%s: byte %zu is 0x%02x, expected 0x%02x (sender %d, seq %d, offset %zu)", what,
                 i, b[i], pat_byte(sender, seq, off + i), sender, seq, off);
}

OAPI void check_int(long long got, long long want, const char *what)
{
    if (got != want)
        fail("%s: got %lld, expected %lld", what, got, want);
}

/* ---- the oracle file and its JSON lines ----------------------------------- */

static FILE *o_out;
static uint64_t o_checksum = FNV_OFFSET;
static char o_line[1 << 16];
static size_t o_len;

static void o_put(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void o_put(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(o_line + o_len, sizeof o_line - o_len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof o_line - o_len)
        fail("oracle line too long");
    o_len += (size_t)n;
}
static void o_begin(const char *op)
{
    o_len = 0;
    o_put("{\"op\":\"%s\"", op);
}
static void o_int(const char *key, long long v) { o_put(",\"%s\":%lld", key, v); }
static void o_str(const char *key, const char *v) { o_put(",\"%s\":\"%s\"", key, v); }
static void o_end(void)
{
    o_put("}\n");
    if (o_out && fputs(o_line, o_out) == EOF)
        fail("cannot write the oracle file");
}

/* MPI's special ranks as the trace writes them. */
static int o_norm(int r)
{
    if (r == MPI_ANY_SOURCE)
        return -1;
    if (r == MPI_PROC_NULL)
        return -2;
    if (r == MPI_ROOT)
        return -3;
    return r;
}

static long long o_tsize(MPI_Datatype t)
{
    int s;
    MPI_Type_size(t, &s);
    return s;
}

/* ---- communicators --------------------------------------------------------- */

typedef struct ocomm {
    MPI_Comm h;
    char label[40];
    int size, rsize; /* rsize > 0: intercommunicator */
    int *members, *remote;
} ocomm;
static ocomm o_comms[64];
static int o_ncomms;
static char o_used_labels[128][40];
static int o_nused;
static MPI_Group o_world_group;

static ocomm *o_comm(MPI_Comm c)
{
    for (int i = 0; i < o_ncomms; i++)
        if (o_comms[i].h == c)
            return &o_comms[i];
    fail("oracle: communicator without a label");
}

static int *o_group_world(MPI_Group g, int *n)
{
    MPI_Group_size(g, n);
    int *in = malloc(sizeof(int) * (size_t)(*n + 1)), *out = malloc(sizeof(int) * (size_t)(*n + 1));
    for (int i = 0; i < *n; i++)
        in[i] = i;
    MPI_Group_translate_ranks(g, *n, in, o_world_group, out);
    free(in);
    return out;
}

static void o_put_ranks(const char *key, const int *r, int n)
{
    o_put(",\"%s\":[", key);
    for (int i = 0; i < n; i++)
        o_put("%s%d", i ? "," : "", r[i]);
    o_put("]");
}

/* Give communicator c a label and write its comm_def line (MPI_COMM_NULL: nothing). */
OAPI void o_name(MPI_Comm c, const char *label)
{
    if (c == MPI_COMM_NULL)
        return;
    for (int i = 0; i < o_nused; i++)
        if (!strcmp(o_used_labels[i], label))
            fail("oracle: communicator label %s used twice", label);
    if (o_ncomms == 64 || o_nused == 128 || strlen(label) >= 40)
        fail("oracle: too many communicators");
    strcpy(o_used_labels[o_nused++], label);
    ocomm *oc = &o_comms[o_ncomms++];
    memset(oc, 0, sizeof *oc);
    oc->h = c;
    strcpy(oc->label, label);
    MPI_Group g;
    int inter;
    MPI_Comm_group(c, &g);
    oc->members = o_group_world(g, &oc->size);
    MPI_Group_free(&g);
    MPI_Comm_test_inter(c, &inter);
    if (inter) {
        MPI_Comm_remote_group(c, &g);
        oc->remote = o_group_world(g, &oc->rsize);
        MPI_Group_free(&g);
    }
    o_len = 0;
    o_put("{\"comm_def\":\"%s\"", label);
    o_put_ranks("members", oc->members, oc->size);
    if (inter)
        o_put_ranks("remote", oc->remote, oc->rsize);
    o_end();
}

static void o_unname(MPI_Comm c)
{
    ocomm *oc = o_comm(c);
    free(oc->members);
    free(oc->remote);
    *oc = o_comms[--o_ncomms];
}

/* World rank of rank r of c (the remote group of an intercommunicator). */
OAPI int o_world(MPI_Comm c, int r)
{
    ocomm *oc = o_comm(c);
    int n = oc->rsize ? oc->rsize : oc->size;
    if (r < 0 || r >= n)
        fail("oracle: rank %d out of range in %s", r, oc->label);
    return oc->rsize ? oc->remote[r] : oc->members[r];
}

static void o_commf(MPI_Comm c) { o_str("comm", o_comm(c)->label); }
static void o_peer(const char *key, const char *wkey, MPI_Comm c, int r)
{
    o_int(key, o_norm(r));
    if (r >= 0)
        o_int(wkey, o_world(c, r));
}
static void o_cnt(const char *ckey, const char *bkey, int count, MPI_Datatype t)
{
    o_int(ckey, count);
    o_int(bkey, (long long)count * o_tsize(t));
}

/* ---- received data: payload hashes and the checksum ------------------------ */

/* FNV of the packed bytes of (buf, count, t); also folds them into the checksum. */
static uint64_t o_received(const void *buf, int count, MPI_Datatype t, int *nbytes)
{
    int sz, pos = 0;
    MPI_Pack_size(count, t, MPI_COMM_WORLD, &sz);
    char *tmp = malloc((size_t)sz + 1);
    MPI_Pack(buf, count, t, tmp, sz, &pos, MPI_COMM_WORLD);
    uint64_t h = fnv1a(FNV_OFFSET, tmp, (size_t)pos);
    o_checksum = fnv1a(o_checksum, tmp, (size_t)pos);
    free(tmp);
    *nbytes = pos;
    return h;
}

/* A payload made of several blocks (v/w collectives: per-peer blocks back to
 * back, in rank order): o_pl_begin, o_pl_add per block, o_pl_end. */
static uint64_t o_pl_fnv;
static size_t o_pl_len;
static void o_pl_begin(void)
{
    o_pl_fnv = FNV_OFFSET;
    o_pl_len = 0;
}
static void o_pl_add(const void *buf, size_t n)
{
    o_pl_fnv = fnv1a(o_pl_fnv, buf, n);
    o_checksum = fnv1a(o_checksum, buf, n);
    o_pl_len += n;
}
static void o_pl_end(void)
{
    if (o_pl_len > 0)
        o_put(",\"payload_fnv\":\"0x%016llx\"", (unsigned long long)o_pl_fnv);
}
/* A contiguous output of n bytes. */
static void o_payload_raw(const void *buf, size_t n)
{
    o_pl_begin();
    o_pl_add(buf, n);
    o_pl_end();
}

static void o_payload(const void *buf, int count, MPI_Datatype t)
{
    int nb;
    uint64_t h = o_received(buf, count, t, &nb);
    if (nb > 0)
        o_put(",\"payload_fnv\":\"0x%016llx\"", (unsigned long long)h);
}

static int o_status_count(const MPI_Status *st, MPI_Datatype t)
{
    int n;
    MPI_Get_count(st, t, &n);
    if (n == MPI_UNDEFINED)
        fail("oracle: received a partial datatype");
    return n;
}

static void o_status_str(char *out, size_t cap, const MPI_Status *st, MPI_Comm c)
{
    int nb, w = st->MPI_SOURCE >= 0 ? o_world(c, st->MPI_SOURCE) : -1;
    MPI_Get_count(st, MPI_BYTE, &nb);
    if (st->MPI_SOURCE >= 0)
        snprintf(out, cap, "{\"source\":%d,\"source_world\":%d,\"tag\":%d,\"bytes\":%d}",
                 st->MPI_SOURCE, w, st->MPI_TAG, nb);
    else
        snprintf(out, cap, "{\"source\":%d,\"tag\":%d,\"bytes\":%d}", o_norm(st->MPI_SOURCE),
                 st->MPI_TAG, nb);
}

static void o_status(const MPI_Status *st, MPI_Comm c)
{
    char s[200];
    if (st == MPI_STATUS_IGNORE)
        return;
    o_status_str(s, sizeof s, st, c);
    o_put(",\"status\":%s", s);
}

/* ---- requests and matched messages ----------------------------------------- */

enum { RK_SEND = 1, RK_RECV, RK_COLL };
/* Requests are known by the variable that holds them, not by handle value:
 * Open MPI 4.1 hands out one shared, already complete request object for every
 * send that completes at once (and for MPI_PROC_NULL peers). */
typedef struct oreq {
    MPI_Request *slot;
    int label, kind, persistent;
    void *buf; /* receive: where the data lands */
    int count;
    MPI_Datatype type;
    MPI_Comm comm;
    const void *obuf; /* collective: output region, for the checksum only */
    size_t obytes;
} oreq;
static oreq o_reqs[512];
static int o_nreqs, o_next_req = 1, o_next_msg = 1;

typedef struct omsg {
    MPI_Message h;
    int label;
    MPI_Comm comm;
} omsg;
static omsg o_msgs[64];
static int o_nmsgs;

static oreq *o_req(MPI_Request *slot)
{
    for (int i = 0; i < o_nreqs; i++)
        if (o_reqs[i].slot == slot)
            return &o_reqs[i];
    fail("oracle: unknown request");
}

static oreq *o_req_add(MPI_Request *slot, int kind, int persistent)
{
    for (int i = 0; i < o_nreqs; i++)
        if (o_reqs[i].slot == slot)
            fail("oracle: request variable reused before completion");
    if (o_nreqs == 512)
        fail("oracle: too many requests");
    oreq *q = &o_reqs[o_nreqs++];
    memset(q, 0, sizeof *q);
    q->slot = slot;
    q->kind = kind;
    q->persistent = persistent;
    q->label = o_next_req++;
    o_put(",\"newreq\":true,\"reqlabel\":\"r%d\"", q->label);
    return q;
}

static void o_req_drop(MPI_Request *slot)
{
    oreq *q = o_req(slot);
    *q = o_reqs[--o_nreqs];
}

/* slots: the request variables; pre: their values before the call. */
static void o_reqlist(MPI_Request *slots, const MPI_Request *pre, int n)
{
    o_put(",\"reqs\":[");
    for (int i = 0; i < n; i++) {
        if (pre[i] == MPI_REQUEST_NULL)
            o_put("%snull", i ? "," : "");
        else
            o_put("%s\"r%d\"", i ? "," : "", o_req(&slots[i])->label);
    }
    o_put("]");
}

static omsg *o_msg(MPI_Message m)
{
    for (int i = 0; i < o_nmsgs; i++)
        if (o_msgs[i].h == m)
            return &o_msgs[i];
    fail("oracle: unknown message handle");
}

/* Request arrays passed to the O_ functions hold at most 64 requests. */
static void o_check_n(int n)
{
    if (n < 0 || n > 64)
        fail("oracle: request array of %d entries (at most 64)", n);
}

/* What completing one request gave: a status (or null) and a payload hash (or null). */
typedef struct odone {
    char st[200], pl[24];
} odone;

/* The request in variable slot completed with status st (NULL: ignored). */
static void o_done(MPI_Request *slot, const MPI_Status *st, odone *d)
{
    oreq *q = o_req(slot);
    strcpy(d->st, "null");
    strcpy(d->pl, "null");
    if (q->kind == RK_RECV) {
        int n = q->count; /* status ignored: the programs then post exact sizes */
        if (st) {
            n = o_status_count(st, q->type);
            o_status_str(d->st, sizeof d->st, st, q->comm);
        }
        int nb;
        uint64_t fnv = o_received(q->buf, n, q->type, &nb);
        if (nb > 0)
            snprintf(d->pl, sizeof d->pl, "\"0x%016llx\"", (unsigned long long)fnv);
    } else if (q->kind == RK_COLL && q->obytes) {
        uint64_t fnv = fnv1a(FNV_OFFSET, q->obuf, q->obytes);
        o_checksum = fnv1a(o_checksum, q->obuf, q->obytes);
        snprintf(d->pl, sizeof d->pl, "\"0x%016llx\"", (unsigned long long)fnv);
    }
    if (!q->persistent)
        o_req_drop(slot);
}

/* Writes "statuses"/"status" and "payloads" for k completions. */
static void o_done_fields(const odone *d, int k, int statuses, int single)
{
    int any = 0;
    if (statuses) {
        if (single) {
            if (strcmp(d[0].st, "null"))
                o_put(",\"status\":%s", d[0].st);
        } else {
            o_put(",\"statuses\":[");
            for (int i = 0; i < k; i++)
                o_put("%s%s", i ? "," : "", d[i].st);
            o_put("]");
        }
    }
    for (int i = 0; i < k; i++)
        any |= strcmp(d[i].pl, "null") != 0;
    if (any) {
        o_put(",\"payloads\":[");
        for (int i = 0; i < k; i++)
            o_put("%s%s", i ? "," : "", d[i].pl);
        o_put("]");
    }
}

/* ---- init / finalize ----------------------------------------------------- */

static void o_open(void)
{
    MPI_Comm_rank(MPI_COMM_WORLD, &o_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &o_size);
    MPI_Comm_group(MPI_COMM_WORLD, &o_world_group);
    const char *dir = getenv("PH_EXPECT");
    if (dir && *dir) {
        char path[4096];
        if (strlen(dir) >= sizeof path - 32)
            fail("PH_EXPECT is too long");
        strcpy(path, dir); /* mkdir -p */
        for (char *p = path + 1;; p++) {
            if (*p == '/' || *p == 0) {
                char c = *p;
                *p = 0;
                if (mkdir(path, 0777) != 0 && errno != EEXIST)
                    fail("cannot create %s", path);
                *p = c;
                if (!c)
                    break;
            }
        }
        snprintf(path, sizeof path, "%s/expect-%d.jsonl", dir, o_rank);
        o_out = fopen(path, "w");
        if (!o_out)
            fail("cannot create %s", path);
    }
}

OAPI void O_Init(int *argc, char ***argv)
{
    MPI_Init(argc, argv);
    o_open();
    o_begin("MPI_Init");
    o_end();
    o_name(MPI_COMM_WORLD, "world");
}

OAPI void O_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    MPI_Init_thread(argc, argv, required, provided);
    o_open();
    o_begin("MPI_Init_thread");
    o_int("ival", required);
    o_end();
    o_name(MPI_COMM_WORLD, "world");
}

OAPI void O_Finalize(void)
{
    printf("rank %d checksum 0x%016llx\n", o_rank, (unsigned long long)o_checksum);
    fflush(stdout);
    o_begin("MPI_Finalize");
    o_end();
    if (o_out && fclose(o_out) != 0)
        fail("cannot write the oracle file");
    o_out = NULL;
    MPI_Group_free(&o_world_group);
    MPI_Finalize();
}

OAPI void O_Pcontrol(int level)
{
    MPI_Pcontrol(level);
    o_begin("MPI_Pcontrol");
    o_int("ival", level);
    o_end();
}

/* ---- point to point --------------------------------------------------------- */

typedef int (*o_sendfn)(const void *, int, MPI_Datatype, int, int, MPI_Comm);

static void o_send(const char *op, o_sendfn fn, const void *buf, int count, MPI_Datatype t,
                   int dest, int tag, MPI_Comm c)
{
    fn(buf, count, t, dest, tag, c);
    o_begin(op);
    o_peer("peer", "peer_world", c, dest);
    o_int("tag", tag);
    o_cnt("count", "bytes", count, t);
    o_commf(c);
    o_end();
}
OAPI void O_Send(const void *b, int n, MPI_Datatype t, int dest, int tag, MPI_Comm c)
{
    o_send("MPI_Send", MPI_Send, b, n, t, dest, tag, c);
}
OAPI void O_Ssend(const void *b, int n, MPI_Datatype t, int dest, int tag, MPI_Comm c)
{
    o_send("MPI_Ssend", MPI_Ssend, b, n, t, dest, tag, c);
}
OAPI void O_Bsend(const void *b, int n, MPI_Datatype t, int dest, int tag, MPI_Comm c)
{
    o_send("MPI_Bsend", MPI_Bsend, b, n, t, dest, tag, c);
}
OAPI void O_Rsend(const void *b, int n, MPI_Datatype t, int dest, int tag, MPI_Comm c)
{
    o_send("MPI_Rsend", MPI_Rsend, b, n, t, dest, tag, c);
}

/* Status ignored: the payload hash assumes the message filled the posted count. */
OAPI void O_Recv(void *buf, int count, MPI_Datatype t, int src, int tag, MPI_Comm c,
                 MPI_Status *st)
{
    MPI_Recv(buf, count, t, src, tag, c, st);
    o_begin("MPI_Recv");
    o_peer("peer", "peer_world", c, src);
    o_int("tag", tag);
    o_cnt("count", "bytes", count, t);
    o_commf(c);
    o_status(st, c);
    if (st == MPI_STATUS_IGNORE)
        o_payload(buf, src == MPI_PROC_NULL ? 0 : count, t);
    else
        o_payload(buf, o_status_count(st, t), t);
    o_end();
}

typedef int (*o_isendfn)(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);

static void o_isend(const char *op, o_isendfn fn, int persistent, const void *buf, int count,
                    MPI_Datatype t, int dest, int tag, MPI_Comm c, MPI_Request *r)
{
    fn(buf, count, t, dest, tag, c, r);
    o_begin(op);
    o_peer("peer", "peer_world", c, dest);
    o_int("tag", tag);
    o_cnt("count", "bytes", count, t);
    o_commf(c);
    o_req_add(r, RK_SEND, persistent);
    o_end();
}
OAPI void O_Isend(const void *b, int n, MPI_Datatype t, int dest, int tag, MPI_Comm c,
                  MPI_Request *r)
{
    o_isend("MPI_Isend", MPI_Isend, 0, b, n, t, dest, tag, c, r);
}
OAPI void O_Send_init(const void *b, int n, MPI_Datatype t, int dest, int tag, MPI_Comm c,
                      MPI_Request *r)
{
    o_isend("MPI_Send_init", MPI_Send_init, 1, b, n, t, dest, tag, c, r);
}

typedef int (*o_irecvfn)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);

static void o_irecv(const char *op, o_irecvfn fn, int persistent, void *buf, int count,
                    MPI_Datatype t, int src, int tag, MPI_Comm c, MPI_Request *r)
{
    fn(buf, count, t, src, tag, c, r);
    o_begin(op);
    o_peer("peer", "peer_world", c, src);
    o_int("tag", tag);
    o_cnt("count", "bytes", count, t);
    o_commf(c);
    oreq *q = o_req_add(r, RK_RECV, persistent);
    q->buf = buf;
    q->count = src == MPI_PROC_NULL ? 0 : count;
    q->type = t;
    q->comm = c;
    o_end();
}
OAPI void O_Irecv(void *b, int n, MPI_Datatype t, int src, int tag, MPI_Comm c, MPI_Request *r)
{
    o_irecv("MPI_Irecv", MPI_Irecv, 0, b, n, t, src, tag, c, r);
}
OAPI void O_Recv_init(void *b, int n, MPI_Datatype t, int src, int tag, MPI_Comm c,
                      MPI_Request *r)
{
    o_irecv("MPI_Recv_init", MPI_Recv_init, 1, b, n, t, src, tag, c, r);
}

OAPI void O_Start(MPI_Request *r)
{
    MPI_Request h = *r;
    MPI_Start(r);
    o_begin("MPI_Start");
    o_reqlist(r, &h, 1);
    o_end();
}

OAPI void O_Startall(int n, MPI_Request *r)
{
    MPI_Request h[64];
    o_check_n(n);
    memcpy(h, r, sizeof *r * (size_t)n);
    MPI_Startall(n, r);
    o_begin("MPI_Startall");
    o_reqlist(r, h, n);
    o_end();
}

OAPI void O_Request_free(MPI_Request *r)
{
    MPI_Request h = *r;
    MPI_Request_free(r);
    o_begin("MPI_Request_free");
    o_reqlist(r, &h, 1);
    o_req_drop(r);
    o_end();
}

OAPI void O_Sendrecv(const void *sb, int sn, MPI_Datatype st_, int dest, int stag, void *rb,
                     int rn, MPI_Datatype rt, int src, int rtag, MPI_Comm c, MPI_Status *st)
{
    MPI_Sendrecv(sb, sn, st_, dest, stag, rb, rn, rt, src, rtag, c, st);
    o_begin("MPI_Sendrecv");
    o_peer("peer", "peer_world", c, dest);
    o_int("tag", stag);
    o_cnt("count", "bytes", sn, st_);
    o_peer("rpeer", "rpeer_world", c, src);
    o_int("rtag", rtag);
    o_cnt("rcount", "rbytes", rn, rt);
    o_commf(c);
    o_status(st, c);
    if (st == MPI_STATUS_IGNORE)
        o_payload(rb, src == MPI_PROC_NULL ? 0 : rn, rt);
    else
        o_payload(rb, o_status_count(st, rt), rt);
    o_end();
}

OAPI void O_Sendrecv_replace(void *buf, int n, MPI_Datatype t, int dest, int stag, int src,
                             int rtag, MPI_Comm c, MPI_Status *st)
{
    MPI_Sendrecv_replace(buf, n, t, dest, stag, src, rtag, c, st);
    o_begin("MPI_Sendrecv_replace");
    o_peer("peer", "peer_world", c, dest);
    o_int("tag", stag);
    o_cnt("count", "bytes", n, t);
    o_peer("rpeer", "rpeer_world", c, src);
    o_int("rtag", rtag);
    o_commf(c);
    o_status(st, c);
    if (st == MPI_STATUS_IGNORE)
        o_payload(buf, src == MPI_PROC_NULL ? 0 : n, t);
    else
        o_payload(buf, o_status_count(st, t), t);
    o_end();
}

OAPI void O_Probe(int src, int tag, MPI_Comm c, MPI_Status *st)
{
    MPI_Probe(src, tag, c, st);
    o_begin("MPI_Probe");
    o_peer("peer", "peer_world", c, src);
    o_int("tag", tag);
    o_commf(c);
    o_status(st, c);
    o_end();
}

OAPI void O_Iprobe(int src, int tag, MPI_Comm c, int *flag, MPI_Status *st)
{
    MPI_Iprobe(src, tag, c, flag, st);
    o_begin("MPI_Iprobe");
    o_peer("peer", "peer_world", c, src);
    o_int("tag", tag);
    o_commf(c);
    o_int("flag", *flag != 0);
    if (*flag)
        o_status(st, c);
    o_end();
}

static void o_msg_add(MPI_Message m, MPI_Comm c)
{
    if (o_nmsgs == 64)
        fail("oracle: too many messages");
    omsg *om = &o_msgs[o_nmsgs++];
    om->h = m;
    om->comm = c;
    om->label = o_next_msg++;
    o_put(",\"newreq\":true,\"reqlabel\":\"m%d\"", om->label);
}

OAPI void O_Mprobe(int src, int tag, MPI_Comm c, MPI_Message *m, MPI_Status *st)
{
    MPI_Mprobe(src, tag, c, m, st);
    o_begin("MPI_Mprobe");
    o_peer("peer", "peer_world", c, src);
    o_int("tag", tag);
    o_commf(c);
    o_status(st, c);
    o_msg_add(*m, c);
    o_end();
}

OAPI void O_Improbe(int src, int tag, MPI_Comm c, int *flag, MPI_Message *m, MPI_Status *st)
{
    MPI_Improbe(src, tag, c, flag, m, st);
    o_begin("MPI_Improbe");
    o_peer("peer", "peer_world", c, src);
    o_int("tag", tag);
    o_commf(c);
    o_int("flag", *flag != 0);
    if (*flag) {
        o_status(st, c);
        o_msg_add(*m, c);
    }
    o_end();
}

OAPI void O_Mrecv(void *buf, int n, MPI_Datatype t, MPI_Message *m, MPI_Status *st)
{
    omsg *om = o_msg(*m);
    MPI_Comm c = om->comm;
    int label = om->label;
    *om = o_msgs[--o_nmsgs];
    MPI_Mrecv(buf, n, t, m, st);
    o_begin("MPI_Mrecv");
    o_cnt("count", "bytes", n, t);
    o_put(",\"reqs\":[\"m%d\"]", label);
    o_status(st, c);
    o_payload(buf, st == MPI_STATUS_IGNORE ? n : o_status_count(st, t), t);
    o_end();
}

OAPI void O_Imrecv(void *buf, int n, MPI_Datatype t, MPI_Message *m, MPI_Request *r)
{
    omsg *om = o_msg(*m);
    MPI_Comm c = om->comm;
    int label = om->label;
    *om = o_msgs[--o_nmsgs];
    MPI_Imrecv(buf, n, t, m, r);
    o_begin("MPI_Imrecv");
    o_cnt("count", "bytes", n, t);
    o_put(",\"reqs\":[\"m%d\"]", label);
    oreq *q = o_req_add(r, RK_RECV, 0);
    q->buf = buf;
    q->count = n;
    q->type = t;
    q->comm = c;
    o_end();
}

/* ---- completion -------------------------------------------------------------- */

OAPI void O_Wait(MPI_Request *r, MPI_Status *st)
{
    MPI_Request h = *r;
    odone d;
    MPI_Wait(r, st);
    o_begin("MPI_Wait");
    o_reqlist(r, &h, 1);
    if (h != MPI_REQUEST_NULL) {
        o_done(r, st == MPI_STATUS_IGNORE ? NULL : st, &d);
        o_done_fields(&d, 1, st != MPI_STATUS_IGNORE, 1);
    }
    o_end();
}

/* Waitall/Testall: the programs never pass null or inactive requests to them. */
OAPI void O_Waitall(int n, MPI_Request *r, MPI_Status *st)
{
    MPI_Request h[64];
    odone d[64];
    o_check_n(n);
    memcpy(h, r, sizeof *r * (size_t)n);
    MPI_Waitall(n, r, st);
    o_begin("MPI_Waitall");
    o_reqlist(r, h, n);
    for (int i = 0; i < n; i++)
        o_done(&r[i], st == MPI_STATUSES_IGNORE ? NULL : &st[i], &d[i]);
    o_done_fields(d, n, st != MPI_STATUSES_IGNORE, 0);
    o_end();
}

OAPI void O_Waitany(int n, MPI_Request *r, int *idx, MPI_Status *st)
{
    MPI_Request h[64];
    odone d;
    o_check_n(n);
    memcpy(h, r, sizeof *r * (size_t)n);
    MPI_Waitany(n, r, idx, st);
    o_begin("MPI_Waitany");
    o_reqlist(r, h, n);
    o_int("index", *idx == MPI_UNDEFINED ? -32766 : *idx);
    if (*idx != MPI_UNDEFINED) {
        o_done(&r[*idx], st == MPI_STATUS_IGNORE ? NULL : st, &d);
        o_done_fields(&d, 1, st != MPI_STATUS_IGNORE, 1);
    }
    o_end();
}

static void o_some(const char *op, MPI_Request *r, int out, const int *idx,
                   MPI_Status *st)
{
    odone d[64];
    o_put(",\"completed\":[");
    for (int i = 0; i < out; i++)
        o_put("%s%d", i ? "," : "", idx[i]);
    o_put("]");
    for (int i = 0; i < out; i++)
        o_done(&r[idx[i]], st == MPI_STATUSES_IGNORE ? NULL : &st[i], &d[i]);
    o_done_fields(d, out, st != MPI_STATUSES_IGNORE, 0);
    (void)op;
}

/* Waitsome/Testsome: the programs stop before outcount would be MPI_UNDEFINED. */
OAPI void O_Waitsome(int n, MPI_Request *r, int *out, int *idx, MPI_Status *st)
{
    MPI_Request h[64];
    o_check_n(n);
    memcpy(h, r, sizeof *r * (size_t)n);
    MPI_Waitsome(n, r, out, idx, st);
    if (*out == MPI_UNDEFINED)
        fail("oracle: Waitsome on null requests only");
    o_begin("MPI_Waitsome");
    o_reqlist(r, h, n);
    o_some("MPI_Waitsome", r, *out, idx, st);
    o_end();
}

OAPI void O_Testsome(int n, MPI_Request *r, int *out, int *idx, MPI_Status *st)
{
    MPI_Request h[64];
    o_check_n(n);
    memcpy(h, r, sizeof *r * (size_t)n);
    MPI_Testsome(n, r, out, idx, st);
    if (*out == MPI_UNDEFINED)
        fail("oracle: Testsome on null requests only");
    o_begin("MPI_Testsome");
    o_reqlist(r, h, n);
    o_some("MPI_Testsome", r, *out, idx, st);
    o_end();
}

OAPI void O_Test(MPI_Request *r, int *flag, MPI_Status *st)
{
    MPI_Request h = *r;
    odone d;
    MPI_Test(r, flag, st);
    o_begin("MPI_Test");
    o_reqlist(r, &h, 1);
    o_int("flag", *flag != 0);
    if (*flag && h != MPI_REQUEST_NULL) {
        o_done(r, st == MPI_STATUS_IGNORE ? NULL : st, &d);
        o_done_fields(&d, 1, st != MPI_STATUS_IGNORE, 1);
    }
    o_end();
}

OAPI void O_Testall(int n, MPI_Request *r, int *flag, MPI_Status *st)
{
    MPI_Request h[64];
    odone d[64];
    o_check_n(n);
    memcpy(h, r, sizeof *r * (size_t)n);
    MPI_Testall(n, r, flag, st);
    o_begin("MPI_Testall");
    o_reqlist(r, h, n);
    o_int("flag", *flag != 0);
    if (*flag) {
        for (int i = 0; i < n; i++)
            o_done(&r[i], st == MPI_STATUSES_IGNORE ? NULL : &st[i], &d[i]);
        o_done_fields(d, n, st != MPI_STATUSES_IGNORE, 0);
    }
    o_end();
}

/* Testany: the programs never call it with only null requests. */
OAPI void O_Testany(int n, MPI_Request *r, int *idx, int *flag, MPI_Status *st)
{
    MPI_Request h[64];
    odone d;
    o_check_n(n);
    memcpy(h, r, sizeof *r * (size_t)n);
    MPI_Testany(n, r, idx, flag, st);
    o_begin("MPI_Testany");
    o_reqlist(r, h, n);
    o_int("flag", *flag != 0);
    if (*flag) {
        if (*idx == MPI_UNDEFINED)
            fail("oracle: Testany on null requests only");
        o_int("index", *idx);
        o_done(&r[*idx], st == MPI_STATUS_IGNORE ? NULL : st, &d);
        o_done_fields(&d, 1, st != MPI_STATUS_IGNORE, 1);
    }
    o_end();
}

/* ---- collectives ------------------------------------------------------------ */

static int o_crank(MPI_Comm c)
{
    int r;
    MPI_Comm_rank(c, &r);
    return r;
}
static int o_csize(MPI_Comm c)
{
    int n;
    MPI_Comm_size(c, &n);
    return n;
}
static int o_inter(MPI_Comm c) { return o_comm(c)->rsize > 0; }
static MPI_Aint o_extent(MPI_Datatype t)
{
    MPI_Aint lb, ext;
    MPI_Type_get_extent(t, &lb, &ext);
    return ext;
}
/* Payload of a v-collective's output: its blocks in rank order (basic types). */
static void o_payload_v(const void *buf, int n, const int *counts, const int *displs,
                        MPI_Datatype t)
{
    o_pl_begin();
    for (int i = 0; i < n; i++)
        o_pl_add((const char *)buf + (size_t)displs[i] * (size_t)o_extent(t),
                 (size_t)counts[i] * (size_t)o_tsize(t));
    o_pl_end();
}

/* The send side of a collective; with MPI_IN_PLACE the recorder gives it the
 * receive side's count and type (what the rank contributes). */
static void o_send_side(const void *sb, int sn, MPI_Datatype stype, int rn, MPI_Datatype rtype)
{
    if (sb == MPI_IN_PLACE)
        o_cnt("count", "bytes", rn, rtype);
    else
        o_cnt("count", "bytes", sn, stype);
}

/* A nonblocking collective's request: its output region is the payload at completion. */
static void o_coll_req(MPI_Request *r, const void *obuf, size_t obytes)
{
    oreq *q = o_req_add(r, RK_COLL, 0);
    q->obuf = obuf;
    q->obytes = obytes;
}

OAPI void O_Barrier(MPI_Comm c)
{
    MPI_Barrier(c);
    o_begin("MPI_Barrier");
    o_commf(c);
    o_end();
}

OAPI void O_Ibarrier(MPI_Comm c, MPI_Request *r)
{
    MPI_Ibarrier(c, r);
    o_begin("MPI_Ibarrier");
    o_commf(c);
    o_coll_req(r, NULL, 0);
    o_end();
}

/* Bcast root: intracommunicator rank, or MPI_ROOT / MPI_PROC_NULL / remote rank. */
static int o_bcast_receives(MPI_Comm c, int root)
{
    return o_inter(c) ? root >= 0 : o_crank(c) != root;
}
/* The buffer is not significant at an intercommunicator's MPI_PROC_NULL ranks. */
static void o_bcast_count(MPI_Comm c, int root, int n, MPI_Datatype t)
{
    if (o_inter(c) && root == MPI_PROC_NULL)
        o_cnt("count", "bytes", 0, MPI_INT);
    else
        o_cnt("count", "bytes", n, t);
}

OAPI void O_Bcast(void *buf, int n, MPI_Datatype t, int root, MPI_Comm c)
{
    MPI_Bcast(buf, n, t, root, c);
    o_begin("MPI_Bcast");
    o_int("root", o_norm(root));
    o_bcast_count(c, root, n, t);
    o_commf(c);
    if (o_bcast_receives(c, root))
        o_payload(buf, n, t);
    o_end();
}

OAPI void O_Ibcast(void *buf, int n, MPI_Datatype t, int root, MPI_Comm c, MPI_Request *r)
{
    MPI_Ibcast(buf, n, t, root, c, r);
    o_begin("MPI_Ibcast");
    o_int("root", o_norm(root));
    o_bcast_count(c, root, n, t);
    o_commf(c);
    o_coll_req(r, buf, o_bcast_receives(c, root) ? (size_t)n * (size_t)o_tsize(t) : 0);
    o_end();
}

OAPI void O_Reduce(const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op op, int root,
                   MPI_Comm c)
{
    MPI_Reduce(sb, rb, n, t, op, root, c);
    o_begin("MPI_Reduce");
    o_int("root", o_norm(root));
    o_cnt("count", "bytes", n, t);
    o_commf(c);
    if (o_crank(c) == root)
        o_payload(rb, n, t);
    o_end();
}

OAPI void O_Ireduce(const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op op, int root,
                    MPI_Comm c, MPI_Request *r)
{
    MPI_Ireduce(sb, rb, n, t, op, root, c, r);
    o_begin("MPI_Ireduce");
    o_int("root", o_norm(root));
    o_cnt("count", "bytes", n, t);
    o_commf(c);
    o_coll_req(r, rb, o_crank(c) == root ? (size_t)n * (size_t)o_tsize(t) : 0);
    o_end();
}

OAPI void O_Allreduce(const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c)
{
    MPI_Allreduce(sb, rb, n, t, op, c);
    o_begin("MPI_Allreduce");
    o_cnt("count", "bytes", n, t);
    o_commf(c);
    o_payload(rb, n, t);
    o_end();
}

OAPI void O_Iallreduce(const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c,
                       MPI_Request *r)
{
    MPI_Iallreduce(sb, rb, n, t, op, c, r);
    o_begin("MPI_Iallreduce");
    o_cnt("count", "bytes", n, t);
    o_commf(c);
    o_coll_req(r, rb, (size_t)n * (size_t)o_tsize(t));
    o_end();
}

OAPI void O_Gather(const void *sb, int sn, MPI_Datatype stype, void *rb, int rn,
                   MPI_Datatype rtype, int root, MPI_Comm c)
{
    MPI_Gather(sb, sn, stype, rb, rn, rtype, root, c);
    o_begin("MPI_Gather");
    o_int("root", root);
    o_send_side(sb, sn, stype, rn, rtype);
    o_commf(c);
    if (o_crank(c) == root) {
        o_cnt("rcount", "rbytes", rn, rtype);
        o_payload(rb, rn * o_csize(c), rtype);
    } else {
        o_cnt("rcount", "rbytes", 0, MPI_INT); /* not significant: recorded as empty */
    }
    o_end();
}

OAPI void O_Gatherv(const void *sb, int sn, MPI_Datatype stype, void *rb, const int *rn,
                    const int *displs, MPI_Datatype rtype, int root, MPI_Comm c)
{
    MPI_Gatherv(sb, sn, stype, rb, rn, displs, rtype, root, c);
    o_begin("MPI_Gatherv");
    o_int("root", root);
    o_send_side(sb, sn, stype, o_crank(c) == root ? rn[root] : 0, rtype);
    o_commf(c);
    if (o_crank(c) == root)
        o_payload_v(rb, o_csize(c), rn, displs, rtype);
    o_end();
}

/* Igatherv: the programs use displacements that tile the receive buffer. */
OAPI void O_Igatherv(const void *sb, int sn, MPI_Datatype stype, void *rb, const int *rn,
                     const int *displs, MPI_Datatype rtype, int root, MPI_Comm c,
                     MPI_Request *r)
{
    MPI_Igatherv(sb, sn, stype, rb, rn, displs, rtype, root, c, r);
    o_begin("MPI_Igatherv");
    o_int("root", root);
    o_send_side(sb, sn, stype, o_crank(c) == root ? rn[root] : 0, rtype);
    o_commf(c);
    size_t total = 0;
    if (o_crank(c) == root)
        for (int i = 0; i < o_csize(c); i++)
            total += (size_t)rn[i] * (size_t)o_tsize(rtype);
    o_coll_req(r, rb, total);
    o_end();
}

OAPI void O_Scatter(const void *sb, int sn, MPI_Datatype stype, void *rb, int rn,
                    MPI_Datatype rtype, int root, MPI_Comm c)
{
    MPI_Scatter(sb, sn, stype, rb, rn, rtype, root, c);
    o_begin("MPI_Scatter");
    o_int("root", root);
    if (o_crank(c) == root)
        o_cnt("count", "bytes", sn, stype);
    else
        o_cnt("count", "bytes", 0, MPI_INT); /* not significant: recorded as empty */
    o_commf(c);
    if (rb != MPI_IN_PLACE) {
        o_cnt("rcount", "rbytes", rn, rtype);
        o_payload(rb, rn, rtype);
    } else {
        o_cnt("rcount", "rbytes", sn, stype);
    }
    o_end();
}

OAPI void O_Iscatter(const void *sb, int sn, MPI_Datatype stype, void *rb, int rn,
                     MPI_Datatype rtype, int root, MPI_Comm c, MPI_Request *r)
{
    MPI_Iscatter(sb, sn, stype, rb, rn, rtype, root, c, r);
    o_begin("MPI_Iscatter");
    o_int("root", root);
    if (o_crank(c) == root)
        o_cnt("count", "bytes", sn, stype);
    else
        o_cnt("count", "bytes", 0, MPI_INT);
    o_commf(c);
    if (rb != MPI_IN_PLACE) {
        o_cnt("rcount", "rbytes", rn, rtype);
        o_coll_req(r, rb, (size_t)rn * (size_t)o_tsize(rtype));
    } else {
        o_cnt("rcount", "rbytes", sn, stype);
        o_coll_req(r, NULL, 0);
    }
    o_end();
}

OAPI void O_Scatterv(const void *sb, const int *sn, const int *displs, MPI_Datatype stype,
                     void *rb, int rn, MPI_Datatype rtype, int root, MPI_Comm c)
{
    MPI_Scatterv(sb, sn, displs, stype, rb, rn, rtype, root, c);
    o_begin("MPI_Scatterv");
    o_int("root", root);
    o_commf(c);
    o_cnt("rcount", "rbytes", rn, rtype);
    o_payload_raw(rb, (size_t)rn * (size_t)o_tsize(rtype));
    o_end();
}

OAPI void O_Allgather(const void *sb, int sn, MPI_Datatype stype, void *rb, int rn,
                      MPI_Datatype rtype, MPI_Comm c)
{
    MPI_Allgather(sb, sn, stype, rb, rn, rtype, c);
    o_begin("MPI_Allgather");
    o_send_side(sb, sn, stype, rn, rtype);
    o_cnt("rcount", "rbytes", rn, rtype);
    o_commf(c);
    o_payload(rb, rn * o_csize(c), rtype);
    o_end();
}

OAPI void O_Iallgather(const void *sb, int sn, MPI_Datatype stype, void *rb, int rn,
                       MPI_Datatype rtype, MPI_Comm c, MPI_Request *r)
{
    MPI_Iallgather(sb, sn, stype, rb, rn, rtype, c, r);
    o_begin("MPI_Iallgather");
    o_send_side(sb, sn, stype, rn, rtype);
    o_cnt("rcount", "rbytes", rn, rtype);
    o_commf(c);
    o_coll_req(r, rb, (size_t)rn * (size_t)o_csize(c) * (size_t)o_tsize(rtype));
    o_end();
}

OAPI void O_Allgatherv(const void *sb, int sn, MPI_Datatype stype, void *rb, const int *rn,
                       const int *displs, MPI_Datatype rtype, MPI_Comm c)
{
    MPI_Allgatherv(sb, sn, stype, rb, rn, displs, rtype, c);
    o_begin("MPI_Allgatherv");
    o_send_side(sb, sn, stype, rn[o_crank(c)], rtype);
    o_commf(c);
    o_payload_v(rb, o_csize(c), rn, displs, rtype);
    o_end();
}

OAPI void O_Alltoall(const void *sb, int sn, MPI_Datatype stype, void *rb, int rn,
                     MPI_Datatype rtype, MPI_Comm c)
{
    MPI_Alltoall(sb, sn, stype, rb, rn, rtype, c);
    o_begin("MPI_Alltoall");
    o_cnt("count", "bytes", sn, stype);
    o_cnt("rcount", "rbytes", rn, rtype);
    o_commf(c);
    o_payload(rb, rn * o_csize(c), rtype);
    o_end();
}

OAPI void O_Ialltoall(const void *sb, int sn, MPI_Datatype stype, void *rb, int rn,
                      MPI_Datatype rtype, MPI_Comm c, MPI_Request *r)
{
    MPI_Ialltoall(sb, sn, stype, rb, rn, rtype, c, r);
    o_begin("MPI_Ialltoall");
    o_cnt("count", "bytes", sn, stype);
    o_cnt("rcount", "rbytes", rn, rtype);
    o_commf(c);
    o_coll_req(r, rb, (size_t)rn * (size_t)o_csize(c) * (size_t)o_tsize(rtype));
    o_end();
}

OAPI void O_Alltoallv(const void *sb, const int *sn, const int *sd, MPI_Datatype stype, void *rb,
                      const int *rn, const int *rd, MPI_Datatype rtype, MPI_Comm c)
{
    MPI_Alltoallv(sb, sn, sd, stype, rb, rn, rd, rtype, c);
    o_begin("MPI_Alltoallv");
    o_commf(c);
    o_payload_v(rb, o_csize(c), rn, rd, rtype);
    o_end();
}

/* Alltoallw: displacements in bytes. */
OAPI void O_Alltoallw(const void *sb, const int *sn, const int *sd, const MPI_Datatype *stypes,
                      void *rb, const int *rn, const int *rd, const MPI_Datatype *rtypes,
                      MPI_Comm c)
{
    MPI_Alltoallw(sb, sn, sd, stypes, rb, rn, rd, rtypes, c);
    o_begin("MPI_Alltoallw");
    o_commf(c);
    o_pl_begin();
    for (int i = 0; i < o_csize(c); i++)
        o_pl_add((const char *)rb + rd[i], (size_t)rn[i] * (size_t)o_tsize(rtypes[i]));
    o_pl_end();
    o_end();
}

OAPI void O_Reduce_scatter(const void *sb, void *rb, const int *rn, MPI_Datatype t, MPI_Op op,
                           MPI_Comm c)
{
    MPI_Reduce_scatter(sb, rb, rn, t, op, c);
    o_begin("MPI_Reduce_scatter");
    o_commf(c);
    o_payload_raw(rb, (size_t)rn[o_crank(c)] * (size_t)o_tsize(t));
    o_end();
}

OAPI void O_Reduce_scatter_block(const void *sb, void *rb, int rn, MPI_Datatype t, MPI_Op op,
                                 MPI_Comm c)
{
    MPI_Reduce_scatter_block(sb, rb, rn, t, op, c);
    o_begin("MPI_Reduce_scatter_block");
    o_cnt("rcount", "rbytes", rn, t);
    o_commf(c);
    o_payload_raw(rb, (size_t)rn * (size_t)o_tsize(t));
    o_end();
}

OAPI void O_Ireduce_scatter_block(const void *sb, void *rb, int rn, MPI_Datatype t, MPI_Op op,
                                  MPI_Comm c, MPI_Request *r)
{
    MPI_Ireduce_scatter_block(sb, rb, rn, t, op, c, r);
    o_begin("MPI_Ireduce_scatter_block");
    o_cnt("rcount", "rbytes", rn, t);
    o_commf(c);
    o_coll_req(r, rb, (size_t)rn * (size_t)o_tsize(t));
    o_end();
}

OAPI void O_Scan(const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c)
{
    MPI_Scan(sb, rb, n, t, op, c);
    o_begin("MPI_Scan");
    o_cnt("count", "bytes", n, t);
    o_commf(c);
    o_payload_raw(rb, (size_t)n * (size_t)o_tsize(t));
    o_end();
}

OAPI void O_Iscan(const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c,
                  MPI_Request *r)
{
    MPI_Iscan(sb, rb, n, t, op, c, r);
    o_begin("MPI_Iscan");
    o_cnt("count", "bytes", n, t);
    o_commf(c);
    o_coll_req(r, rb, (size_t)n * (size_t)o_tsize(t));
    o_end();
}

/* Exscan: rank 0's output is undefined: neither checksummed nor checked. */
OAPI void O_Exscan(const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c)
{
    MPI_Exscan(sb, rb, n, t, op, c);
    o_begin("MPI_Exscan");
    o_cnt("count", "bytes", n, t);
    o_commf(c);
    if (o_crank(c) > 0)
        o_payload_raw(rb, (size_t)n * (size_t)o_tsize(t));
    o_end();
}

/* ---- communicators ------------------------------------------------------------ */

/* The new communicator's comm_def, then the creating call's line. */
static void o_newcomm(const char *op, MPI_Comm c, MPI_Comm nc, const char *label, int has_ival,
                      long long ival)
{
    o_name(nc, label);
    o_begin(op);
    o_commf(c);
    if (has_ival)
        o_int("ival", ival);
    if (nc == MPI_COMM_NULL)
        o_put(",\"newcomm\":null");
    else
        o_str("newcomm", label);
    o_end();
}

OAPI void O_Comm_dup(MPI_Comm c, MPI_Comm *nc, const char *label)
{
    MPI_Comm_dup(c, nc);
    o_newcomm("MPI_Comm_dup", c, *nc, label, 0, 0);
}

OAPI void O_Comm_split(MPI_Comm c, int color, int key, MPI_Comm *nc, const char *label)
{
    MPI_Comm_split(c, color, key, nc);
    o_newcomm("MPI_Comm_split", c, *nc, label, 1, color == MPI_UNDEFINED ? -32766 : color);
}

OAPI void O_Comm_split_type(MPI_Comm c, int type, int key, MPI_Info info, MPI_Comm *nc,
                            const char *label)
{
    MPI_Comm_split_type(c, type, key, info, nc);
    o_newcomm("MPI_Comm_split_type", c, *nc, label, 1, type);
}

OAPI void O_Comm_create(MPI_Comm c, MPI_Group g, MPI_Comm *nc, const char *label)
{
    MPI_Comm_create(c, g, nc);
    o_newcomm("MPI_Comm_create", c, *nc, label, 0, 0);
}

OAPI void O_Comm_create_group(MPI_Comm c, MPI_Group g, int tag, MPI_Comm *nc, const char *label)
{
    MPI_Comm_create_group(c, g, tag, nc);
    o_newcomm("MPI_Comm_create_group", c, *nc, label, 1, tag);
}

OAPI void O_Cart_create(MPI_Comm c, int nd, const int *dims, const int *periods, int reorder,
                        MPI_Comm *nc, const char *label)
{
    MPI_Cart_create(c, nd, dims, periods, reorder, nc);
    o_newcomm("MPI_Cart_create", c, *nc, label, 0, 0);
}

OAPI void O_Cart_sub(MPI_Comm c, const int *remain, MPI_Comm *nc, const char *label)
{
    MPI_Cart_sub(c, remain, nc);
    o_newcomm("MPI_Cart_sub", c, *nc, label, 0, 0);
}

OAPI void O_Dist_graph_create_adjacent(MPI_Comm c, int indeg, const int *srcs, const int *sw,
                                       int outdeg, const int *dsts, const int *dw, MPI_Info info,
                                       int reorder, MPI_Comm *nc, const char *label)
{
    MPI_Dist_graph_create_adjacent(c, indeg, srcs, sw, outdeg, dsts, dw, info, reorder, nc);
    o_newcomm("MPI_Dist_graph_create_adjacent", c, *nc, label, 0, 0);
}

OAPI void O_Intercomm_create(MPI_Comm local, int lleader, MPI_Comm bridge, int rleader, int tag,
                             MPI_Comm *nc, const char *label)
{
    MPI_Intercomm_create(local, lleader, bridge, rleader, tag, nc);
    o_newcomm("MPI_Intercomm_create", local, *nc, label, 1, tag);
}

OAPI void O_Intercomm_merge(MPI_Comm inter, int high, MPI_Comm *nc, const char *label)
{
    MPI_Intercomm_merge(inter, high, nc);
    o_newcomm("MPI_Intercomm_merge", inter, *nc, label, 1, high);
}

OAPI void O_Comm_free(MPI_Comm *c)
{
    o_begin("MPI_Comm_free");
    o_commf(*c);
    o_unname(*c);
    MPI_Comm_free(c);
    o_end();
}

#endif
