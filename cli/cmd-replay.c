/* cmd-replay.c - `phantom replay TRACE --ranks SPEC -- PROGRAM...`: rerun
 * ranks of a recorded run on this node from its message log, and write the
 * computation vectors they measured beside the trace (PHANTOM, Zhai et al.,
 * Sections 4 and 5.4.2).
 *
 * The replay job is `LAUNCHER -np K PROGRAM...` with libpmpi-replay.so
 * preloaded into the K ranks only (as `phantom record` does: through Open
 * MPI's mca_base_env_list, or -x when the launcher options use -x); process
 * p plays the p-th listed rank.  Each run leaves times files in a scratch
 * directory; with --repeat N the per-unit median and minimum of the N runs
 * become TRACE/replay/NAME and TRACE/replay/NAME.min (doc/replay.md).
 */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "phantom.h"
#include "rep_result.h"

#ifndef PKGLIBDIR
#define PKGLIBDIR "/usr/local/lib/phantom"
#endif
#define ENV_LIST "OMPI_MCA_mca_base_env_list"

static const char usage[] =
    "usage: phantom replay TRACE --ranks SPEC [options] -- PROGRAM [ARGS...]\n"
    "       phantom replay --ranks SPEC [options] TRACE PROGRAM [ARGS...]\n"
    "\n"
    "Rerun the listed ranks of the run recorded in TRACE on this node, at full\n"
    "speed, from the trace's message log, and measure the time between their MPI\n"
    "calls: their sequential computation vectors on this hardware.  Launches\n"
    "`LAUNCHER -np K PROGRAM ARGS` (K listed ranks) with the replayer preloaded;\n"
    "each process behaves as one listed rank of the original run.  PROGRAM and\n"
    "ARGS must be those of the recorded run: any call that differs from the\n"
    "recording stops the replay with a message naming rank, event and call site.\n"
    "\n"
    "By default the listed ranks are replayed together as a subgroup: messages\n"
    "among them go through real MPI (so memory and cache contention are real),\n"
    "only messages from other ranks come from the log.  This needs a full log\n"
    "(record --log) or a subgroup log of exactly these ranks (record --log-ranks).\n"
    "\n"
    "Writes TRACE/replay/NAME: a trace of the replayed ranks' events with the\n"
    "replay's times (read it with phantom stats --rank, phantom predict --comp).\n"
    "Replays of other ranks under the same NAME are added to it (one subgroup\n"
    "per node, as phantom cluster plans them).\n"
    "\n"
    "options:\n"
    "  -r, --ranks SPEC       original ranks to replay, e.g. 8-11 (required)\n"
    "  --isolated             every rank alone: every incoming message from the log\n"
    "                         (needs a full log)\n"
    "  -n, --name NAME        name of the result (default: this host's name)\n"
    "  --repeat N             replay N times; per computation unit the median goes\n"
    "                         to NAME and the minimum to NAME.min (default 1)\n"
    "  --plan FILE            groups.json of phantom cluster: replay only the first\n"
    "                         iterations of each rank's loop, as many as the plan's\n"
    "                         run with these ranks says (partial replay)\n"
    "  --iterations R         with --plan: replay R iterations instead\n"
    "  --launcher CMD         launcher and its options, split at blanks\n"
    "                         (default: $PHANTOM_LAUNCHER, else mpirun)\n"
    "  --timeout SECS         stop a replay run that takes longer (default: none)\n"
    "  --units auto|wall|cpu  how a computation unit is timed: wall-clock time, or\n"
    "                         the rank's CPU time over the share of the CPU it had\n"
    "                         (measured at start); auto: CPU time when the node has\n"
    "                         a CPU quota (cgroup), where a short gap's wall time\n"
    "                         misses the pauses the quota puts in the calls after it\n"
    "                         (default: auto)\n"
    "  --force                start NAME afresh (else this replay is added to it,\n"
    "                         and must not replay a rank it already has)\n"
    "  --keep-runs            keep each run's raw times files, in TRACE/replay/.NAME.runs\n"
    "  -h, --help             show this help\n"
    "\n"
    "environment:\n"
    "  PHANTOM_REPLAY_PRELOAD  path of libpmpi-replay.so to use\n"
    "  PHANTOM_PRELOAD_EXTRA   libraries to preload before it (e.g. the ASan runtime)\n";

typedef struct ropts {
    const char *trace, *ranks, *name, *plan, *launcher, *units;
    int isolated, force, keep_runs;
    uint32_t repeat, iterations, timeout;
    int have_iterations;
    char **prog;
} ropts;

/* What a replay needs, worked out before anything runs. */
typedef struct job {
    const ropts *o;
    ph_trace *t;
    uint32_t nprocs;
    uint32_t *ranks;       /* the listed ranks, ascending: process p plays ranks[p] */
    uint64_t *stop;        /* partial replay: per listed rank, the event to stop at (or UINT64_MAX) */
    int64_t *loop;         /* and its loop: start, period, iterations (3 per listed rank) */
    int64_t iter_replayed, iter_total; /* -1: not partial */
    int stops;             /* some rank stops early */
    int cut;               /* the stops are where an incomplete recording lets ranks end together */
    char *lib, *trace_abs, *out, *out_min, *runs_dir;
    const char *user_env_list; /* OMPI_MCA_mca_base_env_list as phantom found it */
    json_t *prior[2];      /* meta.json of NAME and NAME.min, if they exist: this replay is added */
    char **run_dirs;
} job;

