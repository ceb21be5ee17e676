/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Per-request bump allocator: everything a handler allocates for its result lives until the
 * reply has been encoded, then goes at once. */
#ifndef NFSD_UC_BASE_ARENA_H
#define NFSD_UC_BASE_ARENA_H

#include <stddef.h>

struct arena_blk;
struct arena {
	struct arena_blk *head;
};
void *arena_alloc(struct arena *a, size_t n);
char *arena_strdup(struct arena *a, const char *s);
void arena_free(struct arena *a);

#endif
