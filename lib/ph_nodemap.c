/* ph_nodemap.c - --map: which node each rank runs on, by a policy (block,
 * cyclic) or a map file. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ph_trace.h"

/* Node of one word: its number if seen before, else the next number.  A
 * jansson object is the name table: a million ranks' hostnames hash well. */
static int node_of_word(json_t *names, const char *word, uint32_t *nnodes, uint32_t *node)
{
    json_t *v = json_object_get(names, word);
    if (v) {
        *node = (uint32_t)json_integer_value(v);
        return 0;
    }
    *node = (*nnodes)++;
    return json_object_set_new_nocheck(names, word, json_integer(*node));
}

int ph_node_map_read(const char *path, uint32_t nranks, uint32_t *node_of, ph_err *err)
{
    FILE *f = fopen(path, "r");
    if (!f) { /* a mistyped policy is a missing file too: say what else it could be */
        ph_err_set(err, "%s: cannot open: %s%s", path, strerror(errno),
                   errno == ENOENT && !strchr(path, '/') ? " (nor is it block or cyclic)" : "");
        return -1;
    }
    json_t *names = json_object();
    char *line = NULL;
    size_t cap = 0;
    uint32_t r = 0, nnodes = 0, lineno = 0;
    int rc = names ? 0 : -1;
    if (!names)
        ph_err_set(err, "out of memory");
    while (rc == 0 && getline(&line, &cap, f) != -1) {
        lineno++;
        line[strcspn(line, "#")] = 0;
        for (char *save = NULL, *w = strtok_r(line, " \t\r\n\v\f", &save); w && rc == 0;
             w = strtok_r(NULL, " \t\r\n\v\f", &save)) {
            if (r == nranks) {
                ph_err_set(err, "%s:%u: more nodes than the %u ranks of the trace", path, lineno, nranks);
                rc = -1;
            } else if (node_of_word(names, w, &nnodes, &node_of[r++]) != 0) {
                ph_err_set(err, "%s:%u: out of memory", path, lineno);
                rc = -1;
            }
        }
    }
    if (rc == 0 && ferror(f)) {
        ph_err_set(err, "%s: cannot read: %s", path, strerror(errno));
        rc = -1;
    }
    if (rc == 0 && r < nranks) {
        ph_err_set(err, "%s: names the node of %u rank%s, the trace has %u", path, r, r == 1 ? "" : "s", nranks);
        rc = -1;
    }
    free(line);
    json_decref(names);
    fclose(f);
    return rc == 0 ? (int)nnodes : -1;
}

enum ph_map_kind ph_map_kind(const char *policy)
{
    if (!policy || strcmp(policy, "block") == 0)
        return PH_MAP_BLOCK;
    return strcmp(policy, "cyclic") == 0 ? PH_MAP_CYCLIC : PH_MAP_FILE;
}

int ph_node_map(const char *policy, uint32_t nranks, uint32_t ppn, uint32_t *node_of, ph_err *err)
{
    enum ph_map_kind kind = ph_map_kind(policy);
    if (kind == PH_MAP_FILE)
        return ph_node_map_read(policy, nranks, node_of, err);
    if (ppn == 0) {
        ph_err_set(err, "processes per node must be at least 1");
        return -1;
    }
    uint32_t nodes = (uint32_t)(((uint64_t)nranks + ppn - 1) / ppn);
    for (uint32_t r = 0; r < nranks; r++)
        node_of[r] = kind == PH_MAP_BLOCK ? r / ppn : r % nodes;
    return (int)nodes;
}