static int parse(int argc, char **argv, ropts *o)
{
    static const struct option longopts[] = {
        {"ranks", required_argument, NULL, 'r'}, {"isolated", no_argument, NULL, 'I'},
        {"name", required_argument, NULL, 'n'}, {"repeat", required_argument, NULL, 'R'},
        {"plan", required_argument, NULL, 'P'}, {"iterations", required_argument, NULL, 'i'},
        {"launcher", required_argument, NULL, 'L'}, {"timeout", required_argument, NULL, 'T'},
        {"force", no_argument, NULL, 'f'}, {"units", required_argument, NULL, 'U'},
        {"keep-runs", no_argument, NULL, 'K'},
        {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    /* With "--", options may come anywhere before it (TRACE --ranks 8-11 --
     * PROGRAM); without, they end at TRACE ('+'), and PROGRAM's own options
     * are never taken for ours. */
    int dd = 1, c;
    while (dd < argc && strcmp(argv[dd], "--") != 0)
        dd++;
    int nopt = dd < argc ? dd : argc;
    while ((c = cli_getopt("replay", nopt, argv, dd < argc ? ":hr:n:" : "+:hr:n:", longopts)) != -1) {
        switch (c) {
        case 'h': return cli_help(&cmd_replay), -1;
        case 'r': o->ranks = optarg; break;
        case 'I': o->isolated = 1; break;
        case 'n': o->name = optarg; break;
        case 'P': o->plan = optarg; break;
        case 'L': o->launcher = optarg; break;
        case 'f': o->force = 1; break;
        case 'K': o->keep_runs = 1; break;
        case 'U':
            if (strcmp(optarg, "auto") && strcmp(optarg, "wall") && strcmp(optarg, "cpu"))
                return cli_usage_error("replay", "--units: '%s' is not auto, wall or cpu", optarg);
            o->units = optarg;
            break;
        case 'R': case 'i': case 'T': {
            uint32_t *dst = c == 'R' ? &o->repeat : c == 'i' ? &o->iterations : &o->timeout;
            const char *opt = c == 'R' ? "--repeat" : c == 'i' ? "--iterations" : "--timeout";
            if (cli_u32_option("replay", opt, optarg, c == 'i' ? 0 : 1, 1u << 30, dst) != CLI_OK)
                return CLI_USAGE;
            o->have_iterations |= c == 'i';
            break;
        }
        default: return CLI_USAGE;
        }
    }
    if (optind >= nopt)
        return cli_usage_error("replay", "no trace directory given");
    o->trace = argv[optind++];
    if (dd < argc && optind < dd)
        return cli_usage_error("replay", "unexpected argument '%s' before --", argv[optind]);
    if (dd < argc)
        optind = dd + 1;
    if (optind >= argc)
        return cli_usage_error("replay", "no program given (phantom replay TRACE --ranks SPEC -- PROGRAM)");
    o->prog = argv + optind;
    if (dd >= argc && o->prog[0][0] == '-') /* `TRACE --ranks 3`: an option where PROGRAM goes */
        return cli_usage_error("replay", "'%s' after TRACE is taken as PROGRAM: give options before TRACE, "
                               "or end them with -- before PROGRAM", o->prog[0]);
    if (!o->ranks)
        return cli_usage_error("replay", "no ranks given (--ranks SPEC, e.g. --ranks 0-3)");
    if (o->have_iterations && !o->plan)
        return cli_usage_error("replay", "--iterations needs --plan (the loop of each rank)");
    if (o->name && (!*o->name || strchr(o->name, '/') || o->name[0] == '.'))
        return cli_usage_error("replay", "--name: '%s' is not a plain file name", o->name);
    return CLI_OK;
}

/* ---- checks before running --------------------------------------------------------- */

static int check_log(job *j)
{
    uint32_t flags = ph_trace_flags(j->t);
    const char *lr = ph_trace_meta(j->t, "mode.log_ranks");
    if (!(flags & PH_FLAG_LOG))
        return cli_error("replay", "%s: the trace has no message log: record with `phantom record "
                                   "--log` (or --log-ranks %s)", j->o->trace, j->o->ranks);
    if ((flags & PH_FLAG_SUBGROUP) && j->o->isolated)
        return cli_error("replay", "%s: --isolated needs a full message log (record --log); this "
                                   "one covers only what enters ranks %s", j->o->trace, lr ? lr : "?");
    if (flags & PH_FLAG_SUBGROUP) {
        uint32_t n = ph_trace_nranks(j->t);
        uint8_t *a = calloc(n, 1), *b = calloc(n, 1);
        ph_err err;
        int same = a && b && lr && ph_parse_ranks(lr, n, a, &err) == 0 &&
                   ph_parse_ranks(j->o->ranks, n, b, &err) == 0 && memcmp(a, b, n) == 0;
        free(a);
        free(b);
        if (!same)
            return cli_error("replay", "%s: the subgroup log was recorded for ranks %s, not %s: "
                                       "replay those ranks, or record with --log-ranks %s",
                             j->o->trace, lr ? lr : "?", j->o->ranks, j->o->ranks);
    }
    return CLI_OK;
}

static int list_ranks(job *j)
{
    uint32_t n = ph_trace_nranks(j->t);
    uint8_t *in = calloc(n, 1);
    ph_err err;
    if (!in)
        return cli_error("replay", "out of memory");
    if (ph_parse_ranks(j->o->ranks, n, in, &err) < 0) {
        free(in);
        return cli_usage_error("replay", "--ranks: %s", err.msg);
    }
    j->ranks = calloc(n, sizeof *j->ranks);
    j->stop = calloc(n, sizeof *j->stop);
    j->loop = calloc((size_t)n * 3, sizeof *j->loop);
    for (uint32_t r = 0; j->ranks && j->stop && j->loop && r < n; r++)
        if (in[r]) {
            j->stop[j->nprocs] = UINT64_MAX;
            j->ranks[j->nprocs++] = r;
        }
    free(in);
    if (!j->ranks || !j->stop || !j->loop)
        return cli_error("replay", "out of memory");
    for (uint32_t p = 0; p < j->nprocs; p++) { /* every log there, before a job starts */
        ph_log_reader *l = ph_log_open(j->t, j->ranks[p], &err);
        if (!l)
            return cli_error("replay", "%s", err.msg);
        ph_log_close(l);
    }
    return CLI_OK;
}

/* ---- calls phantom does not log: one-sided communication, file reads ---------------------- */

/* The first call of a replayed rank that `wanted` picks from the trace's
 * counts (their order), or NULL; its rank in *rank. */
static const ph_counter *first_counted(const job *j, int (*wanted)(const char *name), uint32_t *rank)
{
    for (uint32_t p = 0; p < j->nprocs; p++) {
        const ph_counter *c;
        size_t nc;
        if (ph_trace_counters(j->t, j->ranks[p], &c, &nc) < 0)
            continue; /* unreadable: said later (incomplete_ends, the replay) */
        for (size_t i = 0; i < nc; i++)
            if (wanted(c[i].name)) {
                *rank = j->ranks[p];
                return &c[i];
            }
    }
    return NULL;
}

/* Whether some recorded ranks are not in this replay, or are each alone. */
static int leaves_out_ranks(const job *j)
{
    return j->nprocs < ph_trace_nranks(j->t) || j->o->isolated;
}

/* A window's creation is collective: every rank that took part in one-sided
 * communication made one, so looking at the replayed ranks is enough. */
static int is_window_creation(const char *name)
{
    static const char *const made[] = {"MPI_Win_create", "MPI_Win_allocate", "MPI_Win_allocate_shared",
                                       "MPI_Win_create_dynamic"};
    for (size_t i = 0; i < sizeof made / sizeof *made; i++)
        if (strcmp(name, made[i]) == 0)
            return 1;
    return 0;
}

/* Puts, gets and accumulates reach memory of other ranks outside any
 * message the log holds, and their results steer the program: a replay
 * without all the ranks would run them against processes that are not
 * there (NWChem's Global Arrays, over MPI-3 windows, crashed).  With every
 * rank replayed they run for real, which may still change the program's
 * path. */
static int check_one_sided(const job *j)
{
    uint32_t rank;
    const ph_counter *c = first_counted(j, is_window_creation, &rank);
    if (!c)
        return CLI_OK;
    if (leaves_out_ranks(j))
        return cli_error("replay", "%s: rank %u used one-sided communication (%s, %llu calls), "
                                   "which phantom does not log: it cannot be replayed apart "
                                   "from the other ranks (doc/replay.md, section 5)",
                         j->o->trace, rank, c->name, (unsigned long long)c->calls);
    fprintf(stderr, "phantom replay: warning: %s: rank %u used one-sided communication (%s): "
                    "it runs for real, and its timing may change the program's path\n",
            j->o->trace, rank, c->name);
    return CLI_OK;
}

static int is_spawn(const char *name)
{
    return strncmp(name, "MPI_Comm_spawn", 14) == 0;
}

/* Processes a rank started with MPI_Comm_spawn are not in the trace (the
 * recorder stops at the first call that reaches them), and in a replay
 * they would run for real and wait forever on a rank that stopped where
 * its recording did. */
static int check_spawn(const job *j)
{
    uint32_t rank;
    const ph_counter *c = first_counted(j, is_spawn, &rank);
    return !c ? CLI_OK
              : cli_error("replay", "%s: rank %u started processes with %s (%llu call%s), which phantom "
                                    "does not record: it cannot be replayed (doc/replay.md, section 5)",
                          j->o->trace, rank, c->name, (unsigned long long)c->calls, c->calls == 1 ? "" : "s");
}

/* MPI_File_read, _read_at_all, _iread_shared, ... */
static int is_file_read(const char *name)
{
    return strncmp(name, "MPI_File_read", 13) == 0 || strncmp(name, "MPI_File_iread", 14) == 0;
}

/* MPI-IO runs for real in a replay, like the program's own read(): an
 * input file reads as it did, but what ranks left out of this replay wrote
 * during the recorded run is not there to read back (a checkpoint, a
 * transpose through a file), and the message log does not hold it.  Only
 * the user knows which kind of file it was, so this warns, not refuses. */
static void warn_file_reads(const job *j)
{
    uint32_t rank;
    const ph_counter *c = leaves_out_ranks(j) ? first_counted(j, is_file_read, &rank) : NULL;
    if (c)
        fprintf(stderr, "phantom replay: warning: %s: rank %u read files with MPI-IO (%s, %llu calls), "
                        "which runs for real: what the ranks left out of this replay wrote to files "
                        "during the run is not in the message log (doc/replay.md, section 5)\n",
                j->o->trace, rank, c->name, (unsigned long long)c->calls);
}

/* ---- partial replay: the plan of phantom cluster ----------------------------------------- */

static void set_stop(job *j, uint32_t p, const plan_loop *l)
{
    if (l->stop == UINT64_MAX)
        return;
    j->stop[p] = l->stop;
    j->stops = 1;
    j->loop[3 * p] = l->start;
    j->loop[3 * p + 1] = l->period;
    j->loop[3 * p + 2] = l->iterations;
}

/* Whether ranks replayed together (not isolated) would stop at the ends of
 * loops that start or repeat differently: iteration R then ends at other
 * exchanges for each, and a rank that stopped leaves a partner waiting on
 * it forever (tests/run.sh's timed.c, whose ranks loop as their clocks say,
 * hung so). */
static int loops_differ(const job *j, const plan_loop *loops)
{
    const plan_loop *first = NULL;
    int whole = 0; /* a rank that does not stop would wait for one that does */
    for (uint32_t p = 0; !j->o->isolated && p < j->nprocs; p++) {
        const plan_loop *l = &loops[j->ranks[p]];
        if (l->stop == UINT64_MAX)
            whole = 1;
        else if (first && (l->start != first->start || l->period != first->period))
            return 1;
        else if (!first)
            first = l;
    }
    return whole && first;
}

/* Whether the trace's message log holds only the first iterations (record
 * --plan): its ranks cannot be replayed past them. */
static int log_is_cut(const job *j)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/meta.json", j->o->trace);
    json_t *meta = json_load_file(path, 0, NULL);
    int cut = json_is_object(json_object_get(meta, "partial"));
    json_decref(meta);
    return cut;
}

/* Each listed rank stops at the end of iteration R of its group's loop. */
static int plan_stops(job *j)
{
    uint32_t n = ph_trace_nranks(j->t);
    uint8_t *in = calloc(n, 1);
    plan_loop *loops = calloc(n, sizeof *loops);
    ph_err err;
    int rc = in && loops ? CLI_OK : cli_error("replay", "out of memory");
    if (rc == CLI_OK && ph_parse_ranks(j->o->ranks, n, in, &err) < 0)
        rc = cli_usage_error("replay", "--ranks: %s", err.msg);
    if (rc == CLI_OK)
        rc = cli_plan_loops("replay", j->o->plan, n, in, j->o->ranks,
                            j->o->have_iterations ? (int64_t)j->o->iterations : -1, loops,
                            &j->iter_replayed, &j->iter_total);
    if (rc == CLI_OK && loops_differ(j, loops) && !log_is_cut(j)) {
        fprintf(stderr, "phantom replay: ranks %s: their loops start or repeat differently, so they would "
                        "stop at different exchanges and wait for each other: replaying them whole\n",
                j->o->ranks);
        j->iter_replayed = j->iter_total = -1;
    } else {
        for (uint32_t p = 0; rc == CLI_OK && p < j->nprocs; p++)
            set_stop(j, p, &loops[j->ranks[p]]);
    }
    free(in);
    free(loops);
    return rc;
}

/* A recording whose message log holds only the first R iterations (record
 * --plan; meta.json "partial", doc/trace-format.md): each listed rank stops
 * where its log does, or earlier with --plan; never later. */
static int recorded_partial(job *j)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/meta.json", j->o->trace);
    json_t *meta = json_load_file(path, 0, NULL);
    json_t *partial = json_object_get(meta, "partial"), *e;
    size_t i;
    int rc = CLI_OK;
    if (!json_is_object(partial)) {
        json_decref(meta);
        return CLI_OK;
    }
    json_array_foreach(json_object_get(partial, "ranks"), i, e) {
        json_int_t rank = json_integer_value(json_object_get(e, "rank"));
        uint64_t until = (uint64_t)json_integer_value(json_object_get(e, "stop"));
        for (uint32_t p = 0; rc == CLI_OK && p < j->nprocs; p++) {
            if (j->ranks[p] != (uint32_t)rank)
                continue;
            if (j->o->plan && j->stop[p] > until)
                rc = cli_error("replay", "%s: rank %u's message log ends at event %llu (%lld iterations); "
                               "replay fewer with --iterations", j->o->trace, j->ranks[p],
                               (unsigned long long)until,
                               (long long)json_integer_value(json_object_get(partial, "iterations")));
            else if (!j->o->plan)
                set_stop(j, p, &(plan_loop){until, json_integer_value(json_object_get(e, "start")),
                                            json_integer_value(json_object_get(e, "period")),
                                            json_integer_value(json_object_get(e, "iterations"))});
        }
    }
    if (rc == CLI_OK && !j->o->plan && j->stops) {
        j->iter_replayed = json_integer_value(json_object_get(partial, "iterations"));
        j->iter_total = json_integer_value(json_object_get(partial, "total_iterations"));
    }
    json_decref(meta);
    return rc;
}

