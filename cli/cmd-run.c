/* cmd-run.c - `phantom run -o STUDY -- COMMAND`: PHANTOM's whole chain on
 * this node, the target node (doc/study-format.md).
 *
 * The verb is a driver: each step is another phantom verb, run as a child
 * process of this same binary, with its output in its own place in the study
 * directory.  A step whose output is present and newer than its inputs is
 * not run again, so that a rerun with another platform only simulates.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <jansson.h>
#include <limits.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "phantom.h"
#include "simmpi.h"

extern char **environ;

static const char usage[] =
    "usage: phantom run -o STUDY [options] -- COMMAND...\n"
    "\n"
    "Answer \"how long will COMMAND take on platform P with N nodes?\" with\n"
    "PHANTOM's whole chain, on this node, which stands for one node of the\n"
    "target: (1) record COMMAND's communication, (2) group its ranks and plan\n"
    "the replay (phantom cluster), (3) record again with the message log the\n"
    "plan needs, (4) replay the representatives' node-sized subgroups here\n"
    "(phantom replay), (5) predict the run time on every platform and node\n"
    "count (phantom predict), with computation and network twice as fast as\n"
    "what-ifs, and (6) write the report (phantom report).\n"
    "\n"
    "Every step's output stays in STUDY (doc/study-format.md) and is reused\n"
    "while it is newer than its inputs: rerun with other platforms or node\n"
    "counts and only steps 5 and 6 run again.  What a step prints (the\n"
    "application's output too) goes to STUDY/logs/step-N.log; a step that\n"
    "fails shows the end of its log.\n"
    "\n"
    "COMMAND is how the job is started, e.g. `mpirun -np 16 ./lu.B.16`; a\n"
    "replay starts the same program with the same launcher options, with as\n"
    "many processes as it replays ranks.\n"
    "\n"
    "options:\n"
    "  -o, --output STUDY     the study directory (required)\n"
    "  --platforms LIST       platform files, directories of *.conf files or names\n"
    "                         of bundled platforms (ib-qdr), comma-separated\n"
    "                         (default: the bundled platforms)\n"
    "  --nodes LIST           node counts to predict, e.g. 1,2,4,8 (default: powers\n"
    "                         of two up to one rank per node)\n"
    "  --ppn N                ranks per node here, the size of a replayed subgroup\n"
    "                         (default: this node's cores)\n"
    "  -t, --threshold X      phantom cluster's threshold (default 5%)\n"
    "  -k, --groups K         phantom cluster: exactly K groups instead\n"
    "  --name NAME            name of the replayed vectors (default target)\n"
    "  --repeat N             replay each subgroup N times and take each unit's\n"
    "                         median (default 1; for a node that is not quiet)\n"
    "  --one-recording        record once, with the whole message log, instead of\n"
    "                         steps 1 and 3 (taken by itself when the job's second\n"
    "                         run makes other calls than its first)\n"
    "  --report FILE          the report's HTML (default STUDY/report.html)\n"
    "  --force                redo every step\n"
    "  -h, --help             show this help\n";

typedef struct ropts {
    const char *study, *platforms, *threshold, *k, *name, *report;
    uint32_t ppn, repeat;
    uint32_t nodev[64]; /* --nodes */
    int nnodes, force, one;
    char **cmd; /* COMMAND, NULL-terminated */
    int ncmd;
} ropts;

/* A study's paths and what the job's command is made of. */
typedef struct study {
    const ropts *o;
    char *dir, *json, *trace, *trace_meta, *plan, *log, *log_meta, *replay, *replay_meta;
    char *self; /* this phantom's binary (NULL if unknown): a prediction older than it is made again */
    char **launcher, **program; /* NULL-terminated views into o->cmd (launcher copied) */
    json_t *platforms; /* the platform files */
    int nlauncher;
    uint32_t nranks;
    int redo; /* an earlier step ran: every later step runs too */
    int single; /* one recording with the whole log: log.trace is trace */
    uint32_t made; /* predictions made (not up to date) so far */
    unsigned logged; /* steps whose log this process has started */
} study;

enum { NSTEPS = 6 };

/* ---- options ---------------------------------------------------------------------- */

/* --nodes: node counts, like 1,2,4; -1 after a usage error. */
static int parse_nodes(const char *list, uint32_t *out, int cap)
{
    int n = 0;
    char *copy = strdup(list), *save = NULL;
    for (char *it = strtok_r(copy, ",", &save); copy && it; it = strtok_r(NULL, ",", &save)) {
        if (n == cap || cli_parse_u32(it, 1, 1u << 24, &out[n]) < 0) {
            free(copy);
            return cli_usage_error("run", "--nodes: '%s' is not a list of node counts like 1,2,4", list), -1;
        }
        n++;
    }
    free(copy);
    return n ? n : (cli_usage_error("run", "--nodes: '%s' is not a list of node counts like 1,2,4", list), -1);
}

