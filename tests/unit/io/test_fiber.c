/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fibers and the fiber-aware mutex and condition (src/io/fiber.h, src/io/cosync.h), driven by a
 * small loop of the test's own: run ready fibers, fire timers, take the inbox. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/cosync.h"
#include "io/fiber.h"

static void no_notify(void *ctx) { (void)ctx; }

/* Turn the loop until pred(arg) holds (at most a few seconds). */
static void loop_until(struct fiber_sched *s, bool (*pred)(void *), void *arg)
{
	for (int i = 0; i < 2000000 && !pred(arg); i++) {
		fiber_sched_fire_timers(s);
		fiber_sched_take_inbox(s);
		if (!fiber_sched_run(s))
			usleep(20);
	}
	assert_true(pred(arg));
}

static bool none_live(void *arg) { return fiber_sched_live(arg) == 0; }

/* ---- switching ---- */

struct order {
	char log[64];
	size_t n;
	struct fiber *parked[4];
};

static void step(struct order *o, char c) { o->log[o->n++] = c; }

static void suspender(void *arg)
{
	struct order *o = arg;
	step(o, 'a');
	o->parked[0] = fiber_self();
	fiber_suspend();
	step(o, 'c');
}

static void waker(void *arg)
{
	struct order *o = arg;
	step(o, 'b');
	fiber_wake(o->parked[0]);   /* same thread: ready after us */
	step(o, 'B');
}

static void test_suspend_and_wake_on_one_thread(void **state)
{
	(void)state;
	struct fiber_sched *s = fiber_sched_new(64 * 1024, no_notify, NULL);
	assert_non_null(s);
	fiber_sched_bind(s);
	struct order o = {0};
	assert_null(fiber_self());
	assert_int_equal(fiber_spawn(s, suspender, &o), 0);
	assert_int_equal(fiber_spawn(s, waker, &o), 0);
	assert_int_equal(fiber_sched_live(s), 2);
	loop_until(s, none_live, s);
	assert_string_equal(o.log, "abBc");
	/* An ended fiber is reused, stack and all, for the next call. */
	memset(&o, 0, sizeof o);
	assert_int_equal(fiber_spawn(s, suspender, &o), 0);
	assert_int_equal(fiber_spawn(s, waker, &o), 0);
	loop_until(s, none_live, s);
	assert_string_equal(o.log, "abBc");
	fiber_sched_free(s);
}

/* ---- ended fibers kept for a burst's size ---- */

static void parker(void *arg)
{
	*(struct fiber **)arg = fiber_self();
	fiber_suspend();
}

#define BURST 300
/* BURST calls at once, all suspended, then all woken and ended. */
static void burst(struct fiber_sched *s)
{
	static struct fiber *f[BURST];
	for (int i = 0; i < BURST; i++)
		assert_int_equal(fiber_spawn(s, parker, &f[i]), 0);
	fiber_sched_run(s);
	assert_int_equal(fiber_sched_live(s), BURST);
	for (int i = 0; i < BURST; i++)
		fiber_wake(f[i]);
	loop_until(s, none_live, s);
}

/* A burst of calls larger than the few fibers always kept: its fibers stay for the next burst
 * (which maps no stack), and go once a quiet window has passed after the window of the burst. */
static void test_burst_fibers_kept(void **state)
{
	(void)state;
	struct fiber_sched *s = fiber_sched_new(64 * 1024, no_notify, NULL);
	assert_non_null(s);
	fiber_sched_bind(s);
	burst(s);
	assert_int_equal(fiber_sched_idle(s), BURST);
	burst(s);
	assert_int_equal(fiber_sched_idle(s), BURST);   /* the same fibers again, none more */
	for (int window = 0; window < 2; window++) {
		usleep(1100 * 1000);
		fiber_sched_run(s);
	}
	assert_true(fiber_sched_idle(s) < BURST / 2);
	fiber_sched_free(s);
}

/* ---- a wake from another thread, through the inbox ---- */

struct remote {
	atomic_int notified;
	struct fiber *f;
	atomic_bool suspended, done;
};

static void remote_notify(void *ctx) { atomic_fetch_add(&((struct remote *)ctx)->notified, 1); }