/* ---- an incomplete recording: where its ranks stop ------------------------------------- */

/* The events of a rank's incomplete recording whose message-log records
 * are all there: records come in event order, and a killed job loses the
 * log's last block (four times the events' block, so it ends sooner), so
 * they are those before the last event with records.  A rank without a
 * readable log is left to the replay to report. */
static uint64_t log_covers(ph_trace *t, uint32_t rank)
{
    ph_err err;
    ph_log_reader *r = ph_log_open(t, rank, &err);
    if (!r)
        return UINT64_MAX;
    ph_log_record rec;
    uint64_t last = 0;
    while (ph_log_next(r, &rec, &err) > 0)
        last = rec.event;
    ph_log_close(r);
    return last;
}

/* A rank's blocking collectives on MPI_COMM_WORLD, read once: the index of
 * the event after each, in order, and the stream's length. */
typedef struct world_colls {
    int read;
    uint64_t *after;
    size_t n, cap;
    uint64_t events;
} world_colls;

/* Reads rank RANK's into *w unless done already: CLI_OK, or the error reported. */
static int read_world_colls(ph_trace *t, uint32_t rank, world_colls *w)
{
    if (w->read)
        return CLI_OK;
    ph_err err;
    ph_rank_reader *r = ph_rank_open(t, rank, &err);
    if (!r)
        return cli_error("replay", "%s", err.msg);
    ph_event ev;
    int rc;
    while ((rc = ph_rank_next(r, &ev, &err)) > 0) {
        w->events++;
        if (ev.comm != 0 || ph_ops[ev.op].kind != PH_K_COLL)
            continue;
        if (w->n == w->cap) {
            size_t cap = w->cap ? 2 * w->cap : 64;
            uint64_t *v = realloc(w->after, cap * sizeof *v);
            if (!v) {
                ph_rank_close(r);
                return cli_error("replay", "out of memory");
            }
            w->after = v;
            w->cap = cap;
        }
        w->after[w->n++] = ev.seq + 1;
    }
    ph_rank_close(r);
    if (rc < 0)
        return cli_error("replay", "%s", err.msg);
    w->read = 1;
    return CLI_OK;
}

