/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Runs: adjacent dirty blocks of one inode written with one vectored O_DIRECT write. Write-behind,
 * COMMIT and the memory bound all write through here, so the device sees large writes whatever
 * the size of the WRITEs that brought the data, and whichever connections they came on. */
#include <errno.h>
#include <string.h>

#include "bc_bits.h"
#include "bc_internal.h"

static bool may_join(struct bc_inode *ino, struct bc_entry *e, bool fill, uint64_t logical_end)
{
	if (!e || !e->dirty || e->busy || bc_span_covers(ino, e->index))
		return false;
	if (!fill && !bc_entry_complete(ino, e))
		return false;
	/* A block past the data's end needs the size put back after it (bc_entry_flush). */
	return bc_block_off(ino, e->index) + ino->bs <= logical_end;
}

void bc_run_collect(struct bc_inode *ino, uint64_t first, uint64_t last, bool fill, struct bc_run *r)
{
	uint64_t logical_end = bc_logical_end(ino);

	r->n = 0;
	r->first = first;
	r->sync = BCACHE_SYNC_NONE;
	for (uint64_t i = first; r->n < BC_RUN_MAX && i <= last; i++) {
		struct bc_entry *e = bc_map_find(&ino->map, i);

		if (!may_join(ino, e, fill, logical_end))
			break;
		r->v[r->n++] = e;
		if (i == UINT64_MAX)
			break;
	}
}

void bc_run_extend(struct bc_inode *ino, struct bc_run *r)
{
	uint64_t logical_end = bc_logical_end(ino);

	while (r->n && r->n < BC_RUN_MAX && r->first + r->n != 0) {
		struct bc_entry *e = bc_map_find(&ino->map, r->first + r->n);

		if (!may_join(ino, e, false, logical_end))
			break;
		r->v[r->n++] = e;
	}
}

/* Walk back from index over ready entries to where a run around it would start (not before
 * floor). */
static uint64_t run_start(struct bc_inode *ino, uint64_t index, uint64_t floor)
{
	while (index > floor) {
		struct bc_entry *e = bc_map_find(&ino->map, index - 1);

		if (!e || !bc_entry_ready(ino, e) || bc_span_covers(ino, index - 1))
			break;
		index--;
	}
	return index;
}

void bc_run_around(struct bc_inode *ino, uint64_t index, uint64_t last, bool fill, struct bc_run *r)
{
	uint64_t floor = index >= BC_RUN_MAX / 2 ? index - BC_RUN_MAX / 2 : 0;

	bc_run_collect(ino, run_start(ino, index, floor), last, fill, r);
}

/* The run's images as iovecs, adjacent memory merged (an adopted WRITE's blocks lie end to end). */
static int run_iov(struct bc_inode *ino, const struct bc_run *r, struct iovec *iov)
{
	int n = 0;

	for (size_t i = 0; i < r->n; i++) {
		unsigned char *d = r->v[i]->data;

		if (n && (unsigned char *)iov[n - 1].iov_base + iov[n - 1].iov_len == d)
			iov[n - 1].iov_len += ino->bs;
		else
			iov[n++] = (struct iovec){ d, ino->bs };
	}
	return n;
}

static int run_io(struct bc_inode *ino, void *io, uint64_t off, const struct iovec *iov, int n,
		  enum bcache_sync how, bool eof)
{
	struct bcache *c = ino->cache;

	if (eof)
		return c->ops.write_eof(io, off, iov, n, ino->appending);
	if (how != BCACHE_SYNC_NONE)
		return c->ops.writev_sync(io, off, iov, n, how == BCACHE_SYNC_DATA);
	if (c->ops.writev)
		return c->ops.writev(io, off, iov, n);
	for (int i = 0; i < n; off += iov[i].iov_len, i++) {
		int rc = c->ops.write(io, off, iov[i].iov_base, iov[i].iov_len);

		if (rc)
			return rc;
	}
	return 0;
}

static int dev_io(struct bc_inode *ino, void *io, uint64_t off, const struct iovec *iov, int n,
		  enum bcache_sync how, bool eof)
{
	struct bcache *c = ino->cache;
	struct bcache_writer_saved sv;
	bool restricted = atomic_load_explicit(&ino->restricted, memory_order_relaxed);

	if (c->ops.writer_begin)
		c->ops.writer_begin(io, restricted, &sv);
	int rc = run_io(ino, io, off, iov, n, how, eof);
	if (c->ops.writer_begin)
		c->ops.writer_end(io, &sv);
	return rc;
}

int bc_dev_writev(struct bc_inode *ino, void *io, uint64_t off, const struct iovec *iov, int n,
		  enum bcache_sync how)
{
	return dev_io(ino, io, off, iov, n, how, false);
}

int bc_dev_write_eof(struct bc_inode *ino, void *io, uint64_t off, const struct iovec *iov, int n)
{
	return dev_io(ino, io, off, iov, n, BCACHE_SYNC_NONE, true);
}

static void count_run(struct bcache *c, uint64_t bytes)
{
	unsigned b = 0;

	while (b + 1 < BCACHE_WB_HIST && bytes >= (UINT64_C(8192) << b))
		b++;
	bc_count(&c->n.wb_writes);
	bc_count_add(&c->n.wb_bytes, bytes);
	bc_count(&c->n.wb_hist[b]);
}