static void remote_sleeper(void *arg)
{
	struct remote *r = arg;
	r->f = fiber_self();
	atomic_store(&r->suspended, true);
	fiber_suspend();
	atomic_store(&r->done, true);
}

static void *remote_waker(void *arg)
{
	struct remote *r = arg;
	while (!atomic_load(&r->suspended))
		usleep(100);
	fiber_wake(r->f);
	return NULL;
}

static bool remote_done(void *arg) { return atomic_load(&((struct remote *)arg)->done); }

/* A scheduler of this thread's with r's sleeper suspended on it. */
static struct fiber_sched *with_sleeper(void (*notify)(void *), void *ctx, struct remote *r)
{
	struct fiber_sched *s = fiber_sched_new(64 * 1024, notify, ctx);
	assert_non_null(s);
	fiber_sched_bind(s);
	assert_int_equal(fiber_spawn(s, remote_sleeper, r), 0);
	fiber_sched_run(s);
	return s;
}

static void test_wake_from_another_thread(void **state)
{
	(void)state;
	struct remote r = {0};
	struct fiber_sched *s = with_sleeper(remote_notify, &r, &r);
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, remote_waker, &r), 0);
	loop_until(s, remote_done, &r);
	pthread_join(th, NULL);
	assert_int_equal(atomic_load(&r.notified), 1);   /* the owner was told, once */
	fiber_sched_free(s);
}

/* ---- a poster's notify does not hold up the owner, and freeing waits for it ---- */

struct slow_notify {
	struct remote r;
	atomic_bool in_notify, release, notify_done;
};

/* Blocks until released (or 2 s): a write(2) to an eventfd that takes its time. */
static void slow_notify(void *ctx)
{
	struct slow_notify *n = ctx;
	atomic_store(&n->in_notify, true);
	for (int i = 0; i < 2000 && !atomic_load(&n->release); i++)
		usleep(1000);
	atomic_store(&n->notify_done, true);
}

static void *release_later(void *arg)
{
	usleep(50 * 1000);
	atomic_store(&((struct slow_notify *)arg)->release, true);
	return NULL;
}

static void test_owner_not_held_by_notify(void **state)
{
	(void)state;
	struct slow_notify n = {0};
	struct fiber_sched *s = with_sleeper(slow_notify, &n, &n.r);
	pthread_t waker, releaser;
	assert_int_equal(pthread_create(&waker, NULL, remote_waker, &n.r), 0);
	while (!atomic_load(&n.in_notify))
		usleep(100);
	/* The message is in: the owner takes it and runs the fiber while the notify still runs. */
	loop_until(s, remote_done, &n.r);
	assert_false(atomic_load(&n.notify_done));
	assert_int_equal(pthread_create(&releaser, NULL, release_later, &n), 0);
	fiber_sched_free(s);   /* must not free what the notify may still use */
	assert_true(atomic_load(&n.notify_done));
	pthread_join(waker, NULL);
	pthread_join(releaser, NULL);
}

/* ---- an owner that runs is not notified; it takes the message before it waits ---- */

static void test_running_owner_not_notified(void **state)
{
	(void)state;
	struct remote r = {0};
	struct fiber_sched *s = with_sleeper(remote_notify, &r, &r);
	fiber_sched_running(s);
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, remote_waker, &r), 0);
	pthread_join(th, NULL);
	assert_int_equal(atomic_load(&r.notified), 0);
	assert_false(fiber_sched_may_wait(s));   /* the wake was in the inbox: taken */
	fiber_sched_run(s);
	assert_true(atomic_load(&r.done));
	/* An owner about to wait is notified. */
	assert_true(fiber_sched_may_wait(s));
	atomic_store(&r.suspended, false);
	atomic_store(&r.done, false);
	assert_int_equal(fiber_spawn(s, remote_sleeper, &r), 0);
	fiber_sched_run(s);   /* (suspended again: the next wake finds it) */
	assert_int_equal(pthread_create(&th, NULL, remote_waker, &r), 0);
	pthread_join(th, NULL);
	assert_int_equal(atomic_load(&r.notified), 1);
	loop_until(s, remote_done, &r);
	fiber_sched_free(s);
}