/* How many of w's collectives come before LIMIT: each, and the event after it. */
static uint64_t colls_before(const world_colls *w, uint64_t limit)
{
    uint64_t n = 0;
    while (n < w->n && w->after[n] < limit)
        n++;
    return n;
}

/* Ranks replayed together that each ran to the end of their own stream
 * would leave a partner waiting in a call forever: they stop together,
 * after the last collective on MPI_COMM_WORLD that all of them recorded
 * with its log records.  COVERED: per process, the events its log holds. */
static int stop_together(job *j, const uint64_t *covered, world_colls *colls, uint32_t short_rank)
{
    uint64_t fewest = UINT64_MAX;
    for (uint32_t p = 0; p < j->nprocs; p++) {
        if (read_world_colls(j->t, j->ranks[p], &colls[p]) != CLI_OK)
            return CLI_ERR;
        uint64_t n = colls_before(&colls[p], covered[p]);
        fewest = n < fewest ? n : fewest;
    }
    if (fewest == 0)
        return cli_error("replay", "%s: rank %u's recording ends before the run did, and the ranks replayed "
                                   "together share no collective on MPI_COMM_WORLD that their recordings "
                                   "hold whole, to stop at: replay them with --isolated",
                         j->o->trace, short_rank);
    for (uint32_t p = 0; p < j->nprocs; p++)
        j->stop[p] = colls[p].after[fewest - 1];
    fprintf(stderr, "phantom replay: %s: rank %u's recording ends before the run did: the ranks replayed "
                    "together stop after collective %llu on MPI_COMM_WORLD, the last all of them recorded "
                    "whole\n", j->o->trace, short_rank, (unsigned long long)fewest);
    return CLI_OK;
}

/* A killed job, or one whose recorder stopped, leaves each rank's stream
 * ending at a different call, and its message log sooner.  A rank replayed
 * alone stops where its log does (past it, a receive has no data and a
 * clock read gets the real clock); ranks replayed together stop at a
 * collective (stop_together).  A plan's stops already end them so.  Each
 * rank's stream is read once at most. */
static int incomplete_ends(job *j)
{
    if (j->stops)
        return CLI_OK;
    uint64_t *covered = calloc(j->nprocs, sizeof *covered);
    world_colls *colls = calloc(j->nprocs, sizeof *colls);
    uint32_t short_rank = UINT32_MAX;
    int rc = covered && colls ? CLI_OK : cli_error("replay", "out of memory");
    for (uint32_t p = 0; rc == CLI_OK && p < j->nprocs; p++) {
        covered[p] = UINT64_MAX;
        if (ph_trace_rank_complete(j->t, j->ranks[p]) == 1) /* the check_* pass's, no second read */
            continue;
        /* incomplete (or unreadable: this read says why) */
        if ((rc = read_world_colls(j->t, j->ranks[p], &colls[p])) != CLI_OK)
            break;
        covered[p] = log_covers(j->t, j->ranks[p]);
        if (short_rank == UINT32_MAX)
            short_rank = j->ranks[p];
    }
    if (rc == CLI_OK && short_rank != UINT32_MAX && !j->o->isolated && j->nprocs > 1) {
        rc = stop_together(j, covered, colls, short_rank);
        j->stops = j->cut = rc == CLI_OK;
    }
    for (uint32_t p = 0; rc == CLI_OK && (j->o->isolated || j->nprocs == 1) && p < j->nprocs; p++) {
        uint64_t events = colls[p].events;
        if (covered[p] == UINT64_MAX || covered[p] >= events)
            continue;
        if (covered[p] < 2) {
            rc = cli_error("replay", "%s: rank %u's message log holds no whole event to replay",
                           j->o->trace, j->ranks[p]);
            break;
        }
        j->stop[p] = covered[p] - 1;
        j->stops = j->cut = 1;
        fprintf(stderr, "phantom replay: %s: rank %u's recording ends before the run did, and its message "
                        "log sooner: it stops at event %llu of %llu, where the log does\n", j->o->trace,
                j->ranks[p], (unsigned long long)j->stop[p], (unsigned long long)events);
    }
    for (uint32_t p = 0; colls && p < j->nprocs; p++)
        free(colls[p].after);
    free(covered);
    free(colls);
    return rc;
}

/* ---- directories ---------------------------------------------------------------------- */

static int make_dir(const char *p)
{
    if (mkdir(p, 0755) != 0 && errno != EEXIST)
        return cli_error("replay", "cannot create %s: %s", p, strerror(errno));
    return CLI_OK;
}

/* The list of replays in a result's meta.json (NULL if it has none). */
static json_t *result_replays(const json_t *meta)
{
    return json_object_get(json_object_get(meta, "replay"), "replays");
}

/* A result NAME may gather the replays of several subgroups (one per node,
 * as phantom cluster plans them): the replays already in dir, if any, whose
 * ranks must not overlap this one's. */
static int load_prior(job *j, const char *dir, int which)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/meta.json", dir);
    if (access(dir, F_OK) != 0)
        return CLI_OK;
    json_error_t je;
    json_t *m = json_load_file(path, 0, &je);
    json_t *rp = result_replays(m);
    const char *tr = json_string_value(json_object_get(json_object_get(m, "replay"), "trace"));
    int rc = CLI_OK;
    if (!json_is_array(rp) || !tr)
        rc = cli_error("replay", "%s: exists and is not a replay result (use --force to replace it)", dir);
    else if (strcmp(tr, j->trace_abs) != 0)
        rc = cli_error("replay", "%s: holds a replay of %s (use --force to replace it)", dir, tr);
    size_t i, k;
    json_t *r, *pr;
    json_array_foreach(rc == CLI_OK ? rp : NULL, i, r) {
        json_array_foreach(json_object_get(r, "per_rank"), k, pr) {
            json_int_t rank = json_integer_value(json_object_get(pr, "rank"));
            for (uint32_t p = 0; rc == CLI_OK && p < j->nprocs; p++)
                if (j->ranks[p] == rank)
                    rc = cli_error("replay", "%s: rank %u was replayed already (use --force to start %s "
                                             "afresh, or another --name)", dir, j->ranks[p], dir);
        }
    }
    if (rc == CLI_OK)
        j->prior[which] = m;
    else
        json_decref(m);
    return rc;
}

