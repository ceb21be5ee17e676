/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Append trains (bc_train.c): WRITE middles past the end of file that arrive while one is on its
 * way next to it wait for it, then go to disk together, a contiguous run as one vectored write;
 * a write that fails fails only the WRITEs it carried, and their resends land; middles inside
 * the file, or next to none aboard, are written at once, beside the others. */
#include "test_env.h"

#include <time.h>

/* A disk hook: the write at hold_off waits (10 s at most) until the test opens the gate, or
 * until `until` writes have entered the disk in all; the first write at fail_off fails with
 * ENOSPC. */
struct gate {
	pthread_mutex_t m;
	pthread_cond_t cv;
	uint64_t hold_off, fail_off;
	bool open, fail;
	unsigned entered, until;
	bool held;            /* the held write entered the disk */
	bool released_early;  /* it went on because `until` writes entered */
};

static void gate_hook(struct fake_disk *d, uint64_t off, uint64_t len, void *arg)
{
	struct gate *g = arg;
	struct timespec dl;

	(void)len;
	if (g->fail && off == g->fail_off) {
		g->fail = false;
		fake_fail_writes(d, ENOSPC, 1);
	}
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 10;
	pthread_mutex_lock(&g->m);
	g->entered++;
	pthread_cond_broadcast(&g->cv);
	if (off == g->hold_off) {
		g->held = true;
		pthread_cond_broadcast(&g->cv);
		while (!g->open && !(g->until && g->entered >= g->until) &&
		       pthread_cond_timedwait(&g->cv, &g->m, &dl) == 0)
			;
		g->released_early = !g->open && g->until && g->entered >= g->until;
	}
	pthread_mutex_unlock(&g->m);
}

static void gate_init(struct env *e, struct gate *g, uint64_t hold_off)
{
	*g = (struct gate){ .hold_off = hold_off, .fail_off = UINT64_MAX };
	pthread_mutex_init(&g->m, NULL);
	pthread_cond_init(&g->cv, NULL);
	e->disk.write_hook = gate_hook;
	e->disk.hook_arg = g;
}

static void gate_wait_held(struct gate *g)
{
	pthread_mutex_lock(&g->m);
	while (!g->held)
		pthread_cond_wait(&g->cv, &g->m);
	pthread_mutex_unlock(&g->m);
}

static void gate_open(struct gate *g)
{
	pthread_mutex_lock(&g->m);
	g->open = true;
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->m);
}

struct put_job {
	struct env *e;
	uint64_t off;
	size_t len;
	unsigned id;
	int rc;
	pthread_t t;
};

static void *put_thread(void *arg)
{
	struct put_job *j = arg;

	j->rc = put_raw(j->e, NULL, j->off, j->len, j->id, false);
	return NULL;
}

static void start_put(struct put_job *j, struct env *e, uint64_t off, size_t len, unsigned id)
{
	*j = (struct put_job){ .e = e, .off = off, .len = len, .id = id };
	assert_int_equal(pthread_create(&j->t, NULL, put_thread, j), 0);
}

/* Until n middles wait behind the train (20 s at most). */
static void wait_train_waits(struct env *e, uint64_t n)
{
	for (int i = 0; i < 20000 && stats(e).train_waits < n; i++)
		usleep(1000);
	assert_int_equal(stats(e).train_waits, n);
}

/* A held at the disk, B, C, D queued behind it: once A lands, B-D go as one write of 3 MiB. */
static void start_train(struct env *e, struct gate *g, struct put_job *j)
{
	gate_init(e, g, 0);
	start_put(&j[0], e, 0, MiB, 1);
	gate_wait_held(g);
	for (unsigned k = 1; k < 4; k++) {
		start_put(&j[k], e, k * MiB, MiB, 1 + k);
		wait_train_waits(e, k);     /* each next to the one before: aboard */
	}
}

