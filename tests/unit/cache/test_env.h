/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the cache tests share: a cache on a fake disk, WRITEs with recognisable payloads, and the
 * image the disk must end up with. */
#ifndef TEST_ENV_H
#define TEST_ENV_H

/* What every test source of the cache uses, CMocka's prerequisites before it. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cache/bcache.h"
#include "fake_disk.h"

#define BS 4096u
#define MiB (1u << 20)
#define EXPECT_MAX (32u << 20)

struct env {
	struct fake_disk disk;
	struct bcache *c;
	struct bcache_file *f;
	unsigned char *expect;  /* what the file must hold, EXPECT_MAX long */
	uint64_t expect_size;
};

/* The byte writer `id` puts at `off`: two writers differ at every offset (ids below 200). */
static inline unsigned char pat(unsigned id, uint64_t off)
{
	return (unsigned char)(id * 37u + (unsigned)(off % 251u) + 1u);
}

struct env *env_new(size_t limit, size_t file_limit);
void env_free(struct env *e);
/* bcache_write of len bytes of writer id at off, the payload placed so that the middle is
 * aligned in memory (misaligned: one byte off). Does not touch expect. */
int put_raw(struct env *e, struct bcache_file *f, uint64_t off, size_t len, unsigned id,
	    bool misaligned);
/* Record that writer id's bytes [off, off + len) are the newest. */
void apply(struct env *e, uint64_t off, size_t len, unsigned id);
/* put_raw on e->f, must succeed, then apply. */
void put(struct env *e, uint64_t off, size_t len, unsigned id);
void set_expect_size(struct env *e, uint64_t size);
/* The fake disk holds exactly the expected bytes and size (durable: as of the last sync). */
void check_disk(struct env *e, bool durable);
/* A crash now: every byte i of [0, len) with acked[i] set (acknowledged as stable) is on the
 * durable image (as of the last sync) as expected. */
void check_acked_durable(struct env *e, const unsigned char *acked, uint64_t len);
struct bcache_stats stats(struct env *e);
/* What a READ returns: the disk's bytes (zeros past its end) with the cache's overlaid. */
int read_through(struct env *e, uint64_t off, unsigned char *buf, uint64_t len);
/* For a disk hook: the first time (*started false), run fn(arg) on a thread of its own (*t) and
 * give it ms milliseconds before the hook goes on; later calls do nothing. */
void hook_thread_once(bool *started, pthread_t *t, void *(*fn)(void *), void *arg, unsigned ms);

/* ---- BEHIND mode ---- */

/* A cache of `limit` bytes whose file is in BEHIND mode (write-behind). */
struct env *behind_env(size_t limit);
/* A WRITE's record as the server holds it: payload placed so that its middle is aligned, owned
 * by a reference-counted holder the cache may adopt. */
struct rec {
	struct bcache_buf b;
	unsigned char *mem;
	atomic_int *released;   /* bumped when the record's memory is freed (may be NULL) */
};
void rec_release(struct bcache_buf *b);
/* WRITE len bytes of writer id at off through the adopting call; the caller's reference is
 * dropped before returning, as the server's request does at its end. */
int put_rec(struct env *e, uint64_t off, size_t len, unsigned id, atomic_int *released);
/* put_rec, must succeed, then apply. */
void put_ok(struct env *e, uint64_t off, size_t len, unsigned id);
/* put_ok in WRITEs of 256 KiB at most, so that every block stays in the cache: a WRITE whose
 * middle is 512 KiB or more goes straight to disk (see test_straight.c). */
void put_cached(struct env *e, uint64_t off, size_t len, unsigned id);
/* Block-sized data of writer id at off (aligned) in two WRITEs of half a block: complete, dirty
 * and held, as a writer of small records leaves a block. (One WRITE of the whole block that
 * lands next to nothing goes straight to disk: a random writer's, test_straight.c.) */
void put_halves(struct env *e, uint64_t off, unsigned id);
/* bcache_writeback until it finds nothing to do. */
void drain_writeback(struct env *e);
/* A READ of [off, off + len) served by the cache alone (bcache_read_pinned), copied into buf:
 * false on a miss. */
bool read_cached(struct env *e, uint64_t off, uint64_t len, void *buf);
/* Every byte of [off, off + len) as a READ served by the cache alone. */
void check_cached(struct env *e, uint64_t off, uint64_t len);

#endif