static int prepare_dirs(job *j)
{
    char host[256] = "localhost", tmp[PATH_MAX + 300];
    gethostname(host, sizeof host - 1);
    const char *name = j->o->name ? j->o->name : strtok(host, ".");
    j->trace_abs = realpath(j->o->trace, NULL);
    if (!j->trace_abs)
        return cli_error("replay", "%s: %s", j->o->trace, strerror(errno));
    if (asprintf(&j->out, "%s/replay/%s", j->trace_abs, name) < 0 ||
        asprintf(&j->out_min, "%s.min", j->out) < 0 ||
        asprintf(&j->runs_dir, "%s/replay/.%s.runs", j->trace_abs, name) < 0)
        return cli_error("replay", "out of memory");
    if (!j->o->force && (load_prior(j, j->out, 0) || load_prior(j, j->out_min, 1)))
        return CLI_ERR;
    if ((j->o->force && (cli_rm_tree(j->out) || cli_rm_tree(j->out_min))) || cli_rm_tree(j->runs_dir))
        return cli_error("replay", "%s: cannot remove the old result: %s", j->out, strerror(errno));
    snprintf(tmp, sizeof tmp, "%s/replay", j->trace_abs);
    if (make_dir(tmp) || make_dir(j->runs_dir))
        return CLI_ERR;
    j->run_dirs = calloc(j->o->repeat, sizeof *j->run_dirs);
    for (uint32_t i = 0; j->run_dirs && i < j->o->repeat; i++)
        if (asprintf(&j->run_dirs[i], "%s/run-%u", j->runs_dir, i + 1) < 0 || make_dir(j->run_dirs[i]))
            return CLI_ERR;
    return j->run_dirs ? CLI_OK : cli_error("replay", "out of memory");
}

/* ---- running the job -------------------------------------------------------------------- */

typedef struct argv_buf {
    char **v;
    size_t n, cap;
} argv_buf;

static int push(argv_buf *a, const char *s)
{
    if (a->n + 2 > a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 32;
        char **v = realloc(a->v, cap * sizeof *v);
        if (!v)
            return -1;
        a->v = v;
        a->cap = cap;
    }
    a->v[a->n] = strdup(s);
    a->v[++a->n] = NULL;
    return a->v[a->n - 1] ? 0 : -1;
}

static void argv_free(argv_buf *a)
{
    for (size_t i = 0; i < a->n; i++)
        free(a->v[i]);
    free(a->v);
}

extern char **environ;

/* What the job preloads of its own, as phantom record keeps it: the
 * launcher options' -x LD_PRELOAD (a value, or mpirun's own), else the
 * user's env list's, else phantom's environment's; a recorder in it left
 * out.  The replay keeps it before the replayer: an allocator preloaded
 * in production changes the computation a replay measures.  Malloc'd. */
static char *user_preload(const job *j)
{
    char *copy = strdup(j->o->launcher), *save = NULL, *from_x = NULL;
    for (char *tok = copy ? strtok_r(copy, " \t", &save) : NULL, *prev = NULL; tok;
         prev = tok, tok = strtok_r(NULL, " \t", &save))
        if (prev && (strcmp(prev, "-x") == 0 || strcmp(prev, "--x") == 0) && strncmp(tok, "LD_PRELOAD", 10) == 0 &&
            (tok[10] == '=' || !tok[10])) {
            free(from_x);
            from_x = strdup(tok[10] ? tok + 11 : getenv("LD_PRELOAD") ? getenv("LD_PRELOAD") : "");
        }
    free(copy);
    const char *value = from_x;
    char *list = j->user_env_list ? strdup(j->user_env_list) : NULL, *sv = NULL;
    for (char *e = list && !value ? strtok_r(list, ";", &sv) : NULL; e; e = strtok_r(NULL, ";", &sv))
        if (strncmp(e, "LD_PRELOAD=", 11) == 0)
            value = e + 11;
    if (!value)
        value = getenv("LD_PRELOAD");
    char *kept = calloc(1, (value ? strlen(value) : 0) + 1), *words = value ? strdup(value) : NULL;
    size_t len = 0;
    for (char *w = kept && words ? strtok_r(words, ": ", &sv) : NULL; w; w = strtok_r(NULL, ": ", &sv))
        if (!strstr(w, "libpmpi-rec"))
            len += (size_t)sprintf(kept + len, "%s%s", len ? ":" : "", w);
    free(words);
    free(list);
    free(from_x);
    return kept;
}

/* The variables the replayer reads (NAME=value) for replay run `run`, then
 * the user's other PHANTOM_* variables by name (PHANTOM_CLOCK, ...). */
static int replay_env(job *j, uint32_t run, argv_buf *env)
{
    char *s = NULL, *stops = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&stops, &len);
    for (uint32_t p = 0; f && p < j->nprocs; p++)
        fprintf(f, "%s%llu", p ? "," : "", (unsigned long long)j->stop[p]);
    if (!f || fclose(f) != 0)
        return -1;
    const char *extra = getenv("PHANTOM_PRELOAD_EXTRA");
    char *user = user_preload(j);
    int rc = !user;
    rc |= asprintf(&s, "LD_PRELOAD=%s%s%s%s%s", extra && *extra ? extra : "", extra && *extra ? ":" : "",
                   user && *user ? user : "", user && *user ? ":" : "", j->lib) < 0 || push(env, s);
    free(s);
    free(user);
    const char *kv[][2] = {{"PHANTOM_REPLAY_TRACE", j->trace_abs}, {"PHANTOM_REPLAY_RANKS", j->o->ranks},
                           {"PHANTOM_REPLAY_MODE", j->o->isolated ? "isolated" : "subgroup"},
                           {"PHANTOM_REPLAY_OUT", j->run_dirs[run]},
                           {"PHANTOM_REPLAY_UNITS", j->o->units ? j->o->units : "auto"},
                           {"PHANTOM_REPLAY_STOP", j->stops ? stops : NULL},
                           {"PHANTOM_REPLAY_STOP_IS_END", j->cut ? "1" : NULL}};
    for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++) {
        if (!kv[i][1])
            continue;
        s = NULL;
        rc |= asprintf(&s, "%s=%s", kv[i][0], kv[i][1]) < 0 || push(env, s);
        free(s);
    }
    for (char **e = environ; *e; e++) {
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)strcspn(*e, "="), *e);
        if (strncmp(name, "PHANTOM_", 8) == 0 && strncmp(name, "PHANTOM_REPLAY_", 15) != 0)
            rc |= push(env, name);
        else if (strcmp(name, "PHANTOM_REPLAY_DEBUG") == 0)
            rc |= push(env, name);
    }
    free(stops);
    return rc ? -1 : 0;
}

