/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The block that ends a file, written before its neighbour has come (a stable WRITE or a COMMIT
 * at the file's end): through ops.write_eof up to the end alone, so the size is never padded
 * and nothing is truncated (on Linux the truncate of a block just written O_DIRECT reads it back
 * to zero its tail); without that op, padded and trimmed as before; each way counted; a failing
 * write keeps the data for the next COMMIT. A file's last blocks (fewer than 16: a small file's,
 * an append's) go with its end in that one write. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>

#include "io/fiber.h"
#include "test_env.h"

/* A file of BS + 1000 bytes, made durable by a COMMIT of its range before any neighbour comes:
 * its last block went one way (write_eof: truncates 0) or the other (trims: 1), all aligned,
 * and the disk holds the file's 5096 bytes exactly. */
static void commit_tail(struct env *e, unsigned eof_writes, unsigned trims)
{
	put(e, 0, BS + 1000, 1);
	assert_int_equal(bcache_commit(e->f, 0, BS + 1000, BCACHE_SYNC_DATA), 0);
	struct bcache_stats s = stats(e);
	assert_int_equal(s.eof_writes, eof_writes);
	assert_int_equal(s.eof_trims, trims);
	assert_int_equal(e->disk.eof_writes, eof_writes);
	assert_int_equal(e->disk.truncates, trims);
	assert_int_equal(e->disk.misaligned, 0);
	check_disk(e, true);
}

/* A stable WRITE's tail past the end of file, then the neighbour: one write_eof of exactly the
 * data, no truncate and no read; the neighbour completes the block, written whole. */
static void test_tail_written_to_its_end(void **state)
{
	struct env *e = env_new(64 * MiB, 0);

	(void)state;
	commit_tail(e, 1, 0);
	put(e, BS + 1000, BS - 1000, 2);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	assert_int_equal(e->disk.reads, 0);
	assert_int_equal(e->disk.eof_writes, 1);
	check_disk(e, true);
	env_free(e);
}

/* Interleaved stable WRITEs that each end the file: every tail goes through write_eof, the
 * file is never seen longer than its data, and nothing is read. */
static void test_growing_file_never_padded(void **state)
{
	struct env *e = env_new(64 * MiB, 0);
	const uint64_t rec = 47008;

	(void)state;
	for (unsigned i = 0; i < 8; i++) {
		put(e, i * rec, rec, 1 + i);
		assert_int_equal(bcache_commit(e->f, i * rec, rec, BCACHE_SYNC_FILE), 0);
		assert_int_equal(bcache_file_size(e->f), (int64_t)((i + 1) * rec));
		check_disk(e, true);
	}
	assert_int_equal(e->disk.reads, 0);
	assert_int_equal(e->disk.truncates, 0);
	assert_int_equal(stats(e).eof_trims, 0);
	assert_true(stats(e).eof_writes >= 8);
	env_free(e);
}

/* 16 stable WRITEs of 6000 bytes appending one after another in cached mode (one in flight, as a
 * program's synchronous writes): each made `writes` writes, one of them through write_eof;
 * nothing read (the blocks before the end go whole, the end lies past the disk's), nothing
 * truncated, all aligned, the disk exactly the data after each. */
static void appends(bool eof_one_piece, unsigned writes)
{
	struct env *e = behind_env(64 * MiB);
	const uint64_t rec = 6000;

	e->disk.write_eof_one_piece = eof_one_piece;
	for (unsigned i = 0; i < 16; i++) {
		unsigned before = e->disk.writes;

		put_ok(e, i * rec, rec, 1 + i);
		assert_int_equal(bcache_commit(e->f, i * rec, rec, BCACHE_SYNC_FILE), 0);
		assert_int_equal(e->disk.writes - before, writes);
		assert_int_equal(e->disk.eof_writes, i + 1);
		check_disk(e, true);
	}
	assert_int_equal(e->disk.reads, 0);
	assert_int_equal(e->disk.pc_reads, 0);
	assert_int_equal(e->disk.truncates, 0);
	assert_int_equal(e->disk.misaligned, 0);
	env_free(e);
}

/* One write each: the block the last one left part-filled, the blocks between and the new end
 * together. */
static void test_appends_one_write_each(void **state)
{
	(void)state;
	appends(false, 1);
}

/* Where write_eof takes only the end block's part (a kernel without RWF_DONTCACHE, whose page
 * cache would keep the blocks before it): those go O_DIRECT, the end alone after them. */
static void test_appends_end_alone_where_refused(void **state)
{
	(void)state;
	appends(true, 2);
}

/* A stable WRITE whose blocks a neighbour completed: its round takes the neighbour's ready blocks
 * along, but not the neighbour's end, which waits for its own neighbour to come (written now,
 * half of it would be written twice). */
static void test_neighbours_end_left_to_it(void **state)
{
	struct env *e = behind_env(64 * MiB);
	const uint64_t rec = 6000;

	(void)state;
	put_ok(e, 0, rec, 1);
	put_ok(e, rec, rec, 2);
	assert_int_equal(bcache_commit(e->f, 0, rec, BCACHE_SYNC_FILE), 0);
	assert_int_equal(e->disk.writes, 1);
	assert_int_equal(e->disk.eof_writes, 0);
	assert_int_equal(e->disk.log[0].len, 2 * BS);
	assert_int_equal(stats(e).dirty, 1);
	put_ok(e, 2 * rec, rec, 3);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_FILE), 0);
	assert_int_equal(e->disk.reads, 0);
	check_disk(e, true);
	env_free(e);
}

