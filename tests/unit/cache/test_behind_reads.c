/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The cache in BEHIND mode serving READs (kept, pinned, stale, a scan beside HOT blocks),
 * truncation beside pinned blocks, and STABLE and write-through WRITEs sharing the cache with
 * write-behind. One binary with test_behind.c, which lists the tests. */

#include "behind_tests.h"

/* READ misses kept clean (bcache_read_keep) serve the next READ; blocks read twice are HOT, and
 * one scan larger than the cache evicts the scan's own blocks, not them. */
void test_scan_does_not_flush_hot_blocks(void **state)
{
	struct env *e = behind_env(256 * BS);
	unsigned char *blk = aligned_alloc(BS, 8 * BS);

	(void)state;
	assert_non_null(blk);
	for (uint64_t i = 0; i < 2048; i++) {    /* the file exists on disk already */
		memset(blk, (int)(i & 0xff), BS);
		fake_disk_put(&e->disk, i * BS, blk, BS);
	}
	struct bcache_read rd;
	for (int pass = 0; pass < 2; pass++) {   /* blocks 0..7 read twice: hot */
		bcache_read_begin(e->f, &rd, 0, 8 * BS);
		for (unsigned i = 0; i < 8; i++)
			memset(blk + i * BS, (int)i, BS);
		assert_int_equal(bcache_read_overlay(e->f, &rd, blk), 0);
		if (!read_cached(e, 0, 8 * BS, blk))
			bcache_read_keep(e->f, &rd, 0, 8 * BS, blk, NULL);
	}
	assert_true(read_cached(e, 0, 8 * BS, blk));
	for (uint64_t i = 8; i < 2048; i++) {    /* the scan: 2040 blocks through a 256-block cache */
		bcache_read_begin(e->f, &rd, i * BS, BS);
		memset(blk, (int)(i & 0xff), BS);
		assert_int_equal(bcache_read_overlay(e->f, &rd, blk), 0);
		bcache_read_keep(e->f, &rd, i * BS, BS, blk, NULL);
	}
	assert_true(stats(e).bytes <= 256 * BS);
	assert_true(read_cached(e, 0, 8 * BS, blk));
	for (unsigned i = 0; i < 8; i++)
		assert_int_equal(blk[i * BS + 17], i);
	assert_int_equal(e->disk.writes, 0);     /* reading never writes */
	free(blk);
	env_free(e);
}

/* A READ never writes, not even to make room: with the cache full of dirty data, the blocks it
 * read are not kept (or go again at once), and the dirty data waits for its own write-behind or
 * COMMIT. */
void test_read_never_writes(void **state)
{
	struct env *e = behind_env(64 * BS);
	unsigned char *blk = aligned_alloc(BS, 8 * BS);
	struct bcache_read rd;

	(void)state;
	assert_non_null(blk);
	for (unsigned i = 0; i < 64; i++)          /* sparse dirty blocks: nothing forms a chunk */
		put_halves(e, (uint64_t)i * 2 * BS, 1);
	unsigned writes = e->disk.writes;
	memset(blk, 0, 8 * BS);
	bcache_read_begin(e->f, &rd, 1024 * BS, 8 * BS);
	assert_int_equal(bcache_read_overlay(e->f, &rd, blk), 0);
	bcache_read_keep(e->f, &rd, 1024 * BS, 8 * BS, blk, NULL);
	assert_int_equal(e->disk.writes, writes);
	assert_true(stats(e).bytes <= 64 * BS);     /* what it kept went again, not the dirty data */
	assert_int_equal(stats(e).dirty, 64);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	free(blk);
	env_free(e);
}

/* A disk read that raced a write to disk is not kept: it may hold the old bytes. */
void test_stale_read_not_kept(void **state)
{
	struct env *e = behind_env(64 * MiB);
	unsigned char *blk = aligned_alloc(BS, BS);
	struct bcache_read rd;

	(void)state;
	assert_non_null(blk);
	bcache_read_begin(e->f, &rd, 0, BS);
	memset(blk, 0, BS);                       /* what the disk had: nothing */
	put_ok(e, 0, BS, 4);                      /* a WRITE lands in the cache ... */
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);   /* ... and on disk */
	assert_int_equal(bcache_file_evict_clean(e->f), 1);
	assert_int_equal(bcache_read_overlay(e->f, &rd, blk), -EAGAIN);
	bcache_read_keep(e->f, &rd, 0, BS, blk, NULL);
	assert_false(read_cached(e, 0, BS, blk));
	free(blk);
	env_free(e);
}