static int parse_args(int argc, char **argv, ropts *o)
{
    static const struct option lo[] = {
        {"output", required_argument, NULL, 'o'},  {"platforms", required_argument, NULL, 'P'},
        {"nodes", required_argument, NULL, 'N'},   {"ppn", required_argument, NULL, 'p'},
        {"threshold", required_argument, NULL, 't'}, {"groups", required_argument, NULL, 'k'},
        {"name", required_argument, NULL, 'n'},    {"report", required_argument, NULL, 'r'},
        {"repeat", required_argument, NULL, 'R'},  {"one-recording", no_argument, NULL, '1'},
        {"force", no_argument, NULL, 'f'},         {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    int c;
    while ((c = cli_getopt("run", argc, argv, "+:o:t:k:h", lo)) != -1) {
        switch (c) {
        case 'o': o->study = optarg; break;
        case 'P': o->platforms = optarg; break;
        case 'N':
            if ((o->nnodes = parse_nodes(optarg, o->nodev, 64)) < 0)
                return CLI_USAGE;
            break;
        case 'p':
            if (cli_u32_option("run", "--ppn", optarg, 1, 1u << 20, &o->ppn) != CLI_OK)
                return CLI_USAGE;
            break;
        case 't': o->threshold = optarg; break;
        case 'k': o->k = optarg; break;
        case 'n': o->name = optarg; break;
        case 'R':
            if (cli_u32_option("run", "--repeat", optarg, 1, 1000, &o->repeat) != CLI_OK)
                return CLI_USAGE;
            break;
        case 'r': o->report = optarg; break;
        case 'f': o->force = 1; break;
        case '1': o->one = 1; break;
        case 'h': return cli_help(&cmd_run) == CLI_OK ? -2 : CLI_ERR;
        default: return CLI_USAGE;
        }
    }
    if (!o->study)
        return cli_usage_error("run", "no study directory given (-o STUDY)");
    if (optind >= argc)
        return cli_usage_error("run", "no command given (phantom run -o STUDY -- mpirun -np N ./app)");
    if (o->threshold && o->k)
        return cli_usage_error("run", "give --threshold or -k, not both");
    if (o->name && (!*o->name || strchr(o->name, '/')))
        return cli_usage_error("run", "--name: '%s' is not a name", o->name);
    o->cmd = argv + optind;
    o->ncmd = argc - optind;
    return CLI_OK;
}

/* ---- the command: launcher, options, program --------------------------------------- */

static int is_launcher(const char *arg0)
{
    const char *b = strrchr(arg0, '/');
    b = b ? b + 1 : arg0;
    return !strcmp(b, "mpirun") || !strcmp(b, "mpiexec") || !strcmp(b, "orterun");
}

/* Open MPI launcher options that take a value (two for the MCA ones). */
static int option_values(const char *a)
{
    static const char *const one[] = {
        "-x", "-H", "--host", "-host", "--hostfile", "-hostfile", "--machinefile",
        "-machinefile", "--map-by", "-map-by", "--rank-by", "-rank-by", "--bind-to",
        "-bind-to", "--npernode", "-npernode", "-N", "--npersocket", "-npersocket",
        "--wdir", "-wdir", "--wd", "-wd", "--prefix", "-prefix", "--output-filename",
        "-output-filename", "--tune", "-tune", "-am", "--am", "--rankfile", "-rankfile",
        "--path", "-path", "--preload-files", "-s", "--cpus-per-proc", "--cpus-per-rank",
        "--report-bindings-to", "--timeout", "--app", "--merge-stderr-to-stdout-to", NULL};
    if (!strcmp(a, "--mca") || !strcmp(a, "-mca") || !strcmp(a, "--gmca") || !strcmp(a, "-gmca"))
        return 2;
    for (int i = 0; one[i]; i++)
        if (!strcmp(a, one[i]))
            return 1;
    return 0;
}

static int is_np(const char *a)
{
    return !strcmp(a, "-np") || !strcmp(a, "--np") || !strcmp(a, "-n") || !strcmp(a, "-c") ||
           !strcmp(a, "--n");
}

/* launcher = the launcher and its options without -np N; program = the rest.
 * Without a launcher (a singleton run) the replay uses its default one. */
static int split_command(study *s)
{
    char **cmd = s->o->cmd;
    int n = s->o->ncmd, i = 0;
    s->launcher = calloc((size_t)n + 1, sizeof *s->launcher);
    if (!s->launcher)
        return cli_error("run", "out of memory");
    if (is_launcher(cmd[0])) {
        s->launcher[s->nlauncher++] = cmd[i++];
        while (i < n && cmd[i][0] == '-') {
            int skip = is_np(cmd[i]) ? 1 : 0, vals = skip ? 1 : option_values(cmd[i]);
            if (i + vals >= n)
                return cli_usage_error("run", "%s: option '%s' needs a value and a program follows", cmd[0], cmd[i]);
            for (int k = 0; k <= vals; k++, i++)
                if (!skip)
                    s->launcher[s->nlauncher++] = cmd[i];
        }
        if (i >= n)
            return cli_usage_error("run", "%s: no program in the command", cmd[0]);
    }
    for (int k = 0; k < s->nlauncher; k++)
        if (strpbrk(s->launcher[k], " \t"))
            return cli_usage_error("run", "launcher option '%s' has a blank, which a replay's "
                                   "--launcher cannot carry", s->launcher[k]);
    s->program = cmd + i;
    return CLI_OK;
}

/* ---- files ---------------------------------------------------------------------------- */

static char *path_of(const char *dir, const char *rel)
{
    char *p = NULL;
    if (asprintf(&p, "%s/%s", dir, rel) < 0)
        return NULL;
    return p;
}

/* Is out there and no older than each input (NULL-terminated)? */
static int up_to_date(const char *out, ...)
{
    long long t = cli_mtime_ns(out);
    if (t < 0)
        return 0;
    va_list ap;
    va_start(ap, out);
    const char *in;
    int ok = 1;
    while (ok && (in = va_arg(ap, const char *)))
        ok = cli_mtime_ns(in) <= t;
    va_end(ap);
    return ok;
}

static int study_paths(study *s)
{
    const char *name = s->o->name ? s->o->name : "target";
    s->dir = strdup(s->o->study);
    s->json = path_of(s->dir, "study.json");
    s->trace = path_of(s->dir, "trace");
    s->trace_meta = path_of(s->dir, "trace/meta.json");
    s->plan = path_of(s->dir, "trace/groups.json");
    s->log = path_of(s->dir, "log.trace");
    s->log_meta = path_of(s->dir, "log.trace/meta.json");
    char rel[300];
    snprintf(rel, sizeof rel, "log.trace/replay/%s", name);
    s->replay = path_of(s->dir, rel);
    s->replay_meta = path_of(s->replay, "meta.json");
    /* The model is phantom's own: after an upgrade (or a rebuild) the
     * predictions are the new simulator's, not kept from the old one.  The
     * record, the plan and the replays are measurements and stay. */
    s->self = realpath("/proc/self/exe", NULL);
    if (!s->dir || !s->json || !s->trace || !s->trace_meta || !s->plan || !s->log ||
        !s->log_meta || !s->replay || !s->replay_meta)
        return cli_error("run", "out of memory");
    if (mkdir(s->dir, 0777) < 0 && errno != EEXIST)
        return cli_error("run", "%s: cannot create: %s", s->dir, strerror(errno));
    return CLI_OK;
}

/* One recording: the message log and the replays are the trace's. */
static int use_single(study *s)
{
    char rel[300];
    snprintf(rel, sizeof rel, "trace/replay/%s", s->o->name);
    free(s->log), free(s->log_meta), free(s->replay), free(s->replay_meta);
    s->single = 1;
    s->log = path_of(s->dir, "trace");
    s->log_meta = path_of(s->dir, "trace/meta.json");
    s->replay = path_of(s->dir, rel);
    s->replay_meta = s->replay ? path_of(s->replay, "meta.json") : NULL;
    if (!s->log || !s->log_meta || !s->replay || !s->replay_meta)
        return cli_error("run", "out of memory");
    return CLI_OK;
}

static void study_free(study *s)
{
    char *p[] = {s->dir, s->json, s->trace, s->trace_meta, s->plan, s->log, s->log_meta,
                 s->replay, s->replay_meta, s->self};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++)
        free(p[i]);
    free(s->launcher);
    json_decref(s->platforms);
}

/* ---- running a verb -------------------------------------------------------------------- */

/* Runs `phantom ARGV...` (this binary): stdout to out_path, else to log;
 * stderr to log (NULL: both ours).  Returns its exit status, or -1 after an
 * error line. */
static int run_verb(char *const *argv, const char *out_path, const char *log)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return cli_error("run", "cannot find this phantom's binary: %s", strerror(errno)), -1;
    exe[n] = 0;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (log)
        posix_spawn_file_actions_addopen(&fa, 2, log, O_WRONLY | O_CREAT | O_APPEND, 0666);
    if (out_path)
        posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    else if (log)
        posix_spawn_file_actions_adddup2(&fa, 2, 1);
    fflush(stdout);
    fflush(stderr);
    pid_t pid;
    int rc = posix_spawn(&pid, exe, &fa, NULL, argv, environ), st = 0;
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return cli_error("run", "%s: %s", exe, strerror(rc)), -1;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The last lines of a failed step's log, so that the reason is on screen. */
static void show_tail(const char *log)
{
    enum { LINES = 15 };
    FILE *f = log ? fopen(log, "r") : NULL;
    char *ring[LINES] = {0}, *line = NULL;
    size_t cap = 0, k = 0;
    while (f && getline(&line, &cap, f) > 0) {
        free(ring[k % LINES]);
        ring[k++ % LINES] = strdup(line);
    }
    for (size_t i = k > LINES ? k - LINES : 0; i < k; i++)
        fprintf(stderr, "  | %s", ring[i % LINES] ? ring[i % LINES] : "\n");
    for (size_t i = 0; i < LINES; i++)
        free(ring[i]);
    free(line);
    if (f)
        fclose(f);
}

/* The log's warnings, as they are. */
static void show_warnings(const char *log)
{
    FILE *f = log ? fopen(log, "r") : NULL;
    char *line = NULL;
    size_t cap = 0;
    while (f && getline(&line, &cap, f) > 0)
        if (strstr(line, ": warning: "))
            fputs(line, stderr);
    free(line);
    if (f)
        fclose(f);
}

/* A growing argument vector; numbers formatted for it are kept in own. */
typedef struct args {
    char **v, **own;
    int n, nown, oom;
} args;

static void add(args *a, const char *s)
{
    char **v = a->oom ? NULL : realloc(a->v, ((size_t)a->n + 2) * sizeof *v);
    if (!v) {
        a->oom = 1;
        return;
    }
    a->v = v;
    a->v[a->n++] = (char *)s;
    a->v[a->n] = NULL;
}

static void addf(args *a, const char *fmt, const char *sv, uint32_t uv)
{
    char *s = NULL, **own = realloc(a->own, ((size_t)a->nown + 1) * sizeof *own);
    if (own)
        a->own = own;
    if (!own || asprintf(&s, fmt, sv ? sv : "", uv) < 0) {
        a->oom = 1;
        return;
    }
    a->own[a->nown++] = s;
    add(a, s);
}

static void args_free(args *a)
{
    for (int i = 0; i < a->nown; i++)
        free(a->own[i]);
    free(a->own);
    free(a->v);
    *a = (args){0};
}

static void step_line(int k, const char *what, const char *state)
{
    fprintf(stderr, "phantom run: step %d/%d, %s%s\n", k, NSTEPS, what, state);
}

/* STUDY/logs/step-K.log, emptied when step K first runs in this process. */
static char *log_path(study *s, int k)
{
    char rel[32];
    snprintf(rel, sizeof rel, "logs/step-%d.log", k);
    char *dir = path_of(s->dir, "logs"), *log = path_of(s->dir, rel);
    if (dir)
        mkdir(dir, 0777);
    free(dir);
    FILE *f = log && !(s->logged & 1u << k) ? fopen(log, "w") : NULL;
    if (f)
        fclose(f);
    s->logged |= 1u << k;
    return log;
}

/* Runs step k and says so, its output to its log (step 6, the report, to
 * ours); CLI_OK, or CLI_ERR naming the step after the end of its log. */
static int run_step(study *s, int k, const char *what, args *a, const char *out_path)
{
    if (a->oom)
        return cli_error("run", "out of memory");
    char *log = k < NSTEPS ? log_path(s, k) : NULL;
    step_line(k, what, "");
    int rc = run_verb(a->v, out_path, log);
    if (rc == 0 && k == 4)
        show_warnings(log); /* the replay's are about the computation it measured: not for the log alone */
    if (rc != 0) {
        show_tail(log);
        cli_error("run", "step %d (%s) failed%s%s; the steps before it are kept, and phantom run "
                  "again starts from this one", k, what, log ? ", see " : "", log ? log : "");
    }
    free(log);
    if (rc != 0)
        return CLI_ERR;
    s->redo = 1;
    return CLI_OK;
}

/* ---- study.json ------------------------------------------------------------------------- */

static json_t *strings(char *const *v)
{
    json_t *a = json_array();
    for (; a && v && *v; v++)
        json_array_append_new(a, json_string(*v));
    return a;
}

static json_t *opt_string(const char *s) { return s ? json_string(s) : json_null(); }

/* Writes study.json (predictions and skipped may be NULL: not made yet). */
static int write_study(const study *s, json_t *predictions, json_t *skipped)
{
    char host[256] = "?";
    gethostname(host, sizeof host - 1);
    json_t *cmd = strings(s->o->cmd);
    json_t *doc = json_pack(
        "{s:s, s:s, s:o, s:o, s:o, s:I, s:s, s:I, s:{s:o, s:o}, s:s, s:I, s:b, s:s, s:s, s:s, s:s}",
        "format", "phantom-study", "version", "1.0", "command", cmd, "launcher",
        strings(s->launcher), "program", strings(s->program), "ranks", (json_int_t)s->nranks,
        "host", host, "ppn", (json_int_t)s->o->ppn, "cluster", "k", opt_string(s->o->k),
        "threshold", opt_string(s->o->threshold), "replay_name", s->o->name, "repeat", (json_int_t)s->o->repeat, "one_recording", s->single,
        "trace", "trace", "plan", "trace/groups.json", "log", s->single ? "trace" : "log.trace", "replay",
        s->replay + strlen(s->dir) + 1);
    if (doc && predictions)
        json_object_set(doc, "predictions", predictions);
    if (doc && skipped)
        json_object_set(doc, "skipped", skipped);
    ph_err err;
    int rc = !doc ? cli_error("run", "%s: cannot write: out of memory", s->json)
             : ph_json_save(doc, s->json, JSON_INDENT(2) | JSON_PRESERVE_ORDER, &err) < 0
                 ? cli_error("run", "%s", err.msg)
                 : CLI_OK;
    json_decref(doc);
    return rc;
}

/* The study.json of an earlier run, if any, must be of this command. */
static int check_old_study(const study *s, json_t **old)
{
    ph_err err;
    int exists = cli_mtime_ns(s->json) >= 0;
    *old = exists ? ph_json_load(s->json, &err) : NULL;
    if (exists && !*old)
        return cli_error("run", "%s (remove it, or use --force)", err.msg);
    json_t *was = json_object_get(*old, "command"), *now = strings(s->o->cmd);
    int same = !*old || json_equal(was, now);
    json_decref(now);
    if (same || s->o->force)
        return CLI_OK;
    char line[1024] = "";
    size_t i;
    json_t *w;
    json_array_foreach(was, i, w) {
        size_t len = strlen(line);
        snprintf(line + len, sizeof line - len, "%s%s", i ? " " : "", json_string_value(w));
    }
    return cli_error("run", "%s: this study is of another command (%s); use another -o, or --force",
                     s->dir, line);
}

/* ---- steps 1 to 4: record, cluster, record the log, replay ------------------------------ */

/* What the chain asks of a trace's meta.json, read once: has the recording
 * run to its end, does it hold the whole message log (what one recording
 * needs), its ranks (-1 when not said). */
typedef struct trace_facts {
    int finished, whole_log;
    json_int_t ranks;
} trace_facts;

static trace_facts facts_of(const char *meta)
{
    json_error_t je;
    json_t *m = json_load_file(meta, 0, &je), *mode = json_object_get(m, "mode");
    json_t *r = json_object_get(m, "ranks");
    trace_facts f = {
        .finished = json_is_true(json_object_get(m, "finished")),
        .whole_log = json_is_true(json_object_get(mode, "log")) &&
                     json_is_null(json_object_get(mode, "log_ranks")) && !json_object_get(m, "partial"),
        .ranks = json_is_integer(r) ? json_integer_value(r) : -1};
    json_decref(m);
    return f;
}

/* Did two recordings make the same calls, rank by rank?  Traces from before
 * meta.json listed each rank's events are compared by their totals. */
static int same_calls(const char *meta_a, const char *meta_b, json_int_t *total_a, json_int_t *total_b)
{
    json_error_t je;
    json_t *a = json_load_file(meta_a, 0, &je), *b = json_load_file(meta_b, 0, &je);
    json_t *ea = json_object_get(a, "events"), *eb = json_object_get(b, "events");
    json_t *ra = json_object_get(a, "rank_events"), *rb = json_object_get(b, "rank_events");
    *total_a = json_is_integer(ea) ? json_integer_value(ea) : -1;
    *total_b = json_is_integer(eb) ? json_integer_value(eb) : -1;
    int same = *total_a == *total_b && (!ra || !rb || json_equal(ra, rb));
    json_decref(a);
    json_decref(b);
    return same;
}

static int step_record(study *s, int fresh)
{
    trace_facts f = facts_of(s->trace_meta);
    if (fresh && !s->o->force && up_to_date(s->trace_meta, NULL) && f.finished && (!s->single || f.whole_log)) {
        step_line(1, "record", ": up to date");
        return CLI_OK;
    }
    args a = {0};
    add(&a, "phantom"), add(&a, "record"), add(&a, "--force"), add(&a, "-o"), add(&a, s->trace);
    if (s->single)
        add(&a, "--log");
    add(&a, "--");
    for (int i = 0; i < s->o->ncmd; i++)
        add(&a, s->o->cmd[i]);
    int rc = run_step(s, 1, "record", &a, NULL);
    args_free(&a);
    return rc;
}

static int load_nranks(study *s)
{
    json_int_t n = facts_of(s->trace_meta).ranks;
    if (n <= 0 || n > (1 << 24))
        return cli_error("run", "%s: no rank count (rerun step 1 with --force)", s->trace_meta);
    s->nranks = (uint32_t)n;
    return CLI_OK;
}

static int same_setting(json_t *old, const char *key, const char *now)
{
    json_t *v = json_object_get(json_object_get(old, "cluster"), key);
    return now ? json_is_string(v) && !strcmp(json_string_value(v), now) : !v || json_is_null(v);
}

static int step_cluster(study *s, json_t *old)
{
    int same = json_integer_value(json_object_get(old, "ppn")) == (json_int_t)s->o->ppn &&
               same_setting(old, "k", s->o->k) && same_setting(old, "threshold", s->o->threshold);
    if (!s->redo && same && up_to_date(s->plan, s->trace_meta, NULL)) {
        step_line(2, "cluster", ": up to date");
        return CLI_OK;
    }
    args a = {0};
    add(&a, "phantom"), add(&a, "cluster"), add(&a, s->trace), add(&a, "--ppn");
    addf(&a, "%s%u", NULL, s->o->ppn);
    if (s->o->k)
        add(&a, "-k"), add(&a, s->o->k);
    if (s->o->threshold)
        add(&a, "--threshold"), add(&a, s->o->threshold);
    int rc = run_step(s, 2, "cluster", &a, NULL);
    args_free(&a);
    return rc;
}

/* The plan's replay runs: their ranks, and the most iterations one replays
 * (-1: one replays the whole run). */
static json_t *plan_runs(const study *s, int64_t *most)
{
    json_error_t je;
    json_t *plan = json_load_file(s->plan, 0, &je), *runs = json_object_get(plan, "runs");
    size_t i;
    json_t *r;
    *most = 0;
    json_array_foreach(runs, i, r) {
        json_t *it = json_object_get(r, "replay_iterations");
        if (!json_is_string(json_object_get(r, "ranks")))
            runs = NULL;
        else if (!json_is_integer(it))
            *most = -1;
        else if (*most >= 0 && json_integer_value(it) > *most)
            *most = json_integer_value(it);
    }
    if (!json_array_size(runs)) {
        cli_error("run", "%s: no replay runs in the plan (rerun step 2 with --force)", s->plan);
        runs = NULL;
    }
    json_incref(runs);
    json_decref(plan);
    return runs;
}

/* One run: a subgroup log of exactly its ranks.  More: the whole log, cut
 * at the most iterations any run replays (each replay stops at its own). */
static int step_log(study *s, json_t *runs, int64_t most)
{
    if (s->single) {
        step_line(3, "record the message log", ": in the trace (one recording)");
        return CLI_OK;
    }
    if (!s->redo && up_to_date(s->log_meta, s->plan, NULL) && facts_of(s->log_meta).finished) {
        step_line(3, "record the message log", ": up to date");
        return CLI_OK;
    }
    args a = {0};
    add(&a, "phantom"), add(&a, "record"), add(&a, "--force"), add(&a, "--log"), add(&a, "-o");
    add(&a, s->log);
    if (json_array_size(runs) == 1)
        add(&a, "--log-ranks"), add(&a, json_string_value(json_object_get(json_array_get(runs, 0), "ranks")));
    if (json_array_size(runs) == 1 || most >= 0)
        add(&a, "--plan"), add(&a, s->plan);
    if (json_array_size(runs) > 1 && most >= 0)
        add(&a, "--iterations"), addf(&a, "%s%u", NULL, (uint32_t)most);
    add(&a, "--");
    for (int i = 0; i < s->o->ncmd; i++)
        add(&a, s->o->cmd[i]);
    int rc = run_step(s, 3, "record the message log", &a, NULL);
    args_free(&a);
    return rc;
}

/* "mpirun --oversubscribe --mca btl tcp,self": the launcher a replay uses. */
static char *launcher_line(const study *s)
{
    size_t len = 1;
    for (int i = 0; i < s->nlauncher; i++)
        len += strlen(s->launcher[i]) + 1;
    char *l = calloc(len, 1);
    for (int i = 0; l && i < s->nlauncher; i++)
        strcat(strcat(l, i ? " " : ""), s->launcher[i]);
    return l;
}

/* Has the replay every rank of every run (an interrupted step has not)? */
static int replay_covers(const study *s, json_t *runs)
{
    json_error_t je;
    json_t *m = json_load_file(s->replay_meta, 0, &je), *one, *pr, *r;
    uint8_t *have = calloc(s->nranks, 1), *want = calloc(s->nranks, 1);
    size_t i, k;
    ph_err err;
    int ok = m && have && want;
    json_array_foreach(json_object_get(json_object_get(m, "replay"), "replays"), i, one) {
        json_array_foreach(json_object_get(one, "per_rank"), k, pr) {
            json_int_t rank = json_integer_value(json_object_get(pr, "rank"));
            if (ok && rank >= 0 && rank < (json_int_t)s->nranks)
                have[rank] = 1;
        }
    }
    json_array_foreach(runs, i, r) {
        ok = ok && ph_parse_ranks(json_string_value(json_object_get(r, "ranks")), s->nranks, want, &err) == 0;
        for (uint32_t x = 0; ok && x < s->nranks; x++)
            ok = !want[x] || have[x];
    }
    free(have);
    free(want);
    json_decref(m);
    return ok;
}

static int step_replay(study *s, json_t *runs, json_t *old)
{
    json_int_t was = json_integer_value(json_object_get(old, "repeat"));
    int same = (was ? was : 1) == (json_int_t)s->o->repeat;
    if (!s->redo && same && up_to_date(s->replay_meta, s->log_meta, s->plan, NULL) &&
        replay_covers(s, runs)) {
        step_line(4, "replay", ": up to date");
        return CLI_OK;
    }
    char *launcher = launcher_line(s);
    int rc = launcher ? CLI_OK : cli_error("run", "out of memory");
    size_t i;
    json_t *r;
    json_array_foreach(runs, i, r) {
        if (rc != CLI_OK)
            break;
        args a = {0};
        char what[96];
        const char *ranks = json_string_value(json_object_get(r, "ranks"));
        add(&a, "phantom"), add(&a, "replay"), add(&a, s->log), add(&a, "--ranks"), add(&a, ranks);
        add(&a, "--plan"), add(&a, s->plan), add(&a, "--name"), add(&a, s->o->name);
        add(&a, "--repeat"), addf(&a, "%s%u", NULL, s->o->repeat);
        if (s->nlauncher)
            add(&a, "--launcher"), add(&a, launcher);
        if (i == 0)
            add(&a, "--force"); /* a fresh set of vectors */
        add(&a, "--");
        for (char **p = s->program; *p; p++)
            add(&a, *p);
        snprintf(what, sizeof what, "replay ranks %.40s (run %zu of %zu)", ranks, i + 1, json_array_size(runs));
        rc = run_step(s, 4, what, &a, NULL);
        args_free(&a);
    }
    free(launcher);
    return rc;
}

/* ---- step 5: predict -------------------------------------------------------------------- */

/* Platform files: each item of the list is a file, or a directory whose
 * *.conf files are taken in name order. */
static int add_platforms(const char *item, json_t *files)
{
    struct stat st;
    char named[PATH_MAX]; /* item, or the bundled platform it names */
    if (cli_platform_file("run", "--platforms", item, named, sizeof named) != CLI_OK)
        return CLI_ERR;
    item = named;
    if (stat(item, &st) < 0)
        return cli_error("run", "--platforms: %s: %s", item, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return json_array_append_new(files, json_string(item)), CLI_OK;
    struct dirent **ents;
    int n = scandir(item, &ents, NULL, alphasort);
    if (n < 0)
        return cli_error("run", "--platforms: %s: %s", item, strerror(errno));
    size_t before = json_array_size(files);
    for (int i = 0; i < n; i++) {
        size_t len = strlen(ents[i]->d_name);
        char *p;
        if (len > 5 && !strcmp(ents[i]->d_name + len - 5, ".conf") &&
            asprintf(&p, "%s/%s", item, ents[i]->d_name) >= 0)
            json_array_append_new(files, json_string(p)), free(p);
        free(ents[i]);
    }
    free(ents);
    if (json_array_size(files) == before)
        return cli_error("run", "--platforms: %s: no *.conf platform files", item);
    return CLI_OK;
}

static const char *default_platforms(void)
{
    const char *env = getenv("PHANTOM_PLATFORMS");
    if (env && *env)
        return env;
    return cli_bundled_platforms();
}

/* Every file must read as a platform before the job is run. */
static int check_platforms(json_t *files)
{
    size_t i;
    json_t *f;
    simmpi_platform p;
    ph_err err;
    json_array_foreach(files, i, f) {
        if (simmpi_platform_load(json_string_value(f), &p, &err) < 0)
            return cli_error("run", "%s", err.msg);
        if (p.network_defaults)
            cli_warn("run", "%s " SIMMPI_NETWORK_DEFAULTS_WARNING, json_string_value(f));
    }
    return CLI_OK;
}

static json_t *platform_files(const ropts *o)
{
    char *list = strdup(o->platforms ? o->platforms : default_platforms()), *save = NULL;
    json_t *files = json_array();
    int rc = list && files && *list ? CLI_OK : cli_error("run", "no platforms: give --platforms");
    for (char *it = strtok_r(list, ",", &save); rc == CLI_OK && it; it = strtok_r(NULL, ",", &save))
        rc = add_platforms(it, files);
    free(list);
    if (rc == CLI_OK)
        rc = check_platforms(files);
    if (rc != CLI_OK)
        json_decref(files), files = NULL;
    return files;
}

/* --nodes, or 1, 2, 4 ... up to one rank per node. */
static int node_counts(const study *s, uint32_t *out, int cap)
{
    int n = 0;
    if (s->o->nnodes) {
        memcpy(out, s->o->nodev, (size_t)s->o->nnodes * sizeof *out);
        return s->o->nnodes;
    }
    for (uint32_t k = 1; k <= s->nranks && n < cap; k *= 2)
        out[n++] = k;
    return n;
}

/* One prediction; fills *entry for study.json, or leaves it NULL on error. */
static int predict_one(study *s, const char *pf, const char *base, uint32_t nodes, uint32_t ppn,
                       int variant, json_t **entry)
{
    static const char *const suffix[] = {"", "-comp0.5", "-net0.5"};
    static const char *const knob[] = {NULL, "comp=0.5", "net=0.5"};
    char rel[512], *out = NULL, *tmp = NULL;
    snprintf(rel, sizeof rel, "predict/%s-%un%s.json", base, nodes, suffix[variant]);
    if (!(out = path_of(s->dir, rel)) || asprintf(&tmp, "%s.tmp", out) < 0)
        return free(out), cli_error("run", "out of memory");
    int rc = CLI_OK;
    if (s->redo || !up_to_date(out, s->replay_meta, s->plan, s->trace_meta, pf, s->self /* may end the list */, NULL)) {
        args a = {0};
        char what[300];
        add(&a, "phantom"), add(&a, "predict"), add(&a, s->trace), add(&a, "--platform"), add(&a, pf);
        add(&a, "--ppn"), addf(&a, "%s%u", NULL, ppn), add(&a, "--groups"), add(&a, s->plan);
        add(&a, "--comp"), add(&a, s->replay), add(&a, "--json"), add(&a, "--no-progress");
        if (knob[variant])
            add(&a, "--what-if"), add(&a, knob[variant]);
        snprintf(what, sizeof what, "predict %s on %u node%s%s%s", base, nodes, nodes == 1 ? "" : "s",
                 knob[variant] ? ", " : "", knob[variant] ? knob[variant] : "");
        rc = a.oom ? cli_error("run", "out of memory") : CLI_OK;
        s->made++;
        char *log = log_path(s, 5);
        if (rc == CLI_OK && run_verb(a.v, tmp, log) != 0) {
            show_tail(log);
            rc = cli_error("run", "step 5 (%s) failed, see %s", what, log ? log : "above");
        } else if (rc == CLI_OK && rename(tmp, out) < 0) {
            rc = cli_error("run", "%s: %s", out, strerror(errno));
        }
        free(log);
        unlink(tmp);
        args_free(&a);
    }
    ph_err err;
    json_t *p = rc == CLI_OK ? ph_json_load(out, &err) : NULL;
    if (rc == CLI_OK && !p)
        rc = cli_error("run", "%s", err.msg);
    if (p)
        *entry = json_pack("{s:O, s:s, s:I, s:I, s:{s:f, s:f}, s:s}", "platform",
                           json_object_get(p, "platform"), "platform_file", pf, "nodes",
                           (json_int_t)nodes, "ppn", (json_int_t)ppn, "what_if", "comp",
                           variant == 1 ? 0.5 : 1.0, "net", variant == 2 ? 0.5 : 1.0, "file", rel);
    json_decref(p);
    free(out);
    free(tmp);
    return rc;
}

static json_t *skip_entry(const char *base, uint32_t nodes, const char *fmt, uint32_t a, uint32_t b)
{
    char why[200];
    snprintf(why, sizeof why, fmt, a, b);
    return json_pack("{s:s, s:I, s:s}", "platform", base, "nodes", (json_int_t)nodes, "reason", why);
}

/* Every platform at every node count where the ranks fit, three ways. */
static int predict_platform(study *s, const char *pf, const uint32_t *nodes, int nn, json_t *preds,
                            json_t *skipped)
{
    simmpi_platform p;
    ph_err err;
    if (simmpi_platform_load(pf, &p, &err) < 0)
        return cli_error("run", "%s", err.msg);
    char base[256];
    const char *b = strrchr(pf, '/');
    snprintf(base, sizeof base, "%s", b ? b + 1 : pf);
    base[strcspn(base, ".")] = 0;
    int rc = CLI_OK;
    uint32_t made = s->made, before = (uint32_t)json_array_size(preds);
    for (int i = 0; rc == CLI_OK && i < nn; i++) {
        uint32_t ppn = (s->nranks + nodes[i] - 1) / nodes[i];
        if (nodes[i] > s->nranks) {
            json_array_append_new(skipped, skip_entry(base, nodes[i], "more nodes than the %u ranks%.0u",
                                                      s->nranks, 0));
            continue;
        }
        if (ppn > p.cores_per_node) {
            json_array_append_new(skipped, skip_entry(base, nodes[i], "%u ranks per node; it has %u cores",
                                                      ppn, p.cores_per_node));
            continue;
        }
        for (int v = 0; rc == CLI_OK && v < 3; v++) {
            json_t *e = NULL;
            rc = predict_one(s, pf, base, nodes[i], ppn, v, &e);
            if (e)
                json_array_append_new(preds, e);
        }
    }
    char what[400];
    uint32_t n = (uint32_t)json_array_size(preds) - before;
    snprintf(what, sizeof what, "predict %s: %u predictions, %u made, %u up to date", base, n,
             s->made - made, n - (s->made - made));
    if (rc == CLI_OK)
        step_line(5, what, "");
    return rc;
}

static int step_predict(study *s)
{
    uint32_t nodes[64];
    int nn = node_counts(s, nodes, 64);
    json_t *files = s->platforms;
    json_t *preds = json_array(), *skipped = json_array();
    char *dir = path_of(s->dir, "predict");
    int rc = preds && skipped && dir ? CLI_OK : cli_error("run", "out of memory");
    if (rc == CLI_OK && mkdir(dir, 0777) < 0 && errno != EEXIST)
        rc = cli_error("run", "%s: cannot create: %s", dir, strerror(errno));
    size_t i;
    json_t *f;
    json_array_foreach(files, i, f) {
        if (rc == CLI_OK)
            rc = predict_platform(s, json_string_value(f), nodes, nn, preds, skipped);
    }
    if (rc == CLI_OK && !json_array_size(preds))
        rc = cli_error("run", "no platform can hold the %u ranks at the node counts asked for "
                       "(see --nodes and the platforms' cores_per_node)", s->nranks);
    if (rc == CLI_OK)
        rc = write_study(s, preds, skipped);
    json_decref(preds), json_decref(skipped);
    free(dir);
    return rc;
}

/* ---- step 6 and the driver ------------------------------------------------------------------ */

static int step_report(study *s)
{
    args a = {0};
    add(&a, "phantom"), add(&a, "report"), add(&a, s->dir);
    if (s->o->report)
        add(&a, "-o"), add(&a, s->o->report);
    int rc = run_step(s, 6, "report", &a, NULL);
    args_free(&a);
    return rc;
}

/* Steps 1 to 3; *runs: the plan's replay runs. */
static int record_and_plan(study *s, json_t *old, json_t **runs)
{
    int64_t most = 0;
    int rc = step_record(s, old != NULL); /* with a study.json, a trace there is of this command */
    if (rc == CLI_OK)
        rc = load_nranks(s);
    if (rc == CLI_OK && (!old || s->redo))
        rc = write_study(s, NULL, NULL);
    if (rc == CLI_OK)
        rc = step_cluster(s, old);
    if (rc == CLI_OK && s->redo) /* the settings the plan was made with, whatever fails next */
        rc = write_study(s, NULL, NULL);
    json_decref(*runs);
    if (rc == CLI_OK && !(*runs = plan_runs(s, &most)))
        rc = CLI_ERR;
    if (rc == CLI_OK)
        rc = step_log(s, *runs, most);
    return rc;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

/* A job whose second run makes other calls than its first (polling loops,
 * decisions on the clock) cannot be replayed from one recording and
 * predicted from the other: record it once more, with the whole log. */
static int check_same_job(study *s, json_t *old, json_t **runs)
{
    if (s->single)
        return CLI_OK;
    json_int_t a, b; /* per rank too: two ranks' changes can cancel out in the totals */
    if (same_calls(s->trace_meta, s->log_meta, &a, &b))
        return CLI_OK;
    if (a == b)
        fprintf(stderr, "phantom run: the job's two runs made %lld MPI calls each, but not the same on every rank: ",
                (long long)a);
    else
        fprintf(stderr, "phantom run: the job's second run made %lld MPI calls, its first %lld: ", (long long)b,
                (long long)a);
    fputs("its calls change from run to run; recording it once, with the whole message log (--one-recording)\n",
          stderr);
    if (nftw(s->log, remove_one, 16, FTW_DEPTH | FTW_PHYS) != 0) /* its log is of no use now */
        cli_warn("run", "%s: cannot remove: %s", s->log, strerror(errno));
    int rc = use_single(s);
    s->redo = 1;
    return rc == CLI_OK ? record_and_plan(s, old, runs) : rc;
}

static int chain(study *s)
{
    json_t *old = NULL, *runs = NULL;
    int rc = check_old_study(s, &old);
    if (rc == CLI_OK && (s->o->one || (!s->o->force && json_is_true(json_object_get(old, "one_recording")))))
        rc = use_single(s);
    if (rc == CLI_OK)
        rc = record_and_plan(s, old, &runs);
    if (rc == CLI_OK)
        rc = check_same_job(s, old, &runs);
    if (rc == CLI_OK)
        rc = step_replay(s, runs, old);
    if (rc == CLI_OK)
        rc = step_predict(s);
    if (rc == CLI_OK)
        rc = step_report(s);
    json_decref(runs);
    json_decref(old);
    return rc;
}

static int run(int argc, char **argv)
{
    ropts o = {.name = "target", .repeat = 1};
    int rc = parse_args(argc, argv, &o);
    if (rc != CLI_OK)
        return rc == -2 ? CLI_OK : rc;
    if (!o.ppn) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        o.ppn = c > 0 ? (uint32_t)c : 1;
    }
    study s = {.o = &o};
    rc = split_command(&s);
    if (rc == CLI_OK && !(s.platforms = platform_files(&o)))
        rc = CLI_ERR;
    if (rc == CLI_OK)
        rc = study_paths(&s);
    if (rc == CLI_OK)
        rc = chain(&s);
    study_free(&s);
    return rc;
}

const ph_verb cmd_run = {"run", "the whole chain: record, cluster, replay here, predict, report",
                         usage, run};
