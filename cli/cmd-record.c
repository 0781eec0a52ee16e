/* cmd-record.c - `phantom record -- COMMAND...`: run an MPI job under the
 * recorder, then finish the trace.
 *
 * The recorder (libpmpi-rec.so) is configured only through the environment
 * (PHANTOM_*).  It must be preloaded into the MPI ranks but not into mpirun:
 * for an Open MPI launcher, LD_PRELOAD goes to the ranks alone through
 * OMPI_MCA_mca_base_env_list ("VAR=value;VAR2"), which mpirun applies to the
 * processes it starts, on every node; the PHANTOM_* variables are forwarded
 * the same way (by name, so their values need no quoting).  mpirun refuses
 * that variable together with -x options, so a command line that uses -x
 * gets ours as -x options instead.  Any other command (a singleton MPI
 * program, srun, a script) gets LD_PRELOAD directly.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "phantom.h"

#ifndef PKGLIBDIR /* set by Makefile.am to the installed libpmpi-rec.so's directory */
#define PKGLIBDIR "/usr/local/lib/phantom"
#endif
#define MAX_DEPTH 8 /* REC_MAX_DEPTH in libpmpi-rec/rec.h */
#define ENV_LIST "OMPI_MCA_mca_base_env_list"
#define LOG_UNTIL ".log-until" /* with --plan: where each rank's log stops */

extern char **environ;

static const char usage[] =
    "usage: phantom record [-o DIR] [--log] [--log-ranks SPEC] [--plan FILE [--iterations R]]\n"
    "                      [--depth N] [--force] [--] COMMAND...\n"
    "\n"
    "Run COMMAND (usually `mpirun -np N ./app`) with the phantom recorder preloaded\n"
    "into every MPI rank, then build the trace tables (phantom finish).  Exits with\n"
    "COMMAND's exit status (128+N if it was killed by signal N).\n"
    "\n"
    "options:\n"
    "  -o, --output DIR     trace directory (default: ./phantom.trace)\n"
    "  --log                also log the content of every received message, for\n"
    "                       replaying ranks on their own\n"
    "  --log-ranks SPEC     log only what enters these world ranks, e.g. 0-3,8 (implies --log)\n"
    "  --plan FILE          groups.json of phantom cluster for this job: log only the\n"
    "                       first iterations of each logged rank's loop, as many as the\n"
    "                       plan's run of these ranks replays (the events stay whole)\n"
    "  --iterations R       with --plan: log R iterations instead\n"
    "  --depth N            call-site stack depth, 1 to 8 (default 2)\n"
    "  --force              overwrite an existing trace in DIR, and its groups and replays\n"
    "  -h, --help           show this help\n"
    "\n"
    "environment:\n"
    "  PHANTOM_PRELOAD      path of libpmpi-rec.so to use\n"
    "  PHANTOM_PRELOAD_EXTRA  libraries to preload before it (e.g. the ASan runtime)\n"
    "  PHANTOM_*            every PHANTOM_ variable is passed on to the ranks\n";

typedef struct opts {
    const char *dir; /* as given, for messages */
    int log, force;
    const char *log_ranks, *plan;
    uint32_t depth, iterations;
    int have_iterations;
    json_t *partial; /* with --plan: meta.json's "partial" */
    uint32_t plan_ranks;
} opts;

/* ---- the recorder library ---------------------------------------------------------- */

/* PHANTOM_PRELOAD, then the build tree next to this binary, then the install. */
static char *find_preload(void)
{
    return cli_find_program("record", "PHANTOM_PRELOAD", "libpmpi-rec/.libs/libpmpi-rec.so",
                            PKGLIBDIR "/libpmpi-rec.so");
}

/* ---- the trace directory ------------------------------------------------------------- */

static char *absolute(const char *dir)
{
    if (dir[0] == '/')
        return strdup(dir);
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
        return NULL;
    size_t n = strlen(cwd) + strlen(dir) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", cwd, strncmp(dir, "./", 2) == 0 ? dir + 2 : dir);
    return p;
}

static int is_trace_file(const char *name)
{
    size_t n = strlen(name);
    if (strcmp(name, "meta.json") == 0 || strncmp(name, ".meta.json", 10) == 0 ||
        strcmp(name, LOG_UNTIL) == 0)
        return 1;
    return strncmp(name, "rank-", 5) == 0 && n > 4 &&
           (strcmp(name + n - 4, ".evt") == 0 || strcmp(name + n - 4, ".log") == 0);
}

