/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Several threads on one file, as NFS WRITEs arrive from many clients and nfsd threads: the
 * seeds' workload of interleaved 47008- and 6000-byte records, with COMMITs, READs and a tiny
 * memory bound racing them. The disk must end up byte-identical to the records, and a fresh file
 * whose shared blocks all get both halves before the COMMIT must cost no device read. Every
 * test runs twice: THROUGH, and BEHIND with a write-behind thread racing the rest. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_env.h"

#define NTHREADS 4

static enum bcache_mode mode;   /* of this pass (main) */

struct flusher {
	struct bcache *c;
	atomic_bool stop;
	pthread_t t;
};

/* BEHIND: what the server's write-behind fibers do, from a thread of its own. */
static void *flush_loop(void *arg)
{
	struct flusher *f = arg;

	while (!atomic_load(&f->stop))
		if (bcache_writeback(f->c) <= 0)
			usleep(100);
	return NULL;
}

static struct env *tenv(size_t limit, struct flusher *fl)
{
	struct env *e = env_new(limit, 0);

	bcache_file_set_mode(e->f, mode);
	*fl = (struct flusher){ .c = e->c };
	if (mode == BCACHE_BEHIND)
		assert_int_equal(pthread_create(&fl->t, NULL, flush_loop, fl), 0);
	return e;
}

/* Stop the flusher before checks that need the cache to stand still. */
static void flusher_stop(struct flusher *fl)
{
	if (mode == BCACHE_BEHIND && !atomic_exchange(&fl->stop, true))
		pthread_join(fl->t, NULL);
}

static void tenv_free(struct env *e, struct flusher *fl)
{
	flusher_stop(fl);
	env_free(e);
}

struct job {
	struct env *e;
	unsigned tid;
	uint64_t rec;        /* record size */
	unsigned nrec;
	bool shuffle;        /* each thread takes its records in a scrambled order */
	atomic_uint *errors;
	atomic_bool *acked;  /* per record, set once its WRITE returned */
};

static unsigned record_id(unsigned i)
{
	return 1 + i % 199;
}

/* Thread t writes records t, t + NTHREADS, ...: every record's neighbours belong to other
 * threads, so each shared block is written by two threads, in either order or at once. */
static void *writer(void *arg)
{
	const struct job *j = arg;
	unsigned mine = (j->nrec - j->tid + NTHREADS - 1) / NTHREADS;
	unsigned stride = mine % 7 ? 7 : 11;  /* coprime with mine: a permutation */

	for (unsigned k = 0; k < mine; k++) {
		unsigned slot = j->shuffle ? (k * stride + 3) % mine : k;
		unsigned i = j->tid + slot * NTHREADS;

		if (put_raw(j->e, NULL, i * j->rec, j->rec, record_id(i), false))
			atomic_fetch_add(j->errors, 1);
		if (j->acked)
			atomic_store(&j->acked[i], true);
	}
	return NULL;
}

static void run_writers(struct env *e, uint64_t rec, unsigned nrec, bool shuffle,
			atomic_uint *errors, atomic_bool *acked)
{
	pthread_t t[NTHREADS];
	struct job jobs[NTHREADS];

	for (unsigned i = 0; i < nrec; i++)
		apply(e, i * rec, rec, record_id(i));
	for (unsigned k = 0; k < NTHREADS; k++) {
		jobs[k] = (struct job){ .e = e, .tid = k, .rec = rec, .nrec = nrec,
					.shuffle = shuffle, .errors = errors, .acked = acked };
		assert_int_equal(pthread_create(&t[k], NULL, writer, &jobs[k]), 0);
	}
	for (unsigned k = 0; k < NTHREADS; k++)
		pthread_join(t[k], NULL);
}

