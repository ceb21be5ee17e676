/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Append trains: the middles of WRITEs past the end of file, written in order, as few writes.
 *
 * XFS (and ext4) take an O_DIRECT write that starts past the file's size one at a time: it waits
 * for every direct write in flight on the file to end, under the inode's exclusive lock, so that
 * the gap can be zeroed (xfs_file_write_zero_eof); and the size only moves when a write ends. A
 * client streaming a new file with 32 1 MiB WRITEs in flight thus had its middles go to disk one
 * after another, each through an io-wq worker of its own that woke, took the lock, drained the
 * others and wrote: 16 ms per WRITE at the median, the disk idle half of the time. On a train,
 * one write past the end is on its way at a time, and the middles next to it that arrive
 * meanwhile queue behind it; when it lands, one of them (the leader) writes the whole queue,
 * each contiguous run as one vectored write. A middle inside the file, or next to none aboard,
 * is written at once, beside the others, as before. */
#include <stdlib.h>
#include <sys/uio.h>

#include "bc_internal.h"

/* What one leader writes at most: a run this long already keeps the device busy, and the
 * WRITEs aboard wait for all of it. */
#define TRAIN_MAX_SPANS 64
#define TRAIN_MAX_BYTES (16u << 20)

static uint64_t span_off(const struct bc_inode *ino, const struct bc_span *s)
{
	return s->first << ino->bshift;
}

/* Does s go on the train? While one runs, a middle that touches one aboard does (it starts
 * where that one ends, or ends where it starts): a stream of appends, in whatever order its
 * WRITEs come. Middles that touch none (interleaved records: the shared blocks lie between
 * them) go at once, beside the train, as they did before it. With no train, one that ends past
 * the file's size on disk starts one. */
static bool touches(const struct bc_inode *ino, const struct bc_span *s, const struct bc_span *l)
{
	for (; l; l = l->qnext)
		if (span_off(ino, s) == l->end || s->end == span_off(ino, l))
			return true;
	return false;
}

static bool boards(struct bcache_file *h, const struct bc_span *s)
{
	struct bc_inode *ino = h->ino;

	if (ino->train.flying || ino->train.queue)
		return touches(ino, s, ino->train.flying) || touches(ino, s, ino->train.queue);
	int64_t size = ino->cache->ops.disk_size(h->io);
	return size >= 0 && s->end > (uint64_t)size;
}

static void enqueue(struct bc_inode *ino, struct bc_span *s)
{
	struct bc_span **p = &ino->train.queue;

	while (*p && (*p)->first < s->first)
		p = &(*p)->qnext;
	s->qnext = *p;
	*p = s;
}

/* The queue's head, up to the leader's limits, off the queue. */
static struct bc_span *take(struct bc_inode *ino)
{
	struct bc_span *batch = ino->train.queue, *last = batch;
	size_t n = 1, bytes = (size_t)(batch->end - span_off(ino, batch));

	while (last->qnext && n < TRAIN_MAX_SPANS && bytes < TRAIN_MAX_BYTES) {
		last = last->qnext;
		bytes += (size_t)(last->end - span_off(ino, last));
		n++;
	}
	ino->train.queue = last->qnext;
	last->qnext = NULL;
	return batch;
}

/* One run of contiguous spans from r on as one write (one write each when the disk has no
 * writev); each span gets its result. The run's successor. */
static struct bc_span *write_run(struct bcache_file *h, struct bc_span *r)
{
	struct bc_inode *ino = h->ino;
	struct bcache *c = ino->cache;
	struct iovec v[TRAIN_MAX_SPANS];
	struct bc_span *s = r;
	int n = 0;

	for (;;) {
		v[n].iov_base = (void *)s->src;
		v[n].iov_len = (size_t)(s->end - span_off(ino, s));
		n++;
		if (!s->qnext || span_off(ino, s->qnext) != s->end)
			break;
		s = s->qnext;
	}
	if (n > 1 && c->ops.writev) {
		bc_count(&c->n.train_writes);
		int rc = bc_io_result(c, c->ops.writev(h->io, span_off(ino, r), v, n));

		for (s = r; n--; s = s->qnext)
			s->rc = rc;
		return s;
	}
	for (int k = 0; k < n; k++, r = r->qnext)
		r->rc = bc_io_result(c, c->ops.write(h->io, span_off(ino, r), v[k].iov_base,
						     v[k].iov_len));
	return r;
}

/* Write a batch off the queue; lock held on entry and on return, not across the writes. Data
 * of other WRITEs is written as cached data is (writer_begin): never past the limits its
 * writers had. */
static void lead(struct bcache_file *h, const struct bc_span *own)
{
	struct bc_inode *ino = h->ino;
	struct bcache *c = ino->cache;
	struct bc_span *batch = take(ino);
	bool foreign = batch != own || batch->qnext;
	struct bcache_writer_saved sv;

	ino->train.flying = batch;
	co_mutex_unlock(&ino->lock);
	if (foreign && c->ops.writer_begin)
		c->ops.writer_begin(h->io, atomic_load_explicit(&ino->restricted,
				    memory_order_relaxed), &sv);
	for (struct bc_span *r = batch; r; )
		r = write_run(h, r);
	if (foreign && c->ops.writer_end)
		c->ops.writer_end(h->io, &sv);
	co_mutex_lock(&ino->lock);
	for (struct bc_span *s = batch; s; s = s->qnext)
		s->done = true;
	ino->train.flying = NULL;
	co_cond_broadcast(&ino->train.done);
}

int bc_train_write(struct bcache_file *h, struct bc_span *s, const void *src)
{
	struct bc_inode *ino = h->ino;

	s->src = src;
	s->done = false;
	if (!boards(h, s)) {
		co_mutex_unlock(&ino->lock);
		int rc = bc_io_result(ino->cache, ino->cache->ops.write(h->io, span_off(ino, s), src,
							       (size_t)(s->end - span_off(ino, s))));
		co_mutex_lock(&ino->lock);
		return rc;
	}
	enqueue(ino, s);
	if (ino->train.flying)
		bc_count(&ino->cache->n.train_waits);
	while (!s->done) {
		if (ino->train.flying)
			co_cond_wait(&ino->train.done, &ino->lock, 0);
		else
			lead(h, s);
	}
	return s->rc;
}
