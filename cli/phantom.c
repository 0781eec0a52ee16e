/* phantom.c - the `phantom` front end: dispatches `phantom VERB ...` to the
 * verb's own file (git-style), and holds the helpers every verb shares so
 * that errors, exit codes and option parsing look the same everywhere. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>
#include <libiberty/demangle.h>

#include "config.h"
#include "phantom.h"
#include "simmpi.h" /* simmpi_fmt_time */

static const ph_verb *const verbs[] = {&cmd_record, &cmd_finish, &cmd_stats, &cmd_dump,
                                       &cmd_cluster, &cmd_predict, &cmd_calibrate, &cmd_replay,
                                       &cmd_export, &cmd_run, &cmd_report};
#define NVERBS (sizeof verbs / sizeof verbs[0])

static const ph_verb *find_verb(const char *name)
{
    for (size_t i = 0; i < NVERBS; i++)
        if (strcmp(verbs[i]->name, name) == 0)
            return verbs[i];
    return NULL;
}

static void main_usage(FILE *out)
{
    fprintf(out, "usage: phantom [--version] [--help] <command> [<args>]\n\n"
                 "Predict how long an MPI application will run on a machine you do not have:\n"
                 "record it, choose representative ranks, replay them on the target's node,\n"
                 "and simulate the target's network (PHANTOM).\n\n"
                 "commands:\n");
    int width = 0;
    for (size_t i = 0; i < NVERBS; i++)
        if ((int)strlen(verbs[i]->name) > width)
            width = (int)strlen(verbs[i]->name);
    for (size_t i = 0; i < NVERBS; i++)
        fprintf(out, "   %-*s  %s\n", width, verbs[i]->name, verbs[i]->summary);
    fprintf(out, "\nSee 'phantom help <command>' or 'phantom <command> --help' for a command's options,\n"
                 "and phantom(1) for the whole tool.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        main_usage(stderr);
        return CLI_USAGE;
    }
    const char *a = argv[1];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
        main_usage(stdout);
        return cli_flush_stdout("help");
    }
    if (strcmp(a, "--version") == 0 || strcmp(a, "-V") == 0) {
        printf("phantom %s (trace format %d.%d)\n", PACKAGE_VERSION, PH_FORMAT_MAJOR, PH_FORMAT_MINOR);
        return cli_flush_stdout("version");
    }
    if (strcmp(a, "help") == 0) {
        if (argc < 3) {
            main_usage(stdout);
            return cli_flush_stdout("help");
        }
        const ph_verb *v = find_verb(argv[2]);
        if (!v)
            return cli_usage_error("help", "'%s' is not a phantom command", argv[2]);
        return cli_help(v);
    }
    if (a[0] == '-') {
        fprintf(stderr, "phantom: unknown option '%s'\nsee phantom --help\n", a);
        return CLI_USAGE;
    }
    const ph_verb *v = find_verb(a);
    if (!v) {
        fprintf(stderr, "phantom: '%s' is not a phantom command\nsee phantom --help\n", a);
        return CLI_USAGE;
    }
    return v->run(argc - 1, argv + 1);
}

/* ---- messages ---------------------------------------------------------------- */