struct parked {
	struct env *e;
	uint64_t off, len;
	bool woken;
	pthread_t t;
};

static void *park_main(void *arg)
{
	struct parked *p = arg;

	p->woken = bcache_wait_partial(p->e->f, p->off, p->len, false,
				       fiber_now_ns() + 20ull * 1000 * 1000 * 1000, NULL);
	return NULL;
}

/* A WRITE parked for the neighbour of its end block goes on once a COMMIT of the whole file has
 * written that block with the run before it, not at its deadline. */
static void test_parked_end_woken_by_its_write(void **state)
{
	struct env *e = behind_env(64 * MiB);
	struct parked p = { .e = e, .off = BS, .len = BS + 500 };

	(void)state;
	put_ok(e, 0, 2 * BS + 500, 1);
	assert_int_equal(pthread_create(&p.t, NULL, park_main, &p), 0);
	usleep(50 * 1000);   /* (waiting or not yet: either way it must not wait out its 20 s) */
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	assert_int_equal(e->disk.eof_writes, 1);
	assert_int_equal(e->disk.writes, 1);
	assert_int_equal(pthread_join(p.t, NULL), 0);
	assert_true(p.woken);
	check_disk(e, true);
	env_free(e);
}

/* A WRITE parked for the neighbour of its last block goes on the moment that neighbour's WRITE
 * completes the block, still only in the cache, so that it can join the neighbour's round: not
 * when some later write of the block lands (with four writers on two rings, each such landing
 * woke the parked WRITEs of the other ring for nothing), nor at its deadline. */
static void test_parked_woken_by_its_neighbour(void **state)
{
	struct env *e = behind_env(64 * MiB);
	struct parked p = { .e = e, .off = 0, .len = BS + 500 };

	(void)state;
	put_ok(e, 0, BS + 500, 1);
	assert_int_equal(pthread_create(&p.t, NULL, park_main, &p), 0);
	usleep(50 * 1000);   /* (waiting or not yet: either way it must not wait out its 20 s) */
	put_ok(e, BS + 500, BS - 500, 2);
	assert_int_equal(pthread_join(p.t, NULL), 0);
	assert_true(p.woken);
	assert_int_equal(e->disk.writes, 0);   /* woken by the completion, not by a write */
	assert_int_equal(bcache_commit(e->f, 0, 2 * BS, BCACHE_SYNC_FILE), 0);
	assert_int_equal(e->disk.reads, 0);
	check_disk(e, true);
	env_free(e);
}