/* SETATTR size over cached whole blocks: the file's bytes past the cut are gone from the cache
 * and the disk alike. */
/* A truncate inside a block a READ reply still sends changes a copy, not the reply's bytes. */
void test_truncate_spares_pinned_block(void **state)
{
	struct env *e = behind_env(64 * MiB);
	struct iovec iov[4];
	struct bcache_buf *pins[4];
	int npins;
	unsigned char want[300];

	(void)state;
	put_ok(e, 0, 300, 1);
	set_expect_size(e, 300);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);   /* filled, clean */
	memcpy(want, e->expect, sizeof want);
	assert_int_equal(bcache_read_pinned(e->f, 0, 300, iov, 4, pins, &npins), 1);
	assert_int_equal(bcache_truncate(e->f, 100), 0);
	set_expect_size(e, 100);
	assert_memory_equal(iov[0].iov_base, want, 300);
	for (int i = 0; i < npins; i++)
		bcache_buf_put(pins[i]);
	check_cached(e, 0, 100);
	check_disk(e, false);
	env_free(e);
}

void test_truncate_cached_blocks(void **state)
{
	struct env *e = behind_env(64 * MiB);

	(void)state;
	put_ok(e, 0, 8 * BS, 1);
	assert_int_equal(bcache_truncate(e->f, 3 * BS + 100), 0);
	set_expect_size(e, 3 * BS + 100);
	assert_int_equal(bcache_file_size(e->f), 3 * BS + 100);
	check_cached(e, 0, 3 * BS + 100);
	put_ok(e, 5 * BS, 10, 2);                 /* a hole: zeros between */
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	env_free(e);
}

/* Blocks kept from a READ's buffer share it with the reply being sent: a WRITE to one of them
 * copies the block first, so the reply's bytes never change under it; the buffer goes when the
 * reply and the cache are both done with it. */
void test_kept_read_buffer_is_never_written(void **state)
{
	struct env *e = behind_env(64 * MiB);
	struct rec *r = calloc(1, sizeof(*r));
	atomic_int released = 0;
	struct bcache_read rd;

	(void)state;
	assert_non_null(r);
	r->mem = aligned_alloc(BS, 4 * BS);
	assert_non_null(r->mem);
	bcache_buf_init(&r->b, rec_release, 0);
	r->released = &released;
	for (unsigned i = 0; i < 4 * BS; i++)
		r->mem[i] = (unsigned char)(i % 7);
	fake_disk_put(&e->disk, 0, r->mem, 4 * BS);
	memcpy(e->expect, r->mem, 4 * BS);
	e->expect_size = 4 * BS;
	bcache_read_begin(e->f, &rd, 0, 4 * BS);
	assert_int_equal(bcache_read_overlay(e->f, &rd, r->mem), 0);
	bcache_read_keep(e->f, &rd, 0, 4 * BS, r->mem, &r->b);
	assert_int_equal(stats(e).read_cached, 4);
	put_ok(e, BS + 100, 50, 5);               /* into a kept block */
	for (unsigned i = 0; i < 4 * BS; i++)     /* the "reply" still holds the disk's bytes */
		assert_int_equal(r->mem[i], (unsigned char)(i % 7));
	check_cached(e, 0, 4 * BS);
	bcache_buf_put(&r->b);                    /* the reply was sent */
	assert_int_equal(atomic_load(&released), 0);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	bcache_file_evict_clean(e->f);
	assert_int_equal(atomic_load(&released), 1);
	env_free(e);
}

/* A READ answered without a copy: the iovecs hold the cached bytes, and they stay as they were
 * while pinned, whatever WRITEs, COMMITs and evictions do meanwhile. */
void test_pinned_read_is_stable(void **state)
{
	struct env *e = behind_env(64 * MiB);
	struct iovec iov[16];
	struct bcache_buf *pins[16];
	int npins;
	unsigned char want[6 * BS], got[6 * BS];

	(void)state;
	put_ok(e, 0, 4 * BS, 1);                    /* adopted from a record */
	put_ok(e, 4 * BS + 10, 2 * BS - 10, 2);     /* a partial block, then a whole one */
	put_ok(e, 4 * BS, 10, 3);                   /* the partial one completed: own image */
	memcpy(want, e->expect, 6 * BS);
	int n = bcache_read_pinned(e->f, 100, 6 * BS - 100, iov, 16, pins, &npins);
	assert_true(n > 0 && n <= 3);               /* adjacent blocks merged */
	put_ok(e, BS + 5, 100, 4);                  /* into pinned blocks: copied first */
	put_ok(e, 2 * BS, BS, 5);                   /* a pinned block replaced whole */
	put_ok(e, 4 * BS + 1, 1, 6);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	bcache_file_evict_clean(e->f);
	size_t at = 0;
	for (int i = 0; i < n; i++) {
		memcpy(got + at, iov[i].iov_base, iov[i].iov_len);
		at += iov[i].iov_len;
	}
	assert_int_equal(at, 6 * BS - 100);
	assert_memory_equal(got, want + 100, at);
	for (int i = 0; i < npins; i++)
		bcache_buf_put(pins[i]);
	check_disk(e, true);
	assert_int_equal(bcache_read_pinned(e->f, 0, BS, iov, 16, pins, &npins), 0);   /* evicted */
	env_free(e);
}

