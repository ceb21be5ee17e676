/* SPDX-License-Identifier: GPL-2.0-or-later */
/* MOUNT's list of who mounted what, which DUMP reports (RFC 1813 appendix I: the list is only
 * informational, and rpc.mountd's rmtab is no more exact). One entry per client address and
 * export, however the client spelled the path, so that no client can grow it by spelling one
 * export many ways; at most a bounded number of entries in all ([server] mount_list_entries),
 * the least recently mounted dropped past it. Found by a keyed hash (SipHash, a random key: a
 * client cannot choose names that collide), ordered by last mount. Shared by every ring under
 * one mutex; no call waits for anything but that mutex. */
#ifndef NFSD_UC_MOUNT_MOUNTLIST_H
#define NFSD_UC_MOUNT_MOUNTLIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mount_list;

/* At most max entries (at least 1). NULL when out of memory. */
struct mount_list *mount_list_new(unsigned max);
void mount_list_free(struct mount_list *l);

/* host mounted the export whose canonical path is dir: its entry, new or moved to the front.
 * 1 when the least recently mounted entry was dropped to make room, 0, -1 out of memory. */
int mount_list_add(struct mount_list *l, const char *host, const char *dir);
/* host's entry for dir goes; with dir NULL, all of host's entries (UMNTALL). */
void mount_list_remove(struct mount_list *l, const char *host, const char *dir);

/* Each entry, the most recently mounted first, while fn returns true. fn runs under the
 * list's mutex: it must not call back into the list. */
void mount_list_walk(struct mount_list *l, bool (*fn)(void *ctx, const char *host, const char *dir),
		     void *ctx);

struct mount_list_stats {
	uint64_t entries;      /* now */
	uint64_t dropped;      /* dropped for room since the start */
};
void mount_list_stats(struct mount_list *l, struct mount_list_stats *out);

#endif
