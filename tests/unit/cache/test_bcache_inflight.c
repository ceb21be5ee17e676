/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The boundary cache's orderings while a middle or an entry write is in flight: the disk's
 * hooks start a second WRITE, a COMMIT or a completion at the worst moment, and the newest
 * bytes must still win, in the order they were acknowledged. One binary with test_bcache.c,
 * which lists the tests (bcache_tests.h declares these). */
#include "bcache_tests.h"

/* A piece acknowledged while a middle over its block is in flight is older than the middle,
 * which returns after it: the middle's bytes win. */
static void nested_put(struct fake_disk *d, uint64_t off, uint64_t len, void *arg)
{
	struct env *e = arg;

	(void)off;
	if (len != 3 * BS)
		return;
	d->write_hook = NULL;
	put(e, BS + 100, 100, 2);
}

void test_piece_during_middle(void **state)
{
	struct env *e = env_new(64 * MiB, 0);

	(void)state;
	e->disk.write_hook = nested_put;
	e->disk.hook_arg = e;
	assert_int_equal(put_raw(e, NULL, 0, 3 * BS, 1, false), 0);
	apply(e, 0, 3 * BS, 1);  /* after the nested put's apply: newer */
	assert_int_equal(stats(e).entries, 0);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	env_free(e);
}

struct race {
	struct env *e;
	pthread_t t;
	atomic_int started;
};

static void *middle_thread(void *arg)
{
	struct race *r = arg;

	assert_int_equal(put_raw(r->e, NULL, 0, 3 * BS, 3, false), 0);
	return NULL;
}

/* Inside the write of completed block 1: a middle over block 1 starts in another thread and must
 * not reach the disk before this write, which it is newer than. */
static void middle_during_flush(struct fake_disk *d, uint64_t off, uint64_t len, void *arg)
{
	struct race *r = arg;

	if (off != BS || len != BS)
		return;
	d->write_hook = NULL;
	assert_int_equal(pthread_create(&r->t, NULL, middle_thread, r), 0);
	usleep(50000);
}

void test_middle_waits_for_entry_write(void **state)
{
	struct env *e = env_new(64 * MiB, 0);
	struct race r = { .e = e };

	(void)state;
	put(e, BS, 100, 1);
	e->disk.write_hook = middle_during_flush;
	e->disk.hook_arg = &r;
	put(e, BS + 100, BS - 100, 2);
	pthread_join(r.t, NULL);
	apply(e, 0, 3 * BS, 3);
	assert_int_equal(fake_writes_over(&e->disk, BS, BS), 2);
	check_disk(e, false);
	env_free(e);
}

/* A COMMIT while a middle over a dirty entry is in flight waits for it: the entry is then
 * superseded, never written over the middle. */
static void signal_and_linger(struct fake_disk *d, uint64_t off, uint64_t len, void *arg)
{
	struct race *r = arg;

	(void)off;
	if (len != 3 * BS)
		return;
	d->write_hook = NULL;
	atomic_store(&r->started, 1);
	usleep(50000);
}

static void *middle_thread2(void *arg)
{
	struct race *r = arg;

	assert_int_equal(put_raw(r->e, NULL, 0, 3 * BS, 2, false), 0);
	return NULL;
}

void test_commit_waits_for_middle(void **state)
{
	struct env *e = env_new(64 * MiB, 0);
	struct race r = { .e = e };

	(void)state;
	put(e, BS + 100, 100, 1);
	e->disk.write_hook = signal_and_linger;
	e->disk.hook_arg = &r;
	assert_int_equal(pthread_create(&r.t, NULL, middle_thread2, &r), 0);
	while (!atomic_load(&r.started))
		usleep(1000);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	pthread_join(r.t, NULL);
	apply(e, 0, 3 * BS, 2);
	assert_int_equal(fake_writes_over(&e->disk, BS, BS), 1);
	check_disk(e, true);
	env_free(e);
}

/* Just after a completed block's write landed, a piece for that block arrives from another
 * thread: it waits for the write to finish and the entry to go, then starts a new one; it is
 * neither written into the old image nor lost with it. */
