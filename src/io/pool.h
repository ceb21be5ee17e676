/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A small bounded pool of threads for the calls io_uring has no operation for (open_by_handle_at,
 * getdents64, readlinkat, the setattr calls...): a fiber hands the call over and suspends; a pool
 * thread runs it and wakes the fiber, which goes on on its own ring. A call that blocks (a huge
 * directory, a stuck file system) holds a pool thread, never a ring. It knows nothing of NFS. */
#ifndef NFSD_UC_IO_POOL_H
#define NFSD_UC_IO_POOL_H

struct pool;

/* n threads (at least 1); each calls thread_init(ctx) once when it starts (NULL: nothing).
 * NULL with errno set on failure. */
struct pool *pool_new(unsigned n, void (*thread_init)(void *ctx), void *ctx);
/* Runs what is queued, then joins the threads. */
void pool_free(struct pool *p);
/* fn(arg) on a pool thread, the calling fiber suspended meanwhile; in place when not called from
 * a fiber (start-up, exit) or when p is NULL. Returns fn's result. */
long pool_run(struct pool *p, long (*fn)(void *arg), void *arg);
/* fn(args[i]) into results[i] for each i < n, as pool threads come free, the calling fiber
 * suspended until all are done: work that one thread would make a client wait for, spread over
 * idle cores. More than POOL_RUN_MAX go one at a time; in place, one after another, where
 * pool_run runs in place. */
#define POOL_RUN_MAX 8
void pool_run_all(struct pool *p, unsigned n, long (*fn)(void *arg), void *const *args,
		  long *results);
/* How many calls it runs side by side: its threads, or the CPUs online when it started if
 * fewer (more would only take turns). */
unsigned pool_width(const struct pool *p);

#endif