static int uses_x(char **v)
{
    for (; *v; v++)
        if (strcmp(*v, "-x") == 0 || strcmp(*v, "--x") == 0)
            return 1;
    return 0;
}

/* LAUNCHER [options] -np K <our variables> PROGRAM ARGS.  Open MPI applies
 * mca_base_env_list to the ranks only; with -x options of the user's it
 * refuses that list, and ours become -x options too. */
static int build_command(job *j, uint32_t run, argv_buf *cmd)
{
    argv_buf env = {0};
    char np[16], *copy = strdup(j->o->launcher), *save = NULL;
    int rc = copy && replay_env(j, run, &env) == 0 ? 0 : -1;
    for (char *tok = copy ? strtok_r(copy, " \t", &save) : NULL; rc == 0 && tok; tok = strtok_r(NULL, " \t", &save))
        rc = push(cmd, tok);
    snprintf(np, sizeof np, "%u", j->nprocs);
    rc |= push(cmd, "-np") | push(cmd, np);
    int semicolon = 0; /* mca_base_env_list has no quoting */
    for (size_t i = 0; i < env.n; i++)
        semicolon |= strchr(env.v[i], ';') != NULL;
    if (rc == 0 && (uses_x(cmd->v) || semicolon)) {
        for (size_t i = 0; rc == 0 && i < env.n; i++)
            rc = push(cmd, "-x") | push(cmd, env.v[i]);
    } else if (rc == 0) { /* the user's own list first, without what ours replaces */
        char *list = NULL, *old = j->user_env_list ? strdup(j->user_env_list) : NULL, *sv = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&list, &len);
        for (char *e = old ? strtok_r(old, ";", &sv) : NULL; f && e; e = strtok_r(NULL, ";", &sv))
            if (strncmp(e, "LD_PRELOAD", 10) != 0 && strncmp(e, "PHANTOM_REPLAY_", 15) != 0)
                fprintf(f, "%s;", e);
        free(old);
        for (size_t i = 0; f && i < env.n; i++)
            fprintf(f, "%s%s", i ? ";" : "", env.v[i]);
        rc = !f || fclose(f) != 0 || setenv(ENV_LIST, list, 1) != 0 ? -1 : 0;
        free(list);
    }
    for (char **a = j->o->prog; rc == 0 && *a; a++)
        rc = push(cmd, *a);
    free(copy);
    argv_free(&env);
    return rc;
}

static pid_t child;
static void on_alarm(int sig)
{
    (void)sig;
    if (child > 0)
        kill(child, SIGTERM);
}

/* The command's exit status, 128+N if signal N killed it, -1 if it could not start. */
static int run_command(char **cmd, uint32_t timeout)
{
    struct sigaction ign = {.sa_handler = SIG_IGN}, old_int, old_quit, alrm = {.sa_handler = on_alarm};
    sigemptyset(&ign.sa_mask);
    sigaction(SIGINT, &ign, &old_int);
    sigaction(SIGQUIT, &ign, &old_quit);
    sigaction(SIGALRM, &alrm, NULL);
    fflush(NULL);
    child = fork();
    if (child == 0) {
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGQUIT, &old_quit, NULL);
        execvp(cmd[0], cmd);
        fprintf(stderr, "phantom replay: cannot run %s: %s\n", cmd[0], strerror(errno));
        _exit(errno == ENOENT ? 127 : 126);
    }
    if (timeout)
        alarm(timeout);
    int status = 0, err = child < 0 ? errno : 0;
    while (child > 0 && waitpid(child, &status, 0) < 0 && !err)
        if (errno != EINTR)
            err = errno;
    alarm(0);
    child = 0;
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    if (err)
        return cli_error("replay", "cannot run %s: %s", cmd[0], strerror(err)), -1;
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

/* A run that exited 0 but where a rank left no times file: the program never
 * reached MPI_Init under the replayer (not an MPI program, or one that
 * exits first).  Said plainly, not as the file the result cannot open. */
static int missing_times(const job *j, uint32_t run, const char *which)
{
    for (uint32_t p = 0; p < j->nprocs; p++) {
        char path[PATH_MAX + 32];
        snprintf(path, sizeof path, "%s/rank-%06u.times", j->run_dirs[run], j->ranks[p]);
        if (access(path, F_OK) != 0)
            return cli_error("replay", "the replay%s exited 0, but rank %u replayed nothing: %s never called "
                             "MPI_Init under the replayer", which, j->ranks[p], j->o->prog[0]);
    }
    return CLI_OK;
}

/* "rank 2: ..." before "rank 10: ..." (GNU's version order) */
static int cmp_str(const void *a, const void *b) { return strverscmp(*(char *const *)a, *(char *const *)b); }

static int is_err_file(const struct dirent *e) { return strncmp(e->d_name, "err-", 4) == 0; }

/* The first line of every err-* file in dir, in name order, into a
 * malloc'd array; their number, or -1. */
static int read_reasons(const char *dir, char ***out)
{
    struct dirent **ents;
    int n = scandir(dir, &ents, is_err_file, alphasort), got = 0;
    char **line = n > 0 ? calloc((size_t)n, sizeof *line) : NULL;
    for (int i = 0; i < n; i++) {
        char path[PATH_MAX + 300], buf[2048];
        snprintf(path, sizeof path, "%s/%s", dir, ents[i]->d_name);
        FILE *f = line ? fopen(path, "r") : NULL;
        if (f && fgets(buf, sizeof buf, f)) {
            buf[strcspn(buf, "\n")] = '\0';
            if ((line[got] = strdup(buf)))
                got++;
        }
        if (f)
            fclose(f);
        free(ents[i]);
    }
    if (n >= 0)
        free(ents);
    *out = line;
    return n > 0 && !line ? -1 : got;
}

/* The replayer's reasons for stopping (err-PID in the run's directory, one
 * line each; doc/replay.md), printed once each, sorted, as the last lines:
 * returns how many.  Past MAX_REASONS different lines, the first in sorted
 * order are printed and the processes that gave the others counted, so that
 * what is printed depends on the reasons, not on process ids. */
#define MAX_REASONS 16
static int print_reasons(const char *run_dir, const char *which)
{
    char **line;
    int n = read_reasons(run_dir, &line), shown = 0, more = 0, printed = 0;
    if (n > 0)
        qsort(line, (size_t)n, sizeof *line, cmp_str);
    for (int i = 0; i < n; i++) {
        if (i == 0 || strcmp(line[i], line[i - 1]) != 0) { /* a new reason */
            printed = shown < MAX_REASONS;
            if (printed) {
                fprintf(stderr, "%s%s\n", line[i], which);
                shown++;
            }
        }
        more += !printed; /* a process whose reason is not printed */
    }
    for (int i = 0; i < n; i++)
        free(line[i]);
    free(line);
    if (more)
        fprintf(stderr, "phantom replay: %d more process%s stopped, for reasons in %s/err-*\n", more,
                more == 1 ? "" : "es", run_dir);
    return shown;
}

