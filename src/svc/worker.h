/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Ring threads: one per core (conf `threads`), each with its own io_uring, fiber scheduler,
 * connections, handle cache and credentials. A request runs on the ring that received it, from
 * socket to reply, as a fiber (io/fiber.h): its file calls suspend it and their CQEs resume it,
 * so a ring has many requests in flight and no thread waits for one I/O. Rings talk to each
 * other only by message (the scheduler's inbox, woken through an eventfd the ring reads). */
#ifndef NFSD_UC_SVC_WORKER_H
#define NFSD_UC_SVC_WORKER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "nfsd.h"

/* Start n ring threads (server.c's listeners must be open: ring 0 accepts for all). 0 or -errno;
 * on failure nothing is left running. */
int workers_start(struct server *srv, unsigned n);
/* Stop accepting and reading, answer the requests in flight, close every connection, join the
 * rings (each closes its handle cache as it ends, writing what the boundary cache still holds
 * for its files), and free them. */
void workers_stop(struct server *srv);
/* The ring of the calling thread, NULL on other threads (the main thread, the blocking pool). */
struct worker *worker_self(void);
/* Wake w's loop from any thread (it then runs its inbox and housekeeping). */
void worker_kick(struct worker *w);
/* Whether any ring has a request running other than the caller's (parked ones excluded): one
 * of them may be the WRITE a parked one waits for. Sums per-ring counters: no shared hot line. */
bool workers_busy(struct server *srv, const struct worker *self);
/* The calling request starts (a new one, or a parked one going on) or stops (ending, or
 * parking) being counted by workers_busy(); stopping runs worker_idle_check(). */
void worker_running(struct worker *w, bool running);
/* A new request begins on w: worker_running(w, true), and the time noted for
 * workers_last_start(). */
void worker_request_begin(struct worker *w);
/* When the latest request began, on any ring (CLOCK_MONOTONIC ns): while they keep coming, the
 * WRITE a parked one waits for may be among the next, even if every one so far has parked. */
uint64_t workers_last_start(struct server *srv);
/* A WRITE parked for its neighbour (fs/fileio.c) is listed on its ring between begin and end:
 * when no request is left running anywhere, its wait is kicked (it then gives up waiting), so it
 * needs no periodic look at whether the server went idle. */
void worker_park_begin(struct worker *w, struct fs_parked *p);
void worker_park_end(struct worker *w, struct fs_parked *p);

/* What the file-system layer asks of the rings (fs/fs.h), for fs_new(). */
extern const struct fs_ring_ops workers_fs_ops;

#endif
