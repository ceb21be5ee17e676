/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "svc/worker.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "cache/bcache.h"
#include "fs/cred.h"
#include "fs/exptable.h"
#include "fs/fh.h"
#include "io/fiber.h"
#include "io/ring.h"
#include "base/log.h"
#include "ops/metrics.h"
#include "svc/server.h"

#define SWEEP_SECONDS 10
#define RING_ENTRIES 1024
/* Each fiber's stack. Handlers keep little on it (READDIR's 16 KiB getdents buffer is the
 * largest); pages are touched lazily, so this is address space more than memory. Sanitizer
 * builds grow every frame. */
#if defined(__SANITIZE_ADDRESS__)
#define FIBER_STACK (1024 * 1024)
#else
#define FIBER_STACK (256 * 1024)
#endif

/* Inodes whose last link went away through one ring: every other ring closes its handles of them
 * at its next turn, so the file's space is freed without waiting for a sweep. */
#define FORGET_RING 1024
struct forget_ring {
	pthread_mutex_t lock;
	_Atomic uint64_t seq;         /* entries ever published */
	struct {
		dev_t dev;
		uint64_t ino;
	} ent[FORGET_RING];
};

static _Thread_local struct worker *tls_worker;

struct worker *worker_self(void) { return tls_worker; }

void worker_kick(struct worker *w)
{
	uint64_t one = 1;
	if (write(w->ev_fd, &one, sizeof one) < 0)
		log_err("ring %u: cannot wake it: %s", w->id, strerror(errno));
}

static void notify(void *ctx) { worker_kick(ctx); }

bool workers_busy(struct server *srv, const struct worker *self)
{
	unsigned n = 0;
	for (unsigned i = 0; i < srv->nworkers; i++)
		n += atomic_load_explicit(&srv->workers[i].active, memory_order_relaxed);
	return n > (self ? 1u : 0u);
}

static void worker_idle_check(struct worker *w);

void worker_request_begin(struct worker *w)
{
	atomic_store_explicit(&w->last_start, fiber_now_ns(), memory_order_relaxed);
	worker_running(w, true);
}

uint64_t workers_last_start(struct server *srv)
{
	uint64_t last = 0;
	for (unsigned i = 0; i < srv->nworkers; i++) {
		uint64_t t = atomic_load_explicit(&srv->workers[i].last_start, memory_order_relaxed);
		last = t > last ? t : last;
	}
	return last;
}

void worker_running(struct worker *w, bool running)
{
	/* Written by this ring only, read by the others: no read-modify-write needed. */
	unsigned n = atomic_load_explicit(&w->active, memory_order_relaxed);
	atomic_store_explicit(&w->active, running ? n + 1 : n - 1, memory_order_relaxed);
	if (!running)
		worker_idle_check(w);
}

/* A fiber of the ring's own, as the server: whatever fiber ran before, its I/O goes as the
 * server (the files are open), or as the cache's writer_begin op says while it writes a file;
 * saved across its waits. */
struct server_fiber {
	struct cred_saved as_server;
	void (*fn)(void *arg);
	void *arg;
};

static void server_fiber_main(void *p)
{
	struct server_fiber *sf = p;

	fiber_set_hooks(fiber_self(), cred_save, cred_restore, &sf->as_server);
	cred_restore(&sf->as_server);
	sf->fn(sf->arg);
	fiber_set_hooks(fiber_self(), NULL, NULL, NULL);
	free(sf);
}

int worker_spawn_as_server(struct worker *w, void (*fn)(void *arg), void *arg)
{
	struct server_fiber *sf = malloc(sizeof *sf);
	if (!sf)
		return -ENOMEM;
	*sf = (struct server_fiber){.as_server = {.w = w, .root = true, .set = true},
				    .fn = fn, .arg = arg};
	int rc = fiber_spawn(w->sched, server_fiber_main, sf);
	if (rc < 0)
		free(sf);
	return rc;
}

static void writeback_main(void *arg)
{
	struct worker *w = arg;
	while (!w->stopping || bcache_writeback_wanted(w->srv->cache)) {
		ssize_t n = bcache_writeback(w->srv->cache);
		if (n == 0)
			break;
		if (n < 0)
			log_ratelimited(&w->srv->write_errors, LOG_WARNING,
					"write-behind failed: %s; the next COMMIT of the file reports it",
					strerror((int)-n));
	}
	atomic_fetch_sub(&w->srv->wb_fibers, 1);
}

