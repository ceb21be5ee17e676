/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The status monitor's persistent state, in state_dir/nsm (what rpc.statd keeps in
 * /var/lib/nfs): the state number, odd while the server runs and bumped at every start (so
 * clients can tell a restart), and one record per client host holding locks (hosts/ADDRESS:
 * its caller_name and the address of ours it used), so that after a crash or restart every one
 * of them is sent SM_NOTIFY and reclaims its locks. Records are written and synced before the
 * host's first lock is granted. Blocking file I/O: callers run it off the rings. */
#ifndef NFSD_UC_LOCK_NSM_H
#define NFSD_UC_LOCK_NSM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct nsm;

struct nsm_rec {
	struct sockaddr_storage addr;   /* the client */
	struct sockaddr_storage local;  /* ours it called (AF_UNSPEC: not known) */
	char name[256];                 /* its caller_name (may be empty) */
};

/* Open state_dir/nsm (created), bump the state number to the next odd one and sync it, and
 * read the records the previous run left. NULL on failure (logged). */
struct nsm *nsm_open(const char *state_dir);
/* clean: the server stops in order, the state goes even (as statd does at shutdown). */
void nsm_close(struct nsm *s, bool clean);
int32_t nsm_state(const struct nsm *s);
/* The records found at open (valid until nsm_close). */
size_t nsm_records(const struct nsm *s, const struct nsm_rec **out);
/* Record a client host (replacing its record), synced. 0 or -errno. */
int nsm_write(struct nsm *s, const struct sockaddr_storage *addr,
	      const struct sockaddr_storage *local, const char *name);
/* Remove a host's record. */
void nsm_remove(struct nsm *s, const struct sockaddr_storage *addr);

#endif
