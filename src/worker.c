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
	pthread_mutex_lock(&q->lock);
	if (q->tail) q->tail->next = j; else q->head = j;
	q->tail = j;
	pthread_cond_signal(&q->cond);
	pthread_mutex_unlock(&q->lock);
}

/* The next job, or NULL when stopping and the queue is empty. Waking every SWEEP_SECONDS with
 * nothing to do, let go of handles of files deleted behind the handle cache's back (their space
 * stays allocated while we hold them). */
static struct job *next_job(struct worker *w)
{
	struct jobq *q = w->srv->jobs;
	pthread_mutex_lock(&q->lock);
	while (!q->head && !q->stop) {
		struct timespec t;
		clock_gettime(CLOCK_REALTIME, &t);
		t.tv_sec += SWEEP_SECONDS;
		if (pthread_cond_timedwait(&q->cond, &q->lock, &t) == ETIMEDOUT && !q->head) {
			pthread_mutex_unlock(&q->lock);
			unsigned n = fh_sweep(w);
			if (n)
				log_debug("worker %u: closed %u handle(s) of deleted files", w->id, n);
			pthread_mutex_lock(&q->lock);
		}
	}
	struct job *j = q->head;
	if (j) {
		q->head = j->next;
		if (!q->head)
			q->tail = NULL;
	}
	pthread_mutex_unlock(&q->lock);
	return j;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	io_ring_bind_thread(w->ring);
	struct job *j;
	while ((j = next_job(w))) {
		j->reply = dispatch_record(w, &j->peer, j->rec, j->len);
		/* The record (a WRITE's payload) is not needed once the handler returned. */
		free(j->mem);
		j->mem = NULL;
		j->done(j);
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
	if (!q || !w) {
		free(q);
		free(w);
		return -ENOMEM;
	}
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->cond, NULL);
	srv->jobs = q;
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
	free(w);
}