/* Refuses a non-empty DIR unless --force, which removes an old trace's files
 * and what phantom cluster (groups.json) and phantom replay (replay/) made
 * from them: kept, they would pass for the new trace's, with the same ranks
 * and another run's measurements. */
static int clear_dir(const opts *o, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return errno == ENOENT ? CLI_OK : cli_error("record", "%s: %s", o->dir, strerror(errno));
    int rc = CLI_OK;
    for (struct dirent *e; rc == CLI_OK && (e = readdir(d));) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (!o->force) {
            rc = cli_error("record", "%s: already exists (use --force to overwrite)", o->dir);
            continue;
        }
        int gone = 0;
        if (is_trace_file(e->d_name) || strcmp(e->d_name, "groups.json") == 0)
            gone = unlinkat(dirfd(d), e->d_name, 0) == 0;
        else if (strcmp(e->d_name, "replay") == 0) {
            char p[PATH_MAX];
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            gone = cli_rm_tree(p) == 0;
        } else
            continue;
        if (!gone)
            rc = cli_error("record", "%s/%s: cannot remove: %s", o->dir, e->d_name, strerror(errno));
    }
    closedir(d);
    return rc;
}

static int make_dir(const opts *o, const char *dir)
{
    char *p = strdup(dir);
    if (!p)
        return cli_error("record", "out of memory");
    int rc = CLI_OK;
    for (char *s = strchr(p + 1, '/'); s && rc == CLI_OK; s = strchr(s + 1, '/')) {
        *s = 0;
        if (mkdir(p, 0755) != 0 && errno != EEXIST)
            rc = cli_error("record", "cannot create %s: %s", p, strerror(errno));
        *s = '/';
    }
    if (rc == CLI_OK && mkdir(dir, 0755) != 0 && errno != EEXIST)
        rc = cli_error("record", "cannot create %s: %s", o->dir, strerror(errno));
    free(p);
    return rc;
}

/* ---- --plan: the message log of the first R iterations only --------------------------- */

/* The plan's number of ranks, which the job must have. */
static int plan_nranks(const char *path, uint32_t *n)
{
    ph_err err;
    json_t *p = ph_json_load(path, &err);
    if (!p)
        return cli_error("record", "%s", err.msg);
    size_t k = json_array_size(json_object_get(p, "rank_group"));
    json_decref(p);
    if (k == 0 || k > UINT32_MAX)
        return cli_error("record", "%s: not a plan of phantom cluster (no rank_group)", path);
    *n = (uint32_t)k;
    return CLI_OK;
}

/* DIR/.log-until, one "RANK EVENT" line per rank whose log stops early (the
 * recorder's PHANTOM_LOG_UNTIL), and meta.json's "partial" key saying so. */
static int write_log_until(opts *o, const char *path, const plan_loop *loops, uint32_t n, int64_t r,
                           int64_t total)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return cli_error("record", "%s: %s", path, strerror(errno));
    json_t *ranks = json_array();
    for (uint32_t k = 0; k < n; k++)
        if (loops[k].stop != UINT64_MAX) {
            fprintf(f, "%u %llu\n", k, (unsigned long long)loops[k].stop);
            json_array_append_new(ranks, json_pack("{s:I, s:I, s:I, s:I, s:I}", "rank", (json_int_t)k,
                                                   "stop", (json_int_t)loops[k].stop, "start",
                                                   (json_int_t)loops[k].start, "period",
                                                   (json_int_t)loops[k].period, "iterations",
                                                   (json_int_t)loops[k].iterations));
        }
    o->partial = json_pack("{s:{s:I, s:I, s:b, s:o}}", "partial", "iterations", (json_int_t)r,
                           "total_iterations", (json_int_t)total, "log_only", 1, "ranks", ranks);
    if (fclose(f) != 0 || !o->partial)
        return cli_error("record", "%s: cannot write: %s", path, strerror(errno));
    return CLI_OK;
}