/* Each write-behind fiber keeps one run (up to a few MiB) in flight. Their number is the
 * server's, not each ring's: the device's queue wants [cache] writeback_depth of them (as fio
 * keeps its iodepth), whatever the number of rings; more only queue COMMITs and READs behind
 * a wall of writes, fewer leave a fast device idle between runs (at 4 per ring on 2 rings,
 * cached 1 MiB sequential WRITEs ran at 0.53 of write_mode = direct's speed; at 16, 0.72-0.90). */
void worker_writeback(struct worker *w)
{
	struct server *srv = w->srv;
	unsigned n = atomic_load_explicit(&srv->wb_fibers, memory_order_relaxed);

	do {
		if (n >= srv->cfg->cache_writeback_depth)
			return;
	} while (!atomic_compare_exchange_weak(&srv->wb_fibers, &n, n + 1));
	/* Not spawned for lack of memory: COMMIT and the bound write the data instead. */
	if (worker_spawn_as_server(w, writeback_main, w) != 0)
		atomic_fetch_sub(&srv->wb_fibers, 1);
}

void worker_park_begin(struct worker *w, struct parked_call *p)
{
	*p = (struct parked_call){.next = w->parked};
	if (w->parked)
		w->parked->prev = p;
	w->parked = p;
	atomic_fetch_add(&w->nparked, 1);
	atomic_fetch_add(&w->srv->nparked, 1);
}

void worker_park_end(struct worker *w, struct parked_call *p)
{
	if (p->prev) p->prev->next = p->next; else w->parked = p->next;
	if (p->next)
		p->next->prev = p->prev;
	atomic_fetch_sub(&w->nparked, 1);
	atomic_fetch_sub(&w->srv->nparked, 1);
}

/* On the ring's own thread (its parked calls are its own): end their waits. */
static void on_idle(struct fiber_msg *m)
{
	struct worker *w = (struct worker *)((char *)m - offsetof(struct worker, idle_msg));
	atomic_store(&w->idle_posted, false);
	for (struct parked_call *p = w->parked; p; p = p->next)
		co_kick(&p->kick);
}

/* w's count of running requests just fell: if nothing runs anywhere now, kick every parked
 * WRITE (a message to each ring that has some). On w's thread, at most request ends: with no
 * WRITE parked anywhere (nearly always) it reads one counter, not every ring's. */
static void worker_idle_check(struct worker *w)
{
	struct server *srv = w->srv;
	if (!atomic_load_explicit(&srv->nparked, memory_order_relaxed) ||
	    atomic_load_explicit(&w->active, memory_order_relaxed) || workers_busy(srv, NULL))
		return;
	for (unsigned i = 0; i < srv->nworkers; i++) {
		struct worker *r = &srv->workers[i];
		bool no = false;
		if (atomic_load(&r->nparked) &&
		    atomic_compare_exchange_strong(&r->idle_posted, &no, true))
			fiber_sched_post(r->sched, &r->idle_msg);
	}
}

/* ---- handle-cache housekeeping, between requests ---- */

/* Close the handles the sweeps took out of the cache, on a fiber: closing waits for the file's
 * cache lock, which a fiber of this ring may hold. Then this ring's sweep counts as done. */
static void close_doomed_main(void *arg)
{
	struct worker *w = arg;

	while (fh_close_doomed(w))
		;
	atomic_store(&w->sweep_gen, w->sweep_pending);
	w->closing = false;
}

static void close_doomed(struct worker *w)
{
	if (w->closing)
		return;
	if (!fh_doomed(w)) {
		atomic_store(&w->sweep_gen, w->sweep_pending);
		return;
	}
	/* Not spawned for lack of memory: the next turn tries again. */
	if (worker_spawn_as_server(w, close_doomed_main, w) == 0)
		w->closing = true;
}

/* Let go of handles of files deleted behind the handle cache's back (a local rm, or a REMOVE
 * through another ring): their space stays allocated while we hold them. Every SWEEP_SECONDS,
 * busy or not, and at once when a WRITE found the disk full (workers_sweep_all). */
