/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The reserve: frames' memory, faulted in ahead of need and used again.
 *
 * A frame (bc_frame.c) is fresh anonymous memory, and the kernel clears every page of it on first
 * touch: on the request path that was a third of the daemon's CPU time when small WRITEs filled
 * new files (clear_page under the copy into the frame, 6000-byte records). A frame whose last
 * reference goes comes back here instead of being unmapped, so a cache that cycles its memory
 * (more written than it holds: bc_trim_written lets written data go) clears no page at all once
 * warm. And a thread of idle priority has the first frames faulted in (MADV_POPULATE_WRITE)
 * while a core has nothing better to do: it keeps `target` frames in existence (ready or out),
 * no more. Topping the ready ones up instead made it map and clear new memory all along a write
 * stream whose frames were coming back anyway (a third of the daemon's CPU in clear_page, 32
 * writers of 47008-byte records).
 *
 * (Without prefault, bcache_set_reserve, only the frames that end are kept.)
 *
 * The ready frames count against the cache's bound (bc_evict.c: over_limit): they are memory the
 * daemon holds. They go first when the cache needs room (bc_reserve_trim), and the thread fills
 * only while the cache has room for them. A frame's memory holds whatever its last use left:
 * that is safe because no image is ever assumed zero (own images come from aligned_alloc too;
 * bc_fill completes a block from disk or zeros).
 *
 * The reserve outlives the cache while frames are out: each holds a reference, and the last one
 * frees it. Its lock guards the list and the references; the cache's byte counts are atomics. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "bc_internal.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23   /* Linux 5.14; Debian 12's headers have it, older ones do not */
#endif

struct bc_reserve {
	pthread_mutex_t lock;
	pthread_cond_t want;      /* the thread waits here for the reserve to run low */
	struct bcache *cache;     /* NULL once the cache is gone */
	unsigned char **ready;
	unsigned n, target;       /* ready now, and how many frames the thread keeps in being */
	unsigned cap;             /* room for ready frames: the cache's bound */
	unsigned refs;            /* the cache's, and one per frame out */
	bool stop, filling;
	pthread_t filler;         /* when filling */
};

/* BC_FRAME_BYTES of memory aligned to BC_FRAME_BYTES, which the kernel may back with one huge
 * page (transparent huge pages in "madvise" mode, Debian's default, need the madvise). Mapped
 * apart from the allocator's heap so that the advice covers nothing else. */
unsigned char *bc_frame_map(void)
{
	size_t span = 2 * (size_t)BC_FRAME_BYTES;
	unsigned char *p = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	uintptr_t a = ((uintptr_t)p + BC_FRAME_BYTES - 1) & ~(uintptr_t)(BC_FRAME_BYTES - 1);
	unsigned char *m = (unsigned char *)a;

	if (m > p)
		munmap(p, (size_t)(m - p));
	if (m + BC_FRAME_BYTES < p + span)
		munmap(m + BC_FRAME_BYTES, (size_t)(p + span - (m + BC_FRAME_BYTES)));
#ifdef MADV_HUGEPAGE
	(void)madvise(m, BC_FRAME_BYTES, MADV_HUGEPAGE);   /* advice: a kernel without THP ignores it */
#endif
	return m;
}

/* A frame with its pages present: faulted in by the kernel in one call, or by a write to each
 * page where the kernel is older than the call. NULL when the memory cannot be had (the kernel
 * says so rather than kill the daemon for it). */
static unsigned char *frame_map_warm(void)
{
	unsigned char *m = bc_frame_map();

	if (!m || madvise(m, BC_FRAME_BYTES, MADV_POPULATE_WRITE) == 0)
		return m;
	if (errno != EINVAL) {
		munmap(m, BC_FRAME_BYTES);
		return NULL;
	}
	for (size_t i = 0; i < BC_FRAME_BYTES; i += 4096)
		((volatile unsigned char *)m)[i] = 0;
	return m;
}

/* Room under the cache's bound for one more ready frame. Reserve lock held, cache alive. */
static bool room_for_one(const struct bc_reserve *r)
{
	struct bcache *c = r->cache;

	return bc_load(&c->bytes) + bc_load(&c->reserve_bytes) + BC_FRAME_BYTES <= c->limit;
}

/* The last ready frame, out of the count. Lock held, a frame ready, the cache alive. */
static unsigned char *ready_pop(struct bc_reserve *r)
{
	atomic_fetch_sub_explicit(&r->cache->reserve_bytes, BC_FRAME_BYTES, memory_order_relaxed);
	return r->ready[--r->n];
}

/* Keep m ready if the cache has room for it; true if kept. A frame that ends is kept whatever
 * the thread's target: it is memory the kernel has already faulted in, and a cache that writes
 * more than it holds wants it again at once. Lock held. */
static bool keep(struct bc_reserve *r, unsigned char *m)
{
	if (!r->cache || r->n >= r->cap || !room_for_one(r))
		return false;
	r->ready[r->n++] = m;
	bc_count_add(&r->cache->reserve_bytes, BC_FRAME_BYTES);
	return true;
}

static void reserve_free(struct bc_reserve *r)
{
	pthread_cond_destroy(&r->want);
	pthread_mutex_destroy(&r->lock);
	free(r->ready);
	free(r);
}

/* Drop a reference (lock held, released here). */
static void reserve_put_locked(struct bc_reserve *r)
{
	bool last = --r->refs == 0;

	pthread_mutex_unlock(&r->lock);
	if (last)
		reserve_free(r);
}