static void vmsg(const char *verb, const char *what, const char *fmt, va_list ap)
{
    fflush(stdout); /* keep the order of output and error when both go to a terminal */
    fprintf(stderr, "phantom %s: %s", verb, what);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

int cli_error(const char *verb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg(verb, "", fmt, ap);
    va_end(ap);
    return CLI_ERR;
}

void cli_warn(const char *verb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg(verb, "warning: ", fmt, ap);
    va_end(ap);
}

int cli_usage_error(const char *verb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg(verb, "", fmt, ap);
    va_end(ap);
    if (strcmp(verb, "help") == 0)
        fprintf(stderr, "see phantom --help\n");
    else
        fprintf(stderr, "see phantom %s --help\n", verb);
    return CLI_USAGE;
}

int cli_trace_arg(const char *verb, int argc, char **argv, const char **trace)
{
    if (optind >= argc)
        return cli_usage_error(verb, "no trace directory given");
    if (optind + 1 < argc)
        return cli_usage_error(verb, "unexpected argument '%s'", argv[optind + 1]);
    *trace = argv[optind];
    return CLI_OK;
}

int cli_help(const ph_verb *v)
{
    fputs(v->usage, stdout);
    return cli_flush_stdout(v->name);
}

char *cli_find_program(const char *verb, const char *envvar, const char *build_rel, const char *installed)
{
    const char *env = getenv(envvar);
    if (env && *env) {
        char *p = access(env, R_OK) == 0 ? realpath(env, NULL) : NULL;
        if (!p)
            cli_error(verb, "%s=%s: %s", envvar, env, strerror(errno));
        return p;
    }
    char exe[PATH_MAX], cand[2 * PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        char *slash = strrchr(exe, '/');
        if (slash)
            *slash = 0;
        /* cli/phantom, or cli/.libs/phantom when libtool wraps it */
        for (const char *up = "/..", *up2 = "/../.."; up; up = up2, up2 = NULL) {
            snprintf(cand, sizeof cand, "%s%s/%s", exe, up, build_rel);
            if (access(cand, R_OK) == 0)
                return realpath(cand, NULL);
        }
    }
    if (access(installed, R_OK) == 0)
        return strdup(installed);
    cli_error(verb, "%s not found (looked next to this phantom's build tree and at %s; set %s to its path)",
              build_rel, installed, envvar);
    return NULL;
}

#ifndef PKGDATADIR
#define PKGDATADIR "/usr/local/share/phantom"
#endif
#ifndef SRC_PLATFORMS
#define SRC_PLATFORMS ""
#endif
#ifndef BINDIR
#define BINDIR "/usr/local/bin"
#endif

/* Is this the installed phantom, not one in a build tree?  Each takes the
 * platform files that came with it: an older install's must not stand in
 * for the source tree's. */
static int installed_binary(void)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return 0;
    exe[n] = 0;
    char *inst = realpath(BINDIR "/phantom", NULL);
    int same = inst && strcmp(exe, inst) == 0;
    free(inst);
    return same;
}

const char *cli_bundled_platforms(void)
{
    struct stat st;
    if (!installed_binary() && *SRC_PLATFORMS && stat(SRC_PLATFORMS, &st) == 0)
        return SRC_PLATFORMS;
    if (stat(PKGDATADIR "/platforms", &st) == 0)
        return PKGDATADIR "/platforms";
    return SRC_PLATFORMS;
}

static int is_conf(const struct dirent *d)
{
    size_t n = strlen(d->d_name);
    return n > 5 && strcmp(d->d_name + n - 5, ".conf") == 0;
}

int cli_platform_file(const char *verb, const char *opt, const char *arg, char *buf, size_t cap)
{
    struct stat st;
    const char *dir = stat(arg, &st) == 0 || strchr(arg, '/') ? "" : cli_bundled_platforms();
    if (!*dir) { /* opening it says what is wrong */
        if ((size_t)snprintf(buf, cap, "%s", arg) < cap)
            return CLI_OK;
        return cli_error(verb, "%s %.64s...: the path is too long", opt, arg);
    }
    for (int conf = 0; conf < 2; conf++) {
        if ((size_t)snprintf(buf, cap, "%s/%s%s", dir, arg, conf ? ".conf" : "") < cap &&
            stat(buf, &st) == 0 && S_ISREG(st.st_mode))
            return CLI_OK;
    }
    char names[512] = "";
    struct dirent **ents;
    int n = scandir(dir, &ents, is_conf, alphasort);
    for (int i = 0; i < n; i++) {
        size_t len = strlen(names);
        snprintf(names + len, sizeof names - len, "%s%.*s", i ? ", " : "", (int)strlen(ents[i]->d_name) - 5,
                 ents[i]->d_name);
        free(ents[i]);
    }
    if (n >= 0)
        free(ents);
    return cli_error(verb, "%s %s: no such file, nor a bundled platform (%s: %s)", opt, arg, dir,
                     *names ? names : "none");
}

int cli_currency_is_symbol(const char *currency)
{
    for (const char *p = currency; *p; p++)
        if (isalpha((unsigned char)*p))
            return 0;
    return 1;
}

