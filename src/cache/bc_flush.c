/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Writing entries to disk: completing a partial block (fill), the write itself with its end-of-
 * file care, COMMIT's walk over a range, and eviction under the memory bounds. */
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

/* The block ends past both the data's logical end and the disk's end: writing it whole pads the
 * file with zeros to the block's end, so the size goes back right after. Done under the lock
 * from the size probe to the truncate: no WRITE can start past the logical end meanwhile (its
 * span would move the end) and no size query can see the padding. */
static int flush_past_eof(struct bc_inode *ino, struct bc_entry *e, struct bcache_file *h,
			  int64_t disk_size, uint64_t logical_end, enum bc_fill_why why)
{
	struct bcache *c = ino->cache;
	uint64_t base = bc_block_off(ino, e->index), size = bc_max((uint64_t)disk_size, logical_end);
	int rc = 0;

	if (!bc_entry_complete(ino, e)) {
		rc = bc_fill(ino, e, h->io, disk_size, why);
		if (rc)
			return rc;
		e->filled = true;
	}
	bool pads = size < base + ino->bs;
	if (pads)
		atomic_fetch_add(&ino->pad_seq, 1);   /* bcache_file_size() takes the lock now */
	rc = bc_io_result(c, bc_dev_write(ino, h->io, base, e->data, ino->bs));
	if (rc == 0 && pads)
		rc = bc_io_result(c, (c->ops.trim ? c->ops.trim : c->ops.truncate)(h->io, size));
	if (pads)
		atomic_fetch_add(&ino->pad_seq, 1);
	return rc;
}

/* The common case: the block ends within the file's data or the disk's end, so writing it shows
 * no wrong size. The I/O runs without the lock; e is busy meanwhile. */
static int flush_unlocked(struct bc_inode *ino, struct bc_entry *e, struct bcache_file *h,
			  bool need_fill, int64_t disk_size, enum bc_fill_why why)
{
	struct bcache *c = ino->cache;
	int rc = 0, frc = 0;

	bc_entry_set_busy(ino, e, true);
	h->inflight++;
	co_mutex_unlock(&ino->lock);
	if (need_fill)
		frc = bc_fill(ino, e, h->io, disk_size, why);
	if (frc == 0)
		rc = bc_io_result(c, bc_dev_write(ino, h->io, bc_block_off(ino, e->index), e->data,
						  ino->bs));
	co_mutex_lock(&ino->lock);
	if (need_fill && frc == 0)
		e->filled = true;
	h->inflight--;
	if (frc == 0 && rc == 0)
		bc_entry_landed(ino, e);   /* first: not back on the dirty list and its chunk for nothing */
	bc_entry_set_busy(ino, e, false);
	return frc ? frc : rc;
}

int bc_entry_flush(struct bc_inode *ino, struct bc_entry *e, struct bcache_file *h,
		   enum bc_fill_why why)
{
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
	if (end > logical_end && (uint64_t)disk_size < end)
		rc = flush_past_eof(ino, e, h, disk_size, logical_end, why);
	else
		rc = flush_unlocked(ino, e, h, need_fill, disk_size, why);
	ino->wseq++;
	if (rc)
		return rc;
	if (by_writes) {
		bc_count(&c->n.completed);
		ino->win_completed++;
	}
	bc_entry_landed(ino, e);   /* flush_past_eof's; flush_unlocked did it already */
	bc_entry_relist(ino, e);
	bc_room_made(c);
	return 0;
}

struct collect {
	struct bc_written *v;
	size_t n, cap;
};

/* Room for one more record in col, grown as needed: a run reaches past the range it was asked
 * for, so what a flush writes is not known up front, and sizing for the whole map made each
 * stable WRITE allocate (and jemalloc purge) megabytes (a tenth of the daemon's time under
 * 47008-byte FILE_SYNC WRITEs). False when out of memory. */
static bool collect_room(struct collect *col)
{
	if (col->n < col->cap)
		return true;
	size_t cap = col->cap ? 2 * col->cap : 64;
	struct bc_written *v = realloc(col->v, cap * sizeof(*v));
	if (!v)
		return false;
	col->v = v;
	col->cap = cap;
	return true;
}

/* A dirty block to write, and the end of the range that asked for it (a run that completes
 * partial blocks stops there: past it, their neighbours may be about to come). */
