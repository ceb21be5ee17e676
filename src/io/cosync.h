/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A mutex and a condition variable that work for fibers and for plain threads alike.
 *
 * A fiber that must wait (the lock is taken, the condition does not hold) goes on the object's
 * waiter list and suspends: its thread runs other fibers meanwhile, and whoever releases the lock
 * or signals the condition wakes it, from whichever thread. A plain thread (the unit tests' own
 * threads, the main thread at exit) waits on a condition variable of its own. So a cache entry
 * shared by two rings can be waited for on both, and a fiber may hold the mutex across an I/O
 * without stalling the other fibers of its thread.
 *
 * co_mutex hands the lock over to the first waiter on unlock (FIFO: no waiter starves, and no
 * ring's fibers get ahead of the other's: interleaved writers on two rings that drift apart fill
 * the cache with blocks waiting for their neighbours). co_mutex_lock_barge is the other policy,
 * for holds where order does not matter. */
#ifndef NFSD_UC_IO_COSYNC_H
#define NFSD_UC_IO_COSYNC_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct co_waiter;

struct co_mutex {
	pthread_mutex_t guard;        /* held only inside these functions, never across a wait */
	atomic_bool locked;           /* written under guard; read without it while spinning */
	_Atomic(const void *) holder; /* the thread that took it (a token of its own), for spinning */
	struct co_waiter *head, *tail;
};

struct co_cond {
	struct co_waiter *head, *tail; /* guarded by the co_mutex it is used with */
};

void co_mutex_init(struct co_mutex *m);
void co_mutex_destroy(struct co_mutex *m);
void co_mutex_lock(struct co_mutex *m);
/* For short holds where order does not matter (a READ's looks at the cache): the locker spins a
 * moment while a holder on another thread has the lock, and waiting, it is woken to try for the
 * lock, not handed it, so running lockers may take it first (twice at most, then it is handed
 * it). A lock handed to a fiber on another ring stays idle until that ring wakes, and every
 * locker queues meanwhile: 40000 random 4 KiB READs on two rings made a wake-up across rings
 * per second READ and cost a third more CPU than direct mode. */
void co_mutex_lock_barge(struct co_mutex *m);
void co_mutex_unlock(struct co_mutex *m);

static inline void co_cond_init(struct co_cond *c) { c->head = c->tail = 0; }
/* m held. Wait for a broadcast, or until deadline_ns (CLOCK_MONOTONIC; 0: no deadline). Returns
 * with m held again: true if woken, false if the deadline passed. */
bool co_cond_wait(struct co_cond *c, struct co_mutex *m, uint64_t deadline_ns);
/* A way to end one waiter's co_cond_wait_kickable() from outside, without its mutex: from the
 * waiter's own thread only (a ring's message handler kicking that ring's parked fibers). */
struct co_kick {
	struct co_waiter *w;          /* the waiter while it waits, else NULL */
	bool kicked;                  /* set by co_kick(); the waiter's to clear */
};
/* co_cond_wait() that co_kick(k) also ends (returning true, k->kicked set). */
bool co_cond_wait_kickable(struct co_cond *c, struct co_mutex *m, uint64_t deadline_ns,
			   struct co_kick *k);
void co_kick(struct co_kick *k);

/* m held. Wake every waiter. */
void co_cond_broadcast(struct co_cond *c);
static inline bool co_cond_has_waiters(const struct co_cond *c) { return c->head != 0; }

#endif
