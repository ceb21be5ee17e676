/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "svc/worker.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "base/bufstash.h"
#include "fs/fs.h"
#include "io/fiber.h"
#include "io/ring.h"
#include "base/log.h"
#include "svc/seen.h"
#include "svc/server.h"

#define RING_ENTRIES 1024
/* Each fiber's stack. Handlers keep little on it (READDIR's 16 KiB getdents buffer is the
 * largest); pages are touched lazily, so this is address space more than memory. Sanitizer
 * builds grow every frame. */
#if defined(__SANITIZE_ADDRESS__)
#define FIBER_STACK (1024 * 1024)
#else
#define FIBER_STACK (256 * 1024)
#endif

static _Thread_local struct worker *tls_worker;

struct worker *worker_self(void) { return tls_worker; }

void worker_kick(struct worker *w)
{
	uint64_t one = 1;
	if (write(w->ev_fd, &one, sizeof one) < 0)
		log_err("ring %u: cannot wake it: %s", w->id, strerror(errno));
}

static void notify(void *ctx) { worker_kick(ctx); }

bool workers_busy(struct svc *srv, const struct worker *self)
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

uint64_t workers_last_start(struct svc *srv)
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

void worker_park_begin(struct worker *w, struct fs_parked *p)
{
	*p = (struct fs_parked){.next = w->parked};
	if (w->parked)
		w->parked->prev = p;
	w->parked = p;
	atomic_fetch_add(&w->nparked, 1);
	atomic_fetch_add(&w->srv->nparked, 1);
}

void worker_park_end(struct worker *w, struct fs_parked *p)
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
	for (struct fs_parked *p = w->parked; p; p = p->next)
		co_kick(&p->kick);
}

/* w's count of running requests just fell: if nothing runs anywhere now, kick every parked
 * WRITE (a message to each ring that has some). On w's thread, at most request ends: with no
 * WRITE parked anywhere (nearly always) it reads one counter, not every ring's. */
static void worker_idle_check(struct worker *w)
{
	struct svc *srv = w->srv;
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

/* ---- what the file-system layer asks of the rings ---- */

static bool ops_busy(void *ring)
{
	struct worker *w = ring;
	return workers_busy(w->srv, w);
}

static uint64_t ops_last_start(void *ring)
{
	return workers_last_start(((struct worker *)ring)->srv);
}

static unsigned ops_parked(void *ring)
{
	return atomic_load(&((struct worker *)ring)->srv->nparked);
}

static void ops_running(void *ring, bool running)
{
	worker_running(ring, running);
}

static void ops_park_begin(void *ring, struct fs_parked *p)
{
	worker_park_begin(ring, p);
}

static void ops_park_end(void *ring, struct fs_parked *p)
{
	worker_park_end(ring, p);
}

static int ops_spawn(void *ring, void (*fn)(void *arg), void *arg)
{
	return fiber_spawn(((struct worker *)ring)->sched, fn, arg);
}

static void ops_wake(void *ring)
{
	worker_kick(ring);
}

const struct fs_ring_ops workers_fs_ops = {
	.busy = ops_busy, .last_start = ops_last_start, .parked = ops_parked,
	.running = ops_running, .park_begin = ops_park_begin, .park_end = ops_park_end,
	.spawn = ops_spawn, .wake = ops_wake,
};

/* ---- the loop ---- */

static void begin_stop(struct worker *w)
{
	w->stopping = true;
	fs_chan_stop(w->fs);
	server_ring_stop(w);
}

/* Between the fibers' turns: stop when asked, housekeeping, and the end of the loop once nothing
 * is left (the eventfd read is cancelled last, so nothing of ours stays pending). */
static void between(void *arg)
{
	struct worker *w = arg;
	if (atomic_load(&w->stop_req) && !w->stopping)
		begin_stop(w);
	fs_chan_between(w->fs);
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

/* What a ring keeps of its freed large buffers (base/bufstash.h): an eighth of its share of
 * receive_memory, the bound of the records in flight whose buffers it recycles, so that all the
 * rings together keep an eighth of it (nfsd-uc.conf counts it in the daemon's memory): 32 MiB
 * each of the default 512M on two rings, 25 buffers of a 1 MiB WRITE, for the frees and
 * allocations that do not take turns (write-behind frees a run's records at once). */
static size_t stash_bound(const struct worker *w)
{
	return w->srv->cfg->receive_memory / w->srv->nworkers / 8;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	bufstash_keep(stash_bound(w));
	fiber_sched_bind(w->sched);
	io_ring_bind_thread(w->ring);
	tls_worker = w;
	fs_chan_bind(w->fs);
	io_ring_set_sched(w->ring, w->sched, between, w);
	io_ring_set_personality_hook(w->ring, fs_chan_personality, w->fs);
	io_ring_read(w->ring, &w->ev_op, w->ev_fd, &w->ev_buf, sizeof w->ev_buf);
	server_ring_start(w);
	int rc = io_ring_run(w->ring, &w->done);
	if (rc < 0)
		log_err("ring %u: io_uring: %s", w->id, strerror(-rc));
	server_ring_free(w);
	/* Messages that came after the end (a connection handed over late) are answered by
	 * their handlers seeing `done`. */
	fiber_sched_take_inbox(w->sched);
	fs_chan_end(w->fs);
	io_ring_set_sched(w->ring, NULL, NULL, NULL);
	fiber_sched_bind(NULL);
	io_ring_bind_thread(NULL);
	tls_worker = NULL;
	fs_chan_bind(NULL);
	bufstash_keep(0);
	return NULL;
}

static int worker_init(struct worker *w, struct svc *srv, unsigned id)
{
	*w = (struct worker){.srv = srv, .id = id, .fs = fs_chan(srv->fs, id), .ev_fd = -1,
			     .ev_op = {on_event}, .idle_msg = {.fn = on_idle}};
	w->ring = io_ring_new(RING_ENTRIES);
	if (!w->ring)
		return -errno;
	w->ev_fd = eventfd(0, EFD_CLOEXEC);
	if (w->ev_fd < 0)
		return -errno;
	w->sched = fiber_sched_new(FIBER_STACK, notify, w);
	w->seen = seen_new();
	if (!w->sched || !w->fs || !w->seen)
		return -ENOMEM;
	fs_chan_attach(w->fs, w, w->ring, w->sched);
	if (srv->obs.ring_new && !(w->obs = srv->obs.ring_new(srv->obs.ctx, id)))
		return -ENOMEM;
	return 0;
}

static void worker_fini(struct worker *w)
{
	/* A connection ring 0 handed over after this ring had ended: its handler closes it. */
	if (w->sched)
		fiber_sched_take_inbox(w->sched);
	io_ring_free(w->ring);
	fiber_sched_free(w->sched);
	seen_free(w->seen);
	if (w->ev_fd >= 0)
		close(w->ev_fd);
}

int svc_start(struct svc *srv, unsigned n)
{
	struct worker *w = calloc(n, sizeof *w);
	if (!w)
		return -ENOMEM;
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
		svc_stop(srv);
	return rc;
}

void svc_stop(struct svc *srv)
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
}