struct stable {
	struct env *e;
	unsigned i;
	pthread_barrier_t *go;
	int rc;
};

/* A stable WRITE as the server makes one: the bytes into the cache, then its range durable. */
static void *stable_main(void *arg)
{
	struct stable *s = arg;

	s->rc = put_rec(s->e, (uint64_t)s->i * 16 * BS, 16 * BS, s->i + 1, NULL);
	pthread_barrier_wait(s->go);   /* all eight in the cache: they arrived together */
	if (s->rc == 0)
		s->rc = bcache_commit(s->e->f, (uint64_t)s->i * 16 * BS, 16 * BS, BCACHE_SYNC_DATA);
	return NULL;
}

/* Stable WRITEs of one file that arrive together share vectored writes and syncs: the first to
 * make its range durable writes its neighbours' blocks along in one run, and the others ride on
 * the next round; eight of them cost fewer than eight writes and syncs, and each is durable when
 * answered. */
void test_stable_writes_share(void **state)
{
	struct env *e = behind_env(64 * MiB);
	struct stable s[8];
	pthread_t t[8];
	pthread_barrier_t go;

	(void)state;
	e->disk.sync_delay_ms = 30;
	pthread_barrier_init(&go, NULL, 8);
	for (unsigned i = 0; i < 8; i++) {
		s[i] = (struct stable){ .e = e, .i = i, .go = &go };
		apply(e, (uint64_t)i * 16 * BS, 16 * BS, i + 1);
		assert_int_equal(pthread_create(&t[i], NULL, stable_main, &s[i]), 0);
	}
	for (unsigned i = 0; i < 8; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(s[i].rc, 0);
	}
	pthread_barrier_destroy(&go);
	check_disk(e, true);
	assert_true(e->disk.syncs < 8);
	assert_true(e->disk.writes < 8);
	env_free(e);
}

struct round;

struct late {
	struct round *r;
	unsigned i;
	pthread_t t;
	int rc;
};

struct round {
	struct env *e;
	struct late late[7];
	atomic_uint arrived;
	unsigned writes_meanwhile;
	bool hooked;
};

/* Apart, so that no run joins two of them; half a block into a block, so that they wait in the
 * cache (whole blocks that land alone go straight to disk, test_straight.c). */
static uint64_t late_off(unsigned i)
{
	return (uint64_t)i * 32 * BS + BS / 2;
}

static void *late_main(void *arg)
{
	struct late *l = arg;
	struct env *e = l->r->e;

	l->rc = put_rec(e, late_off(l->i), 16 * BS, l->i + 1, NULL);
	atomic_fetch_add(&l->r->arrived, 1);
	if (l->rc == 0)
		l->rc = bcache_commit(e->f, late_off(l->i), 16 * BS, BCACHE_SYNC_FILE);
	return NULL;
}

/* Inside the first sync: seven more stable WRITEs come, and get as far as they can. */
static void round_hook(struct fake_disk *d, void *arg)
{
	struct round *r = arg;

	if (r->hooked)
		return;
	r->hooked = true;
	pthread_mutex_lock(&d->lock);
	unsigned before = d->writes;
	pthread_mutex_unlock(&d->lock);
	for (unsigned k = 0; k < 7; k++) {
		r->late[k] = (struct late){ .r = r, .i = k + 1 };
		apply(r->e, late_off(k + 1), 16 * BS, k + 2);
		assert_int_equal(pthread_create(&r->late[k].t, NULL, late_main, &r->late[k]), 0);
	}
	while (atomic_load(&r->arrived) < 7)
		usleep(1000);
	usleep(100 * 1000);   /* time to write, if they were going to */
	pthread_mutex_lock(&d->lock);
	r->writes_meanwhile = d->writes - before;
	pthread_mutex_unlock(&d->lock);
}

/* Group commit in rounds: stable WRITEs that come while a sync runs write nothing yet; the next
 * round writes all their ranges and syncs once for them, and each is durable when answered. */