struct todo {
	uint64_t index, last;
};

struct todo_list {
	struct todo *v;
	size_t n;
	uint64_t last;
};

static bool collect_dirty(struct bc_inode *ino, struct bc_entry *e, void *arg)
{
	struct todo_list *col = arg;

	(void)ino;
	if (e->dirty)
		col->v[col->n++] = (struct todo){ e->index, col->last };   /* sized: never full */
	return true;
}

static int by_index(const void *a, const void *b)
{
	uint64_t x = ((const struct todo *)a)->index, y = ((const struct todo *)b)->index;

	return x < y ? -1 : x > y;
}

static int by_first(const void *a, const void *b)
{
	uint64_t x = ((const struct bc_range *)a)->first, y = ((const struct bc_range *)b)->first;

	return x < y ? -1 : x > y;
}

/* Sort r and merge overlapping or adjacent ranges; the new count. */
static size_t merge_ranges(struct bc_range *r, size_t n)
{
	size_t m = 0;

	qsort(r, n, sizeof(*r), by_first);
	for (size_t i = 0; i < n; i++) {
		if (m && (r[m - 1].last == UINT64_MAX || r[i].first <= r[m - 1].last + 1))
			r[m - 1].last = bc_max(r[m - 1].last, r[i].last);
		else
			r[m++] = r[i];
	}
	return m;
}

/* At most one dirty entry per entry of the map, and per block of the (disjoint) ranges. */
static size_t todo_bound(const struct bc_inode *ino, const struct bc_range *r, size_t n)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < n && sum < ino->map.count; i++)
		sum += bc_min(r[i].last - r[i].first, ino->map.count) + 1;
	return (size_t)bc_min(sum, ino->map.count);
}

/* The dirty entry of index, once neither busy nor under a middle in flight (a middle will
 * supersede it, or fail and leave it to us: its fate is known only once the middle is done);
 * NULL when there is nothing to write any more. */
static struct bc_entry *settled_dirty(struct bc_inode *ino, uint64_t index)
{
	for (;;) {
		struct bc_entry *e = bc_map_find(&ino->map, index);

		if (!e || !e->dirty)
			return NULL;
		if (!e->busy && !bc_span_covers(ino, index))
			return e;
		bc_wait(ino);
	}
}

/* Write the dirty blocks from index on as one run (up to last), or the one block alone when it
 * lies past the data's end. Records what it wrote in col: a write it cannot record fails with
 * -ENOMEM (unrecorded, a failed sync would leave it clean yet not durable). */
static int flush_from(struct bcache_file *h, uint64_t index, uint64_t last, struct collect *col)
{
	struct bc_inode *ino = h->ino;
	struct bc_entry *e = settled_dirty(ino, index);
	struct bc_run r;
	int rc;

	if (!e)
		return 0;
	/* Ready blocks on either side go along: the stable WRITEs of neighbours that arrive
	 * together share one vectored write (and then one sync). */
	bc_run_around(ino, index, last, true, &r);
	bc_run_extend(ino, &r);
	if (r.n == 0) {
		r.v[r.n++] = e;
		rc = bc_entry_flush(ino, e, h, BC_FILL_COMMIT);
	} else {
		rc = bc_run_write(ino, &r, h);
	}
	for (size_t i = 0; rc == 0 && i < r.n; i++) {
		if (!collect_room(col))
			return -ENOMEM;
		col->v[col->n++] = (struct bc_written){ r.v[i]->index, r.v[i]->id, r.v[i]->gen };
	}
	return rc;
}

/* How many runs one COMMIT writes at once: its caller's and, through ops.spawn, its helpers'.
 * Random WRITEs leave thousands of short runs, and one at a time the device idles between them:
 * after 40000 random 4 KiB WRITEs the COMMIT of their 35700 runs took 4 s alone, 1.7-2.1 s 8 at
 * a time and 1.0-1.2 s 16 at a time (32: no better). */
#define FLUSH_WORKERS 16

/* A COMMIT's dirty blocks, shared by the workers writing them. Inode lock. */
struct flush_plan {
	struct bcache_file *h;
	const struct todo *todo;         /* indexes, ascending */
	size_t ntodo, next;              /* next: the first one no worker has taken */
	struct collect *out;
	int rc;                          /* the first failure: nobody takes more */
	unsigned helpers;                /* spawned and not done */
	struct co_cond helpers_done;
};