static int plan_log(opts *o, const char *absdir)
{
    uint32_t n = 0;
    int rc = plan_nranks(o->plan, &n);
    if (rc != CLI_OK)
        return rc;
    o->plan_ranks = n;
    uint8_t *in = malloc(n);
    plan_loop *loops = calloc(n, sizeof *loops);
    char all[32], path[PATH_MAX];
    snprintf(all, sizeof all, "0-%u", n - 1);
    ph_err err;
    int64_t r = -1, total = -1;
    if (!in || !loops)
        rc = cli_error("record", "out of memory");
    else if (!o->log_ranks)
        memset(in, 1, n);
    else if (ph_parse_ranks(o->log_ranks, n, in, &err) < 0)
        rc = cli_usage_error("record", "--log-ranks: %s (the plan is for %u ranks)", err.msg, n);
    if (rc == CLI_OK)
        rc = cli_plan_loops("record", o->plan, n, in, o->log_ranks ? o->log_ranks : all,
                            o->have_iterations ? (int64_t)o->iterations : -1, loops, &r, &total);
    snprintf(path, sizeof path, "%s/" LOG_UNTIL, absdir);
    if (rc == CLI_OK && r < 0)
        cli_warn("record", "%s: these ranks are replayed whole: the log is not cut", o->plan);
    else if (rc == CLI_OK && (rc = write_log_until(o, path, loops, n, r, total)) == CLI_OK)
        setenv("PHANTOM_LOG_UNTIL", path, 1);
    free(in);
    free(loops);
    return rc;
}

/* ---- the environment of the ranks ---------------------------------------------------- */

/* Open MPI's launchers, also under Debian's alternatives names (mpirun.openmpi). */
static int is_ompi_launcher(const char *cmd)
{
    static const char *const names[] = {"mpirun", "mpiexec", "orterun"};
    const char *b = strrchr(cmd, '/');
    b = b ? b + 1 : cmd;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t n = strlen(names[i]);
        if (strncmp(b, names[i], n) == 0 && (b[n] == 0 || strcmp(b + n, ".openmpi") == 0))
            return 1;
    }
    return 0;
}

/* Existing preloads stay, ours comes last (once). */
static char *append_preload(const char *old, const char *lib)
{
    char *s = NULL;
    if (!old || !*old)
        return strdup(lib);
    if (strstr(old, lib))
        return strdup(old);
    return asprintf(&s, "%s:%s", old, lib) < 0 ? NULL : s;
}

static int is_entry(const char *entry, const char *name)
{
    size_t n = strlen(name);
    return strncmp(entry, name, n) == 0 && (entry[n] == 0 || entry[n] == '=');
}

/* An entry of the user's env list that ours replace: LD_PRELOAD, and the
 * PHANTOM_* variables we forward from the environment anyway. */
static int replaced(const char *entry)
{
    if (is_entry(entry, "LD_PRELOAD"))
        return 1;
    if (strncmp(entry, "PHANTOM_", 8) != 0)
        return 0;
    char name[256];
    snprintf(name, sizeof name, "%.*s", (int)strcspn(entry, "="), entry);
    return getenv(name) != NULL;
}

/* The user's env list without the entries ours replace, then LD_PRELOAD for
 * the ranks and every PHANTOM_* variable by name. */
static char *env_list(const char *old, const char *preload)
{
    char *buf = NULL, *copy = old ? strdup(old) : NULL, *save = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) {
        free(copy);
        return NULL;
    }
    for (char *tok = copy ? strtok_r(copy, ";", &save) : NULL; tok; tok = strtok_r(NULL, ";", &save))
        if (!replaced(tok))
            fprintf(f, "%s;", tok);
    fprintf(f, "LD_PRELOAD=%s", preload);
    for (char **e = environ; *e; e++)
        if (strncmp(*e, "PHANTOM_", 8) == 0)
            fprintf(f, ";%.*s", (int)strcspn(*e, "="), *e);
    free(copy);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* The preload an existing env list gave the ranks ("LD_PRELOAD=x"), else ours inherit. */
static const char *old_rank_preload(const char *old, char *buf, size_t cap)
{
    const char *p = old;
    while (p && *p) {
        size_t n = strcspn(p, ";");
        if (strncmp(p, "LD_PRELOAD=", 11) == 0 && n > 11) {
            snprintf(buf, cap, "%.*s", (int)(n - 11), p + 11);
            return buf;
        }
        p += n + (p[n] == ';');
    }
    return getenv("LD_PRELOAD");
}

/* The command line to execute, and the strings we added to it. */
typedef struct launch {
    char **argv;
    int own_argv; /* argv is ours (with -x), not the user's */
    char **added; /* with -x: the "NAME=value"/"NAME" after each inserted "-x" */
    size_t nadded;
} launch;