static void *piece_thread(void *arg)
{
	struct race *r = arg;

	assert_int_equal(put_raw(r->e, NULL, BS + 10, 10, 3, false), 0);
	return NULL;
}

static void piece_after_landing(struct fake_disk *d, uint64_t off, uint64_t len, void *arg)
{
	struct race *r = arg;

	if (off != BS || len != BS)
		return;
	d->write_hook = NULL;
	assert_int_equal(pthread_create(&r->t, NULL, piece_thread, r), 0);
	usleep(50000);
}

void test_piece_waits_for_entry_write(void **state)
{
	struct env *e = env_new(64 * MiB, 0);
	struct race r = { .e = e };

	(void)state;
	put(e, BS, 100, 1);
	e->disk.hook_after = true;
	e->disk.write_hook = piece_after_landing;
	e->disk.hook_arg = &r;
	put(e, BS + 100, BS - 100, 2);
	pthread_join(r.t, NULL);
	apply(e, BS + 10, 10, 3);
	assert_int_equal(stats(e).entries, 1);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	env_free(e);
}

/* A middle that fails supersedes nothing: the older piece in its block is still written. */
void test_failed_middle_keeps_entries(void **state)
{
	struct env *e = env_new(64 * MiB, 0);

	(void)state;
	put(e, BS + 10, 100, 1);
	fake_fail_writes(&e->disk, EIO, 1);
	assert_int_equal(put_raw(e, NULL, 0, 3 * BS, 2, false), -EIO);
	assert_int_equal(stats(e).dirty, 1);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	env_free(e);
}

/* Two overlapping middles: the second waits for the first to return before its data goes out,
 * so the one acknowledged last is the one on disk. (Measured by what the disk holds while the
 * first lingers after landing: timing return order itself would race the threads' returns.) */
struct acks {
	struct env *e;
	pthread_t t;
	unsigned writes_while_first_lingers;
};

static void *second_middle(void *arg)
{
	struct acks *a = arg;

	assert_int_equal(put_raw(a->e, NULL, BS, BS, 2, false), 0);
	return NULL;
}

static void second_after_landing(struct fake_disk *d, uint64_t off, uint64_t len, void *arg)
{
	struct acks *a = arg;

	(void)off;
	if (len != 3 * BS)
		return;
	d->write_hook = NULL;
	assert_int_equal(pthread_create(&a->t, NULL, second_middle, a), 0);
	usleep(50000);
	a->writes_while_first_lingers = fake_writes_over(d, BS, BS);
}

void test_overlapping_middles_ack_order(void **state)
{
	struct env *e = env_new(64 * MiB, 0);
	struct acks a = { .e = e };

	(void)state;
	e->disk.hook_after = true;
	e->disk.write_hook = second_after_landing;
	e->disk.hook_arg = &a;
	assert_int_equal(put_raw(e, NULL, 0, 3 * BS, 1, false), 0);
	pthread_join(a.t, NULL);
	assert_int_equal(a.writes_while_first_lingers, 1);
	apply(e, 0, 3 * BS, 1);
	apply(e, BS, BS, 2);
	check_disk(e, false);
	env_free(e);
}

/* Pieces that complete a block while a middle over it has landed but not yet returned are older
 * than the middle: their block is left to it, never written over it. */
static void complete_under_middle(struct fake_disk *d, uint64_t off, uint64_t len, void *arg)
{
	struct env *e = arg;

	(void)off;
	if (len != 3 * BS)
		return;
	d->write_hook = NULL;
	put(e, BS, 100, 2);
	put(e, BS + 100, BS - 100, 3);
}

void test_completion_under_landed_middle(void **state)
{
	struct env *e = env_new(64 * MiB, 0);

	(void)state;
	e->disk.hook_after = true;
	e->disk.write_hook = complete_under_middle;
	e->disk.hook_arg = e;
	assert_int_equal(put_raw(e, NULL, 0, 3 * BS, 1, false), 0);
	apply(e, 0, 3 * BS, 1);
	assert_int_equal(stats(e).entries, 0);
	assert_int_equal(fake_writes_over(&e->disk, BS, BS), 1);
	check_disk(e, false);
	env_free(e);
}