/* [from, end of its claim): adjacent indexes go to one worker, as they make one run (another
 * worker taking the next one would only wait for this one's write). */
static size_t claim_end(const struct flush_plan *p, size_t from)
{
	size_t b = from + 1;

	while (b < p->ntodo && b - from < BC_RUN_MAX && p->todo[b].index == p->todo[b - 1].index + 1)
		b++;
	return b;
}

/* Take claims in order and write them until none is left or one failed. Inode lock held. */
static void flush_work(struct flush_plan *p)
{
	while (p->rc == 0 && p->next < p->ntodo) {
		size_t a = p->next, b = claim_end(p, a);

		p->next = b;
		for (size_t i = a; i < b && p->rc == 0; i++) {
			int rc = flush_from(p->h, p->todo[i].index, p->todo[i].last, p->out);

			if (rc && p->rc == 0)
				p->rc = rc;
		}
	}
}

static void flush_helper(void *arg)
{
	struct flush_plan *p = arg;
	struct bc_inode *ino = p->h->ino;

	co_mutex_lock(&ino->lock);
	flush_work(p);
	p->helpers--;
	co_cond_broadcast(&p->helpers_done);
	co_mutex_unlock(&ino->lock);   /* p may be gone from here on */
}

/* Helpers for a plan of more than one claim, up to FLUSH_WORKERS writers in all. */
static void start_helpers(struct flush_plan *p)
{
	const struct bcache_ops *ops = &p->h->ino->cache->ops;
	unsigned claims = 0;

	if (!ops->spawn)
		return;
	for (size_t a = 0; a < p->ntodo && claims < FLUSH_WORKERS; a = claim_end(p, a))
		claims++;
	while (p->helpers + 1 < claims) {
		p->helpers++;
		if (ops->spawn(p->h->io, flush_helper, p) < 0) {
			p->helpers--;
			break;
		}
	}
}

/* The list of indexes is taken once, up front: entries WRITEs create meanwhile belong to WRITEs
 * this COMMIT need not cover, and would otherwise keep it going forever. Adjacent ones go out as
 * runs, several runs at once when ops.spawn gives helpers. */
int bc_flush_ranges(struct bcache_file *h, struct bc_range *r, size_t n,
		    struct bc_written **done, size_t *ndone)
{
	struct bc_inode *ino = h->ino;
	struct todo_list col = { 0 };
	struct collect out = { 0 };

	*done = NULL;
	*ndone = 0;
	if (ino->map.count == 0 || n == 0)
		return 0;
	n = merge_ranges(r, n);
	col.v = malloc(todo_bound(ino, r, n) * sizeof(*col.v));
	if (!col.v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		size_t from = col.n;

		col.last = r[i].last;
		bc_map_range(ino, r[i].first, r[i].last, collect_dirty, &col);
		/* (a long range is walked slot by slot, in no order) */
		qsort(col.v + from, col.n - from, sizeof(*col.v), by_index);
	}
	/* The first failure ends the walk (the runs under way finish): the rest stays dirty for
	 * the next COMMIT, which the client sends after resending (the verifier changes). A full
	 * file system makes every write fail, and slowly (ext4 forces a journal commit before each
	 * ENOSPC), so writing on would only delay the error past the client's patience. */
	struct flush_plan p = { .h = h, .todo = col.v, .ntodo = col.n, .out = &out };
	co_cond_init(&p.helpers_done);
	start_helpers(&p);
	flush_work(&p);
	while (p.helpers)
		co_cond_wait(&p.helpers_done, &ino->lock, 0);
	free(col.v);
	*done = out.v;
	*ndone = out.n;
	return p.rc;
}

void bc_flush_undo(struct bc_inode *ino, const struct bc_written *done, size_t ndone)
{
	for (size_t i = 0; i < ndone; i++) {
		struct bc_entry *e = bc_map_find(&ino->map, done[i].index);

		if (!e || e->id != done[i].id || e->gen != done[i].gen || e->busy || e->dirty)
			continue;
		e->dirty = true;
		bc_entry_relist(ino, e);
	}
}

/* After the writes of bc_flush_ranges are durable: in THROUGH mode, free the blocks WRITEs
 * completed (nothing will read them from here), unless they changed since. */