static void maybe_sweep(struct worker *w)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	unsigned gen = atomic_load(&w->srv->sweep_gen);
	if (w->closing || (now.tv_sec < w->next_sweep && gen == atomic_load(&w->sweep_gen)))
		return;
	w->next_sweep = now.tv_sec + SWEEP_SECONDS;
	unsigned n = fh_sweep(w);
	w->sweep_pending = gen;
	if (n)
		log_debug("ring %u: closing %u handle(s) of deleted files", w->id, n);
}

static void kick_others(struct worker *self)
{
	struct server *srv = self->srv;
	for (unsigned i = 0; i < srv->nworkers; i++)
		if (&srv->workers[i] != self)
			worker_kick(&srv->workers[i]);
}

void workers_forget(struct worker *self, dev_t dev, uint64_t ino)
{
	struct forget_ring *f = self->srv->forgets;
	pthread_mutex_lock(&f->lock);
	uint64_t s = atomic_load(&f->seq);
	f->ent[s % FORGET_RING].dev = dev;
	f->ent[s % FORGET_RING].ino = ino;
	atomic_store(&f->seq, s + 1);
	pthread_mutex_unlock(&f->lock);
	self->forget_seq += self->forget_seq == s;   /* ours is done already */
	kick_others(self);
}

/* Apply what other rings published; fallen too far behind, sweep everything instead. */
static void apply_forgets(struct worker *w)
{
	struct forget_ring *f = w->srv->forgets;
	uint64_t end = atomic_load(&f->seq);
	if (w->forget_seq == end)
		return;
	if (end - w->forget_seq > FORGET_RING) {
		fh_sweep(w);
		w->forget_seq = end;
		return;
	}
	pthread_mutex_lock(&f->lock);
	for (; w->forget_seq < end; w->forget_seq++)
		fh_forget(w, f->ent[w->forget_seq % FORGET_RING].dev, f->ent[w->forget_seq % FORGET_RING].ino);
	pthread_mutex_unlock(&f->lock);
}

void workers_sweep_all(struct worker *self, bool wait)
{
	struct server *srv = self->srv;
	unsigned gen = atomic_fetch_add(&srv->sweep_gen, 1) + 1;
	kick_others(self);
	if (!wait)
		return;
	/* Idle rings sweep as soon as they wake, busy ones between their fibers: wait a little
	 * (the calling fiber sleeps; its ring goes on). */
	for (int tries = 0; tries < 100; tries++) {
		unsigned behind = 0;
		for (unsigned i = 0; i < srv->nworkers; i++)
			if (&srv->workers[i] != self && (int)(atomic_load(&srv->workers[i].sweep_gen) - gen) < 0)
				behind++;
		if (!behind)
			return;
		fiber_sleep_ns(1000 * 1000);
	}
}

/* ---- the loop ---- */

static void begin_stop(struct worker *w)
{
	w->stopping = true;
	server_ring_stop(w);
}

/* Between the fibers' turns: stop when asked, housekeeping, and the end of the loop once nothing
 * is left (the eventfd read is cancelled last, so nothing of ours stays pending). */
static void between(void *arg)
{
	struct worker *w = arg;
	if (atomic_load(&w->stop_req) && !w->stopping)
		begin_stop(w);
	apply_forgets(w);
	maybe_sweep(w);
	close_doomed(w);
	if (w->stopping && !w->done && server_ring_closed(w) && fiber_sched_live(w->sched) == 0) {
		w->done = true;
		io_ring_cancel_op(w->ring, &w->ev_op);
	}
}

