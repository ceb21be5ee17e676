/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "test_env.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cmocka.h>

struct env *env_new(size_t limit, size_t file_limit)
{
	struct env *e = calloc(1, sizeof(*e));

	assert_non_null(e);
	fake_disk_init(&e->disk, BS);
	assert_int_equal(bcache_create(&fake_ops, limit, file_limit, &e->c), 0);
	assert_int_equal(bcache_file_open(e->c, 1, 1, BS, &e->disk, &e->f), 0);
	e->expect = calloc(1, EXPECT_MAX);
	assert_non_null(e->expect);
	return e;
}

void env_free(struct env *e)
{
	if (e->f)
		assert_int_equal(bcache_file_close(e->f), 0);
	bcache_destroy(e->c);
	fake_disk_fini(&e->disk);
	free(e->expect);
	free(e);
}

int put_raw(struct env *e, struct bcache_file *f, uint64_t off, size_t len, unsigned id,
	    bool misaligned)
{
	unsigned char *buf = aligned_alloc(BS, (len + 3 * BS) / BS * BS), *p;
	int rc;

	assert_non_null(buf);
	p = buf + (BS - off % BS) % BS + (misaligned ? 1 : 0);
	for (size_t i = 0; i < len; i++)
		p[i] = pat(id, off + i);
	rc = bcache_write(f ? f : e->f, off, p, len);
	free(buf);
	return rc;
}

void apply(struct env *e, uint64_t off, size_t len, unsigned id)
{
	assert_true(off + len <= EXPECT_MAX);
	for (size_t i = 0; i < len; i++)
		e->expect[off + i] = pat(id, off + i);
	if (off + len > e->expect_size)
		e->expect_size = off + len;
}

void put(struct env *e, uint64_t off, size_t len, unsigned id)
{
	assert_int_equal(put_raw(e, e->f, off, len, id, false), 0);
	apply(e, off, len, id);
}

void set_expect_size(struct env *e, uint64_t size)
{
	if (size < e->expect_size)
		memset(e->expect + size, 0, e->expect_size - size);
	e->expect_size = size;
}

static void check_bytes(const unsigned char *got, uint64_t got_size, const struct env *e)
{
	assert_int_equal(got_size, e->expect_size);
	for (uint64_t i = 0; i < got_size; i++) {
		if (got[i] != e->expect[i]) {
			print_error("byte %llu: got %u, want %u\n", (unsigned long long)i, got[i],
				    e->expect[i]);
			fail();
		}
	}
}

void check_disk(struct env *e, bool durable)
{
	pthread_mutex_lock(&e->disk.lock);
	if (durable)
		check_bytes(e->disk.durable, e->disk.durable_size, e);
	else
		check_bytes(e->disk.data, e->disk.size, e);
	pthread_mutex_unlock(&e->disk.lock);
}

struct bcache_stats stats(struct env *e)
{
	struct bcache_stats s;

	bcache_get_stats(e->c, &s);
	return s;
}

void check_acked_durable(struct env *e, const unsigned char *acked, uint64_t len)
{
	pthread_mutex_lock(&e->disk.lock);
	for (uint64_t i = 0; i < len; i++)
		if (acked[i] && (i >= e->disk.durable_size || e->disk.durable[i] != e->expect[i]))
			fail_msg("byte %llu acknowledged stable but not durable", (unsigned long long)i);
	pthread_mutex_unlock(&e->disk.lock);
}

int read_through(struct env *e, uint64_t off, unsigned char *buf, uint64_t len)
{
	struct bcache_read rd;

	bcache_read_begin(e->f, &rd, off, len);
	memset(buf, 0, len);
	pthread_mutex_lock(&e->disk.lock);
	if (off < e->disk.size)
		memcpy(buf, e->disk.data + off, e->disk.size - off < len ? e->disk.size - off : len);
	pthread_mutex_unlock(&e->disk.lock);
	return bcache_read_overlay(e->f, &rd, buf);
}

void hook_thread_once(bool *started, pthread_t *t, void *(*fn)(void *), void *arg, unsigned ms)
{
	if (*started)
		return;
	*started = true;
	assert_int_equal(pthread_create(t, NULL, fn, arg), 0);
	usleep(ms * 1000u);
}

/* ---- BEHIND mode: records the cache may adopt, write-behind, READs served from the cache ---- */

struct env *behind_env(size_t limit)
{
	struct env *e = env_new(limit, 0);

	bcache_file_set_mode(e->f, BCACHE_BEHIND);
	return e;
}

void rec_release(struct bcache_buf *b)
{
	struct rec *r = (struct rec *)b;

	if (r->released)
		atomic_fetch_add(r->released, 1);
	free(r->mem);
	free(r);
}

/* WRITE len bytes of writer id at off through the adopting call; the caller's reference is
 * dropped before returning, as the server's request does at its end. */
int put_rec(struct env *e, uint64_t off, size_t len, unsigned id, atomic_int *released)
{
	struct rec *r = calloc(1, sizeof(*r));

	assert_non_null(r);
	r->mem = aligned_alloc(BS, (len + 3 * BS) / BS * BS);
	assert_non_null(r->mem);
	bcache_buf_init(&r->b, rec_release, 0);   /* counted as blocks (see test_record_size_counts) */
	r->released = released;
	unsigned char *p = r->mem + off % BS;
	for (size_t i = 0; i < len; i++)
		p[i] = pat(id, off + i);
	int rc = bcache_write_buf(e->f, off, p, len, &r->b);
	bcache_buf_put(&r->b);
	return rc;
}

void put_ok(struct env *e, uint64_t off, size_t len, unsigned id)
{
	assert_int_equal(put_rec(e, off, len, id, NULL), 0);
	apply(e, off, len, id);
}

void put_cached(struct env *e, uint64_t off, size_t len, unsigned id)
{
	for (size_t done = 0, n; done < len; done += n) {
		n = len - done < 256 * 1024 ? len - done : 256 * 1024;
		put_ok(e, off + done, n, id);
	}
}

void put_halves(struct env *e, uint64_t off, unsigned id)
{
	put_ok(e, off, BS / 2, id);
	put_ok(e, off + BS / 2, BS / 2, id);
}

void drain_writeback(struct env *e)
{
	while (bcache_writeback(e->c) > 0)
		;
}

/* A READ of [off, off + len) served by the cache alone (bcache_read_pinned), copied into buf:
 * false on a miss. */
bool read_cached(struct env *e, uint64_t off, uint64_t len, void *buf)
{
	struct iovec iov[300];
	struct bcache_buf *pins[300];
	int npins, n = bcache_read_pinned(e->f, off, len, iov, 300, pins, &npins);
	size_t at = 0;

	assert_true(n >= 0);
	for (int i = 0; i < n; at += iov[i].iov_len, i++)
		memcpy((char *)buf + at, iov[i].iov_base, iov[i].iov_len);
	for (int i = 0; i < npins; i++)
		bcache_buf_put(pins[i]);
	assert_true(n == 0 || at == len);
	return n > 0;
}

/* Every byte of [off, off + len) as a READ served by the cache alone. */
void check_cached(struct env *e, uint64_t off, uint64_t len)
{
	unsigned char *buf = malloc(len);

	assert_non_null(buf);
	assert_true(read_cached(e, off, len, buf));
	assert_memory_equal(buf, e->expect + off, len);
	free(buf);
}
