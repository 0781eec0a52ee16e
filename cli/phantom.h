/* phantom.h - declarations shared by the `phantom` front end and its verbs.
 *
 * Each verb lives in its own cli/cmd-<verb>.c and exports one ph_verb: its
 * name, a one-line summary for `phantom --help`, its usage text and its entry
 * point.  phantom.c only dispatches; the conventions every verb follows
 * (error lines, exit codes, option parsing) are the helpers below.
 */
#ifndef PHANTOM_CLI_H
#define PHANTOM_CLI_H

#include <getopt.h>
#include <stdint.h>

#include "ph_trace.h"

/* Exit codes: 1 for a runtime error (bad trace, failed command), 2 for a usage error. */
enum { CLI_OK = 0, CLI_ERR = 1, CLI_USAGE = 2 };

typedef struct ph_verb {
    const char *name;
    const char *summary; /* one line for `phantom --help` */
    const char *usage;   /* full text for `phantom VERB --help` and `phantom help VERB` */
    int (*run)(int argc, char **argv); /* argv[0] is the verb name */
} ph_verb;

extern const ph_verb cmd_record, cmd_finish, cmd_stats, cmd_dump, cmd_cluster, cmd_predict,
    cmd_calibrate, cmd_replay, cmd_export, cmd_run, cmd_report;

/* ---- messages (phantom.c) ------------------------------------------------ */