/* The eventfd fired: messages from other threads, or a kick to look at the flags above. */
static void on_event(struct io_op *op, int res)
{
	struct worker *w = (struct worker *)((char *)op - offsetof(struct worker, ev_op));
	(void)res;
	fiber_sched_take_inbox(w->sched);
	if (!w->done)
		io_ring_read(w->ring, &w->ev_op, w->ev_fd, &w->ev_buf, sizeof w->ev_buf);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	fiber_sched_bind(w->sched);
	io_ring_bind_thread(w->ring);
	tls_worker = w;
	io_ring_set_sched(w->ring, w->sched, between, w);
	io_ring_set_personality_hook(w->ring, cred_personality, w);
	io_ring_read(w->ring, &w->ev_op, w->ev_fd, &w->ev_buf, sizeof w->ev_buf);
	server_ring_start(w);
	int rc = io_ring_run(w->ring, &w->done);
	if (rc < 0)
		log_err("ring %u: io_uring: %s", w->id, strerror(-rc));
	server_ring_free(w);
	/* Messages that came after the end (a connection handed over late) are answered by
	 * their handlers seeing `done`. */
	fiber_sched_take_inbox(w->sched);
	/* Closing the handles writes what the boundary cache still holds for them, through this
	 * ring (outside any fiber: each call waits in place), on its own thread, which is the only
	 * one that ever submits to it. */
	fh_cache_free(w->fhc);
	w->fhc = NULL;
	io_ring_set_sched(w->ring, NULL, NULL, NULL);
	fiber_sched_bind(NULL);
	io_ring_bind_thread(NULL);
	tls_worker = NULL;
	return NULL;
}

static int worker_init(struct worker *w, struct server *srv, unsigned id)
{
	*w = (struct worker){.srv = srv, .id = id, .creds = {.is_root = true}, .ev_fd = -1,
			     .ev_op = {on_event}, .idle_msg = {.fn = on_idle}};
	w->ring = io_ring_new(RING_ENTRIES);
	if (!w->ring)
		return -errno;
	w->ev_fd = eventfd(0, EFD_CLOEXEC);
	if (w->ev_fd < 0)
		return -errno;
	w->sched = fiber_sched_new(FIBER_STACK, notify, w);
	if (!w->sched)
		return -ENOMEM;
	if (cred_personalities_init(w) < 0)
		return -ENOMEM;
	w->table = srv->table;
	atomic_store(&w->table_released, srv->table ? srv->table->gen : 0);
	w->metrics = calloc(1, sizeof *w->metrics);
	if (!w->metrics)
		return -ENOMEM;
	w->fhc = fh_cache_new(srv, srv->fh_cache_max);
	return w->fhc ? 0 : -ENOMEM;
}

static void worker_fini(struct worker *w)
{
	/* A connection ring 0 handed over after this ring had ended: its handler closes it. */
	if (w->sched)
		fiber_sched_take_inbox(w->sched);
	/* A ring that never ran still has its (empty) handle cache. */
	if (w->fhc)
		fh_cache_free(w->fhc);
	io_ring_free(w->ring);
	cred_personalities_free(w);
	free(w->metrics);
	free(w->names);
	fiber_sched_free(w->sched);
	if (w->ev_fd >= 0)
		close(w->ev_fd);
}

int workers_start(struct server *srv, unsigned n)
{
	struct worker *w = calloc(n, sizeof *w);
	struct forget_ring *f = calloc(1, sizeof *f);
	if (!w || !f) {
		free(w);
		free(f);
		return -ENOMEM;
	}
	pthread_mutex_init(&f->lock, NULL);
	srv->forgets = f;
	srv->workers = w;
	srv->nworkers = n;
	int rc = 0;
	for (unsigned i = 0; i < n && rc == 0; i++)
		rc = worker_init(&w[i], srv, i);
	/* Every ring exists before any starts: ring 0 may hand a connection to any of them. */
	for (unsigned i = 0; i < n && rc == 0; i++) {
		rc = -pthread_create(&w[i].thread, NULL, worker_main, &w[i]);
		w[i].started = rc == 0;
	}
	if (rc < 0)
		workers_stop(srv);
	return rc;
}

void workers_stop(struct server *srv)
{
	struct worker *w = srv->workers;
	unsigned n = srv->nworkers;
	if (!w)
		return;
	for (unsigned i = 0; i < n; i++) {
		atomic_store(&w[i].stop_req, true);
		if (w[i].started)
			worker_kick(&w[i]);
	}
	for (unsigned i = 0; i < n; i++)
		if (w[i].started)
			pthread_join(w[i].thread, NULL);
	for (unsigned i = 0; i < n; i++)
		worker_fini(&w[i]);
	srv->workers = NULL;
	srv->nworkers = 0;
	free(w);
	pthread_mutex_destroy(&srv->forgets->lock);
	free(srv->forgets);
	srv->forgets = NULL;
}