void bc_flush_settle(struct bc_inode *ino, const struct bc_written *done, size_t ndone)
{
	for (size_t i = 0; i < ndone; i++) {
		struct bc_entry *e = bc_map_find(&ino->map, done[i].index);

		if (!e || e->id != done[i].id || e->gen != done[i].gen || e->busy || e->dirty)
			continue;
		if (e->nwritten == ino->bs)
			bc_entry_free(ino, e);
	}
}

enum evicted { EV_DONE, EV_SKIPPED, EV_FAILED };

/* Write dirty e for the memory bound: with the ready blocks around it as one run when it is
 * complete, else alone (filled: a forced completion). e is still there, clean, on success. */
static int evict_write(struct bc_inode *ino, struct bc_entry *e, struct bcache_file *h)
{
	struct bc_run r;

	if (bc_entry_complete(ino, e)) {
		bc_run_around(ino, e->index, UINT64_MAX, false, &r);
		if (e->index - r.first < r.n && r.v[e->index - r.first] == e)
			return bc_run_write(ino, &r, h);
	} else {
		bc_count(&ino->cache->n.forced);   /* completed with a read or zeros */
	}
	return bc_entry_flush(ino, e, h, BC_FILL_BOUND);
}

/* Free, or write and free, e to save memory. EV_SKIPPED (lock never dropped) when it cannot go
 * now: busy, under a middle in flight, no handle to write it through, or (unless fill) still
 * partial: completing it now would read from disk what its neighbour is about to bring. */
static enum evicted evict(struct bc_inode *ino, struct bc_entry *e, struct bcache_file *h,
			  bool fill, int *err)
{
	uint64_t id = e->id, index = e->index;

	if (e->busy)
		return EV_SKIPPED;
	if (e->dirty) {
		/* (a file whose write failed keeps its dirty blocks for its COMMIT: trying them for
		 * every WRITE that needs room made each WRITE a storm of failing writes) */
		if (!h || ino->wb_stuck || bc_span_covers(ino, e->index) ||
		    (!fill && !bc_entry_complete(ino, e)))
			return EV_SKIPPED;
		int rc = evict_write(ino, e, h);
		if (rc) {
			*err = (int)bc_wb_failed(ino, rc);
			return EV_FAILED;
		}
		/* the lock was dropped: e may have been freed or rewritten meanwhile */
		e = bc_map_find(&ino->map, index);
		if (!e || e->id != id || e->busy || e->dirty)
			return EV_DONE;
	}
	bc_entry_free(ino, e);
	return EV_DONE;
}

/* The oldest of the inode's first few entries that can go: freed if clean, written (as a run)
 * and freed if dirty; partial blocks only when nothing else can (fill). A bounded look, so that
 * a file holding its whole bound in dirty blocks costs each WRITE little. Inode lock held. */
#define INODE_EVICT_LOOK 64
static bool evict_oldest_look(struct bcache_file *h, bool fill)
{
	struct bc_inode *ino = h->ino;
	int looked = 0;

	for (struct bc_list *l = ino->age.next, *next; l != &ino->age && looked < INODE_EVICT_LOOK;
	     l = next, looked++) {
		struct bc_entry *e = bc_container_of(l, struct bc_entry, ilink);

		next = l->next;
		/* 2Q here too: a block READs came back to gets another round; and so does a partial
		 * block waiting for its neighbour's WRITE, so that the look moves on to blocks that
		 * can go without a read (interleaved writers drift apart: the oldest blocks of a
		 * busy file are the partial ones around a slow writer's records). */
		if ((e->hot && !e->dirty && !e->busy) ||
		    (!fill && e->dirty && !e->busy && !bc_entry_complete(ino, e))) {
			bc_list_del(&e->ilink);
			bc_list_add_tail(&ino->age, &e->ilink);
			continue;
		}
		int err;
		enum evicted ev = evict(ino, e, h, fill, &err);

		/* past a flush the lock was dropped: l may be gone */
		if (ev != EV_SKIPPED)
			return ev == EV_DONE;
	}
	return false;
}

/* A second look before any fill: the first moved the partial blocks it passed over to the
 * back, so the second sees the next entries. */
static bool evict_oldest_of_inode(struct bcache_file *h)
{
	return evict_oldest_look(h, false) || evict_oldest_look(h, false) ||
	       evict_oldest_look(h, true);
}

