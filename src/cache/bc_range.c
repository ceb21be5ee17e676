/* SPDX-License-Identifier: GPL-2.0-or-later */
/* COMMIT's walk over its ranges: the dirty blocks they hold, taken once, written as runs and
 * several runs at once, and what was written recorded. bc_commit.c asks for the walk, syncs,
 * and by the sync's outcome settles or undoes what this recorded. */
#include <errno.h>
#include <stdlib.h>

#include "bc_internal.h"

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

/* A COMMIT's dirty blocks, shared by the workers writing them. Inode lock. */
struct flush_plan {
	struct bcache_file *h;
	const struct todo *todo;         /* indexes, ascending */
	size_t ntodo, next;              /* next: the first one no worker has taken */
	struct collect *out;
	int rc;                          /* the first failure: nobody takes more */
	enum bcache_sync lone;           /* a write that carries every block syncs so, */
	bool synced;                     /* and one did */
	unsigned helpers;                /* spawned and not done */
	struct co_cond helpers_done;
};

/* How a write of blocks [first, first + n) syncs: as the plan's lone where it carries every
 * block of the plan. */
static enum bcache_sync write_sync(const struct flush_plan *p, uint64_t first, size_t n)
{
	const struct bcache_ops *ops = &p->h->ino->cache->ops;

	if (p->lone == BCACHE_SYNC_NONE || !ops->writev_sync ||
	    first > p->todo[0].index || first + n <= p->todo[p->ntodo - 1].index)
		return BCACHE_SYNC_NONE;
	return p->lone;
}

/* The run r, with the block that ends the file right after it where the two can go in one
 * write (bc_run_eof_tail) and that block is the plan's (at most last): then r holds it too on
 * return. Another WRITE's end, which r reached only by taking its ready blocks along, waits
 * for its own neighbour, as it would have without r. */
static int flush_run(struct flush_plan *p, struct bc_run *r, uint64_t last)
{
	struct bc_inode *ino = p->h->ino;
	int64_t disk_size;
	struct bc_entry *t = r->first + r->n <= last ? bc_run_eof_tail(ino, r, p->h->io, &disk_size)
						     : NULL;
	int rc = 1;

	if (t) {
		rc = bc_run_write_eof(ino, r, t, p->h, disk_size);   /* no sync of its own: see ops */
		if (rc <= 0)
			r->v[r->n++] = t;
	}
	if (rc == 1) {
		r->sync = write_sync(p, r->first, r->n);
		rc = bc_run_write(ino, r, p->h);
	}
	p->synced |= rc == 0 && r->sync != BCACHE_SYNC_NONE;
	return rc;
}

/* Write the dirty blocks from todo[i] on as one run (up to its last), or the one block alone
 * when it lies past the data's end. Records what it wrote in the plan's out: a write it cannot
 * record fails with -ENOMEM (unrecorded, a failed sync would leave it clean yet not durable). */
static int flush_from(struct flush_plan *p, size_t i)
{
	struct bcache_file *h = p->h;
	struct bc_inode *ino = h->ino;
	struct bc_entry *e = settled_dirty(ino, p->todo[i].index);
	struct collect *col = p->out;
	struct bc_run r;
	int rc;

	if (!e)
		return 0;
	/* Ready blocks on either side go along: the stable WRITEs of neighbours that arrive
	 * together share one vectored write (and then one sync). */
	bc_run_around(ino, e->index, p->todo[i].last, true, &r);
	bc_run_extend(ino, &r);
	if (r.n == 0) {
		enum bcache_sync sync = write_sync(p, e->index, 1);

		r.v[r.n++] = e;
		rc = bc_entry_flush(ino, e, h, BC_FILL_COMMIT, &sync);
		p->synced |= rc == 0 && sync != BCACHE_SYNC_NONE;
	} else {
		rc = flush_run(p, &r, p->todo[i].last);
	}
	for (size_t k = 0; rc == 0 && k < r.n; k++) {
		if (!collect_room(col))
			return -ENOMEM;
		col->v[col->n++] = (struct bc_written){ r.v[k]->index, r.v[k]->id, r.v[k]->gen };
	}
	return rc;
}

/* How many runs one COMMIT writes at once: its caller's and, through ops.spawn, its helpers'.
 * Random WRITEs leave thousands of short runs, and one at a time the device idles between them:
 * after 40000 random 4 KiB WRITEs the COMMIT of their 35700 runs took 4 s alone, 1.7-2.1 s 8 at
 * a time and 1.0-1.2 s 16 at a time (32: no better). */
#define FLUSH_WORKERS 16

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
			int rc = flush_from(p, i);

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
int bc_flush_ranges(struct bcache_file *h, struct bc_range *r, size_t n, enum bcache_sync lone,
		    struct bc_written **done, size_t *ndone, bool *synced)
{
	struct bc_inode *ino = h->ino;
	struct todo_list col = { 0 };
	struct collect out = { 0 };

	*done = NULL;
	*ndone = 0;
	*synced = false;
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
	struct flush_plan p = { .h = h, .todo = col.v, .ntodo = col.n, .out = &out, .lone = lone };
	co_cond_init(&p.helpers_done);
	start_helpers(&p);
	flush_work(&p);
	while (p.helpers)
		co_cond_wait(&p.helpers_done, &ino->lock, 0);
	free(col.v);
	*done = out.v;
	*ndone = out.n;
	*synced = p.synced;
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