/* Without write_eof (no such descriptor, or a kernel that refuses): the block is written whole
 * and the size put back, counted as a trim. */
static void test_tail_padded_without_write_eof(void **state)
{
	struct env *e = env_new(64 * MiB, 0);

	(void)state;
	e->disk.no_write_eof = true;
	commit_tail(e, 0, 1);
	env_free(e);
}

/* An overwrite's last block, where the disk holds data: not through write_eof (the kernel would
 * read the block first, and a failing disk fail the write there), padded and trimmed. */
static void test_overwritten_tail_not_through_write_eof(void **state)
{
	struct env *e = env_new(64 * MiB, 0);
	unsigned char old[BS + 1000];

	(void)state;
	for (size_t i = 0; i < sizeof(old); i++)
		old[i] = (unsigned char)(i * 7 + 3);
	fake_disk_put(&e->disk, 0, old, sizeof(old));
	apply(e, 0, sizeof(old), 9);
	commit_tail(e, 0, 1);
	env_free(e);
}

/* The same with blocks before it: they go O_DIRECT, not with the end through write_eof (the
 * page cache would read the end's block, which the disk holds data in); the trim reads it. */
static void test_overwritten_end_not_with_its_run(void **state)
{
	struct env *e = behind_env(64 * MiB);
	unsigned char old[3 * BS + 1000];

	(void)state;
	for (size_t i = 0; i < sizeof(old); i++)
		old[i] = pat(9, i);
	fake_disk_put(&e->disk, 0, old, sizeof(old));
	apply(e, 0, sizeof(old), 9);
	put_ok(e, BS, 2 * BS + 1000, 1);
	assert_int_equal(bcache_commit(e->f, BS, 2 * BS + 1000, BCACHE_SYNC_FILE), 0);
	assert_int_equal(e->disk.eof_writes, 0);
	assert_int_equal(e->disk.reads, 0);
	assert_int_equal(e->disk.pc_reads, 1);
	check_disk(e, true);
	env_free(e);
}

/* Stable appends shorter than a block (a log's lines, each synced): the first into a block the
 * disk holds data in is padded and trimmed (the trim reads the block into the page cache), and
 * from then on each goes through write_eof keeping its page: nothing more is read, nothing more
 * trimmed, across blocks too. */
static void test_short_appends_read_once(void **state)
{
	struct env *e = behind_env(64 * MiB);
	const uint64_t rec = 100;

	(void)state;
	for (unsigned i = 0; i < 100; i++) {
		put_ok(e, i * rec, rec, 1 + i);
		assert_int_equal(bcache_commit(e->f, i * rec, rec, BCACHE_SYNC_FILE), 0);
		check_disk(e, true);
	}
	assert_int_equal(e->disk.reads, 0);
	assert_int_equal(e->disk.pc_reads, 1);
	assert_int_equal(e->disk.truncates, 1);
	assert_int_equal(e->disk.misaligned, 0);
	env_free(e);
}

/* A full disk at the tail's write: the COMMIT says so, the bytes stay in the cache, and the
 * next COMMIT writes them. */
static void test_tail_write_error_kept(void **state)
{
	struct env *e = env_new(64 * MiB, 0);

	(void)state;
	put(e, 0, BS + 1000, 1);
	fake_fail_writes(&e->disk, ENOSPC, 1);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), -ENOSPC);
	assert_true(stats(e).dirty >= 1);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	assert_int_equal(stats(e).dirty, 0);
	assert_int_equal(e->disk.truncates, 0);
	check_disk(e, true);
	env_free(e);
}

/* A small file (fewer than 16 blocks and a tail), written behind and committed: its blocks and
 * its end go in one write through write_eof, aligned, the size exactly the data's, nothing
 * read. */