static void interleaved(uint64_t rec, unsigned nrec, bool shuffle)
{
	struct flusher fl;
	struct env *e = tenv(64 * MiB, &fl);
	atomic_uint errors = 0;
	struct bcache_stats s;

	run_writers(e, rec, nrec, shuffle, &errors, NULL);
	assert_int_equal(atomic_load(&errors), 0);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	flusher_stop(&fl);
	s = stats(e);
	assert_int_equal(e->disk.reads, 0);
	assert_int_equal(s.fill_reads, 0);
	assert_int_equal(s.dirty, 0);
	if (mode == BCACHE_THROUGH)   /* (BEHIND keeps what it wrote, clean) */
		assert_true(s.entries <= 1);  /* the last block, clean, past the last record */
	assert_int_equal(e->disk.misaligned, 0);
	assert_int_equal(e->disk.size, rec * nrec);
	check_disk(e, true);
	bcache_file_evict_clean(e->f);
	assert_int_equal(stats(e).entries, 0);
	tenv_free(e, &fl);
}

static void test_interleaved_47008(void **state)
{
	(void)state;
	interleaved(47008, 128, false);
}

static void test_interleaved_6000(void **state)
{
	(void)state;
	interleaved(6000, 600, false);
}

static void test_interleaved_shuffled(void **state)
{
	(void)state;
	interleaved(47008, 90, true);
	interleaved(6000, 402, true);
}

struct committer {
	struct env *e;
	atomic_bool stop;
	atomic_uint errors;
};

static void *commit_loop(void *arg)
{
	struct committer *c = arg;

	for (unsigned n = 0; !atomic_load(&c->stop); n++) {
		if (bcache_commit(c->e->f, (n % 16) * 65536, n % 3 ? 200000 : 0,
				  n % 2 ? BCACHE_SYNC_DATA : BCACHE_SYNC_NONE))
			atomic_fetch_add(&c->errors, 1);
		usleep(200);
	}
	return NULL;
}

/* COMMITs of moving ranges, with helper threads writing their runs, and a 16-block memory bound
 * (forced fills all the time) race the writers: reads are allowed now, lost or stale bytes are
 * not. */
static void test_commits_and_tiny_bound_race_writers(void **state)
{
	struct flusher fl;
	struct env *e = tenv(16 * BS, &fl);
	struct committer c = { .e = e };
	atomic_uint errors = 0;
	pthread_t t;

	(void)state;
	e->disk.spawn = true;
	assert_int_equal(pthread_create(&t, NULL, commit_loop, &c), 0);
	run_writers(e, 6000, 400, true, &errors, NULL);
	atomic_store(&c.stop, true);
	pthread_join(t, NULL);
	assert_int_equal(atomic_load(&errors), 0);
	assert_int_equal(atomic_load(&c.errors), 0);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	assert_int_equal(stats(e).dirty, 0);
	if (mode == BCACHE_THROUGH)   /* (BEHIND writes complete blocks as runs, unforced) */
		assert_true(stats(e).forced > 0);
	assert_int_equal(e->disk.misaligned, 0);
	check_disk(e, true);
	tenv_free(e, &fl);
}

struct reader {
	struct env *e;
	uint64_t rec;
	unsigned nrec;
	atomic_bool *acked;
	atomic_bool stop;
	atomic_uint bad, reads;
};

/* READ of a record whose WRITE has returned: through the cache, it must be that record. */
static bool read_record(struct reader *r, unsigned i, unsigned char *buf)
{
	struct bcache_read rd;
	int rc;

	do {
		bcache_read_begin(r->e->f, &rd, i * r->rec, r->rec);
		memset(buf, 0, r->rec);
		pthread_mutex_lock(&r->e->disk.lock);
		for (uint64_t k = 0; k < r->rec && i * r->rec + k < r->e->disk.size; k++)
			buf[k] = r->e->disk.data[i * r->rec + k];
		pthread_mutex_unlock(&r->e->disk.lock);
		rc = bcache_read_overlay(r->e->f, &rd, buf);
	} while (rc == -EAGAIN);
	for (uint64_t k = 0; k < r->rec; k++)
		if (buf[k] != pat(record_id(i), i * r->rec + k))
			return false;
	return true;
}