/* ---- co_mutex: a holder that suspends does not stall the thread ---- */

struct lockers {
	struct co_mutex m;
	struct fiber *holder;
	char log[16];
	size_t n;
};

static void holder(void *arg)
{
	struct lockers *l = arg;
	co_mutex_lock(&l->m);
	l->log[l->n++] = 'H';
	l->holder = fiber_self();
	fiber_suspend();          /* holds the lock across a wait, as a block past EOF does */
	l->log[l->n++] = 'h';
	co_mutex_unlock(&l->m);
}

static void contender(void *arg)
{
	struct lockers *l = arg;
	co_mutex_lock(&l->m);     /* suspends this fiber only */
	l->log[l->n++] = 'C';
	co_mutex_unlock(&l->m);
}

static void bystander(void *arg)
{
	struct lockers *l = arg;
	l->log[l->n++] = 'B';
	fiber_wake(l->holder);
}

static void test_mutex_holder_suspends(void **state)
{
	(void)state;
	struct fiber_sched *s = fiber_sched_new(64 * 1024, no_notify, NULL);
	assert_non_null(s);
	fiber_sched_bind(s);
	struct lockers l = {0};
	co_mutex_init(&l.m);
	assert_int_equal(fiber_spawn(s, holder, &l), 0);
	assert_int_equal(fiber_spawn(s, contender, &l), 0);
	assert_int_equal(fiber_spawn(s, bystander, &l), 0);
	loop_until(s, none_live, s);
	/* The contender waited for the holder; the bystander ran meanwhile. */
	assert_string_equal(l.log, "HBhC");
	co_mutex_destroy(&l.m);
	fiber_sched_free(s);
}

/* ---- co_mutex: handed over in turn; co_mutex_lock_barge's waiters woken to try ---- */

/* Two schedulers driven in turn from this thread stand for two rings: a fiber woken on the
 * other one does not run until that one is driven. */
struct convoy {
	struct co_mutex m;
	struct fiber *holder;        /* the fiber that holds m and is suspended */
	char log[16];
	size_t n;
};

struct locker {
	struct convoy *cv;
	char c;
	bool hold;                   /* suspend with the lock held until woken */
	bool barge;                  /* co_mutex_lock_barge */
};

static void locker(void *arg)
{
	struct locker *k = arg;
	if (k->barge)
		co_mutex_lock_barge(&k->cv->m);
	else
		co_mutex_lock(&k->cv->m);
	k->cv->log[k->cv->n++] = k->c;
	if (k->hold) {
		k->cv->holder = fiber_self();
		fiber_suspend();
	}
	co_mutex_unlock(&k->cv->m);
}

static void drive(struct fiber_sched *s)
{
	fiber_sched_bind(s);
	fiber_sched_take_inbox(s);
	fiber_sched_run(s);
}

/* On s1, the holder is woken to unlock and `next` (if any) runs after it. */
static void release_on(struct fiber_sched *s1, struct convoy *cv, struct locker *next)
{
	fiber_sched_bind(s1);
	fiber_wake(cv->holder);
	if (next)
		assert_int_equal(fiber_spawn(s1, locker, next), 0);
	fiber_sched_run(s1);
}

/* Two rings and a lock: H holds it on s1 (suspended), W waits for it on s2, barging or not. */
struct rings2 {
	struct fiber_sched *s1, *s2;
	struct convoy cv;
	struct locker h, w;
};

static void rings2_start(struct rings2 *r, bool w_barges)
{
	r->s1 = fiber_sched_new(64 * 1024, no_notify, NULL);
	r->s2 = fiber_sched_new(64 * 1024, no_notify, NULL);
	assert_non_null(r->s1);
	assert_non_null(r->s2);
	co_mutex_init(&r->cv.m);
	r->h = (struct locker){&r->cv, 'H', true, false};
	r->w = (struct locker){&r->cv, 'W', false, w_barges};
	fiber_sched_bind(r->s1);
	assert_int_equal(fiber_spawn(r->s1, locker, &r->h), 0);
	drive(r->s1);
	fiber_sched_bind(r->s2);
	assert_int_equal(fiber_spawn(r->s2, locker, &r->w), 0);
	drive(r->s2);                        /* W waits for the lock */
}