static void test_small_file_end_in_one_write(void **state)
{
	struct env *e = behind_env(64 * MiB);

	(void)state;
	put_ok(e, 0, 3 * BS + 500, 1);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	assert_int_equal(e->disk.writes, 1);
	assert_int_equal(e->disk.eof_writes, 1);
	assert_int_equal(e->disk.log[0].off, 0);
	assert_int_equal(e->disk.log[0].len, 3 * BS + 500);
	assert_int_equal(e->disk.misaligned, 0);
	assert_int_equal(e->disk.reads, 0);
	assert_int_equal(e->disk.truncates, 0);
	assert_int_equal(stats(e).dirty, 0);
	check_disk(e, true);
	env_free(e);
}

/* A larger file's end: its blocks O_DIRECT as a run, only the last block through write_eof. */
static void test_large_file_end_apart(void **state)
{
	struct env *e = behind_env(64 * MiB);

	(void)state;
	put_cached(e, 0, 20 * BS + 500, 1);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	assert_int_equal(e->disk.eof_writes, 1);
	assert_int_equal(e->disk.writes, 2);
	assert_int_equal(e->disk.log[0].len, 20 * BS);
	assert_int_equal(e->disk.misaligned, 0);
	check_disk(e, true);
	env_free(e);
}

/* The end block has a hole before the end (its bytes would come from the disk): not with the
 * run; every byte still right, nothing padded. */
static void test_end_with_a_hole_apart(void **state)
{
	struct env *e = behind_env(64 * MiB);

	(void)state;
	put_ok(e, 0, 2 * BS, 1);
	put_ok(e, 2 * BS + 100, 400, 2);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	assert_int_equal(e->disk.writes, 2);
	assert_int_equal(e->disk.truncates, 0);
	check_disk(e, true);
	env_free(e);
}

/* write_eof refused (no descriptor for it): the run goes O_DIRECT and the end padded and
 * trimmed, as before there was a way through the page cache. */
static void test_small_file_end_refused(void **state)
{
	struct env *e = behind_env(64 * MiB);

	(void)state;
	e->disk.no_write_eof = true;
	put_ok(e, 0, 3 * BS + 500, 1);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	assert_int_equal(e->disk.eof_writes, 0);
	assert_int_equal(e->disk.truncates, 1);
	check_disk(e, true);
	env_free(e);
}

/* The one write fails (full disk): the COMMIT says so, everything stays dirty, and the next
 * COMMIT writes it all. */
static void test_small_file_end_error_kept(void **state)
{
	struct env *e = behind_env(64 * MiB);

	(void)state;
	put_ok(e, 0, 3 * BS + 500, 1);
	fake_fail_writes(&e->disk, ENOSPC, 1);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), -ENOSPC);
	assert_int_equal(stats(e).dirty, 4);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	assert_int_equal(stats(e).dirty, 0);
	check_disk(e, true);
	env_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tail_written_to_its_end),
		cmocka_unit_test(test_growing_file_never_padded),
		cmocka_unit_test(test_appends_one_write_each),
		cmocka_unit_test(test_appends_end_alone_where_refused),
		cmocka_unit_test(test_overwritten_end_not_with_its_run),
		cmocka_unit_test(test_short_appends_read_once),
		cmocka_unit_test(test_neighbours_end_left_to_it),
		cmocka_unit_test(test_parked_end_woken_by_its_write),
		cmocka_unit_test(test_parked_woken_by_its_neighbour),
		cmocka_unit_test(test_tail_padded_without_write_eof),
		cmocka_unit_test(test_overwritten_tail_not_through_write_eof),
		cmocka_unit_test(test_tail_write_error_kept),
		cmocka_unit_test(test_small_file_end_in_one_write),
		cmocka_unit_test(test_large_file_end_apart),
		cmocka_unit_test(test_end_with_a_hole_apart),
		cmocka_unit_test(test_small_file_end_refused),
		cmocka_unit_test(test_small_file_end_error_kept),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