/* The shard whose list `which` has the oldest head (and *stamp, if asked: its stamp, UINT64_MAX
 * for none), or NULL when all are empty. Each shard is looked at under its own lock; the answer
 * may be stale by the time it is used, which costs only an older entry's turn. */
static struct bc_shard *oldest_shard(struct bcache *c, uint8_t which, uint64_t *stamp)
{
	struct bc_shard *best = NULL;
	uint64_t best_stamp = UINT64_MAX;

	for (unsigned i = 0; i < BC_SHARDS; i++) {
		struct bc_shard *sh = &c->shard[i];
		struct bc_list *list = bc_shard_list(sh, which);

		pthread_mutex_lock(&sh->lock);
		if (!bc_list_empty(list)) {
			struct bc_entry *e = bc_container_of(list->next, struct bc_entry, glink);

			if (e->lstamp < best_stamp) {
				best_stamp = e->lstamp;
				best = sh;
			}
		}
		pthread_mutex_unlock(&sh->lock);
	}
	if (stamp)
		*stamp = best_stamp;
	return best;
}

uint64_t bc_oldest_stamp(struct bcache *c, uint8_t which)
{
	uint64_t stamp;

	oldest_shard(c, which, &stamp);
	return stamp;
}

/* The order eviction looks at the lists in: data written and never read first, then 2Q's
 * probation before HOT, unless HOT holds more than three quarters of the clean bytes; dirty
 * last. */
#define VICTIM_LISTS 4
static void victim_order(struct bcache *c, uint8_t order[VICTIM_LISTS])
{
	uint64_t bytes = atomic_load_explicit(&c->bytes, memory_order_relaxed);
	uint64_t dirty = atomic_load_explicit(&c->dirty_bytes, memory_order_relaxed);
	uint64_t hot = atomic_load_explicit(&c->hot_bytes, memory_order_relaxed);
	uint64_t clean = bytes > dirty ? bytes - dirty : 0;
	bool hot_first = hot * 4 > clean * 3;

	order[0] = BC_GL_WRITTEN;
	order[1] = hot_first ? BC_GL_HOT : BC_GL_CLEAN;
	order[2] = hot_first ? BC_GL_CLEAN : BC_GL_HOT;
	order[3] = BC_GL_DIRTY;
}

struct bc_inode *bc_pick_oldest(struct bcache *c, const uint8_t *lists, int n, uint64_t *index,
				uint64_t *id, uint64_t *stamp)
{
	for (int k = 0; k < n; k++) {
		struct bc_shard *sh = oldest_shard(c, lists[k], NULL);
		if (!sh)
			continue;
		struct bc_list *list = bc_shard_list(sh, lists[k]);
		struct bc_inode *ino = NULL;

		pthread_mutex_lock(&sh->lock);
		if (!bc_list_empty(list)) {
			struct bc_entry *e = bc_container_of(list->next, struct bc_entry, glink);

			bc_list_del(&e->glink);
			bc_list_add_tail(list, &e->glink);
			if (stamp)
				*stamp = e->lstamp;
			e->lstamp = atomic_fetch_add_explicit(&c->stamp, 1, memory_order_relaxed);
			*index = e->index;
			*id = e->id;
			ino = e->ino;
			/* Listed, so its inode is alive while we hold the shard lock: pin it. */
			pthread_mutex_lock(&c->lock);
			ino->refs++;
			pthread_mutex_unlock(&c->lock);
		}
		pthread_mutex_unlock(&sh->lock);
		if (ino)
			return ino;
	}
	return NULL;
}

/* The cache's next victim: a clean one only when clean_only. */
static struct bc_inode *pick_victim(struct bcache *c, bool clean_only, uint64_t *index,
				    uint64_t *id)
{
	uint8_t order[VICTIM_LISTS];

	victim_order(c, order);
	return bc_pick_oldest(c, order, clean_only ? VICTIM_LISTS - 1 : VICTIM_LISTS, index, id,
			      NULL);
}

/* Is the cache over its bound? *entries (if asked): how many it holds. */
static bool over_limit(struct bcache *c, uint64_t *entries)
{
	if (entries)
		*entries = atomic_load_explicit(&c->entries, memory_order_relaxed);
	return bc_load(&c->bytes) + bc_load(&c->reserve_bytes) > c->limit;
}

