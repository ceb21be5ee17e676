/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The MOUNT v3 program (RFC 1813 appendix I), as the daemon registers it: its procedure table,
 * and its state, the list of who mounted what (mountlist.h) and the lines MNT logs. */
#ifndef NFSD_UC_MOUNT_MOUNT_H
#define NFSD_UC_MOUNT_MOUNT_H

#include "base/log.h"
#include "svc/dispatch.h"

struct mount_list;

struct mount_state {
	struct mount_list *list;      /* for DUMP (mount/mountlist.h) */
	unsigned max_entries;         /* [server] mount_list_entries */
	struct log_ratelimit mount_log, refused_log, drop_log;
};

/* A list of at most max_entries. NULL when out of memory (logged). */
struct mount_state *mount_state_new(unsigned max_entries);
void mount_state_free(struct mount_state *m);

/* Registered with a struct mount_state as its state. */
extern const struct prog_desc mount3_program;

#endif