const char *cli_fmt_money(const char *currency, const char *amount, char *buf, size_t cap)
{
    const char *c = currency ? currency : "";
    if (!*c)
        snprintf(buf, cap, "%s", amount);
    else if (cli_currency_is_symbol(c))
        snprintf(buf, cap, "%s%s", c, amount);
    else
        snprintf(buf, cap, "%s %s", amount, c);
    return buf;
}

long long cli_mtime_ns(const char *path)
{
    struct stat st;
    if (!path || stat(path, &st) < 0)
        return -1;
    return (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
}

const char *cli_shell_word(const char *s, char *buf, size_t cap)
{
    static const char plain[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./-+=:,@%";
    size_t len = strlen(s), n = 0;
    if (len && strspn(s, plain) == len)
        return s;
    if (cap < 3)
        return s;
    buf[n++] = '\'';
    for (const char *c = s; *c; c++) {
        /* a quote inside: end the quoting, an escaped quote, quote again */
        const char *piece = *c == '\'' ? "'\\''" : c;
        size_t k = *c == '\'' ? 4 : 1;
        if (n + k + 2 > cap)
            return s;
        memcpy(buf + n, piece, k);
        n += k;
    }
    buf[n++] = '\'';
    buf[n] = '\0';
    return buf;
}

/* Removes DIR and everything under it; 0, or -1 when something stayed. */
int cli_rm_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return errno == ENOENT ? 0 : -1;
    int rc = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
            rc |= cli_rm_tree(p);
        else
            rc |= unlink(p);
    }
    closedir(d);
    return rc | rmdir(dir);
}

int cli_flush_stdout(const char *verb)
{
    if (fflush(stdout) != 0 || ferror(stdout))
        return cli_error(verb, "cannot write the output: %s", strerror(errno ? errno : EIO));
    return CLI_OK;
}

/* ---- options -------------------------------------------------------------------- */

int cli_getopt(const char *verb, int argc, char **argv, const char *shortopts,
               const struct option *longopts)
{
    static char **started;
    if (started != argv) { /* a new argument vector: reinitialise GNU getopt */
        started = argv;
        optind = 0;
    }
    opterr = 0;
    int c = getopt_long(argc, argv, shortopts, longopts, NULL);
    if (c != '?' && c != ':')
        return c;
    /* Name the offending option as the user wrote it: a long option is the
     * whole argument (without "=value"), a short one is optopt. */
    const char *arg = optind > 0 && optind <= argc ? argv[optind - 1] : "";
    char name[64];
    if (strncmp(arg, "--", 2) == 0)
        snprintf(name, sizeof name, "%.*s", (int)strcspn(arg, "="), arg);
    else
        snprintf(name, sizeof name, "-%c", optopt ? optopt : '?');
    if (c == ':')
        cli_usage_error(verb, "option '%s' needs an argument", name);
    else if (strncmp(arg, "--", 2) == 0 && strchr(arg, '=') && optopt)
        cli_usage_error(verb, "option '%s' takes no argument", name);
    else
        cli_usage_error(verb, "unknown option '%s'", name);
    return '?';
}

int cli_parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
    if (!s || *s < '0' || *s > '9')
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

int cli_u32_option(const char *verb, const char *opt, const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
    if (cli_parse_u32(s, lo, hi, out) == 0)
        return CLI_OK;
    if (hi < UINT32_MAX)
        return cli_usage_error(verb, "%s: '%s' is not a whole number from %u to %u", opt, s, lo, hi);
    if (lo > 0)
        return cli_usage_error(verb, "%s: '%s' is not a whole number >= %u", opt, s, lo);
    return cli_usage_error(verb, "%s: '%s' is not a whole number", opt, s);
}

/* ---- shared by stats and dump ------------------------------------------------------ */

/* Warnings about incomplete ranks wait for the end of the verb: when it fails,
 * its error line stands alone (scripts expect exactly one line then). */
static char **pending;
static size_t npending;