static int is_x(const char *arg)
{
    return strcmp(arg, "-x") == 0 || strcmp(arg, "--x") == 0;
}

static int uses_x(char **cmd)
{
    for (char **a = cmd + 1; *a; a++)
        if (is_x(*a))
            return 1;
    return 0;
}

/* The user's own "-x LD_PRELOAD=value" (or "-x LD_PRELOAD", mpirun's own
 * value) as "LD_PRELOAD=[extra:]value:lib": a later -x wins, and ours alone
 * would have been dropped, recording nothing.  EXTRA (a sanitizer's
 * runtime) must load first. */
static char *merged_preload_arg(const char *arg, const char *extra, const char *lib)
{
    const char *eq = strchr(arg, '=');
    char *merged = append_preload(eq ? eq + 1 : getenv("LD_PRELOAD"), lib), *s = NULL;
    if (merged && asprintf(&s, "LD_PRELOAD=%s%s%s", extra ? extra : "", extra ? ":" : "", merged) < 0)
        s = NULL;
    free(merged);
    return s;
}

/* cmd with "-x LD_PRELOAD=... -x PHANTOM_..." after the launcher's name,
 * and the recorder (after EXTRA) added to the user's own -x LD_PRELOAD. */
static int add_x_options(launch *l, char **cmd, const char *preload, const char *extra, const char *lib)
{
    size_t n = 1, m = 0;
    for (char **e = environ; *e; e++)
        n += strncmp(*e, "PHANTOM_", 8) == 0;
    while (cmd[m])
        m++;
    for (size_t i = 2; i < m; i++)
        n += is_x(cmd[i - 1]) && is_entry(cmd[i], "LD_PRELOAD");
    l->argv = calloc(m + 2 * n + 1, sizeof *l->argv);
    l->own_argv = 1;
    l->added = calloc(n, sizeof *l->added);
    if (!l->argv || !l->added || asprintf(&l->added[0], "LD_PRELOAD=%s", preload) < 0)
        return -1;
    l->nadded = 1;
    for (char **e = environ; *e && l->nadded < n; e++)
        if (strncmp(*e, "PHANTOM_", 8) == 0 && (l->added[l->nadded] = strndup(*e, strcspn(*e, "="))))
            l->nadded++;
    static char dash_x[] = "-x"; /* argv is char **: no string literal in it */
    size_t k = 0;
    l->argv[k++] = cmd[0];
    for (size_t i = 0; i < l->nadded; i++) {
        l->argv[k++] = dash_x;
        l->argv[k++] = l->added[i];
    }
    for (size_t i = 1; i < m; i++) {
        l->argv[k++] = cmd[i];
        if (i > 1 && is_x(cmd[i - 1]) && is_entry(cmd[i], "LD_PRELOAD")) {
            if (!(l->added[l->nadded] = merged_preload_arg(cmd[i], extra, lib)))
                return -1;
            l->argv[k - 1] = l->added[l->nadded++];
        }
    }
    return 0;
}

static void launch_free(launch *l)
{
    for (size_t i = 0; i < l->nadded; i++)
        free(l->added[i]);
    free(l->added);
    if (l->own_argv)
        free(l->argv);
}

/* LD_PRELOAD for the ranks: directly, through the env list, or with -x
 * (Open MPI refuses a command that mixes -x with mca_base_env_list). */
static int set_preload(const char *lib, char **cmd, launch *l)
{
    char prev[PATH_MAX * 2];
    const char *old_list = getenv(ENV_LIST);
    int launcher = is_ompi_launcher(cmd[0]), by_x = launcher && !old_list && uses_x(cmd);
    /* what must load before the recorder, e.g. the ASan runtime for a sanitized build */
    const char *extra = getenv("PHANTOM_PRELOAD_EXTRA");
    char *ours = NULL;
    if (asprintf(&ours, "%s%s%s", extra && *extra ? extra : "", extra && *extra ? ":" : "", lib) < 0)
        return cli_error("record", "out of memory");
    char *preload = append_preload(launcher ? old_rank_preload(old_list, prev, sizeof prev)
                                            : getenv("LD_PRELOAD"), ours);
    free(ours);
    int rc = CLI_OK;
    l->argv = cmd;
    if (!preload)
        return cli_error("record", "out of memory");
    if (!launcher) {
        setenv("LD_PRELOAD", preload, 1);
    } else if (by_x) {
        if (add_x_options(l, cmd, preload, extra && *extra ? extra : NULL, lib) < 0)
            rc = cli_error("record", "out of memory");
    } else if (strchr(preload, ';')) { /* the env list has no quoting */
        rc = cli_error("record", "LD_PRELOAD=%s: a ';' cannot be passed through " ENV_LIST, preload);
    } else {
        char *list = env_list(old_list, preload);
        if (!list)
            rc = cli_error("record", "out of memory");
        else
            setenv(ENV_LIST, list, 1);
        free(list);
    }
    free(preload);
    return rc;
}