static int run_all(job *j)
{
    for (uint32_t i = 0; i < j->o->repeat; i++) {
        argv_buf cmd = {0};
        if (build_command(j, i, &cmd) < 0) {
            argv_free(&cmd);
            return cli_error("replay", "out of memory");
        }
        int st = run_command(cmd.v, j->o->timeout);
        argv_free(&cmd);
        char which[32] = "";
        if (j->o->repeat > 1)
            snprintf(which, sizeof which, " (run %u of %u)", i + 1, j->o->repeat);
        if (st == 126 || st == 127) /* the launcher could not run: it said why */
            return CLI_ERR;
        if (st > 0 && print_reasons(j->run_dirs[i], which) > 0)
            return CLI_ERR;
        if (st > 0)
            return cli_error("replay", "the replay%s exited with status %d%s", which, st,
                             j->o->timeout && st == 128 + SIGTERM ? ": stopped by --timeout" : "");
        if (st < 0)
            return CLI_ERR;
        if (missing_times(j, i, which) != CLI_OK)
            return CLI_ERR;
    }
    return CLI_OK;
}

/* ---- the result -------------------------------------------------------------------------- */

static const char *end_name(int end)
{
    switch (end) {
    case REP_END_FINALIZE: return "complete";
    case REP_END_PARTIAL: return "partial";
    case REP_END_RECORDING: return "end of recording";
    default: return "killed";
    }
}

static json_t *rank_json(const job *j, uint32_t p, const rep_rank_result *r)
{
    uint32_t nruns = j->o->repeat;
    const int64_t *lp = &j->loop[3 * p];
    json_t *runs = json_array(), *loop = j->stop[p] == UINT64_MAX || j->cut ? json_null()
        : json_pack("{s:I, s:I, s:I, s:I}", "start", (json_int_t)lp[0], "period", (json_int_t)lp[1],
                    "iterations_replayed", (json_int_t)j->iter_replayed, "iterations", (json_int_t)lp[2]);
    for (uint32_t i = 0; i < nruns; i++)
        json_array_append_new(runs, json_pack("{s:I, s:I, s:o, s:I}", "computation_ns", (json_int_t)r->run_comp_ns[i],
                                              "wall_ns", (json_int_t)r->run_wall_ns[i], "cpu_busy",
                                              r->run_busy_ppt[i] ? json_real((double)r->run_busy_ppt[i] / 1000)
                                                                 : json_null(),
                                              "replayer_gap_ns", (json_int_t)r->run_probe_ns[i]));
    return json_pack("{s:I, s:I, s:I, s:s, s:s, s:o, s:o, s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:o}", "rank",
                     (json_int_t)r->rank, "events", (json_int_t)r->events, "recorded_events",
                     (json_int_t)r->recorded_events, "end", end_name(r->end), "units",
                     r->cpu_share > 0 ? "cpu" : "wall", "cpu_share",
                     r->cpu_share > 0 ? json_real(r->cpu_share) : json_null(), "cpu_busy",
                     r->busy > 0 ? json_real(r->busy) : json_null(), "shared_cpu", rep_rank_shared_cpu(r),
                     "computation_ns", (json_int_t)r->comp_ns,
                     "computation_min_ns", (json_int_t)r->comp_min_ns,
                     "recorded_computation_ns", (json_int_t)r->recorded_comp_ns,
                     "replayer_gap_ns", (json_int_t)r->probe_ns,
                     "wall_ns", (json_int_t)r->wall_ns, "recorded_wall_ns", (json_int_t)r->recorded_wall_ns,
                     "loop", loop, "runs", runs);
}

/* What a result's meta.json holds beyond ph_writer's: where it comes from
 * and the replays in it, this one last; written by the writer's close, so
 * that the result's earlier meta.json stays whole until all of it is. */
static void replay_meta(job *j, ph_writer *w, const char *stat, const rep_rank_result *res,
                        const json_t *prior)
{
    char host[256] = "?", date[32] = "";
    gethostname(host, sizeof host - 1);
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    json_t *ranks = json_array();
    for (uint32_t p = 0; p < j->nprocs; p++)
        json_array_append_new(ranks, rank_json(j, p, &res[p]));
    json_t *it = j->iter_replayed >= 0 ? json_pack("{s:I, s:I}", "replayed", (json_int_t)j->iter_replayed,
                                                   "total", (json_int_t)j->iter_total)
                                       : json_null();
    json_t *replays = prior ? json_copy(result_replays(prior)) : json_array();
    json_array_append_new(replays, json_pack("{s:s, s:s, s:s, s:I, s:s, s:o, s:o}", "ranks", j->o->ranks,
                                             "mode", j->o->isolated ? "isolated" : "subgroup", "date",
                                             date, "repeat", (json_int_t)j->o->repeat, "statistic",
                                             stat, "iterations", it, "per_rank", ranks));
    ph_writer_meta(w, "host", json_string(host));
    ph_writer_meta(w, "replay", json_pack("{s:s, s:o}", "trace", j->trace_abs, "replays", replays));
}

static char *command_line(char **v)
{
    char *s = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&s, &len);
    for (size_t i = 0; f && v[i]; i++)
        fprintf(f, "%s%s", i ? " " : "", v[i]);
    if (f)
        fclose(f);
    return s;
}

/* A result that could not be made: gone if it was new; else without the
 * ranks this replay added, and with its meta.json as before (prior, written
 * back where this replay's had replaced it already: put_back), so that the
 * earlier replays' result still reads as it did and the replay can be run
 * again. */
static void undo_result(const job *j, const char *dir, json_t *prior, int put_back)
{
    if (!prior) {
        cli_rm_tree(dir);
        return;
    }
    for (uint32_t p = 0; p < j->nprocs; p++) {
        char path[PATH_MAX + 32];
        snprintf(path, sizeof path, "%s/rank-%06u.evt", dir, j->ranks[p]);
        unlink(path);
    }
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/meta.json", dir);
    ph_err err;
    if (put_back && ph_json_save(prior, path, JSON_INDENT(2), &err) < 0)
        cli_error("replay", "%s", err.msg);
}

/* Each result's meta.json is replaced last, by its writer's close: the
 * median's first, so that when the minimum's then fails the median's is
 * put back as it was (j->prior[0]). */
static int combine(job *j, rep_rank_result *res)
{
    ph_err err;
    char *cmd = command_line(j->o->prog);
    ph_writer *med = rep_result_writer(j->t, j->out, cmd, &err), *min = NULL;
    if (med && j->o->repeat > 1)
        min = rep_result_writer(j->t, j->out_min, cmd, &err);
    free(cmd);
    int rc = !med || (j->o->repeat > 1 && !min) ? -1 : 0;
    for (uint32_t p = 0; rc == 0 && p < j->nprocs; p++)
        rc = rep_result_rank(j->t, j->ranks[p], j->run_dirs, (int)j->o->repeat, med, min, &res[p], &err);
    if (rc == 0) {
        replay_meta(j, med, min ? "median" : "single run", res, j->prior[0]);
        if (min)
            replay_meta(j, min, "minimum", res, j->prior[1]);
    }
    int med_done = 0;
    if (rc < 0) {
        ph_writer_abort(med);
        ph_writer_abort(min);
    } else if (ph_writer_close(med, &err) < 0) {
        ph_writer_abort(min);
        rc = -1;
    } else {
        med_done = 1;
        rc = min ? ph_writer_close(min, &err) : 0;
    }
    if (rc < 0) {
        undo_result(j, j->out, j->prior[0], med_done);
        if (j->o->repeat > 1)
            undo_result(j, j->out_min, j->prior[1], 0);
    }
    return rc < 0 ? cli_error("replay", "%s", err.msg) : CLI_OK;
}