void cli_warn_incomplete(const char *verb, const ph_rank_reader *r, uint32_t rank,
                         uint64_t events)
{
    if (ph_rank_complete(r))
        return;
    const char *note = ph_rank_note(r);
    char *line = NULL, **v = realloc(pending, (npending + 1) * sizeof *v);
    if (!v || asprintf(&line, "phantom %s: warning: rank %u: the stream has no end record (%s); "
                              "%llu events read",
                       verb, rank, note ? note : "the job was killed or is still running",
                       (unsigned long long)events) < 0) {
        pending = v ? v : pending;
        return;
    }
    pending = v;
    pending[npending++] = line;
}

int cli_end_warnings(int rc)
{
    fflush(stdout);
    for (size_t i = 0; i < npending; i++) {
        if (rc == CLI_OK)
            fprintf(stderr, "%s\n", pending[i]);
        free(pending[i]);
    }
    free(pending);
    pending = NULL;
    npending = 0;
    return rc;
}

/* ---- what a prediction leaves out --------------------------------------------------------- */

typedef struct untraced_fn {
    const char *name;
    uint64_t calls, ns;
    int timed;
} untraced_fn;

typedef struct untraced_kind {
    untraced_fn *fn;
    size_t n;
} untraced_kind;

static int more_calls_first(const void *a, const void *b)
{
    const untraced_fn *x = a, *y = b;
    return x->calls != y->calls ? (x->calls < y->calls) - (x->calls > y->calls) : strcmp(x->name, y->name);
}

/* Adds one rank's counter to its kind; -1 out of memory. */
static int untraced_add(untraced_kind *k, const ph_counter *c)
{
    size_t i = 0;
    while (i < k->n && strcmp(k->fn[i].name, c->name) != 0)
        i++;
    if (i == k->n) {
        untraced_fn *v = realloc(k->fn, (k->n + 1) * sizeof *v);
        if (!v)
            return -1;
        k->fn = v;
        k->fn[k->n++] = (untraced_fn){c->name, 0, 0, 1};
    }
    k->fn[i].calls += c->calls;
    k->fn[i].ns += c->ns;
    k->fn[i].timed &= c->timed;
    return 0;
}

static json_t *ns_or_null(int timed, uint64_t ns) { return timed ? json_integer((json_int_t)ns) : json_null(); }

/* One kind's entry: its functions, most made first, and their sums (no
 * time when one of them has none: a trace from before they were timed). */
static json_t *untraced_kind_json(untraced_kind *k, const char *name, double rank_ns)
{
    json_t *fns = json_array();
    uint64_t calls = 0, ns = 0;
    int timed = 1;
    qsort(k->fn, k->n, sizeof *k->fn, more_calls_first);
    for (size_t i = 0; i < k->n; i++) {
        json_array_append_new(fns, json_pack("{s:s, s:I, s:o}", "name", k->fn[i].name, "calls",
                                             (json_int_t)k->fn[i].calls, "ns",
                                             ns_or_null(k->fn[i].timed, k->fn[i].ns)));
        calls += k->fn[i].calls;
        ns += k->fn[i].ns;
        timed &= k->fn[i].timed;
    }
    int share = timed && rank_ns > 0;
    return json_pack("{s:s, s:I, s:o, s:o, s:o}", "kind", name, "calls", (json_int_t)calls, "ns",
                     ns_or_null(timed, ns), "share", share ? json_real(ns / rank_ns) : json_null(),
                     "functions", fns);
}

json_t *cli_untraced_json(ph_trace *t, double rank_ns)
{
    untraced_kind kind[PH_UNTRACED_KINDS] = {{0}};
    int oom = 0;
    for (uint32_t rank = 0; rank < ph_trace_nranks(t) && !oom; rank++) {
        const ph_counter *c;
        size_t n;
        if (ph_trace_counters(t, rank, &c, &n) < 0)
            continue; /* unreadable: the reader of its events has said so */
        for (size_t i = 0; i < n && !oom; i++) {
            ph_untraced k = ph_untraced_kind(c[i].name);
            if (k != PH_UNTRACED_OTHER && untraced_add(&kind[k], &c[i]) < 0)
                oom = 1;
        }
    }
    json_t *a = oom ? NULL : json_array();
    for (int k = 0; k < PH_UNTRACED_KINDS; k++) {
        if (a && kind[k].n)
            json_array_append_new(a, untraced_kind_json(&kind[k], ph_untraced_name((ph_untraced)k), rank_ns));
        free(kind[k].fn);
    }
    return a;
}