void test_stable_writes_wait_for_round(void **state)
{
	struct env *e = behind_env(64 * MiB);
	struct round r = { .e = e };

	(void)state;
	e->disk.sync_hook = round_hook;
	e->disk.sync_hook_arg = &r;
	apply(e, 0, 16 * BS, 1);
	assert_int_equal(put_rec(e, 0, 16 * BS, 1, NULL), 0);
	assert_int_equal(bcache_commit(e->f, 0, 16 * BS, BCACHE_SYNC_FILE), 0);
	assert_true(r.hooked);   /* the first round synced (or its write did), and they came */
	for (unsigned k = 0; k < 7; k++) {
		pthread_join(r.late[k].t, NULL);
		assert_int_equal(r.late[k].rc, 0);
	}
	assert_int_equal(r.writes_meanwhile, 0);
	assert_true(e->disk.syncs <= 3);   /* (2 unless a thread was late to queue) */
	check_disk(e, true);
	env_free(e);
}

struct overwrite {
	struct env *e;
	pthread_t t;
	bool started;
};

static void *overwrite_main(void *arg)
{
	struct overwrite *o = arg;

	assert_int_equal(put_rec(o->e, 0, 2 * BS, 9, NULL), 0);
	return NULL;
}

/* Inside the write-behind's device write, another thread overwrites blocks on their way. */
static void overwrite_hook(struct fake_disk *d, uint64_t off, uint64_t len, void *arg)
{
	struct overwrite *o = arg;

	(void)d, (void)off, (void)len;
	/* it waits for this write: the blocks are busy */
	hook_thread_once(&o->started, &o->t, overwrite_main, o, 50);
}

/* A WRITE to blocks being written back waits for that write and then wins: newest bytes on disk. */
void test_overwrite_during_writeback(void **state)
{
	struct env *e = behind_env(64 * MiB);
	struct overwrite o = { .e = e };

	(void)state;
	put_cached(e, 0, MiB, 1);
	e->disk.write_hook = overwrite_hook;
	e->disk.hook_arg = &o;
	assert_int_equal(bcache_writeback(e->c), MiB);
	assert_int_equal(pthread_join(o.t, NULL), 0);
	e->disk.write_hook = NULL;
	apply(e, 0, 2 * BS, 9);
	check_cached(e, 0, MiB);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	env_free(e);
}

/* A BEHIND handle and a THROUGH handle of one inode stay coherent: a THROUGH WRITE's middle
 * supersedes cached blocks; the cached ones that come after it win. */
/* A READ of a cached export read the disk, then a direct export's WRITE of the same file wrote
 * its middle there: what the READ read is stale and must not stay in the cache. */
void test_read_not_kept_across_through_middle(void **state)
{
	struct env *e = behind_env(64 * MiB);
	struct bcache_file *t;
	unsigned char *blk = aligned_alloc(BS, BS);
	struct bcache_read rd;

	(void)state;
	assert_non_null(blk);
	assert_int_equal(bcache_file_open(e->c, 1, 1, BS, &e->disk, &t), 0);
	bcache_read_begin(e->f, &rd, 0, BS);
	memset(blk, 0, BS);                                      /* what the disk had */
	assert_int_equal(put_raw(e, t, 0, BS, 5, false), 0);     /* THROUGH: on disk now */
	apply(e, 0, BS, 5);
	(void)bcache_read_overlay(e->f, &rd, blk);
	bcache_read_keep(e->f, &rd, 0, BS, blk, NULL);
	assert_false(read_cached(e, 0, BS, blk));
	free(blk);
	assert_int_equal(bcache_file_close(t), 0);
	env_free(e);
}

void test_through_and_behind_share(void **state)
{
	struct env *e = behind_env(64 * MiB);
	struct bcache_file *t;

	(void)state;
	assert_int_equal(bcache_file_open(e->c, 1, 1, BS, &e->disk, &t), 0);
	put_ok(e, 0, 8 * BS, 1);
	assert_int_equal(put_raw(e, t, BS, 4 * BS, 2, false), 0);   /* THROUGH: on disk now */
	apply(e, BS, 4 * BS, 2);
	put_ok(e, 2 * BS, BS, 3);
	unsigned char *buf = malloc(8 * BS);
	assert_non_null(buf);
	assert_int_equal(read_through(e, 0, buf, 8 * BS), 0);
	assert_memory_equal(buf, e->expect, 8 * BS);
	free(buf);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	assert_int_equal(bcache_file_close(t), 0);
	env_free(e);
}