static void test_appends_go_as_one_write(void **state)
{
	struct env *e = env_new(64 * MiB, 0);
	struct put_job j[4];
	struct gate g;

	(void)state;
	start_train(e, &g, j);
	assert_int_equal(e->disk.writes, 0);      /* nothing passed A */
	gate_open(&g);
	for (unsigned k = 0; k < 4; k++) {
		pthread_join(j[k].t, NULL);
		assert_int_equal(j[k].rc, 0);
		apply(e, k * MiB, MiB, 1 + k);
	}
	assert_int_equal(e->disk.writes, 2);
	assert_int_equal(e->disk.vectored, 1);
	assert_int_equal(e->disk.log[1].off, MiB);
	assert_int_equal(e->disk.log[1].len, 3 * MiB);
	assert_int_equal(e->disk.misaligned, 0);
	assert_int_equal(stats(e).train_writes, 1);
	/* Three other WRITEs' data went out with the leader's: as cached data is written. */
	assert_int_equal(e->disk.server_writes + e->disk.restricted_writes, 1);
	check_disk(e, false);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	env_free(e);
}

/* The train's write fails (a full disk): the WRITEs it carried get the error, the one before it
 * does not, nothing else reached the disk, and their resends land. */
static void test_failed_train_write(void **state)
{
	struct env *e = env_new(64 * MiB, 0);
	struct put_job j[4];
	struct gate g;

	(void)state;
	start_train(e, &g, j);
	g.fail = true;
	g.fail_off = MiB;
	gate_open(&g);
	for (unsigned k = 0; k < 4; k++)
		pthread_join(j[k].t, NULL);
	assert_int_equal(j[0].rc, 0);
	apply(e, 0, MiB, 1);
	for (unsigned k = 1; k < 4; k++)
		assert_int_equal(j[k].rc, -ENOSPC);
	assert_int_equal(e->disk.writes, 1);
	assert_int_equal(e->disk.size, MiB);
	for (unsigned k = 1; k < 4; k++)
		put(e, k * MiB, MiB, 10 + k);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	env_free(e);
}

/* Middles inside the file do not wait for each other: the first stays at the disk until a
 * second one has entered it too (it would wait 10 s, and the test fail, were they serialized). */
static void test_overwrites_run_together(void **state)
{
	struct env *e = env_new(64 * MiB, 0);
	unsigned char *old = calloc(1, 4 * MiB);
	struct put_job j[4];
	struct gate g;

	(void)state;
	assert_non_null(old);
	fake_disk_put(&e->disk, 0, old, 4 * MiB);
	set_expect_size(e, 4 * MiB);
	gate_init(e, &g, 0);
	g.until = 2;
	for (unsigned k = 0; k < 4; k++)
		start_put(&j[k], e, k * MiB, MiB, 1 + k);
	for (unsigned k = 0; k < 4; k++) {
		pthread_join(j[k].t, NULL);
		assert_int_equal(j[k].rc, 0);
		apply(e, k * MiB, MiB, 1 + k);
	}
	assert_true(g.released_early);
	assert_int_equal(stats(e).train_waits, 0);
	check_disk(e, false);
	free(old);
	env_free(e);
}

/* A middle next to none aboard (interleaved records: a shared block between them) is written
 * at once, while the train's write is still held: had it waited, the held write would have
 * landed first (after the gate's 10 s). */
static void test_middle_apart_goes_at_once(void **state)
{
	struct env *e = env_new(64 * MiB, 0);
	struct put_job a, b;
	struct gate g;

	(void)state;
	gate_init(e, &g, 2 * MiB);
	start_put(&a, e, 2 * MiB, MiB, 1);
	gate_wait_held(&g);
	start_put(&b, e, 0, MiB, 2);
	pthread_join(b.t, NULL);
	assert_int_equal(b.rc, 0);
	assert_int_equal(e->disk.writes, 1);
	assert_int_equal(e->disk.log[0].off, 0);
	gate_open(&g);
	pthread_join(a.t, NULL);
	assert_int_equal(a.rc, 0);
	apply(e, 2 * MiB, MiB, 1);
	apply(e, 0, MiB, 2);
	assert_int_equal(stats(e).train_waits, 0);
	check_disk(e, false);
	env_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_appends_go_as_one_write),
		cmocka_unit_test(test_failed_train_write),
		cmocka_unit_test(test_overwrites_run_together),
		cmocka_unit_test(test_middle_apart_goes_at_once),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
