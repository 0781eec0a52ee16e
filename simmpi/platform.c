/* platform.c - platform files: LogGP parameters, node size, price, model.
 *
 * A platform file is `key = value` lines; `#` starts a comment.  Times take
 * a unit (ns, us, ms, s; ns if none), the per-byte gap G is ns per byte or
 * a bandwidth (GB/s, MB/s, Gbit/s), sizes take K/M/G (powers of 1024).
 * doc/platform-format.md is the reference.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "internal.h"

void simmpi_platform_default(simmpi_platform *p)
{
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "default");
    snprintf(p->network_model, sizeof p->network_model, "loggp");
    p->inter = (simmpi_loggp){.o_s = 500000, .o_r = 500000, .L = 1000000, .o_prime = 300000,
                              .G_fs = 100000, .eager_limit = 12288};
    p->intra = (simmpi_loggp){.o_s = 200000, .o_r = 200000, .L = 200000, .o_prime = 100000,
                              .G_fs = 100000, .eager_limit = 4096};
    p->o_poll = p->o_iprobe = 50000;
    p->cores_per_node = 1;
}

void simmpi_platform_scale_net(simmpi_platform *p, double f)
{
    simmpi_loggp *ch[2] = {&p->inter, &p->intra};
    for (int i = 0; i < 2; i++) {
        ch[i]->o_s = sim_scale(ch[i]->o_s, f);
        ch[i]->o_r = sim_scale(ch[i]->o_r, f);
        ch[i]->L = sim_scale(ch[i]->L, f);
        ch[i]->o_prime = sim_scale(ch[i]->o_prime, f);
        ch[i]->G_fs = sim_scale(ch[i]->G_fs, f);
        ch[i]->O_fs = sim_scale(ch[i]->O_fs, f);
    }
    /* a failed poll is the MPI library's own work, as o_s and o_r are */
    p->o_poll = sim_scale(p->o_poll, f);
    p->o_iprobe = sim_scale(p->o_iprobe, f);
}

/* ---- values --------------------------------------------------------------------------- */

typedef struct pline {
    const char *path;
    int line;
    ph_err *err;
} pline;

static int bad(const pline *l, const char *fmt, const char *a, const char *b)
{
    char what[256];
    snprintf(what, sizeof what, fmt, a, b);
    ph_err_set(l->err, "%s:%d: %s", l->path, l->line, what);
    return -1;
}

/* A non-negative number followed by an optional unit (returned in *unit). */
static int number(const char *v, double *x, const char **unit)
{
    char *end;
    errno = 0;
    *x = strtod(v, &end);
    if (end == v || errno || !isfinite(*x) || *x < 0)
        return -1;
    while (isspace((unsigned char)*end))
        end++;
    *unit = end;
    return 0;
}

/* Time in ps: "1.5us", "800 ns", "2e-6 s"; plain numbers are ns. */
static int parse_time(const pline *l, const char *key, const char *v, simtime *out)
{
    double x, mul;
    const char *u;
    if (number(v, &x, &u) < 0)
        return bad(l, "%s: '%s' is not a time (e.g. 1.5us, 800ns)", key, v);
    if (!*u || !strcasecmp(u, "ns"))
        mul = 1e3;
    else if (!strcasecmp(u, "ps"))
        mul = 1;
    else if (!strcasecmp(u, "us"))
        mul = 1e6;
    else if (!strcasecmp(u, "ms"))
        mul = 1e9;
    else if (!strcasecmp(u, "s"))
        mul = 1e12;
    else
        return bad(l, "%s: unknown time unit '%s' (ns, us, ms, s)", key, u);
    if (x * mul > 1.8e19)
        return bad(l, "%s: '%s' is too large", key, v);
    *out = (simtime)llround(x * mul);
    return 0;
}