/* One attempt on the next victim of the whole cache (any inode: its own handle does the I/O).
 * false when there is nothing left to try; *rc gets a failed write's -errno. */
static bool evict_oldest_of_cache(struct bcache *c, bool clean_only, bool fill, int *rc)
{
	uint64_t index, id;
	struct bc_inode *ino;
	struct bc_entry *e;

	ino = pick_victim(c, clean_only, &index, &id);
	if (!ino)
		return false;
	co_mutex_lock(&ino->lock);
	e = bc_map_find(&ino->map, index);
	if (e && e->id == id && !(clean_only && e->dirty))
		evict(ino, e, ino->handles, fill, rc);
	co_mutex_unlock(&ino->lock);
	bc_inode_unpin(ino);
	return true;
}

bool bc_over_limit(struct bcache *c)
{
	return over_limit(c, NULL);
}

/* Up to CLEAN_BATCH of the oldest entries of a shard's clean (or HOT) list that belong to *ino,
 * or, when *ino is NULL, to the inode of its oldest entry, which is then pinned (listed, so alive
 * while the shard lock is held). By index and id: they are checked again under the inode's lock.
 * How many. */
#define CLEAN_BATCH 64
static size_t collect_clean(struct bcache *c, struct bc_shard *sh, uint8_t which,
			    struct bc_inode **ino, uint64_t *index, uint64_t *id)
{
	struct bc_list *list = bc_shard_list(sh, which);
	size_t n = 0;
	int looked = 0;

	pthread_mutex_lock(&sh->lock);
	for (struct bc_list *l = list->next; l != list && n < CLEAN_BATCH && looked < 4 * CLEAN_BATCH;
	     l = l->next, looked++) {
		struct bc_entry *e = bc_container_of(l, struct bc_entry, glink);

		if (!*ino) {
			*ino = e->ino;
			pthread_mutex_lock(&c->lock);
			e->ino->refs++;
			pthread_mutex_unlock(&c->lock);
		}
		if (e->ino == *ino) {
			index[n] = e->index;
			id[n++] = e->id;
		}
	}
	pthread_mutex_unlock(&sh->lock);
	return n;
}

/* Which bound clean blocks are freed for. */
enum bound { BOUND_FILE, BOUND_CACHE, BOUND_WRITTEN };

/* WRITTEN holds more than its share, or more than its floor while frames are short: the memory
 * of written data goes to new frames before the cache maps more (bc_reserve.c). */
static bool written_over(struct bcache *c)
{
	uint64_t w = bc_load(&c->written_bytes);

	return w > c->written_limit || (w > c->written_floor && bc_reserve_low(c));
}

static bool bound_passed(struct bc_inode *ino, enum bound b)
{
	struct bcache *c = ino->cache;

	switch (b) {
	case BOUND_FILE:
		return ino->bytes > c->file_limit;
	case BOUND_WRITTEN:
		return written_over(c);
	default:
		return over_limit(c, NULL);
	}
}

struct frame_rest {
	struct bcache_buf *frame;
	size_t freed;
};

static bool free_in_frame(struct bc_inode *ino, struct bc_entry *e, void *arg)
{
	struct frame_rest *fr = arg;

	if (e->buf == fr->frame && !e->dirty && !e->busy && !e->hot) {
		bc_entry_free(ino, e);
		fr->freed++;
	}
	return true;
}

/* The written data of a frame goes with the rest of the frame's clean blocks that nobody read:
 * the frame's memory comes back only with its last block, and freeing the oldest written blocks
 * alone, spread over many frames, freed few of them while new frames were mapped (32 writers,
 * 4 in flight each: 337 frames opened for 256 frames of data, 181 of them fresh). How many went,
 * e among them. Inode lock held. */
static size_t free_with_frame(struct bc_inode *ino, struct bc_entry *e)
{
	struct frame_rest fr = { e->buf, 0 };

	if (!e->buf || !bc_buf_is_frame(e->buf)) {
		bc_entry_free(ino, e);
		return 1;
	}
	uint64_t per = BC_FRAME_BYTES >> ino->bshift, first = e->index / per * per;
	bc_map_range(ino, first, first + per - 1, free_in_frame, &fr);
	return fr.freed;
}