static void *read_loop(void *arg)
{
	struct reader *r = arg;
	unsigned char *buf = malloc(r->rec);

	for (unsigned n = 0; buf && !atomic_load(&r->stop); n = (n + 37) % r->nrec) {
		if (!atomic_load(&r->acked[n]))
			continue;
		if (!read_record(r, n, buf))
			atomic_fetch_add(&r->bad, 1);
		atomic_fetch_add(&r->reads, 1);
	}
	free(buf);
	return NULL;
}

static void test_reads_see_acknowledged_writes(void **state)
{
	struct flusher fl;
	struct env *e = tenv(64 * MiB, &fl);
	const unsigned nrec = 300;
	atomic_bool *acked = calloc(nrec, sizeof(*acked));
	struct reader r = { .e = e, .rec = 6000, .nrec = nrec, .acked = acked };
	atomic_uint errors = 0;
	pthread_t t;

	(void)state;
	assert_non_null(acked);
	assert_int_equal(pthread_create(&t, NULL, read_loop, &r), 0);
	run_writers(e, 6000, nrec, true, &errors, acked);
	while (atomic_load(&r.reads) < nrec)  /* the reader may have started late */
		usleep(1000);
	atomic_store(&r.stop, true);
	pthread_join(t, NULL);
	assert_int_equal(atomic_load(&errors), 0);
	assert_int_equal(atomic_load(&r.bad), 0);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	free(acked);
	tenv_free(e, &fl);
}

struct overlapper {
	struct env *e;
	unsigned id;
	atomic_uint errors;
};

/* Pieces of every shape over the same 8 blocks, from every thread at once. */
static void *overlap_loop(void *arg)
{
	struct overlapper *o = arg;
	uint32_t x = o->id * 2654435761u;

	for (int n = 0; n < 300; n++) {
		uint64_t off, len;

		x = x * 1103515245u + 12345u;
		off = (x >> 8) % (8 * BS);
		len = 1 + (x >> 3) % (3 * BS);
		if (off + len > 8 * BS)
			len = 8 * BS - off;
		if (put_raw(o->e, NULL, off, len, o->id, false))
			atomic_fetch_add(&o->errors, 1);
	}
	return NULL;
}

#define STABLE_REC 47008u
#define STABLE_ROUNDS 16

struct stable_job {
	struct env *e;
	unsigned tid;
	unsigned ok, failed;  /* stable WRITEs answered durable, answered with an error */
	unsigned lies;        /* answered durable while the durable copy lacked their bytes */
};

/* Whether the disk's durable copy holds writer id's bytes [off, off + len). */
static bool durable_has(struct fake_disk *d, uint64_t off, uint64_t len, unsigned id)
{
	bool ok;

	pthread_mutex_lock(&d->lock);
	ok = d->durable_size >= off + len;
	for (uint64_t i = 0; ok && i < len; i++)
		ok = d->durable[off + i] == pat(id, off + i);
	pthread_mutex_unlock(&d->lock);
	return ok;
}

static void *stable_writer(void *arg)
{
	struct stable_job *j = arg;

	for (unsigned k = 0; k < STABLE_ROUNDS; k++) {
		unsigned i = j->tid + k * NTHREADS;
		uint64_t off = (uint64_t)i * STABLE_REC;

		if (put_raw(j->e, NULL, off, STABLE_REC, record_id(i), false) == 0 &&
		    bcache_commit(j->e->f, off, STABLE_REC, BCACHE_SYNC_FILE) == 0) {
			j->ok++;
			j->lies += !durable_has(&j->e->disk, off, STABLE_REC, record_id(i));
		} else {
			j->failed++;
		}
	}
	return NULL;
}

