/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Writing one entry to disk: completing a partial block (fill) from the disk's copy or zeros,
 * and the write itself with its end-of-file care. COMMIT (bc_range.c) and eviction
 * (bc_evict.c) write through here when a block does not go out in a run (bc_run.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bc_bits.h"
#include "bc_internal.h"

void bc_wait(struct bc_inode *ino)
{
	co_cond_wait(&ino->cond, &ino->lock, 0);
}

/* Where the file's data ends as far as WRITEs know: acknowledged ones and middles in flight.
 * A block write may extend the file up to here without anyone seeing a wrong size. */
uint64_t bc_logical_end(const struct bc_inode *ino)
{
	uint64_t end = ino->hint;

	for (const struct bc_span *s = ino->spans; s; s = s->next)
		end = bc_max(end, s->end);
	return end;
}

bool bc_span_covers(const struct bc_inode *ino, uint64_t index)
{
	for (const struct bc_span *s = ino->spans; s; s = s->next)
		if (index >= s->first && index <= s->last)
			return true;
	return false;
}

/* Bytes [a, b) of the block nobody wrote: from the disk's copy where it had them, else zeros. */
static void fill_hole(unsigned char *data, const unsigned char *disk, size_t ndisk, uint32_t a,
		      uint32_t b)
{
	uint32_t from_disk = ndisk > a ? (uint32_t)(ndisk < b ? ndisk : b) : a;

	if (from_disk > a)
		memcpy(data + a, disk + a, from_disk - a);
	memset(data + from_disk, 0, b - from_disk);
}

/* Does the disk hold no data where e's missing bytes are? The whole block is asked: an entry
 * covers bytes WRITEs gave since its block last went to disk, so any byte of it on disk was
 * written whole with the block, and a block with none is all hole. */
static bool disk_hole(struct bc_inode *ino, struct bc_entry *e, void *io)
{
	struct bcache *c = ino->cache;

	return c->ops.hole && c->ops.hole(io, bc_block_off(ino, e->index), ino->bs) == 1;
}

/* The disk's copy of e's block into *disk (allocated), counted as a device read for why. Bytes
 * read, or -errno. */
static ssize_t fill_read(struct bc_inode *ino, struct bc_entry *e, void *io, enum bc_fill_why why,
			 unsigned char **disk)
{
	struct bcache *c = ino->cache;

	*disk = aligned_alloc(ino->bs, ino->bs);
	if (!*disk)
		return -ENOMEM;
	ssize_t n = c->ops.read(io, bc_block_off(ino, e->index), *disk, ino->bs);
	bc_count(&c->n.fill_reads);
	if (why == BC_FILL_BOUND)
		bc_count(&c->n.fill_reads_bound);
	return n < 0 ? bc_io_result(c, (int)n) : n;
}

/* Complete e's image with the bytes no WRITE gave it. disk_size was read at fill time (middles
 * in flight move it): a hole wholly at or past it is zeros, no read, and so is a block the file
 * has no data in (ops.hole). Touches only bytes whose bit is clear, which nobody else reads or
 * writes meanwhile, so it may run without the lock while e is busy. Does not set e->filled (the
 * caller does, under the lock). */
int bc_fill(struct bc_inode *ino, struct bc_entry *e, void *io, int64_t disk_size,
	    enum bc_fill_why why)
{
	struct bcache *c = ino->cache;
	uint32_t bs = ino->bs, a = bc_bits_find(e->bits, 0, bs, false);
	uint64_t base = bc_block_off(ino, e->index);
	unsigned char *disk = NULL;
	ssize_t n = 0;

	if (base + a >= (uint64_t)disk_size) {
		bc_count(&c->n.fill_zeros);
	} else if (disk_hole(ino, e, io)) {
		bc_count(&c->n.fill_holes);
	} else {
		n = fill_read(ino, e, io, why, &disk);
		if (n < 0) {
			free(disk);
			return (int)n;
		}
	}
	while (a < bs) {
		uint32_t b = bc_bits_find(e->bits, a, bs, true);

		fill_hole(e->data, disk, (size_t)n, a, b);
		a = bc_bits_find(e->bits, b, bs, false);
	}
	free(disk);
	return 0;
}

/* The block ends the file's data inside it: its bytes up to the end, through ops->write_eof,
 * with no padding to take back. 1 when that op is missing or refused, 0 or -errno else. */
static int flush_eof_tail(struct bc_inode *ino, struct bc_entry *e, struct bcache_file *h,
			  uint64_t size)
{
	struct bcache *c = ino->cache;
	uint64_t base = bc_block_off(ino, e->index);
	struct iovec v = { e->data, (size_t)(size - base) };

	if (!c->ops.write_eof)
		return 1;
	int rc = bc_dev_write_eof(ino, h->io, base, &v, 1);
	if (rc == -EOPNOTSUPP)
		return 1;
	if (rc == 0)
		bc_count(&c->n.eof_writes);
	return bc_io_result(c, rc);
}

/* The block ends past both the data's logical end and the disk's end. Through ops->write_eof
 * where there is one and the disk holds nothing in the block; else writing it whole pads the
 * file with zeros to the block's end, so the size goes back right after. Done under the lock
 * from the size probe to the write (and the truncate): no WRITE can start past the logical end
 * meanwhile (its span would move the end) and no size query can see the padding. */
static int flush_past_eof(struct bc_inode *ino, struct bc_entry *e, struct bcache_file *h,
			  int64_t disk_size, uint64_t logical_end, enum bc_fill_why why,
			  enum bcache_sync *sync)
{
	struct bcache *c = ino->cache;
	uint64_t base = bc_block_off(ino, e->index), size = bc_max((uint64_t)disk_size, logical_end);
	int rc = 0;

	if (!bc_entry_complete(ino, e)) {
		rc = bc_fill(ino, e, h->io, disk_size, why);
		if (rc)
			return rc;
		bc_entry_filled(ino, e);
	}
	bool pads = size < base + ino->bs, on_disk = (uint64_t)disk_size > base;
	/* A block wholly past the on-disk end; or one the disk holds data in where the file is
	 * appended to in pieces shorter than a block, whose page the last write of its end left in
	 * the page cache (write_eof's keep), or the trim's zeroing did. Elsewhere (an overwrite's
	 * last block) the kernel would read the block before a partial buffered write, as the
	 * trim does: then the trim, and the file is taken as appended from then on. */
	if (pads)
		*sync = BCACHE_SYNC_NONE;   /* not write_eof's, nor the trim after the write */
	if (pads && (!on_disk || ino->appending) && (rc = flush_eof_tail(ino, e, h, size)) <= 0)
		return rc;
	if (pads && on_disk)
		ino->appending = true;
	struct iovec v = { e->data, ino->bs };
	if (pads) {
		atomic_fetch_add(&ino->pad_seq, 1);   /* bcache_file_size() takes the lock now */
		bc_count(&c->n.eof_trims);
	}
	rc = bc_io_result(c, bc_dev_writev(ino, h->io, base, &v, 1, *sync));
	if (rc == 0 && pads)
		rc = bc_io_result(c, (c->ops.trim ? c->ops.trim : c->ops.truncate)(h->io, size));
	if (pads)
		atomic_fetch_add(&ino->pad_seq, 1);
	return rc;
}

/* The common case: the block ends within the file's data or the disk's end, so writing it shows
 * no wrong size. The I/O runs without the lock; e is busy meanwhile. */
static int flush_unlocked(struct bc_inode *ino, struct bc_entry *e, struct bcache_file *h,
			  bool need_fill, int64_t disk_size, enum bc_fill_why why, enum bcache_sync sync)
{
	struct bcache *c = ino->cache;
	struct iovec v = { e->data, ino->bs };
	int rc = 0, frc = 0;

	bc_entry_set_busy(ino, e, true);
	h->inflight++;
	co_mutex_unlock(&ino->lock);
	if (need_fill)
		frc = bc_fill(ino, e, h->io, disk_size, why);
	if (frc == 0)
		rc = bc_io_result(c, bc_dev_writev(ino, h->io, bc_block_off(ino, e->index), &v,
						      1, sync));
	co_mutex_lock(&ino->lock);
	if (need_fill && frc == 0)
		bc_entry_filled(ino, e);
	h->inflight--;
	if (frc == 0 && rc == 0)
		bc_entry_landed(ino, e);   /* first: not back on the dirty list and its chunk for nothing */
	bc_entry_set_busy(ino, e, false);
	return frc ? frc : rc;
}

int bc_entry_flush(struct bc_inode *ino, struct bc_entry *e, struct bcache_file *h,
		   enum bc_fill_why why, enum bcache_sync *sync)
{
	enum bcache_sync none = BCACHE_SYNC_NONE;
	struct bcache *c = ino->cache;
	uint64_t end = bc_block_off(ino, e->index) + ino->bs, logical_end = bc_logical_end(ino);
	bool need_fill = !bc_entry_complete(ino, e), by_writes = e->nwritten == ino->bs;
	int64_t disk_size = 0;
	int rc;

	if (need_fill || end > logical_end) {
		disk_size = c->ops.disk_size(h->io);
		if (disk_size < 0)
			return bc_io_result(c, (int)disk_size);
	}
	if (!sync)
		sync = &none;
	if (end > logical_end && (uint64_t)disk_size < end)
		rc = flush_past_eof(ino, e, h, disk_size, logical_end, why, sync);
	else
		rc = flush_unlocked(ino, e, h, need_fill, disk_size, why, *sync);
	ino->wseq++;
	if (rc)
		return rc;
	bc_entry_wrote(ino, e, by_writes);   /* flush_unlocked landed it already */
	bc_entry_relist(ino, e);
	bc_wake_waiters(ino);   /* flush_past_eof wrote under the lock */
	return 0;
}