/* Free those of the collected entries that are still the same clean blocks, while the bound is
 * passed (for the written share, with the rest of their frames). Inode lock held. How many
 * went. */
static size_t free_collected(struct bc_inode *ino, const uint64_t *index, const uint64_t *id,
			     size_t n, enum bound b)
{
	size_t freed = 0;

	for (size_t i = 0; i < n && bound_passed(ino, b); i++) {
		struct bc_entry *e = bc_map_find(&ino->map, index[i]);

		if (!e || e->id != id[i] || e->dirty || e->busy)
			continue;
		if (b == BOUND_WRITTEN) {
			size_t k = free_with_frame(ino, e);
			bc_count_add(&ino->cache->n.written_trimmed, k);
			freed += k;
		} else {
			bc_entry_free(ino, e);
			freed++;
		}
	}
	return freed;
}

/* Free the inode's oldest clean blocks (written and unread first, then 2Q's probation list; its
 * shard's, where other inodes' are passed over), a batch at a time. Whether any went. Inode
 * lock held. */
static bool free_clean_of_inode(struct bc_inode *ino)
{
	static const uint8_t lists[] = { BC_GL_WRITTEN, BC_GL_CLEAN };
	uint64_t index[CLEAN_BATCH], id[CLEAN_BATCH];

	for (size_t k = 0; k < sizeof(lists); k++) {
		size_t n = collect_clean(ino->cache, &ino->cache->shard[ino->shard], lists[k],
					 &ino, index, id);

		if (free_collected(ino, index, id, n, BOUND_FILE) > 0)
			return true;
	}
	return false;
}

/* Clean blocks first, at no cost; only then dirty ones (written: a chunk still filling is cut),
 * and partial ones last. */
bool bc_reclaim_file(struct bcache_file *h)
{
	struct bc_inode *ino = h->ino;
	bool wrote = false;

	co_mutex_lock(&ino->lock);
	while (ino->bytes > ino->cache->file_limit && free_clean_of_inode(ino))
		;
	while (ino->bytes > ino->cache->file_limit && evict_oldest_of_inode(h))
		wrote = true;
	co_mutex_unlock(&ino->lock);
	return wrote;
}

/* The oldest clean blocks of list `which`, freed a batch at a time: those of the inode of its
 * oldest one, under one hold of that inode's lock. One block per hold made a cold scan through a
 * full cache hand the file's lock between rings for every 4 KiB (a wake-up across rings each:
 * 13% of the daemon's time). Whether any went. */
static bool free_clean_batch(struct bcache *c, uint8_t which, enum bound b)
{
	struct bc_shard *sh = oldest_shard(c, which, NULL);
	uint64_t index[CLEAN_BATCH], id[CLEAN_BATCH];
	struct bc_inode *ino = NULL;

	if (!sh)
		return false;
	size_t n = collect_clean(c, sh, which, &ino, index, id);
	if (!ino)
		return false;
	co_mutex_lock(&ino->lock);
	size_t freed = free_collected(ino, index, id, n, b);
	co_mutex_unlock(&ino->lock);
	bc_inode_unpin(ino);
	return freed > 0;
}

void bc_reclaim_clean(struct bcache *c)
{
	uint8_t order[VICTIM_LISTS];

	bc_reserve_trim(c);
	victim_order(c, order);
	for (int k = 0; k < VICTIM_LISTS - 1; k++)
		while (over_limit(c, NULL) && free_clean_batch(c, order[k], BOUND_CACHE))
			;
}

void bc_trim_written(struct bcache *c)
{
	while (written_over(c) && free_clean_batch(c, BC_GL_WRITTEN, BOUND_WRITTEN))
		;
}

int bc_reclaim(struct bcache_file *h)
{
	struct bcache *c = h->ino->cache;
	uint64_t tries;
	int rc = 0;

	bc_reclaim_file(h);
	bc_reserve_trim(c);
	/* Each entry gets one try at most per round, so entries that cannot go now (busy, under a
	 * middle) do not keep us spinning; partial blocks are completed (read) only in the second
	 * round, when nothing else made room. */
	for (int fill = 0; fill < 2; fill++) {
		if (!over_limit(c, &tries))
			return rc;
		while (tries-- > 0 && rc == 0 && evict_oldest_of_cache(c, false, fill, &rc) &&
		       over_limit(c, NULL))
			;
	}
	return rc;
}