/* Stable WRITEs from several threads on one file share syncs (while one runs, the others queue
 * for the next), yet none is answered durable before a sync that started after its write
 * succeeded; the callers a failed sync covered get its error, and a later COMMIT makes their
 * bytes durable. */
static void test_stable_writers_share_syncs(void **state)
{
	struct flusher fl;
	struct env *e = tenv(64 * MiB, &fl);
	struct stable_job jobs[NTHREADS];
	pthread_t t[NTHREADS];
	unsigned ok = 0, failed = 0, lies = 0;

	(void)state;
	e->disk.sync_delay_ms = 5;
	fake_fail_syncs(&e->disk, EIO, 2);
	for (unsigned i = 0; i < NTHREADS * STABLE_ROUNDS; i++)
		apply(e, (uint64_t)i * STABLE_REC, STABLE_REC, record_id(i));
	for (unsigned k = 0; k < NTHREADS; k++) {
		jobs[k] = (struct stable_job){ .e = e, .tid = k };
		assert_int_equal(pthread_create(&t[k], NULL, stable_writer, &jobs[k]), 0);
	}
	for (unsigned k = 0; k < NTHREADS; k++) {
		pthread_join(t[k], NULL);
		ok += jobs[k].ok;
		failed += jobs[k].failed;
		lies += jobs[k].lies;
	}
	assert_int_equal(lies, 0);
	assert_true(failed >= 1);
	assert_int_equal(ok + failed, NTHREADS * STABLE_ROUNDS);
	assert_true(e->disk.syncs < ok);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	check_disk(e, true);
	tenv_free(e, &fl);
}

/* Which writer wins a racing byte is open; that a byte is one some writer wrote there, that a READ
 * sees what the disk ends up with, and that nothing deadlocks or leaks, is not. */
static void test_racing_overlaps(void **state)
{
	struct flusher fl;
	struct env *e = tenv(64 * MiB, &fl);
	struct overlapper o[NTHREADS];
	pthread_t t[NTHREADS];
	unsigned char buf[8 * BS];

	(void)state;
	for (unsigned k = 0; k < NTHREADS; k++) {
		o[k] = (struct overlapper){ .e = e, .id = 1 + k };
		assert_int_equal(pthread_create(&t[k], NULL, overlap_loop, &o[k]), 0);
	}
	for (unsigned k = 0; k < NTHREADS; k++) {
		pthread_join(t[k], NULL);
		assert_int_equal(atomic_load(&o[k].errors), 0);
	}
	assert_int_equal(read_through(e, 0, buf, sizeof(buf)), 0);
	assert_int_equal(bcache_commit(e->f, 0, 0, BCACHE_SYNC_DATA), 0);
	assert_int_equal(stats(e).dirty, 0);
	pthread_mutex_lock(&e->disk.lock);
	assert_memory_equal(buf, e->disk.data, e->disk.size);
	for (uint64_t i = 0; i < e->disk.size; i++) {
		unsigned char b = e->disk.data[i];
		bool some = b == 0;

		for (unsigned k = 0; k < NTHREADS; k++)
			some = some || b == pat(1 + k, i);
		assert_true(some);
	}
	pthread_mutex_unlock(&e->disk.lock);
	tenv_free(e, &fl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_interleaved_47008),
		cmocka_unit_test(test_interleaved_6000),
		cmocka_unit_test(test_interleaved_shuffled),
		cmocka_unit_test(test_commits_and_tiny_bound_race_writers),
		cmocka_unit_test(test_reads_see_acknowledged_writes),
		cmocka_unit_test(test_racing_overlaps),
		cmocka_unit_test(test_stable_writers_share_syncs),
	};

	mode = BCACHE_THROUGH;
	int failed = cmocka_run_group_tests_name("through", tests, NULL, NULL);
	mode = BCACHE_BEHIND;
	return failed + cmocka_run_group_tests_name("behind", tests, NULL, NULL);
}