static void rings2_end(struct rings2 *r)
{
	assert_int_equal(fiber_sched_live(r->s1) + fiber_sched_live(r->s2), 0);
	co_mutex_destroy(&r->cv.m);
	fiber_sched_free(r->s1);
	fiber_sched_free(r->s2);
}

/* H lets go while W's ring is not running, and G, on H's ring, asks for the lock next: the log
 * after that, and at the end. */
static void race_after_release(bool w_barges, const char *after, const char *end)
{
	struct rings2 r = {0};
	rings2_start(&r, w_barges);
	struct locker g = {&r.cv, 'G', false, false};
	release_on(r.s1, &r.cv, &g);
	assert_string_equal(r.cv.log, after);
	drive(r.s2);
	drive(r.s1);
	assert_string_equal(r.cv.log, end);
	rings2_end(&r);
}

/* The lock goes to the first waiter, whichever ring it is on, before a locker that comes later:
 * the writers of both rings keep their order. */
static void test_mutex_handed_in_turn(void **state)
{
	(void)state;
	race_after_release(false, "H", "HWG");
}

/* A barging waiter is woken, not handed the lock: G, running, takes the free lock at once. */
static void test_mutex_not_handed_to_sleeping_waiter(void **state)
{
	(void)state;
	race_after_release(true, "HG", "HGW");
}

/* A barging waiter that keeps finding the lock taken after its wake-ups is handed it at last:
 * the running lockers do not starve it. */
static void test_mutex_waiter_not_starved(void **state)
{
	(void)state;
	struct rings2 r = {0};
	rings2_start(&r, true);
	struct locker g[3] = {{&r.cv, '1', true, false}, {&r.cv, '2', true, false},
			      {&r.cv, '3', true, false}};
	/* Each release lets a running fiber on s1 take the lock before W runs: W loses, and
	 * waits again at the head of the queue. */
	size_t got = 0;
	for (int i = 0; i < 3 && !got; i++) {
		release_on(r.s1, &r.cv, &g[i]);
		drive(r.s2);
		char *at = strchr(r.cv.log, 'W');
		got = at ? (size_t)(at - r.cv.log) : 0;
	}
	/* W lost two races, then was handed the lock over the third locker: "H12W", then 3. */
	assert_int_equal(got, 3);
	drive(r.s1);
	assert_string_equal(r.cv.log, "H12W3");
	release_on(r.s1, &r.cv, NULL);       /* 3 held it: let go */
	rings2_end(&r);
}

/* ---- co_cond with a deadline ---- */

struct timed {
	struct co_mutex m;
	struct co_cond c;
	bool woken, returned;
};

static void timed_waiter(void *arg)
{
	struct timed *t = arg;
	co_mutex_lock(&t->m);
	t->woken = co_cond_wait(&t->c, &t->m, fiber_now_ns() + 20 * 1000 * 1000);
	t->returned = true;
	co_mutex_unlock(&t->m);
}

static void test_cond_deadline(void **state)
{
	(void)state;
	struct fiber_sched *s = fiber_sched_new(64 * 1024, no_notify, NULL);
	assert_non_null(s);
	fiber_sched_bind(s);
	struct timed t = {0};
	co_mutex_init(&t.m);
	co_cond_init(&t.c);
	uint64_t t0 = fiber_now_ns();
	assert_int_equal(fiber_spawn(s, timed_waiter, &t), 0);
	fiber_sched_run(s);
	assert_true(fiber_sched_next_deadline(s) != UINT64_MAX);
	loop_until(s, none_live, s);
	assert_true(t.returned);
	assert_false(t.woken);
	assert_true(fiber_now_ns() - t0 >= 20 * 1000 * 1000);
	assert_false(co_cond_has_waiters(&t.c));   /* it took itself off the list */
	assert_int_equal(fiber_sched_next_deadline(s), UINT64_MAX);
	co_mutex_destroy(&t.m);
	fiber_sched_free(s);
}

/* ---- many fibers on two threads sharing one lock and one condition ---- */

#define RINGS 2
#define FIBERS 16
#define ROUNDS 500

