/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Acting as the caller: the ring thread's fsuid, fsgid and supplementary groups are switched per
 * request, so the kernel checks every access (mode bits, ACLs) as it would for the user. Thread-local
 * by construction: setfsuid/setfsgid are per thread, and setgroups goes through the raw syscall because
 * glibc's wrapper would apply it to every thread of the process.
 *
 * Many requests share a ring thread, each in its own fiber: the thread's credentials are part of
 * a fiber's context, saved when it is switched out and put back when it is switched in
 * (cred_save/cred_restore as its hooks), so every call a fiber makes, and every SQE it submits,
 * runs as that fiber's caller. */
#ifndef NFSD_UC_FS_CRED_H
#define NFSD_UC_FS_CRED_H

#include <stdbool.h>

#include "rpc/oncrpc.h"

struct fs_chan;

/* The file-system identity applied to a thread. */
struct cred_state {
	struct rpc_cred cur;
	bool is_root;
};

/* Switch ch's thread to cred (no-op when already applied). Returns 0 or -errno. */
int cred_apply(struct fs_chan *ch, const struct rpc_cred *cred);
/* Back to the server's own identity (root), e.g. to open a handle. */
int cred_root(struct fs_chan *ch);
/* access(2) semantics for the current fs credentials on an O_PATH fd: R_OK, W_OK, X_OK. 0 or -errno. */
int cred_access(int fd, int mode);

/* fn(arg) on the daemon's blocking pool (io/pool.h), under the credentials ch's thread has now
 * (the calling fiber's), the fiber suspended meanwhile; in place when not called from a fiber or
 * when ch is NULL. fn's result, or -errno if the credentials could not be taken (fn not run).
 * fn returns a negative errno on failure: errno itself belongs to the pool thread. */
long cred_offload(struct fs_chan *ch, long (*fn)(void *), void *arg);
/* The same as the server (root), leaving the ring thread's credentials as they are. */
long cred_offload_root(struct fs_chan *ch, long (*fn)(void *), void *arg);
/* fn(args[i]) into results[i] for each i < n (at most POOL_RUN_MAX), side by side on the pool
 * (pool_run_all), each under the calling fiber's credentials as cred_offload runs fn. */
void cred_offload_all(struct fs_chan *ch, unsigned n, long (*fn)(void *), void *const *args,
		      long *results);
/* How many calls cred_offload_all runs side by side (pool_width). */
unsigned cred_offload_width(const struct fs_chan *ch);

/* The personality (io/ring.h) of ch's thread's current credentials, registered on first use and
 * cached per ring (bounded, least recently used goes); 0 when the kernel has none. */
int cred_personality(struct fs_chan *ch);
int cred_personalities_init(struct fs_chan *ch);
void cred_personalities_free(struct fs_chan *ch);

/* A fiber's credentials while it is switched out. */
struct cred_saved {
	struct fs_chan *ch;
	struct rpc_cred cred;
	bool root;
	bool set;                     /* false until first switched out: it inherits the thread's */
};
void cred_save(void *saved);      /* fiber hooks (io/fiber.h), ctx a struct cred_saved */
void cred_restore(void *saved);

#endif
