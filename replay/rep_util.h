/* rep_util.h - a hash map from 64-bit keys to non-NULL pointers (requests by
 * handle, messages and wildcard receives by recorded id). */
#ifndef REP_UTIL_H
#define REP_UTIL_H

#include <stddef.h>
#include <stdint.h>

typedef struct rep_map_slot {
    uint64_t key;
    void *val; /* NULL: free slot */
} rep_map_slot;

typedef struct rep_map {
    rep_map_slot *s;
    size_t cap, n;
} rep_map;

void *rep_map_get(const rep_map *m, uint64_t key);
void rep_map_put(rep_map *m, uint64_t key, void *val);
void *rep_map_del(rep_map *m, uint64_t key); /* the value removed, or NULL */

#endif
