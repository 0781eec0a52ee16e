/* symbolize.c - call sites to function, file and line, offline, with libdw.
 *
 * The recorder stores each frame as (module path, offset) with
 *     offset = pc - dli_fbase - 1
 * (-1 puts it inside the call instruction, so the line is the call's).
 * glibc's dli_fbase is the module's l_map_start: the load bias plus the
 * page-aligned p_vaddr of its lowest PT_LOAD segment.  That is the bias
 * alone for a shared object or PIE (lowest p_vaddr 0) but 0x400000 for a
 * classic non-PIE executable, so the address in the file's own terms is
 *     vaddr = page_down(lowest PT_LOAD p_vaddr) + offset
 * and libdwfl, which places the module at its own bias, wants vaddr + bias.
 *
 * One Dwfl per module (reported offline, so nothing runs and nothing needs
 * the process), cached by path for the whole run.
 *
 * libdw is loaded when a symbolizer is first made, not linked: only
 * `phantom finish` symbolizes, and loading libdw with libelf, libz, liblzma
 * and libbz2 at start-up cost every run of every verb about 0.3 ms.
 */
#include <dlfcn.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "phantom.h"

#define DW_FUNCTIONS(X)                                                                            \
    X(dwfl_begin) X(dwfl_end) X(dwfl_report_begin) X(dwfl_report_offline) X(dwfl_report_end)       \
    X(dwfl_module_getelf) X(dwfl_module_addrdie) X(dwfl_module_addrname) X(dwfl_module_getsrc)    \
    X(dwfl_lineinfo) X(dwfl_standard_find_debuginfo) X(dwfl_offline_section_address)               \
    X(dwarf_getscopes) X(dwarf_tag) X(dwarf_formstring) X(dwarf_attr_integrate)                    \
    X(dwarf_child) X(dwarf_siblingof) X(dwarf_haspc) X(elf_getphdrnum) X(gelf_getphdr)

static struct {
#define X(f) __typeof__(f) *f;
    DW_FUNCTIONS(X)
#undef X
} dw;
static int dw_loaded;
static pthread_once_t dw_once = PTHREAD_ONCE_INIT;
static char *debuginfo_path; /* NULL: the standard places (.debug, /usr/lib/debug) */
static Dwfl_Callbacks offline_callbacks;

/* libelf's functions come with libdw (a dependency it loads). */
static void dw_load(void)
{
    void *h = dlopen("libdw.so.1", RTLD_NOW | RTLD_LOCAL);
    const char *missing = NULL;
#define X(f) if (h && !missing && !(*(void **)&dw.f = dlsym(h, #f))) missing = #f;
    DW_FUNCTIONS(X)
#undef X
    if (!h || missing) {
        fprintf(stderr, "phantom: cannot use libdw.so.1 (%s): call sites keep module and offset only\n",
                h ? missing : dlerror());
        return;
    }
    offline_callbacks = (Dwfl_Callbacks){.find_debuginfo = dw.dwfl_standard_find_debuginfo,
                                         .section_address = dw.dwfl_offline_section_address,
                                         .debuginfo_path = &debuginfo_path};
    dw_loaded = 1;
}

typedef struct modinfo {
    char *path;
    Dwfl *dwfl;        /* NULL: could not be opened, do not try again */
    Dwfl_Module *mod;
    GElf_Addr base;    /* added to a recorded offset to get a Dwfl address */
} modinfo;

struct symbolizer {
    modinfo *mods;
    size_t n;
};

symbolizer *sym_new(void)
{
    pthread_once(&dw_once, dw_load);
    return calloc(1, sizeof(symbolizer));
}

void sym_free(symbolizer *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++) {
        free(s->mods[i].path);
        if (s->mods[i].dwfl)
            dw.dwfl_end(s->mods[i].dwfl);
    }
    free(s->mods);
    free(s);
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

int sym_is_runtime(const char *module)
{
    static const char *const prefixes[] = {
        "libmpi",      /* libmpi.so, libmpi_mpifh.so, libmpi_usempif08.so, ... */
        "libpmpi-rec", /* the recorder itself */
        "libopen-pal", "libopen-rte", "libpmix", "libucp", "libucs",
        "libc.so", "libc-", "ld-linux",
    };
    if (!module || strcmp(module, "?") == 0)
        return 1;
    const char *b = base_name(module);
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (strncmp(b, prefixes[i], strlen(prefixes[i])) == 0)
            return 1;
    return 0;
}

int sym_user_frame(const ph_site_info *site)
{
    for (uint32_t i = 0; i < site->nframes; i++)
        if (!sym_is_runtime(site->modules[i]))
            return (int)i;
    return -1;
}

