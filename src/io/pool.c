/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "io/pool.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "io/fiber.h"

/* On the calling fiber's stack: it stays suspended until the job is done. */
struct job {
	struct job *next;
	long (*fn)(void *);
	void *arg;
	long result;
	struct fiber *f;
	atomic_uint *left;   /* pool_run_all: the batch's jobs not done yet; the last one wakes f */
};

struct pool {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct job *head, *tail;
	bool stop;
	unsigned n;
	unsigned width;   /* pool_width */
	void (*thread_init)(void *);
	void *ctx;
	pthread_t threads[];
};

static void *pool_main(void *arg)
{
	struct pool *p = arg;
	if (p->thread_init)
		p->thread_init(p->ctx);
	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (!p->head && !p->stop)
			pthread_cond_wait(&p->cond, &p->lock);
		struct job *j = p->head;
		if (!j)
			break;
		p->head = j->next;
		if (!p->head)
			p->tail = NULL;
		pthread_mutex_unlock(&p->lock);
		struct fiber *f = j->f;
		atomic_uint *left = j->left;
		j->result = j->fn(j->arg);
		/* j lives on the fiber's stack: not touched once the fiber may run */
		if (!left || atomic_fetch_sub_explicit(left, 1, memory_order_acq_rel) == 1)
			fiber_wake(f);
		pthread_mutex_lock(&p->lock);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

struct pool *pool_new(unsigned n, void (*thread_init)(void *ctx), void *ctx)
{
	if (n == 0)
		n = 1;
	struct pool *p = calloc(1, sizeof *p + n * sizeof p->threads[0]);
	if (!p)
		return NULL;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	p->thread_init = thread_init;
	p->ctx = ctx;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	p->width = cpus > 0 && (unsigned long)cpus < n ? (unsigned)cpus : n;
	for (; p->n < n; p->n++) {
		int rc = pthread_create(&p->threads[p->n], NULL, pool_main, p);
		if (rc) {
			pool_free(p);
			errno = rc;
			return NULL;
		}
	}
	return p;
}

void pool_free(struct pool *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	for (unsigned i = 0; i < p->n; i++)
		pthread_join(p->threads[i], NULL);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

static void enqueue(struct pool *p, struct job *j)
{
	if (p->tail)
		p->tail->next = j;
	else
		p->head = j;
	p->tail = j;
}

long pool_run(struct pool *p, long (*fn)(void *arg), void *arg)
{
	struct fiber *f = fiber_self();
	if (!p || !f)
		return fn(arg);
	struct job j = {.fn = fn, .arg = arg, .f = f};
	pthread_mutex_lock(&p->lock);
	enqueue(p, &j);
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
	fiber_suspend();
	return j.result;
}

void pool_run_all(struct pool *p, unsigned n, long (*fn)(void *arg), void *const *args,
		  long *results)
{
	struct fiber *f = fiber_self();
	if (!p || !f || n > POOL_RUN_MAX) {   /* in place, or on the pool one at a time */
		for (unsigned i = 0; i < n; i++)
			results[i] = pool_run(p, fn, args[i]);
		return;
	}
	if (n == 0)
		return;
	struct job jobs[POOL_RUN_MAX];
	atomic_uint left;
	atomic_init(&left, n);
	pthread_mutex_lock(&p->lock);
	for (unsigned i = 0; i < n; i++) {
		jobs[i] = (struct job){.fn = fn, .arg = args[i], .f = f, .left = &left};
		enqueue(p, &jobs[i]);
	}
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	fiber_suspend();
	for (unsigned i = 0; i < n; i++)
		results[i] = jobs[i].result;
}

unsigned pool_width(const struct pool *p)
{
	return p ? p->width : 1;
}