/* Per-byte gap in fs: "0.08" (ns per byte), "0.08 ns", or a bandwidth. */
static int parse_gap(const pline *l, const char *key, const char *v, uint64_t *out)
{
    double x, fs;
    const char *u;
    if (number(v, &x, &u) < 0)
        return bad(l, "%s: '%s' is not a gap per byte (ns) or a bandwidth", key, v);
    if (!*u || !strcasecmp(u, "ns") || !strcasecmp(u, "ns/B"))
        fs = x * 1e6;
    else if (!strcasecmp(u, "ps") || !strcasecmp(u, "ps/B"))
        fs = x * 1e3;
    else if (x > 0 && (!strcasecmp(u, "GB/s") || !strcasecmp(u, "MB/s") || !strcasecmp(u, "Gbit/s") ||
                       !strcasecmp(u, "Gb/s")))
        fs = 1e15 / (x * (!strcasecmp(u, "MB/s") ? 1e6 : !strcasecmp(u, "GB/s") ? 1e9 : 1e9 / 8));
    else
        return bad(l, "%s: unknown unit '%s' (ns per byte, or GB/s, MB/s, Gbit/s)", key, u);
    *out = (uint64_t)llround(fs);
    return 0;
}

static int parse_size(const pline *l, const char *key, const char *v, uint64_t *out)
{
    double x, mul = 1;
    const char *u;
    if (number(v, &x, &u) < 0)
        return bad(l, "%s: '%s' is not a size in bytes", key, v);
    if (*u == 'K' || *u == 'k')
        mul = 1024;
    else if (*u == 'M')
        mul = 1024.0 * 1024;
    else if (*u == 'G')
        mul = 1024.0 * 1024 * 1024;
    else if (*u && strcasecmp(u, "B"))
        return bad(l, "%s: unknown size unit '%s' (B, K, M, G)", key, u);
    if (*u && u[1] && strcasecmp(u + 1, "B") && strcasecmp(u + 1, "iB"))
        return bad(l, "%s: unknown size unit '%s' (B, K, M, G)", key, u);
    *out = (uint64_t)llround(x * mul);
    return 0;
}

/* half_duplex: a share from 0 to 1, or "full" (0) or "half" (1). */
static int parse_duplex(const pline *l, const char *key, const char *v, uint32_t *ppm)
{
    double x;
    const char *u;
    if (!strcmp(v, "full") || !strcmp(v, "half")) {
        *ppm = v[0] == 'h' ? 1000000 : 0;
        return 0;
    }
    if (number(v, &x, &u) < 0 || *u || x > 1)
        return bad(l, "%s: '%s' is not a share from 0 (full duplex) to 1 (half duplex)", key, v);
    *ppm = (uint32_t)llround(x * 1e6);
    return 0;
}

static int parse_uint(const pline *l, const char *key, const char *v, uint32_t *out)
{
    char *end;
    errno = 0;
    unsigned long x = strtoul(v, &end, 10);
    if (end == v || *end || errno || x == 0 || x > 1u << 24)
        return bad(l, "%s: '%s' is not a positive whole number", key, v);
    *out = (uint32_t)x;
    return 0;
}

/* ---- keys ---------------------------------------------------------------------------------- */

enum { CH_INTER = 1, CH_INTRA = 2, POLL_KEYS = 0 }; /* seen[POLL_KEYS]: 1 o_poll, 2 o_iprobe */

/* A LogGP key k, for one channel; *seen records what was set explicitly.
 * Errors name the key as the file wrote it (intra.G). */
static int loggp_key(const pline *l, simmpi_loggp *c, const char *k, const char *as_written, const char *v,
                     unsigned *seen)
{
    static const char *const names[] = {"o_s", "o_r", "L", "o_prime", "G", "eager_limit", "half_duplex", "O"};
    const unsigned nkeys = sizeof names / sizeof *names;
    unsigned i = 0;
    while (i < nkeys && strcmp(k, names[i]) != 0)
        i++;
    if (i == 3 || !strcmp(k, "o'"))
        i = 3;
    if (i == nkeys)
        return 1;
    *seen |= 1u << i;
    const char *key = as_written; /* for the messages */
    switch (i) {
    case 0: return parse_time(l, key, v, &c->o_s);
    case 1: return parse_time(l, key, v, &c->o_r);
    case 2: return parse_time(l, key, v, &c->L);
    case 3: return parse_time(l, key, v, &c->o_prime);
    case 4: return parse_gap(l, key, v, &c->G_fs);
    case 5: return parse_size(l, key, v, &c->eager_limit);
    case 6: return parse_duplex(l, key, v, &c->half_duplex_ppm);
    default: return parse_gap(l, key, v, &c->O_fs);
    }
}

