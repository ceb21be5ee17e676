/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fibers: one call in progress each, with its own small stack, run by the scheduler of the thread
 * that owns it. It knows nothing of NFS or of io_uring.
 *
 * Why fibers. A request on a ring must be able to wait (for a CQE, a cache entry, a group commit,
 * the neighbour of a stable WRITE) without holding its thread, and then go on where it stopped.
 * A fiber is exactly that continuation: it suspends at an explicit wait point and whoever
 * delivers the event wakes it. The handlers stay straight-line code, as in knfsd, instead of
 * being cut into one callback per I/O.
 *
 * Ownership (SPDK's model): a fiber runs only on its scheduler's thread, one at a time, and only
 * between the thread's other work (never nested). Other threads reach it by message: the
 * scheduler's inbox, which takes messages from any thread and calls the owner's notify hook when
 * it goes from empty to non-empty (the ring writes an eventfd it keeps a read on).
 *
 * Timers live here too: the owning loop asks for the next deadline and waits no longer. */
#ifndef NFSD_UC_IO_FIBER_H
#define NFSD_UC_IO_FIBER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fiber;
struct fiber_sched;
typedef void (*fiber_fn)(void *arg);

/* A message for a scheduler's thread; embed it, container_of() back in fn. */
struct fiber_msg {
	struct fiber_msg *next;
	void (*fn)(struct fiber_msg *m);
};

/* A timer of the scheduler of the calling thread; embed it. fire runs on that thread, from
 * fiber_sched_fire_timers(), outside any fiber. */
struct fiber_timer {
	struct fiber_timer *next;
	uint64_t deadline_ns;         /* CLOCK_MONOTONIC */
	void (*fire)(struct fiber_timer *t);
	bool armed;
};

/* A scheduler. stack: bytes of each fiber's stack (a guard page is added below). notify(ctx) is
 * called from any thread when a message arrives in an empty inbox, under a lock of the
 * scheduler's that freeing it waits for (so it must not post to the same scheduler, nor free
 * it). It may take messages before any thread runs it.
 * NULL on failure. */
struct fiber_sched *fiber_sched_new(size_t stack, void (*notify)(void *ctx), void *ctx);
/* Make s the calling thread's scheduler (fiber_self() and friends find it); NULL unbinds. */
void fiber_sched_bind(struct fiber_sched *s);
/* Every fiber must have ended. Unbinds the thread if bound to s. */
void fiber_sched_free(struct fiber_sched *s);

/* Start fn(arg) in a fiber; it first runs at the next fiber_sched_run(). -ENOMEM on failure. */
int fiber_spawn(struct fiber_sched *s, fiber_fn fn, void *arg);
/* Run ready fibers until none is ready; returns how many ran. Call from the loop, not a fiber. */
unsigned fiber_sched_run(struct fiber_sched *s);
/* Fibers started and not yet ended (running, ready or suspended). */
unsigned fiber_sched_live(const struct fiber_sched *s);
/* Ended fibers kept for the next calls, stacks and all. */
unsigned fiber_sched_idle(const struct fiber_sched *s);
/* Take what other threads sent: run their messages (fiber wakes among them). */
void fiber_sched_take_inbox(struct fiber_sched *s);
/* Send m to s's thread, from any thread (the owner too). */
void fiber_sched_post(struct fiber_sched *s, struct fiber_msg *m);
/* For an owner whose loop waits for events: a message sent while the owner runs is not
 * notified, as the owner asks fiber_sched_may_wait before each wait. That takes the inbox if a
 * message came, and says false: do not wait now. True: wait, and say fiber_sched_running after;
 * until then every message that comes is notified. (An owner that never calls them is notified
 * of every batch.) */
bool fiber_sched_may_wait(struct fiber_sched *s);
void fiber_sched_running(struct fiber_sched *s);

/* The fiber running on this thread, NULL outside one. */
struct fiber *fiber_self(void);
/* Suspend the running fiber until fiber_wake(); each suspension takes exactly one wake. */
void fiber_suspend(void);
/* Make a suspended fiber ready again, from any thread. Waking a fiber that has not suspended yet
 * is allowed when the waker is another thread (the wake waits in the inbox until it has). */
void fiber_wake(struct fiber *f);
/* Called when the fiber is switched out (out) and back in (in): state kept on the thread rather
 * than the fiber, such as its file-system credentials, is saved and restored there. */
void fiber_set_hooks(struct fiber *f, void (*out)(void *ctx), void (*in)(void *ctx), void *ctx);

/* Timers of the calling thread's scheduler. */
uint64_t fiber_now_ns(void);
void fiber_timer_arm(struct fiber_timer *t, uint64_t deadline_ns);
void fiber_timer_disarm(struct fiber_timer *t);
/* Earliest armed deadline, or UINT64_MAX. */
uint64_t fiber_sched_next_deadline(const struct fiber_sched *s);
/* Fire every timer whose deadline has passed; returns how many. */
unsigned fiber_sched_fire_timers(struct fiber_sched *s);
/* Suspend the running fiber for ns nanoseconds (a plain sleep outside a fiber). */
void fiber_sleep_ns(uint64_t ns);

#endif