/* Fill the partial blocks (device reads, or zeros past the end of file), then write. No lock. */
static int fill_and_write(struct bc_inode *ino, struct bc_run *r, struct bcache_file *h,
			  int64_t disk_size, bool *filled)
{
	struct bcache *c = ino->cache;
	struct iovec iov[BC_RUN_MAX];

	memset(filled, 0, r->n * sizeof(*filled));
	for (size_t i = 0; i < r->n; i++) {
		if (bc_entry_complete(ino, r->v[i]))
			continue;
		int rc = bc_fill(ino, r->v[i], h->io, disk_size, BC_FILL_COMMIT);
		if (rc)
			return rc;
		filled[i] = true;
	}
	int n = run_iov(ino, r, iov);
	int rc = bc_io_result(c, bc_dev_writev(ino, h->io, bc_block_off(ino, r->first), iov, n,
						   r->sync));
	if (rc == 0)
		count_run(c, (uint64_t)r->n * ino->bs);
	return rc;
}

static void run_settle(struct bc_inode *ino, struct bc_run *r, const bool *filled, int rc)
{
	for (size_t i = 0; i < r->n; i++) {
		struct bc_entry *e = r->v[i];

		if (filled[i])
			bc_entry_filled(ino, e);
		if (rc == 0)
			bc_entry_wrote(ino, e, e->nwritten == ino->bs);
		bc_entry_set_busy(ino, e, false);
	}
	ino->wseq++;
}

int bc_run_write(struct bc_inode *ino, struct bc_run *r, struct bcache_file *h)
{
	bool filled[BC_RUN_MAX];
	int64_t disk_size = 0;
	int rc;

	if (r->n == 0)
		return 0;
	for (size_t i = 0; i < r->n; i++) {
		if (!bc_entry_complete(ino, r->v[i])) {
			disk_size = ino->cache->ops.disk_size(h->io);
			if (disk_size < 0)
				return bc_io_result(ino->cache, (int)disk_size);
			break;
		}
	}
	for (size_t i = 0; i < r->n; i++)
		bc_entry_set_busy(ino, r->v[i], true);
	h->inflight++;
	co_mutex_unlock(&ino->lock);
	rc = fill_and_write(ino, r, h, disk_size, filled);
	co_mutex_lock(&ino->lock);
	h->inflight--;
	run_settle(ino, r, filled, rc);
	if (rc == 0) {
		ino->wb_stuck = 0;   /* the fault cleared: the rest may go again */
		bc_wrote(h, r->n * ino->bs);
	}
	bc_room_made(ino->cache);
	return rc;
}

/* ---- a file's end: its last blocks and the partial one after them in one write ---- */

/* At most this many blocks of a file's end go through the page cache together (64 KiB of 4 KiB
 * blocks): a small file's, or what one WRITE appends. Larger runs stay O_DIRECT, the tail apart.
 * One write where there were two matters most to a stable WRITE that appends: the O_DIRECT run
 * waited for the device, and the sync after wrote the tail again in its own trip (6000-byte
 * FILE_SYNC appends, one in flight: 2 writes and a sync each, where the kernel's page cache
 * takes one write and a sync). */
#define EOF_RUN_MAX 16

struct bc_entry *bc_run_eof_tail(struct bc_inode *ino, const struct bc_run *r, void *io,
				 int64_t *disk_size)
{
	uint64_t end = bc_logical_end(ino), base = bc_block_off(ino, r->first + r->n);
	struct bc_entry *t = bc_map_find(&ino->map, r->first + r->n);
	const struct bcache_ops *ops = &ino->cache->ops;

	if (!ops->write_eof || !r->n || r->n >= EOF_RUN_MAX || !t || !t->dirty || t->busy ||
	    bc_span_covers(ino, t->index) || end <= base || end >= base + ino->bs)
		return NULL;
	/* the page cache reads a block it is given only part of where the disk holds data in it:
	 * the run's blocks go whole, every byte of the last one before the end is the WRITEs' (no
	 * fill from disk), and the disk ends before that block (else it would be read) */
	for (size_t i = 0; i < r->n; i++)
		if (!bc_entry_complete(ino, r->v[i]))
			return NULL;
	if (t->bits && bc_bits_find(t->bits, 0, (uint32_t)(end - base), false) < end - base)
		return NULL;
	*disk_size = ops->disk_size(io);
	return *disk_size >= 0 && (uint64_t)*disk_size <= base ? t : NULL;
}

int bc_run_write_eof(struct bc_inode *ino, struct bc_run *r, struct bc_entry *t,
		     struct bcache_file *h, int64_t disk_size)
{
	struct bcache *c = ino->cache;
	uint64_t end = bc_logical_end(ino), base = bc_block_off(ino, t->index);
	struct iovec iov[EOF_RUN_MAX + 1];
	int rc;

	if (bc_entry_complete(ino, t))
		t->filled = true;   /* nobody parked on it: it was not partial */
	else if ((rc = bc_fill(ino, t, h->io, disk_size, BC_FILL_COMMIT)))
		return rc;   /* zeros past the end: no device read */
	else
		bc_entry_filled(ino, t);
	int n = run_iov(ino, r, iov);
	iov[n++] = (struct iovec){ t->data, (size_t)(end - base) };
	rc = bc_dev_write_eof(ino, h->io, bc_block_off(ino, r->first), iov, n);
	if (rc == -EOPNOTSUPP)
		return 1;
	rc = bc_io_result(c, rc);
	ino->wseq++;
	if (rc)
		return rc;
	bc_count(&c->n.eof_writes);
	for (size_t i = 0; i <= r->n; i++) {
		struct bc_entry *e = i < r->n ? r->v[i] : t;

		bc_entry_wrote(ino, e, e->nwritten == ino->bs);
		bc_entry_relist(ino, e);
	}
	bc_wake_waiters(ino);
	return 0;
}
