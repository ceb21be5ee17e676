#include "worker.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dispatch.h"
#include "fh.h"
#include "io/ring.h"
#include "log.h"

#define SWEEP_SECONDS 10
/* A parked call waits for its neighbour while other requests are queued or running (one of them
 * may be it), and at least PARK_MIN_NS; with nothing else going on, PARK_MIN_NS is all it gets,
 * and never more than PARK_MAX_NS. */
#define PARK_MIN_NS (10 * 1000 * 1000ll)
#define PARK_MAX_NS (1000 * 1000 * 1000ll)

struct parked_call {
	struct parked_call *next;
	struct call *cl;
	struct job *j;
	struct timespec since;        /* CLOCK_REALTIME, as the job queue's timed wait */
};

/* Inodes whose last link went away through one worker: every other worker closes its handles of
 * them at its next turn, so the file's space is freed without waiting for a sweep. */
#define FORGET_RING 1024
struct forget_ring {
	pthread_mutex_t lock;
	_Atomic uint64_t seq;         /* entries ever published */
	struct {
		dev_t dev;
		uint64_t ino;
	} ent[FORGET_RING];
};

struct jobq {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct job *head, *tail;
	bool stop;
};

void job_free(struct job *j)
{
	if (!j)
		return;
	reply_free(j->reply);
	free(j->mem);
	free(j);
}

void jobs_push(struct server *srv, struct job *j)
{
	struct jobq *q = srv->jobs;
	j->next = NULL;
	atomic_fetch_add(&srv->active, 1);
	pthread_mutex_lock(&q->lock);
	if (q->tail) q->tail->next = j; else q->head = j;
	q->tail = j;
	pthread_cond_signal(&q->cond);
	pthread_mutex_unlock(&q->lock);
}

static bool before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

static struct timespec plus_ns(struct timespec t, long long ns)
{
	ns += t.tv_nsec;
	t.tv_sec += (time_t)(ns / 1000000000);
	t.tv_nsec = (long)(ns % 1000000000);
	return t;
}

static long long ns_between(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) * 1000000000ll + (b->tv_nsec - a->tv_nsec);
}

/* The next job; or NULL after waking with none: a parked call's wait may be over or it may have
 * become ready (jobs_wake), the sweep time came, or another worker asked for a sweep or a forget.
 * *stop: the queue is closing. */
static struct job *next_job(struct worker *w, bool *stop)
{
	struct jobq *q = w->srv->jobs;
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	struct timespec now = t;
	t.tv_sec += SWEEP_SECONDS;
	if (w->parked) {
		/* Look again when the oldest call's minimum wait is over, then every PARK_MIN_NS. */
		struct timespec due = plus_ns(w->parked->since, PARK_MIN_NS);
		t = before(&now, &due) ? due : plus_ns(now, PARK_MIN_NS);
	}
	pthread_mutex_lock(&q->lock);
	if (!q->head && !q->stop)
		pthread_cond_timedwait(&q->cond, &q->lock, &t);
	struct job *j = q->head;
	if (j) {
		q->head = j->next;
		if (!q->head)
			q->tail = NULL;
	}
	*stop = q->stop;
	pthread_mutex_unlock(&q->lock);
	return j;
}

/* Let go of handles of files deleted behind the handle cache's back (a local rm, or a REMOVE
 * through another worker): their space stays allocated while we hold them. Every SWEEP_SECONDS,
 * busy or not, and at once when a WRITE found the disk full (fh_sweep_all). */
static void maybe_sweep(struct worker *w)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	unsigned gen = atomic_load(&w->srv->sweep_gen);
	if (now.tv_sec < w->next_sweep && gen == atomic_load(&w->sweep_gen))
		return;
	w->next_sweep = now.tv_sec + SWEEP_SECONDS;
	unsigned n = fh_sweep(w);
	atomic_store(&w->sweep_gen, gen);
	if (n)
		log_debug("worker %u: closed %u handle(s) of deleted files", w->id, n);
}

void workers_forget(struct worker *self, dev_t dev, uint64_t ino)
{
	struct server *srv = self->srv;
	struct forget_ring *f = srv->forgets;
	pthread_mutex_lock(&f->lock);
	uint64_t s = atomic_load(&f->seq);
	f->ent[s % FORGET_RING].dev = dev;
	f->ent[s % FORGET_RING].ino = ino;
	atomic_store(&f->seq, s + 1);
	pthread_mutex_unlock(&f->lock);
	self->forget_seq += self->forget_seq == s;   /* ours is done already */
	pthread_mutex_lock(&srv->jobs->lock);
	pthread_cond_broadcast(&srv->jobs->cond);
	pthread_mutex_unlock(&srv->jobs->lock);
}

/* Apply what other workers published; fallen too far behind, sweep everything instead. */
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
	pthread_mutex_lock(&srv->jobs->lock);
	pthread_cond_broadcast(&srv->jobs->cond);
	pthread_mutex_unlock(&srv->jobs->lock);
	if (!wait)
		return;
	/* Idle workers sweep as soon as they wake; a busy one after its request: wait a little. */
	for (int tries = 0; tries < 100; tries++) {
		unsigned behind = 0;
		for (unsigned i = 0; i < srv->nworkers; i++)
			if (&srv->workers[i] != self && (int)(atomic_load(&srv->workers[i].sweep_gen) - gen) < 0)
				behind++;
		if (!behind)
			return;
		struct timespec ms = {0, 1000 * 1000};
		nanosleep(&ms, NULL);
	}
}