static char *join_args(char **argv)
{
    size_t n = 1;
    for (char **a = argv; *a; a++)
        n += strlen(*a) + 1;
    char *s = malloc(n), *p = s;
    for (char **a = argv; s && *a; a++)
        p += sprintf(p, "%s%s", a == argv ? "" : " ", *a);
    if (s)
        *p = 0;
    return s;
}

static int set_env(const opts *o, const char *absdir, const char *lib, char **cmd, launch *l)
{
    char depth[16], *joined = join_args(cmd);
    if (!joined)
        return cli_error("record", "out of memory");
    setenv("PHANTOM_TRACE_DIR", absdir, 1);
    setenv("PHANTOM_COMMAND", joined, 1);
    free(joined);
    if (o->log || o->log_ranks)
        setenv("PHANTOM_LOG", "1", 1);
    if (o->log_ranks)
        setenv("PHANTOM_LOG_RANKS", o->log_ranks, 1);
    if (o->depth) {
        snprintf(depth, sizeof depth, "%u", o->depth);
        setenv("PHANTOM_CALLSITE_DEPTH", depth, 1);
    }
    return set_preload(lib, cmd, l); /* last: it forwards the PHANTOM_* above */
}

/* ---- running the command ------------------------------------------------------------------ */

/* COMMAND's exit status, 128+N when signal N killed it, -1 if it could not start. */
static int run_command(char **cmd)
{
    /* Like time(1): ^C and ^\ reach the job (same process group) and we stay
     * to finish its trace.  Ignored before the fork so no ^C slips in between;
     * the child gets the dispositions back before exec. */
    struct sigaction ign = {.sa_handler = SIG_IGN}, old_int, old_quit;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGINT, &ign, &old_int);
    sigaction(SIGQUIT, &ign, &old_quit);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGQUIT, &old_quit, NULL);
        execvp(cmd[0], cmd);
        int e = errno;
        fprintf(stderr, "phantom record: cannot run %s: %s\n", cmd[0], strerror(e));
        _exit(e == ENOENT ? 127 : 126);
    }
    int status = 0, err = pid < 0 ? errno : 0;
    while (pid > 0 && waitpid(pid, &status, 0) < 0 && !err)
        if (errno != EINTR)
            err = errno;
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    if (err)
        return cli_error("record", "%s %s: %s", pid < 0 ? "cannot start" : "lost", cmd[0],
                         strerror(err)), -1;
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

static void summary(const opts *o, const finish_summary *sum)
{
    char inc[48] = "", size[32], word[4 * PATH_MAX + 3];
    if (sum->incomplete)
        snprintf(inc, sizeof inc, " (%u incomplete)", sum->incomplete);
    if (sum->bytes >= 1000000)
        snprintf(size, sizeof size, "%.1f MB", (double)sum->bytes / 1e6);
    else
        snprintf(size, sizeof size, "%.1f KB", (double)sum->bytes / 1e3);
    fprintf(stderr, "phantom record: trace in %s: %u rank%s%s, %llu events, %s; run `phantom stats %s`\n",
            o->dir, sum->nranks, sum->nranks == 1 ? "" : "s", inc, (unsigned long long)sum->events,
            size, cli_shell_word(o->dir, word, sizeof word));
}

