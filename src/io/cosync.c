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
	const void *token;            /* its thread's (self_token()), the holder once handed the lock */
	bool handoff, handed;         /* co_mutex: to be handed the lock; was handed it */
	struct fiber_timer timer;
	pthread_mutex_t m;            /* plain threads only */
	pthread_cond_t c;
};

/* This thread's token: the address of a thread-local, unique while the thread lives. */
static const void *self_token(void)
{
	static _Thread_local char token;
	return &token;
}

static void waiter_init(struct co_waiter *w)
{
	*w = (struct co_waiter){.f = fiber_self(), .token = self_token()};
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

static void enqueue_head(struct co_waiter **head, struct co_waiter **tail, struct co_waiter *w)
{
	w->prev = NULL;
	w->next = *head;
	if (*head)
		(*head)->prev = w;
	else
		*tail = w;
	*head = w;
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
	atomic_init(&m->locked, false);
	atomic_init(&m->holder, NULL);
	m->head = m->tail = NULL;
}

void co_mutex_destroy(struct co_mutex *m)
{
	pthread_mutex_destroy(&m->guard);
}

/* How long a barging locker waits for a holder on another thread before it queues: about 2 us
 * of pause instructions. Long enough for any critical section that does not suspend; a holder
 * that does (an I/O under the lock) costs a waiter no more than that. */
#define CO_SPIN 64

static inline void spin_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

/* Until the lock looks free, for a moment. Not for a holder on this thread: it is suspended
 * (we are running), and waiting here would only delay it. */
static void spin_while_held(struct co_mutex *m)
{
	if (atomic_load_explicit(&m->holder, memory_order_relaxed) == self_token())
		return;
	for (int i = 0; i < CO_SPIN && atomic_load_explicit(&m->locked, memory_order_relaxed); i++)
		spin_pause();
}

static bool take_if_free(struct co_mutex *m)
{
	if (atomic_load_explicit(&m->locked, memory_order_relaxed))
		return false;
	atomic_store_explicit(&m->locked, true, memory_order_relaxed);
	atomic_store_explicit(&m->holder, self_token(), memory_order_relaxed);
	return true;
}

/* How many times a woken waiter may find the lock taken again before it is handed the lock
 * instead of woken to try for it. */
#define CO_LOST_MAX 2

/* fair: queued, the lock is handed to this locker in its turn; else it is woken to try for it,
 * and running lockers may take it first (at most CO_LOST_MAX times). */
static void lock(struct co_mutex *m, bool fair)
{
	pthread_mutex_lock(&m->guard);
	if (take_if_free(m)) {
		pthread_mutex_unlock(&m->guard);
		return;
	}
	/* A fair locker queues at once. Spinning, a ring's running fibers took the lock ahead of
	 * the other ring's queued ones, and interleaved writers drifted apart: two of three
	 * memory-bound runs of 32 x 4 writers read blocks back to complete ones whose neighbours
	 * came late (190 and 4051; none without the spin). */
	if (!fair) {
		pthread_mutex_unlock(&m->guard);
		spin_while_held(m);
		pthread_mutex_lock(&m->guard);
	}
	for (int lost = 0;; lost++) {
		if (take_if_free(m))
			break;
		struct co_waiter w;
		waiter_init(&w);
		w.handoff = fair || lost >= CO_LOST_MAX;
		/* One that lost a race after its wake-up waited longest: it goes first. */
		if (lost)
			enqueue_head(&m->head, &m->tail, &w);
		else
			enqueue(&m->head, &m->tail, &w);
		pthread_mutex_unlock(&m->guard);
		waiter_sleep(&w, 0);
		bool handed = w.handed;
		waiter_fini(&w);
		if (handed)
			return;
		pthread_mutex_lock(&m->guard);
	}
	pthread_mutex_unlock(&m->guard);
}

void co_mutex_lock(struct co_mutex *m)
{
	lock(m, true);
}

void co_mutex_lock_barge(struct co_mutex *m)
{
	lock(m, false);
}

/* Handed to the first waiter, or (co_mutex_lock_barge) freed for it to try for. */
void co_mutex_unlock(struct co_mutex *m)
{
	pthread_mutex_lock(&m->guard);
	struct co_waiter *w = m->head;
	if (w)
		unlink_waiter(&m->head, &m->tail, w);
	if (w && w->handoff) {
		w->handed = true;
		atomic_store_explicit(&m->holder, w->token, memory_order_relaxed);
	} else {
		atomic_store_explicit(&m->locked, false, memory_order_relaxed);
	}
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
