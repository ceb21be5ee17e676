/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The blocking pool (src/io/pool.h): pool_run_all runs its calls side by side on the pool's
 * threads and resumes the calling fiber once, when the last is done. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>
#include <unistd.h>

#include "io/fiber.h"
#include "io/pool.h"

static void no_notify(void *ctx) { (void)ctx; }

static bool none_live(void *arg) { return fiber_sched_live(arg) == 0; }

/* Turn the scheduler's loop until its fibers have ended (at most a few seconds). */
static void run_until_done(struct fiber_sched *s)
{
	for (int i = 0; i < 200000 && !none_live(s); i++) {
		fiber_sched_take_inbox(s);
		if (!fiber_sched_run(s))
			usleep(20);
	}
	assert_true(none_live(s));
}

#define N 3

struct batch {
	struct pool *pool;
	atomic_int running, done;
	long results[N];
	int done_at_resume;        /* jobs done when the fiber went on */
	bool all_met;              /* every job saw the others running beside it */
};

struct job {
	struct batch *b;
	int i;
	bool met;
};

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits (up to 2 s) until all N jobs run at once, then ends after a delay that makes the first
 * job the last to end. */
static long meet(void *arg)
{
	struct job *j = arg;
	atomic_fetch_add(&j->b->running, 1);
	long until = now_ms() + 2000;
	while (atomic_load(&j->b->running) < N && now_ms() < until)
		usleep(100);
	j->met = atomic_load(&j->b->running) == N;
	usleep((useconds_t)(N - j->i) * 20000);
	atomic_fetch_add(&j->b->done, 1);
	return 100 + j->i;
}

static void caller(void *arg)
{
	struct batch *b = arg;
	struct job jobs[N];
	void *args[N];
	for (int i = 0; i < N; i++) {
		jobs[i] = (struct job){b, i, false};
		args[i] = &jobs[i];
	}
	pool_run_all(b->pool, N, meet, args, b->results);
	b->done_at_resume = atomic_load(&b->done);
	b->all_met = true;
	for (int i = 0; i < N; i++)
		b->all_met = b->all_met && jobs[i].met;
}

/* The calls run side by side, each result lands in its place, and the fiber goes on only after
 * the last call (the first, which ends last), though the others woke nothing early. */
static void test_run_all_side_by_side(void **state)
{
	(void)state;
	struct batch b = {.pool = pool_new(N, NULL, NULL)};
	assert_non_null(b.pool);
	struct fiber_sched *s = fiber_sched_new(64 * 1024, no_notify, NULL);
	assert_non_null(s);
	fiber_sched_bind(s);
	assert_int_equal(fiber_spawn(s, caller, &b), 0);
	run_until_done(s);
	assert_true(b.all_met);
	assert_int_equal(b.done_at_resume, N);
	for (int i = 0; i < N; i++)
		assert_int_equal(b.results[i], 100 + i);
	fiber_sched_free(s);
	pool_free(b.pool);
}

static long twice(void *arg)
{
	return 2 * *(long *)arg;
}

/* Off a fiber (start-up, exit) the calls run in place, one after another. */
static void test_run_all_in_place(void **state)
{
	(void)state;
	struct pool *p = pool_new(2, NULL, NULL);
	assert_non_null(p);
	long in[3] = {1, 2, 3}, out[3] = {0};
	void *args[3] = {&in[0], &in[1], &in[2]};
	pool_run_all(p, 3, twice, args, out);
	assert_int_equal(out[0], 2);
	assert_int_equal(out[1], 4);
	assert_int_equal(out[2], 6);
	pool_free(p);
}

#define MANY (POOL_RUN_MAX + 3)

struct many {
	struct pool *pool;
	pthread_t ring;
	long in[MANY], out[MANY];
	atomic_int in_place;
};

static long on_pool(void *arg)
{
	struct many *m = *(struct many **)arg;
	atomic_fetch_add(&m->in_place, pthread_equal(pthread_self(), m->ring));
	return 2 * ((long *)arg)[1];
}

static void many_caller(void *arg)
{
	struct many *m = arg;
	long slots[MANY][2];
	void *args[MANY];
	for (int i = 0; i < MANY; i++) {
		slots[i][0] = (long)(intptr_t)m;
		slots[i][1] = m->in[i];
		args[i] = slots[i];
	}
	pool_run_all(m->pool, MANY, on_pool, args, m->out);
}

/* More calls than go at once: each still on a pool thread (a fiber's thread is a ring, which
 * must not make blocking calls), each result in its place. */
static void test_run_all_more_than_max(void **state)
{
	(void)state;
	static struct many m;
	m.pool = pool_new(2, NULL, NULL);
	m.ring = pthread_self();
	atomic_init(&m.in_place, 0);
	assert_non_null(m.pool);
	for (int i = 0; i < MANY; i++)
		m.in[i] = i + 1;
	struct fiber_sched *s = fiber_sched_new(64 * 1024, no_notify, NULL);
	assert_non_null(s);
	fiber_sched_bind(s);
	assert_int_equal(fiber_spawn(s, many_caller, &m), 0);
	run_until_done(s);
	assert_int_equal(atomic_load(&m.in_place), 0);
	for (int i = 0; i < MANY; i++)
		assert_int_equal(m.out[i], 2 * (i + 1));
	fiber_sched_free(s);
	pool_free(m.pool);
}

/* More threads than CPUs run no more calls side by side than there are CPUs. */
static void test_width(void **state)
{
	(void)state;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	struct pool *one = pool_new(1, NULL, NULL), *many = pool_new(64, NULL, NULL);
	assert_non_null(one);
	assert_non_null(many);
	assert_int_equal(pool_width(one), 1);
	assert_int_equal(pool_width(many), cpus < 64 ? cpus : 64);
	pool_free(one);
	pool_free(many);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run_all_side_by_side),
		cmocka_unit_test(test_run_all_in_place),
		cmocka_unit_test(test_run_all_more_than_max),
		cmocka_unit_test(test_width),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