/* Finish the trace if the job wrote one; the result is the exit status. */
static int conclude(const opts *o, const char *absdir, int status)
{
    size_t n = strlen(absdir) + 16;
    char *meta = malloc(n);
    if (!meta)
        return cli_error("record", "out of memory");
    snprintf(meta, n, "%s/meta.json", absdir);
    int have = access(meta, F_OK) == 0;
    free(meta);
    if (!have) {
        rmdir(absdir); /* only if empty: the directory we made for nothing */
        if (status != 126 && status != 127) /* the command could not even run: said so already */
            cli_error("record", "%s: no trace was written (the command never reached MPI_Init "
                                "with the recorder preloaded)", o->dir);
        return status > 0 ? status : CLI_ERR;
    }
    finish_summary sum;
    int rc = finish_trace_with("record", absdir, o->partial, &sum);
    if (rc == CLI_OK && o->partial && sum.nranks != o->plan_ranks)
        cli_warn("record", "%s: the plan is for %u ranks, the job had %u: its log is cut where "
                 "another job's loops end", o->plan, o->plan_ranks, sum.nranks);
    if (rc == CLI_OK)
        summary(o, &sum);
    return status != 0 ? status : rc;
}

static int parse(int argc, char **argv, opts *o)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'}, {"log", no_argument, NULL, 'l'},
        {"log-ranks", required_argument, NULL, 'L'}, {"depth", required_argument, NULL, 'd'},
        {"force", no_argument, NULL, 'f'}, {"help", no_argument, NULL, 'h'},
        {"plan", required_argument, NULL, 'P'}, {"iterations", required_argument, NULL, 'i'},
        {NULL, 0, NULL, 0}};
    int c;
    /* '+': options end at COMMAND, so `phantom record mpirun -np 4 ./a` needs no "--" */
    while ((c = cli_getopt("record", argc, argv, "+:ho:", longopts)) != -1) {
        switch (c) {
        case 'h': return cli_help(&cmd_record), -1;
        case 'o': o->dir = optarg; break;
        case 'l': o->log = 1; break;
        case 'f': o->force = 1; break;
        case 'L':
            if (!*optarg || optarg[strspn(optarg, "0123456789,-")])
                return cli_usage_error("record", "--log-ranks: '%s' is not a rank list like 0-3,8", optarg);
            o->log_ranks = optarg;
            break;
        case 'P': o->plan = optarg; break;
        case 'i':
            if (cli_u32_option("record", "--iterations", optarg, 0, UINT32_MAX, &o->iterations) != CLI_OK)
                return CLI_USAGE;
            o->have_iterations = 1;
            break;
        case 'd':
            if (cli_u32_option("record", "--depth", optarg, 1, MAX_DEPTH, &o->depth) != CLI_OK)
                return CLI_USAGE;
            break;
        default: return CLI_USAGE;
        }
    }
    if (o->plan && !o->log && !o->log_ranks)
        return cli_usage_error("record", "--plan needs --log or --log-ranks (it limits the message log)");
    if (o->have_iterations && !o->plan)
        return cli_usage_error("record", "--iterations needs --plan (the loop of each rank)");
    if (optind >= argc)
        return cli_usage_error("record", "no command given");
    if (!*o->dir)
        return cli_usage_error("record", "--output: empty directory name");
    return CLI_OK;
}

static int run(int argc, char **argv)
{
    opts o = {.dir = "phantom.trace"};
    int rc = parse(argc, argv, &o);
    if (rc != CLI_OK)
        return rc < 0 ? CLI_OK : rc; /* -1: --help */
    char **cmd = argv + optind;
    char *lib = find_preload(), *absdir = absolute(o.dir);
    if (!lib)
        rc = CLI_ERR; /* find_preload said why */
    else if (!absdir)
        rc = cli_error("record", "%s: cannot make the path absolute: %s", o.dir, strerror(errno));
    if (rc == CLI_OK)
        rc = clear_dir(&o, absdir);
    if (rc == CLI_OK)
        rc = make_dir(&o, absdir);
    if (rc == CLI_OK && o.plan)
        rc = plan_log(&o, absdir);
    launch l = {0};
    if (rc == CLI_OK)
        rc = set_env(&o, absdir, lib, cmd, &l);
    if (rc == CLI_OK) {
        int status = run_command(l.argv);
        rc = status < 0 ? CLI_ERR : conclude(&o, absdir, status);
    }
    if (o.partial && absdir) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/" LOG_UNTIL, absdir);
        unlink(path);
        json_decref(o.partial);
    }
    launch_free(&l);
    free(lib);
    free(absdir);
    return rc;
}

const ph_verb cmd_record = {"record", "run an MPI job under the recorder and finish its trace",
                            usage, run};