/* Frames in being: ready, or out with an entry or READ reply (a reference each). Lock held. */
static unsigned frames_in_being(const struct bc_reserve *r)
{
	return r->n + r->refs - 1;
}

static void *filler_main(void *arg)
{
	struct bc_reserve *r = arg;
	struct sched_param none = {0};

	/* Only a core that would otherwise idle clears pages for the reserve. */
	(void)pthread_setschedparam(pthread_self(), SCHED_IDLE, &none);
	(void)pthread_setname_np(pthread_self(), "nfsduc-reserve");
	pthread_mutex_lock(&r->lock);
	while (!r->stop) {
		if (frames_in_being(r) >= r->target || !room_for_one(r)) {
			pthread_cond_wait(&r->want, &r->lock);
			continue;
		}
		pthread_mutex_unlock(&r->lock);
		unsigned char *m = frame_map_warm();
		pthread_mutex_lock(&r->lock);
		if (!m) {   /* short of memory: try again when a frame goes */
			if (!r->stop)
				pthread_cond_wait(&r->want, &r->lock);
			continue;
		}
		bc_count(&r->cache->n.frames_mapped);   /* the cache outlives this thread */
		if (r->stop || !keep(r, m))
			munmap(m, BC_FRAME_BYTES);
	}
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

int bcache_set_reserve(struct bcache *c, size_t bytes, bool prefault)
{
	unsigned target = (unsigned)(bytes / BC_FRAME_BYTES);
	struct bc_reserve *r;

	if (c->reserve || !target)
		return c->reserve ? -EBUSY : 0;
	unsigned cap = (unsigned)(c->limit / BC_FRAME_BYTES) + 1;

	r = calloc(1, sizeof(*r));
	if (!r || !(r->ready = calloc(cap, sizeof(*r->ready)))) {
		free(r);
		return -ENOMEM;
	}
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->want, NULL);
	r->cache = c;
	r->target = target;
	r->cap = cap;
	r->refs = 1;
	if (prefault) {
		int rc = pthread_create(&r->filler, NULL, filler_main, r);

		if (rc) {
			reserve_free(r);
			return -rc;
		}
		r->filling = true;
	}
	c->reserve = r;
	return 0;
}

/* A frame mapped on demand, counted as new memory. */
static unsigned char *map_counted(struct bcache *c)
{
	unsigned char *m = bc_frame_map();

	if (m)
		bc_count(&c->n.frames_mapped);
	return m;
}

unsigned char *bc_reserve_take(struct bcache *c, struct bc_reserve **res)
{
	struct bc_reserve *r = c->reserve;
	unsigned char *m = NULL;

	*res = r;
	if (!r)
		return map_counted(c);
	pthread_mutex_lock(&r->lock);
	if (r->n) {
		m = ready_pop(r);
		bc_count(&c->n.frames_warm);
	}
	r->refs++;
	pthread_mutex_unlock(&r->lock);
	if (!m && !(m = map_counted(c)))
		bc_reserve_give(r, NULL);
	return m;
}

void bc_reserve_give(struct bc_reserve *r, unsigned char *mem)
{
	if (!r) {
		munmap(mem, BC_FRAME_BYTES);
		return;
	}
	pthread_mutex_lock(&r->lock);
	if (mem && !keep(r, mem)) {
		munmap(mem, BC_FRAME_BYTES);
		pthread_cond_signal(&r->want);   /* one fewer in being */
	}
	reserve_put_locked(r);
}

void bc_reserve_trim(struct bcache *c)
{
	struct bc_reserve *r = c->reserve;

	/* (every READ that keeps blocks comes here: no lock unless there is something to do) */
	if (!r || !bc_load(&c->reserve_bytes) || !bc_over_limit(c))
		return;
	pthread_mutex_lock(&r->lock);
	while (r->n && bc_over_limit(c))
		munmap(ready_pop(r), BC_FRAME_BYTES);
	pthread_cond_signal(&r->want);
	pthread_mutex_unlock(&r->lock);
}

bool bc_reserve_low(struct bcache *c)
{
	struct bc_reserve *r = c->reserve;

	if (!r || bc_load(&c->reserve_bytes) >= 2 * (uint64_t)BC_FRAME_BYTES)
		return false;
	/* Few ready is not yet short: below its target the reserve maps what the thread would have
	 * (a busy machine never runs an idle-priority thread), and letting written data go then
	 * only made a READ of what was just written miss (integration-cached beside stress-ng). */
	pthread_mutex_lock(&r->lock);
	bool low = frames_in_being(r) >= r->target;
	pthread_mutex_unlock(&r->lock);
	return low;
}

void bc_reserve_stop(struct bcache *c)
{
	struct bc_reserve *r = c->reserve;

	if (!r)
		return;
	pthread_mutex_lock(&r->lock);
	r->stop = true;
	pthread_cond_signal(&r->want);
	pthread_mutex_unlock(&r->lock);
	if (r->filling) {
		struct sched_param none = {0};

		/* an idle-priority thread may wait long for a CPU: shutdown does not */
		(void)pthread_setschedparam(r->filler, SCHED_OTHER, &none);
		pthread_join(r->filler, NULL);
	}
	pthread_mutex_lock(&r->lock);
	while (r->n)
		munmap(ready_pop(r), BC_FRAME_BYTES);
	r->cache = NULL;   /* frames still out are unmapped when they come back */
	c->reserve = NULL;
	reserve_put_locked(r);
}
