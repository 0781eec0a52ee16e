/* ph_trace.h - the phantom trace format: one reader/writer library for every tool.
 *
 * A trace is a directory:
 *   meta.json          trace-level metadata (ranks, command, host, MPI, mode,
 *                      communicator and call-site tables)
 *   rank-NNNNNN.evt    per-rank event stream   (magic "PHTMEVT1")
 *   rank-NNNNNN.log    per-rank message log    (magic "PHTMLOG1"), --log only
 *
 * Every .evt/.log file is a 32-byte header followed by independent zstd frames;
 * each frame decompresses to one block.  doc/trace-format.md is the full spec.
 *
 * This header needs neither MPI nor zstd: the recorder, the replayer, cluster,
 * simmpi and the command-line tools all include it.
 */
#ifndef PH_TRACE_H
#define PH_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ph_ops.h" /* generated from lib/mpi-calls.def: enum ph_op, ph_op_info */

#ifdef __cplusplus
extern "C" {
#endif

#define PH_FORMAT_MAJOR 1
#define PH_FORMAT_MINOR 2
#define PH_HEADER_SIZE 32
#define PH_MAGIC_EVT "PHTMEVT1"
#define PH_MAGIC_LOG "PHTMLOG1"
/* A reader refuses a larger block as corrupt, unless its frame is big
 * enough to hold it: a block of one large record (a logged message) may be
 * as large as the record.  zstd cannot make a frame smaller than 1/32,768
 * of its content (a 128 KiB block takes at least 4 bytes), so a frame
 * header that claims more is corrupt. */
#define PH_MAX_BLOCK (64u << 20)
#define PH_MAX_ZSTD_RATIO 32768u

/* Header flags (also in meta.json "mode"). */
#define PH_FLAG_LOG 0x1u      /* this rank was recorded with a message log   */
#define PH_FLAG_SUBGROUP 0x2u /* the log covers only what enters a rank set */

/* Special rank values, normalised from the MPI implementation's constants. */
#define PH_ANY_SOURCE (-1)
#define PH_PROC_NULL (-2)
#define PH_ROOT (-3)       /* MPI_ROOT, intercommunicator collectives */
#define PH_NO_RANK (-4)    /* field absent */
#define PH_ANY_TAG (-1)
#define PH_UNDEFINED (-32766) /* MPI_UNDEFINED, e.g. Waitany on only null requests */
#define PH_COMM_NULL UINT32_MAX

/* Record types inside a block.  Values below PH_REC_ESCAPE are op ids. */
enum ph_record_type {
    PH_REC_ESCAPE = 0xF0,   /* op id >= 0xF0 follows as varint                  */
    PH_REC_COMM_DEF = 0xF1, /* communicator: local index, global id, members      */
    PH_REC_SITE_DEF = 0xF2, /* call site: local index, global id, frames          */
    PH_REC_TYPE_DEF = 0xF3, /* datatype: local index, size, extent                */
    PH_REC_MODULE_DEF = 0xF4, /* module (executable or .so) path                    */
    PH_REC_COUNTERS = 0xF5, /* per-function call counts of counted/unknown calls  */
    PH_REC_NOTE = 0xF6,     /* free text, e.g. why recording stopped              */
    PH_REC_END = 0xF7,      /* clean end of stream (MPI_Finalize reached)         */
    PH_REC_COUNTERS_TIMED = 0xF8, /* COUNTERS with the time inside each passed-through
                                   * function (since 2026-12-06, format 1.1)         */
    /* 0xF9-0xFF: records of later minor versions, each a varint length and
     * that many bytes: a reader skips those it does not know (format 1.1). */
    PH_REC_EXTENSION = 0xF9,
    PH_REC_STARTUP = 0xF9,  /* the rank's CPU time before MPI_Init (1.2)            */
};

/* Error reporting: every failing call fills one line, naming file and offset. */
typedef struct ph_err {
    char msg[512];
} ph_err;
void ph_err_set(ph_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Why path is not a directory ("not a directory", or stat's reason), or
 * NULL when it is one: for "PATH: not a trace directory (WHY)" and the like. */
const char *ph_not_dir(const char *path);

/* A JSON file (a plan, a groups file, a replay's meta.json): NULL with err set
 * to "PATH: cannot open: REASON" or "PATH: line N: not JSON: WHAT".  (The
 * struct is jansson's json_t; callers that use it include <jansson.h>.) */
struct json_t *ph_json_load(const char *path, ph_err *err);
/* Writes a file whole or not at all: fill(f, ctx) into PATH.PID.tmp
 * beside path, which is then renamed over it.  -1 with "PATH: cannot
 * write: REASON" (a write, or fill's own -1, or the close failed) or
 * "PATH: cannot replace: REASON", the old file left whole. */
int ph_file_save(const char *path, int (*fill)(FILE *f, const void *ctx), const void *ctx, ph_err *err);
/* ph_file_save of doc, with json_dumpf's flags. */
int ph_json_save(struct json_t *doc, const char *path, size_t flags, ph_err *err);
/* json_dumpf, the stream locked once rather than at every token. */
int ph_json_dumpf(const struct json_t *doc, FILE *f, size_t flags);

/* For a simulation of nranks ranks, from PH_HUGE_HEAP_RANKS on: reserves
 * PH_HEAP_PER_RANK a rank of malloc's heap at once (address space: memory
 * is taken as it is touched; at most a quarter of the RAM) and advises it
 * for transparent huge pages, so that its many small allocations take a
 * page fault per 2 MiB, not per 4 KiB (a prediction takes about 20 KiB a
 * rank at 1,024 and 4,096 ranks, whose first touches were 20,000 page
 * faults at 4,096).  1 if advised, 0 if not (fewer ranks, no brk heap, no
 * room, no THP): a hint, never an error.  For programs, not libraries: it
 * sets malloc's M_TOP_PAD for the process, and past 2 GiB turns off its
 * trimming (M_TRIM_THRESHOLD). */
#define PH_HUGE_HEAP_RANKS 1024
#define PH_HEAP_PER_RANK (32u << 10)
int ph_heap_huge_pages(uint32_t nranks);

/* ---- varints (LEB128) and zigzag --------------------------------------- */
static inline uint8_t *ph_put_uv(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}
static inline uint64_t ph_zz(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static inline int64_t ph_unzz(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }
static inline uint8_t *ph_put_sv(uint8_t *p, int64_t v) { return ph_put_uv(p, ph_zz(v)); }

/* A STARTUP record of ns at p (at most PH_STARTUP_MAX bytes); returns its end.
 * For the recorder and ph_writer alike (doc/trace-format.md). */
#define PH_STARTUP_MAX 12
static inline uint8_t *ph_put_startup(uint8_t *p, uint64_t ns)
{
    *p++ = PH_REC_STARTUP;
    uint8_t *len = p++;
    *len = (uint8_t)(ph_put_uv(p, ns) - p); /* at most 10: a one-byte length */
    return p + *len;
}

/* n-byte little-endian integers, the byte order of every phantom file */
void ph_put_le(uint8_t *p, uint64_t v, int n);
uint64_t ph_get_le(const uint8_t *p, int n);

/* ---- file header ---------------------------------------------------------- */
typedef struct ph_file_header {
    char magic[8];
    uint16_t major, minor;
    uint32_t rank, nranks;
    uint32_t flags;
    uint64_t t0; /* CLOCK_MONOTONIC ns at MPI_Init on this rank */
} ph_file_header;
void ph_header_encode(const ph_file_header *h, uint8_t out[PH_HEADER_SIZE]);
/* Checks magic and version; on failure explains in err (path used in message). */
int ph_header_decode(const uint8_t in[PH_HEADER_SIZE], const char *expect_magic,
                     ph_file_header *h, const char *path, ph_err *err);

/* ---- writing: a stream of independently decodable zstd frames ------------- */
typedef struct ph_stream ph_stream;
/* A prediction holds every rank's current block at once, decompressed:
 * with 1 MiB blocks a 16,384-rank recording needed 16 GiB for them alone.
 * 64 KiB makes files a few per cent larger or smaller, and costs no speed
 * (doc/bench-record.md). */
#define PH_BLOCK_DEFAULT (64u << 10)

typedef struct ph_stream_opts {
    size_t block_size;  /* raw bytes per frame (default PH_BLOCK_DEFAULT)      */
    int nbuffers;       /* pre-touched buffers in flight (default 4)             */
    int level;          /* zstd level (default 1)                               */
    int background;     /* compress and write from a background thread          */
    /* Called at the start of every block to write its header (at most
     * PH_BLOCK_HEADER_MAX bytes); returns the bytes written.  May be NULL. */
    size_t (*block_start)(void *ctx, uint8_t *out);
    void *ctx;
} ph_stream_opts;
#define PH_BLOCK_HEADER_MAX 32

ph_stream *ph_stream_open(const char *path, const ph_file_header *h,
                          const ph_stream_opts *opts, ph_err *err);
/* Space for n bytes in the current block; flushes first when it does not fit.
 * A record larger than the block size gets a block of its own.  Returns NULL
 * once the stream has failed (see ph_stream_error). */
uint8_t *ph_stream_reserve(ph_stream *s, size_t n);
void ph_stream_commit(ph_stream *s, size_t n);
/* Bytes already in the current block (0: the next record starts a block). */
size_t ph_stream_block_used(const ph_stream *s);
int ph_stream_flush(ph_stream *s);
/* Flushes, joins the writer thread and closes; returns 0 or -1 with err. */
int ph_stream_close(ph_stream *s, ph_err *err);
/* Non-NULL once a write failed: a one-line reason.  Safe from any thread. */
const char *ph_stream_error(ph_stream *s);
uint64_t ph_stream_raw_bytes(const ph_stream *s);
uint64_t ph_stream_file_bytes(const ph_stream *s);

/* ---- reading --------------------------------------------------------------- */

/* One completed status: source is a rank of the event's communicator. */
typedef struct ph_status {
    int32_t source;       /* PH_NO_RANK: no status (send request, cancelled)   */
    int32_t source_world; /* source as MPI_COMM_WORLD rank                      */
    int32_t tag;
    uint64_t bytes;
} ph_status;

/* A decoded event.  Array pointers stay valid until the next ph_rank_next. */
typedef struct ph_event {
    uint64_t seq;   /* 0-based position in this rank's event sequence */
    uint16_t op;    /* enum ph_op */
    uint64_t t_entry, t_exit; /* CLOCK_MONOTONIC ns */
    uint64_t startup_ns; /* the first event only: the CPU time of the process's start-up
                          * before it (STARTUP record, format 1.2); 0: not recorded */
    uint32_t site;  /* trace-wide call-site id (index into ph_trace sites) */
    uint32_t comm;  /* trace-wide communicator id (index into ph_trace comms) */
    int32_t peer, peer_world; /* destination, or source of a receive/probe */
    int32_t tag;
    int64_t count;
    uint64_t bytes;           /* count * size of datatype */
    int32_t rpeer, rpeer_world, rtag; /* receive half of Sendrecv */
    int64_t rcount;
    uint64_t rbytes;
    int32_t root;
    int64_t ival;             /* color, level, errorcode, ... (op-specific) */
    uint32_t newcomm;         /* trace-wide id of a created communicator */
    uint64_t newreq;          /* id of a request/message this call created (0: none) */
    uint32_t nreqs;           /* requests this call refers to */
    const uint64_t *reqs;     /* their ids; 0 = MPI_REQUEST_NULL, UINT64_MAX = foreign */
    uint32_t nsbytes, nrbytes; /* per-peer bytes of v/w collectives */
    const uint64_t *sbytes, *rbytes_v;
    int32_t flag;             /* Test*, Iprobe; -1 when absent */
    int32_t index;            /* Waitany/Testany, 0-based or PH_UNDEFINED; -1 absent */
    uint32_t ncompleted;      /* Waitsome/Testsome outcount (PH_UNDEFINED as UINT32_MAX) */
    const int32_t *completed; /* 0-based indices into reqs */
    uint32_t nstatus;
    const ph_status *status;  /* one per completed request, or one for Recv/Probe */
} ph_event;

/* The requests a Wait or Test family event completed: their positions in
 * ev->reqs and their statuses (NULL where none was recorded), in completion
 * order; pos and st hold at least ev->nreqs entries.  0 for other events and
 * for Tests that found nothing. */
uint32_t ph_event_completions(const ph_event *ev, uint32_t *pos, const ph_status **st);

typedef struct ph_comm_info {
    uint64_t gid;       /* global id, the same on every member rank */
    uint32_t size;      /* local group size */
    int32_t *members;   /* world ranks of the local group, by comm rank */
    uint32_t remote_size; /* intercommunicators: remote group (0 otherwise) */
    int32_t *remote;
} ph_comm_info;

/* Is b the other side of intercommunicator a?  2: by gid (the recorder's
 * sides differ in bit 0 only), 1: by groups alone (b's local and remote
 * groups are a's swapped; traces from before the gid rule), 0: no. */
int ph_comm_other_side(const ph_comm_info *a, const ph_comm_info *b);

typedef struct ph_site_info {
    uint64_t gid;      /* hash of (module basename, offset) frames */
    uint32_t nframes;
    char **modules;    /* module path per frame */
    uint64_t *offsets; /* offset within module per frame */
    char *function, *file; /* symbolised where debug info allowed (may be NULL) */
    int line;
    /* The user frame's caller (the frame after it), symbolised by phantom
     * finish the same way: what tells apart two sites of one MPI call in one
     * function reached from two places (may be NULL, 0). */
    char *caller_function, *caller_file;
    int caller_line;
} ph_site_info;

typedef struct ph_trace ph_trace;
typedef struct ph_rank_reader ph_rank_reader;

/* Opens a trace directory: reads meta.json and checks every rank's header.
 * Communicator and call-site tables are merged from meta.json or, if the
 * trace was never finished, from the rank streams. */
ph_trace *ph_trace_open(const char *dir, ph_err *err);
void ph_trace_close(ph_trace *t);
uint32_t ph_trace_nranks(const ph_trace *t);
const char *ph_trace_dir(const ph_trace *t);
uint32_t ph_trace_flags(const ph_trace *t);
/* The recorder's own time inside every gap between two calls (meta.json
 * clock.probe_gap_ns, rounded to whole ns; 0 if absent): a gap of g ns
 * holds g - probe_gap_ns of the application's computation, at least 0. */
uint64_t ph_trace_probe_gap_ns(const ph_trace *t);
/* The computation unit (ns) between a call's exit and the next call's
 * entry: the gap less the recorder's part of it, at least 0 (threads can
 * overlap calls). */
static inline uint64_t ph_unit_ns(uint64_t prev_exit, uint64_t t_entry, uint64_t probe_gap_ns)
{
    uint64_t gap = t_entry > prev_exit ? t_entry - prev_exit : 0;
    return gap > probe_gap_ns ? gap - probe_gap_ns : 0;
}
/* The MPI call a call site makes, noted call by call into *op (0 before
 * any): PH_SITE_OPS once the site has made two different ones (one call
 * instruction reached through a function pointer). */
#define PH_SITE_OPS UINT16_MAX
static inline void ph_site_op_note(uint16_t *op, uint16_t call)
{
    if (*op != call)
        *op = *op ? PH_SITE_OPS : call;
}
/* meta.json value by key path ("mpi.version"), as a string; NULL if absent.
 * Not "comms" or "sites": those are read into the tables (ph_trace_comm,
 * ph_trace_site) when the trace opens, and let go. */
const char *ph_trace_meta(const ph_trace *t, const char *key);
uint32_t ph_trace_ncomms(const ph_trace *t);
const ph_comm_info *ph_trace_comm(const ph_trace *t, uint32_t id);
/* The id of the other side of intercommunicator id: the one with the paired
 * gid, else the first whose groups are id's swapped (ph_comm_other_side);
 * id itself when it is no intercommunicator or the trace lacks the other. */
uint32_t ph_trace_comm_other_side(const ph_trace *t, uint32_t id);
uint32_t ph_trace_nsites(const ph_trace *t);
const ph_site_info *ph_trace_site(const ph_trace *t, uint32_t id);
/* Per-rank call counts of counted-only and unknown functions. */
typedef struct ph_counter {
    const char *name;
    uint64_t calls;
    int unknown; /* passed through (not a local call phantom knows) */
    int timed;   /* ns holds the time inside it (what the simulation leaves out, traces since 2026-12-06) */
    uint64_t ns;
} ph_counter;
int ph_trace_counters(ph_trace *t, uint32_t rank, const ph_counter **out, size_t *n);
/* The kind of a function (ph_untraced, in ph_ops.h: from mpi-calls.def);
 * PH_UNTRACED_OTHER for any name not of a kind, known or not. */
ph_untraced ph_untraced_kind(const char *name);
/* "one-sided", "neighbourhood collective", "file I/O", "process management"; "other" */
const char *ph_untraced_name(ph_untraced kind);
/* Whether rank RANK's stream ends with END (1) or not (0); -1 if it cannot
 * be read.  Shares ph_trace_counters' one pass over the stream. */
int ph_trace_rank_complete(ph_trace *t, uint32_t rank);

ph_rank_reader *ph_rank_open(ph_trace *t, uint32_t rank, ph_err *err);
/* 1: an event; 0: end of stream; -1: error (err names file and offset). */
int ph_rank_next(ph_rank_reader *r, ph_event *ev, ph_err *err);
/* How many cache lines, from the reader's own address, every ph_rank_next
 * reads first: for a caller of many readers that knows which comes next
 * and asks the caches for them ahead. */
unsigned ph_rank_hot_lines(void);
/* After 0: did the stream end with an END record (clean MPI_Finalize)? */
int ph_rank_complete(const ph_rank_reader *r);
/* Notes the recorder left (e.g. "recording stopped: No space left on device"). */
const char *ph_rank_note(const ph_rank_reader *r);
void ph_rank_close(ph_rank_reader *r);

/* Message log of one rank: records in event order. */
typedef struct ph_log_reader ph_log_reader;
/* Slots from PH_LOG_SLOT_WTIME on: the i-th MPI_Wtime result before the
 * record's event (slot PH_LOG_SLOT_WTIME + i), 8 bytes, a double.  Slots
 * from PH_LOG_SLOT_TIME to PH_LOG_SLOT_USAGE - 1: the i-th time() result the
 * application's own code got before the event, 8 bytes, an int64_t.  Slots
 * from PH_LOG_SLOT_USAGE to PH_LOG_SLOT_CLOCK - 1: its i-th getrusage or
 * times result (ph_clock.h: ph_usage_pack_rusage, ph_usage_pack_times).  Slots from PH_LOG_SLOT_CLOCK
 * to PH_LOG_SLOT_WTIME - 1: its i-th clock_gettime or gettimeofday,
 * PH_LOG_CLOCK_LEN bytes: int64_t seconds, int64_t nanoseconds, int32_t
 * clock id (CLOCK_REALTIME for gettimeofday). */
#define PH_LOG_SLOT_WTIME 0x80000000u
#define PH_LOG_SLOT_CLOCK 0x60000000u
#define PH_LOG_SLOT_USAGE 0x50000000u
#define PH_LOG_SLOT_TIME 0x40000000u
#define PH_LOG_CLOCK_LEN 20
typedef struct ph_log_record {
    uint64_t event;  /* index of the event that produced the data */
    uint32_t slot;   /* which completed request of a Wait*, else 0 */
    uint64_t len;
    const uint8_t *data; /* packed bytes (MPI_Pack layout of the output) */
} ph_log_record;
ph_log_reader *ph_log_open(ph_trace *t, uint32_t rank, ph_err *err);
int ph_log_next(ph_log_reader *r, ph_log_record *rec, ph_err *err);
/* The block holding rec, the record ph_log_next just returned, handed over
 * when rec is its last record: rec->data stays valid, and the caller frees
 * the block (free()).  NULL when more records follow in the block (the
 * reader still reads it).  A message logged as a block of its own (one of
 * PH_MAX_BLOCK or more) is then held once, not twice (block and copy). */
void *ph_log_take_block(ph_log_reader *r, const ph_log_record *rec);
void ph_log_close(ph_log_reader *r);

/* ---- writing a trace from events, without MPI (ph_writer.c) ---------------
 * For synthetic traces and for stages that write events of their own.  The
 * communicator table starts with MPI_COMM_WORLD (id 0); define others, and
 * call sites, before the events that use them.  An event's op, t_entry,
 * t_exit, site, comm and the fields of its op are written; count and bytes
 * give the element size (bytes / count); newreq ids are implicit (they are
 * numbered 1, 2, ... in event order); reqs refer to them.  The first event's
 * startup_ns, if any, becomes a STARTUP record. */
typedef struct ph_writer ph_writer;
typedef struct ph_rank_writer ph_rank_writer;
ph_writer *ph_writer_create(const char *dir, uint32_t nranks, const char *command, ph_err *err);
uint32_t ph_writer_comm(ph_writer *w, uint32_t size, const int32_t *members, uint32_t rsize,
                        const int32_t *remote);
uint32_t ph_writer_site(ph_writer *w, const char *function, const char *file, int line);
ph_rank_writer *ph_writer_rank(ph_writer *w, uint32_t rank, uint64_t t0, ph_err *err);
int ph_rank_write(ph_rank_writer *r, const ph_event *ev, ph_err *err);
/* A note for readers of a stream that ends without END (why it ends there). */
int ph_rank_writer_note(ph_rank_writer *r, const char *note, ph_err *err);
/* complete: end the stream with END, as after MPI_Finalize */
int ph_rank_writer_close(ph_rank_writer *r, int complete, ph_err *err);
/* A top-level key of meta.json beyond the format's own (a replay result's
 * "replay"): value is taken over, written by close. */
void ph_writer_meta(ph_writer *w, const char *key, struct json_t *value);
/* Writes meta.json with the tables (in one rename: an earlier meta.json
 * stays whole until it succeeds); frees w (close every rank writer first). */
int ph_writer_close(ph_writer *w, ph_err *err);
void ph_writer_abort(ph_writer *w);

/* Names and formatting shared by the tools. */
const char *ph_rank_special_name(int32_t rank); /* "ANY_SOURCE", ... or NULL */
/* Ranks list "0-3,8-11" -> bitmap of n; returns -1 with err on bad syntax. */
int ph_parse_ranks(const char *spec, uint32_t n, uint8_t *bitmap, ph_err *err);
/* A map file (--map FILE of cluster and predict): the node of each of the
 * nranks ranks, in rank order, one word each, any number of words a line,
 * '#' to the end of a line a comment.  A word is a node's name or number;
 * equal words are one node.  node_of gets the nodes numbered 0, 1, ... in
 * the order they first appear; returns how many there are, or -1 with err
 * naming the file (and line). */
int ph_node_map_read(const char *path, uint32_t nranks, uint32_t *node_of, ph_err *err);
/* --map POLICY of cluster and predict: block (NULL too: rank r on node
 * r / ppn), cyclic (r mod nodes, nodes = ceil(nranks / ppn)), anything
 * else a map file. */
enum ph_map_kind { PH_MAP_BLOCK, PH_MAP_CYCLIC, PH_MAP_FILE };
enum ph_map_kind ph_map_kind(const char *policy);
/* node_of[nranks] under the policy; returns the number of nodes, or -1 with
 * err (a file's error, or ppn 0 for block and cyclic). */
int ph_node_map(const char *policy, uint32_t nranks, uint32_t ppn, uint32_t *node_of, ph_err *err);
/* qsort's comparison of two uint64_t. */
int ph_cmp_u64(const void *a, const void *b);
/* A tool's own part of every gap it times (the recorder's, the replayer's:
 * doc/trace-format.md section 7), from the n gaps of calls made back to
 * back with nothing between them.  The first PH_PROBE_WARM are left out
 * (cold caches); of the rest (sorted in place), those within 4 times the
 * median, at least 100 ns, are summed into *sum, their number into *kept:
 * the others met an interrupt.  A mean of many, since a TSC may tick in
 * 10 ns steps.  -1 when there are too few. */
#define PH_PROBE_WARM 256
int ph_probe_sum(uint64_t *gaps, size_t n, uint64_t *sum, uint64_t *kept);

#ifdef __cplusplus
}
#endif
#endif