void cli_untraced_text(const json_t *untraced, char *buf, size_t cap)
{
    enum { NAMED = 3 }; /* functions named per kind, the most made */
    size_t i, len = 0, nk = json_array_size(untraced);
    double ns = 0, share = 0;
    int timed = 1, shared = 1;
    json_t *kind;
#define PUT(...) (len += (size_t)snprintf(buf + len, len < cap ? cap - len : 0, __VA_ARGS__))
    buf[0] = 0;
    json_array_foreach(untraced, i, kind) {
        long long calls = json_integer_value(json_object_get(kind, "calls"));
        const json_t *fns = json_object_get(kind, "functions"), *f;
        PUT("%s%lld %s call%s (", i == 0 ? "" : i + 1 == nk ? " and " : ", ", calls,
            json_string_value(json_object_get(kind, "kind")), calls == 1 ? "" : "s");
        size_t j;
        json_array_foreach(fns, j, f) {
            if (j == NAMED) {
                PUT(", ...");
                break;
            }
            PUT("%s%s %lld", j ? ", " : "", json_string_value(json_object_get(f, "name")),
                (long long)json_integer_value(json_object_get(f, "calls")));
        }
        PUT(")");
        timed &= json_is_integer(json_object_get(kind, "ns"));
        shared &= json_is_number(json_object_get(kind, "share"));
        ns += (double)json_integer_value(json_object_get(kind, "ns"));
        share += json_number_value(json_object_get(kind, "share"));
    }
    if (nk && timed) {
        char t[32];
        PUT(", which took %s in the recorded run", simmpi_fmt_time((simtime)(ns * 1000), t, sizeof t));
        if (shared)
            PUT(" (%.1f%% of its ranks' time)", 100 * share);
    }
#undef PUT
}

static const char *base_name(const char *path)
{
    const char *s = path ? strrchr(path, '/') : NULL;
    return s ? s + 1 : path ? path : "?";
}

/* A gfortran module procedure's symbol, __MODULE_MOD_PROC, as gdb and
 * the source name it (MODULE::PROC); NULL if name is none.  (Its DWARF
 * name sits in a DW_TAG_module, where libdw's scope lookup does not go,
 * so finish records the symbol.) */
static const char *fortran_module_name(const char *name, char *buf, size_t cap)
{
    const char *mod = strstr(name, "_MOD_");
    if (strncmp(name, "__", 2) != 0 || !mod || mod == name + 2 || !mod[5])
        return NULL;
    snprintf(buf, cap, "%.*s::%s", (int)(mod - name - 2), name + 2, mod + 5);
    return buf;
}

/* name, demangled into buf when it is a C++ name that demangles or a
 * Fortran module procedure's. */
static const char *demangled(const char *name, char *buf, size_t cap)
{
    const char *fortran = fortran_module_name(name, buf, cap);
    if (fortran)
        return fortran;
    if (strncmp(name, "_Z", 2) != 0)
        return name;
    /* libiberty's demangler is the code behind libstdc++'s __cxa_demangle,
     * with its options; linked in, as loading libstdc++ for it cost a
     * LAMMPS prediction 1.7 ms of its ~40 */
    char *d = cplus_demangle_v3(name, DMGL_PARAMS | DMGL_TYPES);
    const char *out = name;
    if (d) {
        snprintf(buf, cap, "%s", d);
        out = buf;
    }
    free(d);
    return out;
}

static int user_frame_or_first(const ph_site_info *s)
{
    int f = sym_user_frame(s); /* the frame finish symbolised; the first if all are MPI's */
    return f < 0 ? 0 : f;
}

static int same_frame(const ph_site_info *a, uint32_t i, const ph_site_info *b, uint32_t j)
{
    return a->offsets[i] == b->offsets[j] && strcmp(base_name(a->modules[i]), base_name(b->modules[j])) == 0;
}

static int cmp_string(const char *a, const char *b) { return a && b ? strcmp(a, b) : (a != NULL) - (b != NULL); }