/* page_down(lowest PT_LOAD p_vaddr): what dli_fbase subtracted beyond the bias. */
static GElf_Addr load_start(Elf *elf)
{
    size_t n;
    GElf_Addr lo = 0;
    int found = 0;
    if (!elf || dw.elf_getphdrnum(elf, &n) != 0)
        return 0;
    for (size_t i = 0; i < n; i++) {
        GElf_Phdr ph;
        if (dw.gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && (!found || ph.p_vaddr < lo)) {
            lo = ph.p_vaddr;
            found = 1;
        }
    }
    long page = sysconf(_SC_PAGESIZE);
    return lo & ~(GElf_Addr)(page > 0 ? page - 1 : 4095);
}

static modinfo *open_module(symbolizer *s, const char *path)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->mods[i].path, path) == 0)
            return &s->mods[i];
    modinfo *m = realloc(s->mods, (s->n + 1) * sizeof *m);
    if (!m)
        return NULL;
    s->mods = m;
    m = &s->mods[s->n];
    memset(m, 0, sizeof *m);
    if (!(m->path = strdup(path)))
        return NULL;
    s->n++;
    if (!dw_loaded || access(path, R_OK) != 0 || !(m->dwfl = dw.dwfl_begin(&offline_callbacks)))
        return m;
    dw.dwfl_report_begin(m->dwfl);
    m->mod = dw.dwfl_report_offline(m->dwfl, base_name(path), path, -1);
    dw.dwfl_report_end(m->dwfl, NULL, NULL);
    GElf_Addr bias = 0;
    Elf *elf = m->mod ? dw.dwfl_module_getelf(m->mod, &bias) : NULL;
    if (!elf) {
        dw.dwfl_end(m->dwfl);
        m->dwfl = NULL;
        m->mod = NULL;
        return m;
    }
    m->base = bias + load_start(elf);
    return m;
}

static const char *die_name(Dwarf_Die *die)
{
    Dwarf_Attribute a;
    const char *name = dw.dwarf_formstring(dw.dwarf_attr_integrate(die, DW_AT_name, &a));
    return name ? name : dw.dwarf_formstring(dw.dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
}

/* The innermost subprogram under parent whose code holds pc, looking inside
 * every subprogram: gfortran's internal procedures (CONTAINS), like GNU C's
 * nested functions, are DIEs inside their host's but outside its pc range,
 * where dwarf_getscopes does not look; the symbol table calls them
 * `send.7`, the source `send`. */
static const char *nested_name(Dwarf_Die *parent, Dwarf_Addr pc, int depth)
{
    Dwarf_Die child;
    if (depth > 16 || dw.dwarf_child(parent, &child) != 0)
        return NULL;
    do {
        if (dw.dwarf_tag(&child) != DW_TAG_subprogram)
            continue;
        const char *inner = nested_name(&child, pc, depth + 1);
        if (inner)
            return inner;
        if (dw.dwarf_haspc(&child, pc) == 1)
            return die_name(&child);
    } while (dw.dwarf_siblingof(&child, &child) == 0);
    return NULL;
}

/* The innermost function containing addr, inlined ones included (the line
 * table already reports the inlined code's line, so the names must match). */
static const char *scope_name(Dwfl_Module *mod, GElf_Addr addr)
{
    Dwarf_Addr bias = 0;
    Dwarf_Die *cu = dw.dwfl_module_addrdie(mod, addr, &bias);
    Dwarf_Die *scopes = NULL;
    const char *name = NULL;
    int n = cu ? dw.dwarf_getscopes(cu, addr - bias, &scopes) : 0;
    for (int i = 0; i < n && !name; i++) {
        int tag = dw.dwarf_tag(&scopes[i]);
        if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine)
            name = die_name(&scopes[i]);
    }
    free(scopes);
    return name || !cu ? name : nested_name(cu, addr - bias, 0);
}

void sym_resolve(symbolizer *s, const ph_site_info *site, int frame, char **function,
                 char **file, int *line)
{
    *function = *file = NULL;
    *line = 0;
    if (!s || frame < 0 || (uint32_t)frame >= site->nframes)
        return;
    modinfo *m = open_module(s, site->modules[frame]);
    if (!m || !m->mod)
        return;
    GElf_Addr addr = m->base + site->offsets[frame];
    const char *name = scope_name(m->mod, addr);
    if (!name)
        name = dw.dwfl_module_addrname(m->mod, addr);
    if (name)
        *function = strdup(name);
    Dwfl_Line *l = dw.dwfl_module_getsrc(m->mod, addr);
    int lineno = 0;
    const char *src = l ? dw.dwfl_lineinfo(l, NULL, &lineno, NULL, NULL, NULL) : NULL;
    if (src) {
        *file = strdup(src);
        *line = lineno;
    }
}