static int coll_key(const pline *l, simmpi_platform *p, const char *k, const char *v)
{
    int c = simmpi_coll_from_name(k);
    if (c < 0)
        return bad(l, "unknown collective 'coll.%s'%s", k, "");
    int alg = strcmp(v, "auto") == 0 ? 0 : simmpi_alg_from_name((simmpi_coll)c, v);
    if (alg < 0)
        return bad(l, "coll.%s: unknown algorithm '%s' (see doc/platform-format.md)", k, v);
    p->coll_alg[c] = (uint8_t)alg;
    return 0;
}

static int copy_text(const pline *l, char *dst, size_t cap, const char *k, const char *v)
{
    if (strlen(v) >= cap)
        return bad(l, "%s: '%s' is too long", k, v);
    snprintf(dst, cap, "%s", v);
    return 0;
}

static int copy_name(const pline *l, char *dst, const char *k, const char *v)
{
    return copy_text(l, dst, SIMMPI_NAME_MAX, k, v);
}

int simmpi_currency_ok(const char *v)
{
    for (const unsigned char *c = (const unsigned char *)v; *c; c++)
        if (!isalpha(*c) && *c != '$' && *c < 0x80)
            return 0;
    return *v && strlen(v) < SIMMPI_CURRENCY_MAX;
}

static int parse_currency(const pline *l, char *dst, size_t cap, const char *k, const char *v)
{
    if (strlen(v) < cap && !simmpi_currency_ok(v))
        return bad(l, "%s: '%s' is not a currency ('$', 'EUR', '€': letters and symbols)", k, v);
    return copy_text(l, dst, cap, k, v);
}

static int set_key(const pline *l, simmpi_platform *p, const char *k, const char *v, unsigned seen[3])
{
    if (!strncmp(k, "intra.", 6)) {
        int rc = loggp_key(l, &p->intra, k + 6, k, v, &seen[CH_INTRA]);
        return rc == 1 ? bad(l, "unknown key '%s'%s", k, "") : rc;
    }
    if (!strncmp(k, "coll.", 5))
        return coll_key(l, p, k + 5, v);
    int rc = loggp_key(l, &p->inter, k, k, v, &seen[CH_INTER]);
    if (rc != 1)
        return rc;
    if (!strcmp(k, "name"))
        return copy_name(l, p->name, k, v);
    if (!strcmp(k, "calibrated"))
        return copy_text(l, p->calibrated, sizeof p->calibrated, k, v);
    if (!strcmp(k, "network_model")) {
        if (strcmp(v, "loggp") != 0)
            return bad(l, "network_model: '%s' is not supported (only 'loggp' so far)%s", v, "");
        return copy_name(l, p->network_model, k, v);
    }
    if (!strcmp(k, "o_poll")) {
        seen[POLL_KEYS] |= 1;
        return parse_time(l, k, v, &p->o_poll);
    }
    if (!strcmp(k, "o_iprobe")) {
        seen[POLL_KEYS] |= 2;
        return parse_time(l, k, v, &p->o_iprobe);
    }
    if (!strcmp(k, "gamma"))
        return parse_gap(l, k, v, &p->gamma_fs);
    if (!strcmp(k, "cores_per_node"))
        return parse_uint(l, k, v, &p->cores_per_node);
    if (!strcmp(k, "cpu_share")) {
        const char *u = "";
        double x = 0;
        int ok = number(v, &x, &u) == 0 && (!*u || !strcmp(u, "%"));
        double share = *u ? x / 100 : x;
        if (!ok || share <= 0 || share > 1)
            return bad(l, "cpu_share: '%s' is not a share of the time (0.5, 50%%)%s", v, "");
        p->cpu_share = share;
        return 0;
    }
    if (!strcmp(k, "noise_pause"))
        return parse_time(l, k, v, &p->noise_pause);
    if (!strcmp(k, "noise_rate")) {
        const char *u = "";
        double x = 0;
        if (number(v, &x, &u) < 0 || (*u && strcmp(u, "/s")) || !(x > 0) || x > 1e9)
            return bad(l, "noise_rate: '%s' is not a number of pauses a second (50, 50/s)%s", v, "");
        p->noise_period = (simtime)llround(1e12 / x);
        return 0;
    }
    if (!strcmp(k, "noise_sync")) {
        if (strcmp(v, "rank") && strcmp(v, "node"))
            return bad(l, "noise_sync: '%s' is not 'rank' (each rank its own pauses) or 'node'%s", v, "");
        p->noise_sync_node = !strcmp(v, "node");
        return 0;
    }
    if (!strcmp(k, "currency"))
        return parse_currency(l, p->currency, sizeof p->currency, k, v);
    if (!strcmp(k, "price_per_node_hour")) {
        const char *u;
        if (number(v, &p->price_per_node_hour, &u) < 0 || *u)
            return bad(l, "price_per_node_hour: '%s' is not a price%s", v, "");
        return 0;
    }
    return bad(l, "unknown key '%s'%s", k, "");
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = 0;
    return s;
}