/* "phantom VERB: message" on stderr; returns CLI_ERR. */
int cli_error(const char *verb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "phantom VERB: warning: message" on stderr. */
void cli_warn(const char *verb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The one-line error plus "see phantom VERB --help"; returns CLI_USAGE. */
int cli_usage_error(const char *verb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The one trace directory a verb takes after its options (argv[optind]) into
 * *trace; CLI_OK, or CLI_USAGE (reported) when there is none or more. */
int cli_trace_arg(const char *verb, int argc, char **argv, const char **trace);
/* Prints v->usage on stdout; returns CLI_OK. */
int cli_help(const ph_verb *v);

/* getopt_long with the conventions above: returns the next option, -1 at the
 * end of the options, or '?' after printing the usage error for an unknown
 * option or a missing argument.  shortopts must start with ':' (after an
 * optional '+').  Resets getopt's state on the first call for argv. */
int cli_getopt(const char *verb, int argc, char **argv, const char *shortopts,
               const struct option *longopts);
/* Decimal number in [lo, hi]; -1 if s is not one. */
int cli_parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out);
/* Option opt's argument s (a whole number from lo to hi) into *out: CLI_OK,
 * or CLI_USAGE after one usage error that gives the range, the same words
 * for every verb. */
int cli_u32_option(const char *verb, const char *opt, const char *s, uint32_t lo, uint32_t hi, uint32_t *out);
/* A program phantom runs: $envvar if set, else the build tree next to this
 * binary (build_rel relative to the top build directory), else the installed
 * path.  Returns a malloc'd absolute path, or NULL after a one-line error. */
char *cli_find_program(const char *verb, const char *envvar, const char *build_rel, const char *installed);
/* A file's modification time in ns, or -1 if it is not there (whether a
 * step's output is newer than its inputs: run and report). */
long long cli_mtime_ns(const char *path);
/* The bundled platform files' directory: the source tree's for a phantom
 * run from its build tree, the installed one for the installed phantom (or
 * when the source tree is gone). */
const char *cli_bundled_platforms(void);
/* A platform file named by an option: arg itself when it exists or is a
 * path (has a '/'), else the bundled platform of that name ("ib-qdr" or
 * "ib-qdr.conf"), into buf.  CLI_OK, or CLI_ERR after one line naming the
 * bundled ones. */
int cli_platform_file(const char *verb, const char *opt, const char *arg, char *buf, size_t cap);
/* An amount of money in a platform's currency: "$2.40" for a symbol (no
 * letter in it), "2.40 EUR" for a code, "2.40" when the platform does not
 * say (currency ""). */
const char *cli_fmt_money(const char *currency, const char *amount, char *buf, size_t cap);
/* Is the currency a symbol ("$", "€": no letter), written before amounts? */
int cli_currency_is_symbol(const char *currency);
/* Checks stdout for a write error at exit (a full disk, a closed pipe). */
int cli_flush_stdout(const char *verb);
/* Removes DIR and everything under it (no error when it does not exist). */
int cli_rm_tree(const char *dir);
/* S as one shell word for a command line the user may paste: S itself when
 * it needs no quoting, else single-quoted in BUF (S when CAP is short). */
const char *cli_shell_word(const char *s, char *buf, size_t cap);

/* ---- shared by stats and dump -------------------------------------------- */

/* Warns once about a rank whose stream has no END record, with the note the
 * recorder left, if any.  Call after ph_rank_next returned 0.  The warnings
 * are printed by cli_end_warnings(rc), only when rc is CLI_OK; returns rc. */
void cli_warn_incomplete(const char *verb, const ph_rank_reader *r, uint32_t rank,
                         uint64_t events);
int cli_end_warnings(int rc);
/* ---- what a prediction leaves out (predict, report) ------------------------ */

/* The calls phantom passes through untraced that the simulation leaves out
 * (ph_untraced_kind), per kind, every rank's of t summed by function, most
 * made first: [{"kind", "calls", "ns", "share", "functions": [{"name",
 * "calls", "ns"}, ...]}, ...], ns the time inside them in the recorded run
 * (null in traces from before they were timed), share that over rank_ns,
 * the run's time on all its ranks (null if rank_ns is 0); [] when there are
 * none, NULL out of memory. */
struct json_t *cli_untraced_json(ph_trace *t, double rank_ns);
/* "190119 one-sided calls (MPI_Win_flush_all 110750, MPI_Accumulate 16971,
 * ...) and 2 file I/O calls (...), which took 1.2 s in the recorded run
 * (4.5% of its ranks' time)" from cli_untraced_json's array, in cap bytes;
 * "" for none. */
void cli_untraced_text(const struct json_t *untraced, char *buf, size_t cap);

/* A trace's call sites grouped by how they read: what cli_site_label needs
 * to tell apart sites that would read the same.  NULL: out of memory. */
typedef struct cli_sites cli_sites;
cli_sites *cli_sites_new(const ph_trace *t);
void cli_sites_free(cli_sites *g);
/* Where a call site is, for humans: "main lu.c:120", "Foo::bar()
 * (libfoo.so+0x1234)" when there is no line, "libfoo.so+0x1234" or "?".
 * C++ names are demangled.  One call reached from several places is a
 * site for each; their labels add where each was called from ("... from
 * Verlet::run(int)", "... from main app.c:97", "... from app+0x1234"). */
void cli_site_label(const cli_sites *g, uint32_t site, char *buf, size_t cap);
/* The name of the MPI call a call site makes (ph_site_op_note), "several"
 * for PH_SITE_OPS. */
const char *cli_site_call(uint16_t op);
/* {"function", "file", "line"}: a place in the source as JSON, each null
 * where unknown (line 0); NULL out of memory. */
struct json_t *cli_place_json(const char *function, const char *file, int line);

/* ---- partial replay (plan-loops.c) ---------------------------------------- */

/* One rank's loop as a phantom cluster plan gives it, and the event where a
 * partial replay of R iterations stops (UINT64_MAX: the whole run). */
typedef struct plan_loop {
    uint64_t stop;
    int64_t start, period, iterations;
} plan_loop;
/* Reads the plan at path (groups.json of a run of nranks ranks) and fills
 * loops[nranks]: ranks in `in` (a flag per rank, `spec` as the user wrote
 * it) stop after R iterations of their group's loop, R = iterations if >= 0,
 * else the replay_iterations of the plan's run of exactly these ranks.
 * *replayed and *total: R and the loop's iterations, -1 if no rank stops
 * early.  CLI_OK or CLI_ERR (reported). */
int cli_plan_loops(const char *verb, const char *path, uint32_t nranks, const uint8_t *in,
                   const char *spec, int64_t iterations, plan_loop *loops, int64_t *replayed,
                   int64_t *total);

/* ---- finish (cmd-finish.c), also run by record ---------------------------- */

typedef struct finish_summary {
    uint32_t nranks, incomplete;
    uint64_t events;
    uint64_t bytes; /* size of the trace files */
} finish_summary;
/* Builds the trace-level tables into dir/meta.json; CLI_OK or CLI_ERR (reported). */
int finish_trace(const char *verb, const char *dir, finish_summary *sum);
/* The same, adding the keys of extra (a JSON object, or NULL) to meta.json. */
struct json_t;
int finish_trace_with(const char *verb, const char *dir, struct json_t *extra, finish_summary *sum);

/* ---- symbolisation (symbolize.c) ----------------------------------------- */

typedef struct symbolizer symbolizer;
symbolizer *sym_new(void);
void sym_free(symbolizer *s);
/* Is this module the MPI runtime, the recorder or libc (not the user's code)? */
int sym_is_runtime(const char *module);
/* Index of the site's first frame in the user's code (-1 if none). */
int sym_user_frame(const ph_site_info *site);
/* Resolves frame `frame` of site to function, file and line (malloc'd strings,
 * NULL where unknown; line 0).  Never fails: a missing module or missing
 * debug information just leaves the answers empty. */
void sym_resolve(symbolizer *s, const ph_site_info *site, int frame, char **function,
                 char **file, int *line);

#endif