struct shared {
	struct co_mutex m;
	struct co_cond c;
	uint64_t counter;             /* under m */
	unsigned turn;                /* under m: whose turn (ring) it is, flipped by each increment */
	atomic_uint finished;
};

struct ring_arg {
	struct shared *sh;
	unsigned id;
	struct fiber_sched *s;
	atomic_uint notified;
};

static void count_fiber(void *arg)
{
	struct ring_arg *r = arg;
	struct shared *sh = r->sh;
	for (int i = 0; i < ROUNDS; i++) {
		co_mutex_lock(&sh->m);
		if (i % 7 == 0) {
			co_mutex_unlock(&sh->m);
			fiber_sleep_ns(1000);         /* a suspension elsewhere, lock released */
			co_mutex_lock(&sh->m);
		}
		/* Strict alternation between the two threads: every increment waits for a wake-up
		 * from the other thread. */
		while (sh->turn != r->id)
			co_cond_wait(&sh->c, &sh->m, 0);
		sh->counter++;
		sh->turn ^= 1;
		co_cond_broadcast(&sh->c);
		co_mutex_unlock(&sh->m);
	}
	atomic_fetch_add(&sh->finished, 1);
}

static void ring_notify(void *ctx)
{
	atomic_fetch_add(&((struct ring_arg *)ctx)->notified, 1);
}

static bool ring_done(void *arg)
{
	return fiber_sched_live(((struct ring_arg *)arg)->s) == 0;
}

static void *ring_thread(void *arg)
{
	struct ring_arg *r = arg;
	fiber_sched_bind(r->s);
	for (int i = 0; i < FIBERS; i++)
		if (fiber_spawn(r->s, count_fiber, r) < 0)
			abort();
	loop_until(r->s, ring_done, r);
	return NULL;
}

static void test_two_threads_share_lock_and_cond(void **state)
{
	(void)state;
	struct shared sh = {0};
	co_mutex_init(&sh.m);
	co_cond_init(&sh.c);
	struct ring_arg r[RINGS];
	pthread_t th[RINGS];
	for (unsigned i = 0; i < RINGS; i++) {
		r[i] = (struct ring_arg){.sh = &sh, .id = i};
		r[i].s = fiber_sched_new(64 * 1024, ring_notify, &r[i]);
		assert_non_null(r[i].s);
	}
	for (unsigned i = 0; i < RINGS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, ring_thread, &r[i]), 0);
	for (unsigned i = 0; i < RINGS; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(atomic_load(&sh.finished), RINGS * FIBERS);
	assert_int_equal(sh.counter, (uint64_t)RINGS * FIBERS * ROUNDS);
	for (unsigned i = 0; i < RINGS; i++) {
		assert_true(atomic_load(&r[i].notified) > 0);   /* woken across threads */
		fiber_sched_free(r[i].s);
	}
	co_mutex_destroy(&sh.m);
}

/* ---- plain threads use the same lock ---- */

static void *plain_locker(void *arg)
{
	struct shared *sh = arg;
	for (int i = 0; i < 10000; i++) {
		co_mutex_lock(&sh->m);
		sh->counter++;
		co_mutex_unlock(&sh->m);
	}
	return NULL;
}

static void test_plain_threads(void **state)
{
	(void)state;
	struct shared sh = {0};
	co_mutex_init(&sh.m);
	pthread_t th[4];
	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&th[i], NULL, plain_locker, &sh), 0);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(sh.counter, 40000);
	co_mutex_destroy(&sh.m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_suspend_and_wake_on_one_thread),
		cmocka_unit_test(test_burst_fibers_kept),
		cmocka_unit_test(test_wake_from_another_thread),
		cmocka_unit_test(test_owner_not_held_by_notify),
		cmocka_unit_test(test_running_owner_not_notified),
		cmocka_unit_test(test_mutex_holder_suspends),
		cmocka_unit_test(test_mutex_handed_in_turn),
		cmocka_unit_test(test_mutex_not_handed_to_sleeping_waiter),
		cmocka_unit_test(test_mutex_waiter_not_starved),
		cmocka_unit_test(test_cond_deadline),
		cmocka_unit_test(test_two_threads_share_lock_and_cond),
		cmocka_unit_test(test_plain_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