static int cmp_u64(uint64_t a, uint64_t b) { return (a > b) - (a < b); }

/* Orders sites by the label site_base_label gives them, field by field
 * (demangling every site would be slow): 0 exactly when the labels are the
 * same.  A site without a stack reads the same as no other. */
static int cmp_label(const ph_site_info *a, const ph_site_info *b)
{
    if (!a->nframes || !b->nframes)
        return a->nframes || b->nframes ? cmp_u64(a->nframes, b->nframes) : cmp_u64(a->gid, b->gid);
    int shows_at = !a->file, c; /* the label shows the address, not file:line */
    if ((c = (!b->file) - shows_at) || (c = cmp_string(a->function, b->function)))
        return c;
    if (!shows_at) {
        if ((c = strcmp(base_name(a->file), base_name(b->file))))
            return c;
        return cmp_u64(a->line > 0 ? (uint64_t)a->line : 0, b->line > 0 ? (uint64_t)b->line : 0);
    }
    int fa = user_frame_or_first(a), fb = user_frame_or_first(b);
    if ((c = strcmp(base_name(a->modules[fa]), base_name(b->modules[fb]))))
        return c;
    return cmp_u64(a->offsets[fa], b->offsets[fb]);
}

static int cmp_label_id(const void *x, const void *y, void *trace)
{
    uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
    int c = cmp_label(ph_trace_site(trace, i), ph_trace_site(trace, j));
    return c ? c : cmp_u64(i, j);
}

struct cli_sites {
    const ph_trace *t;
    uint32_t *order; /* site ids by label: sites of one label side by side */
    uint32_t *pos;   /* a site's place in order */
};

cli_sites *cli_sites_new(const ph_trace *t)
{
    uint32_t n = ph_trace_nsites(t);
    cli_sites *g = calloc(1, sizeof *g);
    if (!g || !(g->order = malloc((n ? n : 1) * sizeof *g->order)) ||
        !(g->pos = malloc((n ? n : 1) * sizeof *g->pos))) {
        cli_sites_free(g);
        return NULL;
    }
    g->t = t;
    for (uint32_t i = 0; i < n; i++)
        g->order[i] = i;
    qsort_r(g->order, n, sizeof *g->order, cmp_label_id, (void *)t);
    for (uint32_t i = 0; i < n; i++)
        g->pos[g->order[i]] = i;
    return g;
}

void cli_sites_free(cli_sites *g)
{
    if (g) {
        free(g->order);
        free(g->pos);
        free(g);
    }
}

/* The sites of site's label: order[*from .. *to), site among them. */
static void label_group(const cli_sites *g, uint32_t site, uint32_t *from, uint32_t *to)
{
    const ph_site_info *s = ph_trace_site(g->t, site);
    uint32_t n = ph_trace_nsites(g->t), i = g->pos[site], j = i + 1;
    while (i > 0 && !cmp_label(ph_trace_site(g->t, g->order[i - 1]), s))
        i--;
    while (j < n && !cmp_label(ph_trace_site(g->t, g->order[j]), s))
        j++;
    *from = i;
    *to = j;
}

/* Where a's stack parts from b's, counted from a's user frame f: the
 * first caller frame that differs (or that only one of them has); when
 * their callers are the same, f itself (two calls on one line); else a
 * frame inside the MPI library below f.  -1 if the stacks are the same
 * from the user frame on. */
static int parting_frame(const ph_site_info *a, int f, const ph_site_info *b)
{
    int g = user_frame_or_first(b);
    for (uint32_t k = 1; (uint32_t)f + k < a->nframes; k++)
        if ((uint32_t)g + k >= b->nframes || !same_frame(a, (uint32_t)f + k, b, (uint32_t)g + k))
            return f + (int)k;
    if (!same_frame(a, (uint32_t)f, b, (uint32_t)g))
        return f;
    for (int k = 1; k <= f; k++)
        if (g - k < 0 || !same_frame(a, (uint32_t)(f - k), b, (uint32_t)(g - k)))
            return f - k;
    return -1;
}

