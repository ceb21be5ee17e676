/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "io/cosync.h"

#include <stdatomic.h>
#include <time.h>

#include "io/fiber.h"

/* One waiting fiber or thread, on its own stack. state goes 0 -> 1 once, by whoever wakes it
 * (the releaser, a broadcast, or its own deadline timer): exactly one of them does the wake. */
struct co_waiter {
	struct co_waiter *next, *prev;
	bool queued;                  /* on a list (guarded by the list's lock) */
	atomic_int state;
	struct fiber *f;              /* NULL: a plain thread */
	struct fiber_timer timer;
	pthread_mutex_t m;            /* plain threads only */
	pthread_cond_t c;
};

static void waiter_init(struct co_waiter *w)
{
	*w = (struct co_waiter){.f = fiber_self()};
	if (!w->f) {
		pthread_mutex_init(&w->m, NULL);
		pthread_condattr_t a;
		pthread_condattr_init(&a);
		pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
		pthread_cond_init(&w->c, &a);
		pthread_condattr_destroy(&a);
	}
}

static void waiter_fini(struct co_waiter *w)
{
	if (!w->f) {
		pthread_cond_destroy(&w->c);
		pthread_mutex_destroy(&w->m);
	}
}

/* true if this call did the wake (the waiter had not been woken yet). */
static bool waiter_wake(struct co_waiter *w)
{
	int expect = 0;
	if (w->f) {
		if (!atomic_compare_exchange_strong(&w->state, &expect, 1))
			return false;
		fiber_wake(w->f);     /* w may be gone once the fiber runs: touch it no more */
		return true;
	}
	/* Under the thread's own mutex: it cannot see the wake, return and free w before we are
	 * done with it. */
	pthread_mutex_lock(&w->m);
	bool won = atomic_compare_exchange_strong(&w->state, &expect, 1);
	if (won)
		pthread_cond_signal(&w->c);
	pthread_mutex_unlock(&w->m);
	return won;
}

static void waiter_timer_fire(struct fiber_timer *t)
{
	struct co_waiter *w = (struct co_waiter *)((char *)t - offsetof(struct co_waiter, timer));
	waiter_wake(w);
}

/* Until woken or the deadline (0: none). true if woken by someone else. */
static bool waiter_sleep(struct co_waiter *w, uint64_t deadline_ns)
{
	if (w->f) {
		if (deadline_ns) {
			w->timer.fire = waiter_timer_fire;
			fiber_timer_arm(&w->timer, deadline_ns);
		}
		fiber_suspend();
		bool by_timer = deadline_ns && !w->timer.armed;
		fiber_timer_disarm(&w->timer);
		return !by_timer;
	}
	struct timespec ts = {(time_t)(deadline_ns / 1000000000u), (long)(deadline_ns % 1000000000u)};
	bool woken = true;
	pthread_mutex_lock(&w->m);
	while (atomic_load(&w->state) == 0) {
		if (!deadline_ns) {
			pthread_cond_wait(&w->c, &w->m);
		} else if (pthread_cond_timedwait(&w->c, &w->m, &ts) != 0) {
			/* Timed out, unless a wake won the race meanwhile. */
			int expect = 0;
			if (atomic_compare_exchange_strong(&w->state, &expect, 1))
				woken = false;
		}
	}
	pthread_mutex_unlock(&w->m);
	return woken;
}

static void enqueue(struct co_waiter **head, struct co_waiter **tail, struct co_waiter *w)
{
	w->next = NULL;
	w->prev = *tail;
	if (*tail)
		(*tail)->next = w;
	else
		*head = w;
	*tail = w;
	w->queued = true;
}

static void unlink_waiter(struct co_waiter **head, struct co_waiter **tail, struct co_waiter *w)
{
	if (w->prev) w->prev->next = w->next; else *head = w->next;
	if (w->next) w->next->prev = w->prev; else *tail = w->prev;
	w->queued = false;
}

void co_mutex_init(struct co_mutex *m)
{
	pthread_mutex_init(&m->guard, NULL);
	m->locked = false;
	m->head = m->tail = NULL;
}

void co_mutex_destroy(struct co_mutex *m)
{
	pthread_mutex_destroy(&m->guard);
}

void co_mutex_lock(struct co_mutex *m)
{
	pthread_mutex_lock(&m->guard);
	if (!m->locked) {
		m->locked = true;
		pthread_mutex_unlock(&m->guard);
		return;
	}
	struct co_waiter w;
	waiter_init(&w);
	enqueue(&m->head, &m->tail, &w);
	pthread_mutex_unlock(&m->guard);
	waiter_sleep(&w, 0);          /* the lock is ours when this returns: handed over */
	waiter_fini(&w);
}

void co_mutex_unlock(struct co_mutex *m)
{
	pthread_mutex_lock(&m->guard);
	struct co_waiter *w = m->head;
	if (w)
		unlink_waiter(&m->head, &m->tail, w);
	else
		m->locked = false;
	pthread_mutex_unlock(&m->guard);
	if (w)
		waiter_wake(w);
}

bool co_cond_wait_kickable(struct co_cond *c, struct co_mutex *m, uint64_t deadline_ns,
			   struct co_kick *k)
{
	struct co_waiter w;
	waiter_init(&w);
	enqueue(&c->head, &c->tail, &w);
	if (k)
		k->w = &w;
	co_mutex_unlock(m);
	bool woken = waiter_sleep(&w, deadline_ns);
	if (k)
		k->w = NULL;     /* before anything can suspend us again */
	co_mutex_lock(m);
	if (w.queued)
		unlink_waiter(&c->head, &c->tail, &w);   /* timed out or kicked: still listed */
	waiter_fini(&w);
	return woken;
}

bool co_cond_wait(struct co_cond *c, struct co_mutex *m, uint64_t deadline_ns)
{
	return co_cond_wait_kickable(c, m, deadline_ns, NULL);
}

void co_kick(struct co_kick *k)
{
	k->kicked = true;
	/* The same wake as a broadcast's: whichever of them comes first wakes the waiter. */
	if (k->w)
		waiter_wake(k->w);
}

void co_cond_broadcast(struct co_cond *c)
{
	/* The waiters cannot leave before we release the mutex (they retake it first), so each is
	 * still there while we unlink and wake it. */
	while (c->head) {
		struct co_waiter *w = c->head;
		unlink_waiter(&c->head, &c->tail, w);
		waiter_wake(w);
	}
}