static double ms(uint64_t ns) { return (double)ns / 1e6; }

/* One line for the ranks that shared their cores: their computation is
 * longer by the turns they waited, and predictions made with it are too. */
static void busy_warning(const rep_rank_result *res, uint32_t n)
{
    int k = 0;
    for (uint32_t p = 0; p < n; p++) {
        if (!rep_rank_shared_cpu(&res[p]))
            continue;
        fprintf(stderr, k++ ? ", rank %u %.0f%%" : "phantom replay: warning: rank %u had its CPU %.0f%% of the time",
                res[p].rank, 100 * res[p].busy);
    }
    if (!k)
        return;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    char why[96] = "other work shared this node";
    if (cores > 0 && n > (uint32_t)cores)
        snprintf(why, sizeof why, "the replay ran %u ranks on %ld cores", n, cores);
    fprintf(stderr, " (median of the runs; alone on a core, a rank has it nearly all the time, spinning in "
                    "its MPI calls): %s, and the computation measured includes the turns it waited; "
                    "replay on an idle node, a rank per core\n", why);
}

static void summary(const job *j, const rep_rank_result *res)
{
    fprintf(stderr, "phantom replay: %s: %u rank%s (%s), %u run%s%s\n", j->out, j->nprocs,
            j->nprocs == 1 ? "" : "s", j->o->isolated ? "isolated" : "subgroup", j->o->repeat,
            j->o->repeat == 1 ? "" : "s", j->o->repeat > 1 ? ": per-unit median; minimum in NAME.min" : "");
    fprintf(stderr, "  %6s %21s %14s %14s %7s %12s %12s\n", "rank", "events", "comp (ms)",
            "recorded (ms)", "ratio", "wall (ms)", "recorded (ms)");
    for (uint32_t p = 0; p < j->nprocs; p++) {
        const rep_rank_result *r = &res[p];
        char ev[48];
        snprintf(ev, sizeof ev, "%llu/%llu", (unsigned long long)r->events,
                 (unsigned long long)r->recorded_events);
        fprintf(stderr, "  %6u %21s %14.3f %14.3f %7.3f %12.3f %12.3f%s%s\n", r->rank, ev,
                ms(r->comp_ns), ms(r->recorded_comp_ns),
                r->recorded_comp_ns ? (double)r->comp_ns / (double)r->recorded_comp_ns : 0.0,
                ms(r->wall_ns), ms(r->recorded_wall_ns), r->end == REP_END_FINALIZE ? "" : "  ",
                r->end == REP_END_FINALIZE ? "" : end_name(r->end));
    }
    uint64_t lo = UINT64_MAX, hi = 0;
    for (uint32_t p = 0; p < j->nprocs; p++) {
        lo = res[p].probe_ns < lo ? res[p].probe_ns : lo;
        hi = res[p].probe_ns > hi ? res[p].probe_ns : hi;
    }
    if (hi > lo)
        fprintf(stderr, "  taken off each unit: the replayer's own part of a gap, %llu-%llu ns\n",
                (unsigned long long)lo, (unsigned long long)hi);
    else if (j->nprocs)
        fprintf(stderr, "  taken off each unit: the replayer's own part of a gap, %llu ns\n", (unsigned long long)lo);
    if (j->iter_replayed >= 0)
        fprintf(stderr, "  partial replay: %lld of %lld iterations\n", (long long)j->iter_replayed,
                (long long)j->iter_total);
    const char *why = j->o->units && !strcmp(j->o->units, "cpu") ? "--units cpu" : "a CPU quota";
    int cpu = 0;
    for (uint32_t p = 0; p < j->nprocs; p++)
        if (res[p].cpu_share > 0 && !cpu++)
            fprintf(stderr, "  units: CPU time over each rank's share of the CPU (%s): rank %u %.1f%%", why,
                    res[p].rank, 100 * res[p].cpu_share);
        else if (res[p].cpu_share > 0)
            fprintf(stderr, ", rank %u %.1f%%", res[p].rank, 100 * res[p].cpu_share);
    if (cpu)
        fputc('\n', stderr);
    busy_warning(res, j->nprocs);
}

static void job_free(job *j)
{
    for (uint32_t i = 0; j->run_dirs && i < j->o->repeat; i++)
        free(j->run_dirs[i]);
    free(j->run_dirs);
    free(j->ranks);
    free(j->stop);
    free(j->loop);
    free(j->lib);
    free(j->trace_abs);
    free(j->out);
    free(j->out_min);
    free(j->runs_dir);
    json_decref(j->prior[0]);
    json_decref(j->prior[1]);
    ph_trace_close(j->t);
}

static int run(int argc, char **argv)
{
    ropts o = {.repeat = 1};
    int rc = parse(argc, argv, &o);
    if (rc != CLI_OK)
        return rc < 0 ? CLI_OK : rc; /* -1: --help */
    const char *env_launcher = getenv("PHANTOM_LAUNCHER");
    if (!o.launcher)
        o.launcher = env_launcher && *env_launcher ? env_launcher : "mpirun";
    job j = {.o = &o, .iter_replayed = -1, .iter_total = -1};
    char *user_list = getenv(ENV_LIST) ? strdup(getenv(ENV_LIST)) : NULL;
    j.user_env_list = user_list;
    ph_err err;
    j.t = ph_trace_open(o.trace, &err);
    if (!j.t)
        rc = cli_error("replay", "%s", err.msg);
    if (rc == CLI_OK)
        rc = check_log(&j);
    if (rc == CLI_OK)
        rc = list_ranks(&j);
    if (rc == CLI_OK)
        rc = check_one_sided(&j);
    if (rc == CLI_OK)
        rc = check_spawn(&j);
    if (rc == CLI_OK)
        warn_file_reads(&j);
    if (rc == CLI_OK && o.plan)
        rc = plan_stops(&j);
    if (rc == CLI_OK)
        rc = recorded_partial(&j);
    if (rc == CLI_OK)
        rc = incomplete_ends(&j);
    if (rc == CLI_OK && !(j.lib = cli_find_program("replay", "PHANTOM_REPLAY_PRELOAD",
                                                   "replay/.libs/libpmpi-replay.so",
                                                   PKGLIBDIR "/libpmpi-replay.so")))
        rc = CLI_ERR;
    if (rc == CLI_OK)
        rc = prepare_dirs(&j);
    if (rc == CLI_OK)
        rc = run_all(&j);
    rep_rank_result *res = rc == CLI_OK ? calloc(j.nprocs, sizeof *res) : NULL;
    if (rc == CLI_OK)
        rc = res ? combine(&j, res) : cli_error("replay", "out of memory");
    if (rc == CLI_OK) {
        summary(&j, res);
        if (!o.keep_runs)
            cli_rm_tree(j.runs_dir);
    }
    for (uint32_t p = 0; res && p < j.nprocs; p++)
        free(res[p].run_comp_ns);
    free(res);
    job_free(&j);
    free(user_list);
    return rc;
}

const ph_verb cmd_replay = {"replay", "rerun ranks of a recorded run from its message log, timing them",
                            usage, run};