/* Something changed that a parked call may wait for: wake idle workers to look. */
static void jobs_wake(struct server *srv)
{
	if (!atomic_load(&srv->nparked))
		return;
	pthread_mutex_lock(&srv->jobs->lock);
	pthread_cond_broadcast(&srv->jobs->cond);
	pthread_mutex_unlock(&srv->jobs->lock);
}

static void park(struct worker *w, struct call *cl, struct job *j)
{
	struct parked_call *p = calloc(1, sizeof *p);
	if (!p) {
		/* Cannot wait: finish now, filling what the neighbour would have brought. */
		dispatch_resume(w, cl, true, &j->reply);
		j->done(j);
		return;
	}
	p->cl = cl;
	p->j = j;
	clock_gettime(CLOCK_REALTIME, &p->since);
	struct parked_call **pp = &w->parked;
	while (*pp)
		pp = &(*pp)->next;
	*pp = p;
	w->nparked++;
	atomic_fetch_add(&w->srv->nparked, 1);
}

/* Resume what can go on: every parked call that is ready, or whose wait is over (see PARK_MIN_NS),
 * or all when the server is stopping. Returns how many finished. */
static unsigned resume_parked(struct worker *w, bool stopping)
{
	struct timespec now;
	unsigned n = 0;
	clock_gettime(CLOCK_REALTIME, &now);
	bool idle = atomic_load(&w->srv->active) == 0;
	for (struct parked_call **pp = &w->parked; *pp;) {
		struct parked_call *p = *pp;
		long long waited = ns_between(&p->since, &now);
		bool force = stopping || waited >= PARK_MAX_NS || (idle && waited >= PARK_MIN_NS);
		if (!dispatch_resume(w, p->cl, force, &p->j->reply)) {
			pp = &p->next;
			continue;
		}
		*pp = p->next;
		w->nparked--;
		atomic_fetch_sub(&w->srv->nparked, 1);
		p->j->done(p->j);
		free(p);
		n++;
	}
	return n;
}

static void run_job(struct worker *w, struct job *j)
{
	struct call *cl = dispatch_record(w, &j->peer, j->rec, j->len, &j->reply);
	/* The record (a WRITE's payload) is not needed once the handler returned. */
	free(j->mem);
	j->mem = NULL;
	atomic_fetch_sub(&w->srv->active, 1);
	if (cl)
		park(w, cl, j);
	else
		j->done(j);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	io_ring_bind_thread(w->ring);
	for (;;) {
		bool stop = false;
		struct job *j = next_job(w, &stop);
		if (j) {
			run_job(w, j);
			jobs_wake(w->srv);
		}
		if (w->parked && resume_parked(w, stop && !j))
			jobs_wake(w->srv);
		apply_forgets(w);
		maybe_sweep(w);
		if (!j && stop && !w->parked)
			break;
	}
	return NULL;
}

static int worker_init(struct worker *w, struct server *srv, unsigned id)
{
	*w = (struct worker){.srv = srv, .id = id, .cur_is_root = true};
	w->ring = io_ring_new(64);
	if (!w->ring)
		return -errno;
	w->fhc = fh_cache_new(srv, srv->fh_cache_max);
	return w->fhc ? 0 : -ENOMEM;
}

static void worker_fini(struct worker *w)
{
	/* Closing the handles writes what the boundary cache still holds for them: do it on a thread
	 * bound to this worker's ring (the main thread has none and would use plain syscalls). */
	io_ring_bind_thread(w->ring);
	fh_cache_free(w->fhc);
	io_ring_bind_thread(NULL);
	io_ring_free(w->ring);
}

int workers_start(struct server *srv, struct worker **out, unsigned n)
{
	struct jobq *q = calloc(1, sizeof *q);
	struct worker *w = calloc(n, sizeof *w);
	struct forget_ring *f = calloc(1, sizeof *f);
	if (!q || !w || !f) {
		free(q);
		free(w);
		free(f);
		return -ENOMEM;
	}
	pthread_mutex_init(&f->lock, NULL);
	srv->forgets = f;
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->cond, NULL);
	srv->jobs = q;
	srv->workers = w;
	srv->nworkers = n;
	int rc = 0;
	for (unsigned i = 0; i < n && rc == 0; i++) {
		rc = worker_init(&w[i], srv, i);
		if (rc == 0)
			rc = -pthread_create(&w[i].thread, NULL, worker_main, &w[i]);
		w[i].started = rc == 0;
	}
	if (rc < 0) {
		workers_stop(srv, w, n);
		return rc;
	}
	*out = w;
	return 0;
}

void workers_stop(struct server *srv, struct worker *w, unsigned n)
{
	struct jobq *q = srv->jobs;
	if (!q)
		return;
	pthread_mutex_lock(&q->lock);
	q->stop = true;
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->lock);
	for (unsigned i = 0; i < n; i++)
		if (w[i].started)
			pthread_join(w[i].thread, NULL);
	for (unsigned i = 0; i < n; i++)
		if (w[i].ring)
			worker_fini(&w[i]);
	pthread_cond_destroy(&q->cond);
	pthread_mutex_destroy(&q->lock);
	free(q);
	srv->jobs = NULL;
	srv->workers = NULL;
	srv->nworkers = 0;
	free(w);
	pthread_mutex_destroy(&srv->forgets->lock);
	free(srv->forgets);
	srv->forgets = NULL;
}