/* Intra-node values not given in the file default to the inter-node ones
 * given, and o_iprobe to o_poll. */
static void inherit(simmpi_platform *p, const unsigned seen[3])
{
    if ((seen[POLL_KEYS] & 3) == 1)
        p->o_iprobe = p->o_poll;
    unsigned take = seen[CH_INTER] & ~seen[CH_INTRA]; /* bit i: loggp_key's names[i] */
    uint64_t *dst[] = {&p->intra.o_s, &p->intra.o_r, &p->intra.L, &p->intra.o_prime, &p->intra.G_fs,
                       &p->intra.eager_limit, NULL, &p->intra.O_fs};
    const uint64_t *src[] = {&p->inter.o_s, &p->inter.o_r, &p->inter.L, &p->inter.o_prime, &p->inter.G_fs,
                             &p->inter.eager_limit, NULL, &p->inter.O_fs};
    for (size_t i = 0; i < sizeof dst / sizeof *dst; i++)
        if (dst[i] && (take & (1u << i)))
            *dst[i] = *src[i];
    if (take & (1u << 6))
        p->intra.half_duplex_ppm = p->inter.half_duplex_ppm;
}

int simmpi_platform_load(const char *path, simmpi_platform *p, ph_err *err)
{
    /* here, not in every caller: phantom run and report once passed a
     * stack struct as it was, and a key the file leaves out (noise_rate)
     * came out as whatever the stack held */
    simmpi_platform_default(p);
    FILE *f = fopen(path, "r");
    if (!f) {
        ph_err_set(err, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    char *buf = NULL; /* whole lines: a long comment is still one line */
    size_t cap = 0;
    pline l = {.path = path, .err = err};
    unsigned seen[3] = {0};
    int rc = 0, keys = 0;
    ssize_t n;
    while (rc == 0 && (n = getline(&buf, &cap, f)) != -1) {
        l.line++;
        if (memchr(buf, 0, (size_t)n)) { /* a trace or a binary given by mistake */
            rc = bad(&l, "a NUL byte: not a platform file (text, 'key = value' lines)%s%s", "", "");
            break;
        }
        char *hash = strchr(buf, '#');
        if (hash)
            *hash = 0;
        char *s = trim(buf), *eq = strchr(s, '=');
        if (!*s)
            continue;
        if (!eq) {
            rc = bad(&l, "expected 'key = value', got '%s'%s", s, "");
            break;
        }
        *eq = 0;
        char *k = trim(s), *v = trim(eq + 1);
        rc = !*k || !*v ? bad(&l, "expected 'key = value'%s%s", "", "") : set_key(&l, p, k, v, seen);
        keys++;
    }
    if (rc == 0 && ferror(f)) {
        ph_err_set(err, "%s: cannot read: %s", path, strerror(errno));
        rc = -1;
    }
    free(buf);
    fclose(f);
    /* An empty file (`... > FILE` of a command that failed, say) is not a
     * platform of every default. */
    if (rc == 0 && keys == 0) {
        ph_err_set(err, "%s: no 'key = value' line: not a platform file (doc/platform-format.md)", path);
        rc = -1;
    } else if (rc == 0 && (p->noise_pause || p->noise_period) && !(p->noise_pause && p->noise_period)) {
        ph_err_set(err, "%s: noise_pause and noise_rate: one needs the other", path);
        rc = -1;
    } else if (rc == 0 && p->noise_pause >= p->noise_period && p->noise_period) {
        ph_err_set(err, "%s: noise_pause and noise_rate: the pauses would take all the time "
                        "(pause x rate must be below 1)", path);
        rc = -1;
    }
    if (rc == 0)
        inherit(p, seen);
    p->network_defaults = !((seen[CH_INTER] | seen[CH_INTRA]) & 0x1f); /* names[0..4] */
    return rc;
}