/* Of two parting frames, the one a label shows: a caller before the user
 * frame before the MPI library's; the farthest caller, as the first
 * differences from two other sites may be at two depths and only the
 * deeper one tells a from both. */
static int better_part(int k, int than, int f)
{
    int sk = k > f ? 2 : k == f, st = than > f ? 2 : than == f;
    return k >= 0 && (than < 0 || sk > st || (sk == st && k > than));
}

/* Does the caller's name (its file and line where finish found them, else
 * its function) tell s apart from every other site of its label? */
static int caller_names_differ(const cli_sites *g, uint32_t site, uint32_t from, uint32_t to)
{
    const ph_site_info *s = ph_trace_site(g->t, site);
    int by_line = s->caller_file && s->caller_line > 0;
    if (!by_line && !s->caller_function)
        return 0;
    for (uint32_t i = from; i < to; i++) {
        const ph_site_info *o = ph_trace_site(g->t, g->order[i]);
        if (g->order[i] != site &&
            (by_line ? o->caller_file && o->caller_line == s->caller_line &&
                           strcmp(base_name(o->caller_file), base_name(s->caller_file)) == 0
                     : !cmp_string(o->caller_function, s->caller_function)))
            return 0;
    }
    return 1;
}

static void site_base_label(const ph_site_info *s, char *buf, size_t cap)
{
    int f = user_frame_or_first(s);
    char at[300];
    snprintf(at, sizeof at, "%s+0x%llx", base_name(s->modules[f]), (unsigned long long)s->offsets[f]);
    if (!s->function && !s->file) {
        snprintf(buf, cap, "%s", at);
        return;
    }
    char name[512];
    const char *fn = s->function ? demangled(s->function, name, sizeof name) : "?";
    if (s->file && s->line > 0)
        snprintf(buf, cap, "%s %s:%d", fn, base_name(s->file), s->line);
    else if (s->file)
        snprintf(buf, cap, "%s %s", fn, base_name(s->file));
    else /* no line to tell two calls in one function apart: the address does */
        snprintf(buf, cap, "%s (%s)", fn, at);
}

void cli_site_label(const cli_sites *g, uint32_t site, char *buf, size_t cap)
{
    const ph_site_info *s = ph_trace_site(g->t, site);
    if (!s || !s->nframes) {
        snprintf(buf, cap, "%s", s ? "(no stack)" : "?");
        return;
    }
    site_base_label(s, buf, cap);
    /* A site is its whole stack, a label one frame of it: one MPI_Send
     * reached from two callers is two sites of one label, two rows of a
     * table that look the same.  Each such label names the frame where
     * its stack parts from the others'. */
    uint32_t from, to;
    label_group(g, site, &from, &to);
    int f = user_frame_or_first(s), part = -1;
    for (uint32_t i = from; i < to; i++)
        if (g->order[i] != site) {
            int k = parting_frame(s, f, ph_trace_site(g->t, g->order[i]));
            if (better_part(k, part, f))
                part = k;
        }
    if (part < 0)
        return;
    size_t len = strlen(buf);
    if (part == f + 1 && caller_names_differ(g, site, from, to)) {
        char name[512];
        const char *fn = s->caller_function ? demangled(s->caller_function, name, sizeof name) : NULL;
        if (s->caller_file && s->caller_line > 0)
            snprintf(buf + len, cap - len, " from %s%s%s:%d", fn ? fn : "", fn ? " " : "",
                     base_name(s->caller_file), s->caller_line);
        else
            snprintf(buf + len, cap - len, " from %s", fn);
        return;
    }
    snprintf(buf + len, cap - len, part == f ? " (%s+0x%llx)" : part > f ? " from %s+0x%llx" : " via %s+0x%llx",
             base_name(s->modules[part]), (unsigned long long)s->offsets[part]);
}

const char *cli_site_call(uint16_t op)
{
    return op == PH_SITE_OPS ? "several" : ph_op(op) ? ph_op(op)->name : "?";
}

json_t *cli_place_json(const char *function, const char *file, int line)
{
    return json_pack("{s:s?, s:s?, s:o}", "function", function, "file", file, "line",
                     line > 0 ? json_integer(line) : json_null());
}
