/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The cache, its inode table and handles, sizes and counters. */
#include <errno.h>
#include <stdlib.h>

#include "bc_internal.h"

int bcache_create(const struct bcache_ops *ops, size_t limit, size_t file_limit,
		  struct bcache **out)
{
	struct bcache *c;

	*out = NULL;
	if (!ops || !ops->write || !ops->read || !ops->disk_size || !ops->sync || !ops->truncate)
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	if (pthread_mutex_init(&c->lock, NULL)) {
		free(c);
		return -ENOMEM;
	}
	c->ops = *ops;
	c->limit = limit;
	c->file_limit = file_limit ? file_limit : limit;
	/* Enough for a READ of what was just written to find it (and for a client's read-back of
	 * its last files), not so much that a stream of writes grows the cache into fresh memory;
	 * and while frames run short, a floor: the memory of written data goes to new frames
	 * before the cache maps more (32 writers of 47008-byte records, 512 MiB into a new file:
	 * 222-264 MiB of cache at peak, 2.5-3.4 s of CPU per GiB without the floor; 134-145 MiB,
	 * 1.8-2.4 s with it). */
	c->written_limit = limit / 8;
	c->written_floor = limit / 64;
	c->hold_ns = BCACHE_HOLD_NS;
	c->young_ns = BCACHE_YOUNG_NS;
	/* a quarter of a file's bound: half the dirty threshold of a cache of two files' bounds */
	c->spread_chunks = c->file_limit / 4 / BC_CHUNK < 4 ? 4 : c->file_limit / 4 / BC_CHUNK;
	for (unsigned i = 0; i < BC_SHARDS; i++) {
		pthread_mutex_init(&c->shard[i].lock, NULL);
		bc_list_init(&c->shard[i].clean);
		bc_list_init(&c->shard[i].dirty);
		bc_list_init(&c->shard[i].hot);
		bc_list_init(&c->shard[i].written);
	}
	pthread_mutex_init(&c->wbq.lock, NULL);
	pthread_mutex_init(&c->age.lock, NULL);
	co_mutex_init(&c->room_lock);
	co_cond_init(&c->room);
	*out = c;
	return 0;
}

void bcache_set_flow(struct bcache *c, uint64_t hold_ns, uint64_t young_ns)
{
	c->hold_ns = hold_ns;
	c->young_ns = young_ns;
}

void bcache_set_sync_behind(struct bcache *c, uint64_t bytes)
{
	c->sync_behind = bytes;
}

static void inode_free(struct bc_inode *ino)
{
	bc_entry_free_all(ino);  /* empty unless a caller forgot a close */
	bc_map_fini(&ino->map);
	bc_chunks_fini(&ino->chunks);
	free(ino->seen);
	co_mutex_destroy(&ino->lock);
	free(ino);
}

void bcache_destroy(struct bcache *c)
{
	if (!c)
		return;
	bc_wbq_drain(c);
	for (size_t i = 0; i < BC_TABLE_SIZE; i++) {
		while (c->table[i]) {
			struct bc_inode *ino = c->table[i];

			c->table[i] = ino->tnext;
			inode_free(ino);
		}
	}
	bc_reserve_stop(c);
	for (unsigned i = 0; i < BC_SHARDS; i++)
		pthread_mutex_destroy(&c->shard[i].lock);
	pthread_mutex_destroy(&c->wbq.lock);
	pthread_mutex_destroy(&c->age.lock);
	co_mutex_destroy(&c->room_lock);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

static size_t table_slot(uint64_t dev, uint64_t ino)
{
	uint64_t h = (dev * UINT64_C(0x100000001B3) ^ ino) * UINT64_C(0x9E3779B97F4A7C15);

	return (size_t)(h >> 56) % BC_TABLE_SIZE;
}

static struct bc_inode *inode_new(struct bcache *c, uint64_t dev, uint64_t ino, uint32_t bs)
{
	struct bc_inode *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	if (bc_map_init(&n->map))
		goto no_map;
	if (bc_chunks_init(&n->chunks))
		goto no_chunks;
	co_mutex_init(&n->lock);
	co_cond_init(&n->cond);
	co_cond_init(&n->window);
	co_cond_init(&n->ra_done);
	co_cond_init(&n->sync.done);
	co_cond_init(&n->train.done);
	n->synced_wseq = BC_WSEQ_UNKNOWN;
	n->cache = c;
	n->dev = dev;
	n->ino = ino;
	n->bs = bs;
	n->bshift = (unsigned)__builtin_ctz(bs);
	n->chunk_shift = bs >= BC_CHUNK ? 0 : (unsigned)__builtin_ctz(BC_CHUNK / bs);
	n->shard = (unsigned)(table_slot(dev, ino) % BC_SHARDS);
	bc_list_init(&n->age);
	return n;

no_chunks:
	bc_map_fini(&n->map);
no_map:
	free(n);
	return NULL;
}

/* Find (dev, ino) or insert fresh; takes a reference. Cache lock held. */
static struct bc_inode *table_get(struct bcache *c, struct bc_inode *fresh, uint32_t bs)
{
	size_t s = table_slot(fresh->dev, fresh->ino);
	struct bc_inode *ino = c->table[s];

	while (ino && (ino->dev != fresh->dev || ino->ino != fresh->ino))
		ino = ino->tnext;
	if (!ino) {
		ino = fresh;
		ino->tnext = c->table[s];
		c->table[s] = ino;
	}
	if (ino->bs != bs)
		return NULL;
	ino->refs++;
	return ino;
}

int bcache_file_open(struct bcache *c, uint64_t dev, uint64_t ino_nr, uint32_t block,
		     void *file_io, struct bcache_file **out)
{
	struct bcache_file *h;
	struct bc_inode *fresh, *ino;

	*out = NULL;
	if (block < BCACHE_BLOCK_MIN || block > BCACHE_BLOCK_MAX || (block & (block - 1)))
		return -EINVAL;
	h = calloc(1, sizeof(*h));
	fresh = inode_new(c, dev, ino_nr, block);
	if (!h || !fresh) {
		free(h);
		if (fresh)
			inode_free(fresh);
		return -ENOMEM;
	}
	pthread_mutex_lock(&c->lock);
	ino = table_get(c, fresh, block);
	pthread_mutex_unlock(&c->lock);
	if (ino != fresh)
		inode_free(fresh);
	if (!ino) {
		free(h);
		return -EINVAL;
	}
	h->ino = ino;
	h->io = file_io;
	co_mutex_lock(&ino->lock);
	h->next = ino->handles;
	ino->handles = h;
	co_mutex_unlock(&ino->lock);
	*out = h;
	return 0;
}

void bc_inode_unpin(struct bc_inode *ino)
{
	struct bcache *c = ino->cache;
	bool last;

	pthread_mutex_lock(&c->lock);
	last = --ino->refs == 0;
	if (last) {
		struct bc_inode **p = &c->table[table_slot(ino->dev, ino->ino)];

		while (*p != ino)
			p = &(*p)->tnext;
		*p = ino->tnext;
	}
	pthread_mutex_unlock(&c->lock);
	if (last)
		inode_free(ino);
}

/* The inode's last handle is going: nothing will be able to write its entries after this. */
static int drain(struct bcache_file *h)
{
	struct bc_inode *ino = h->ino;
	struct bc_written *done;
	struct bc_range all = { 0, UINT64_MAX };
	size_t ndone;
	bool synced;
	int rc = bc_flush_ranges(h, &all, 1, BCACHE_SYNC_NONE, &done, &ndone, &synced);

	free(done);
	while (ino->nbusy)
		bc_wait(ino);
	if (!ino->handles)  /* else a new handle came while we wrote: the entries are its */
		bc_entry_free_all(ino);
	return rc;
}

int bcache_file_close(struct bcache_file *h)
{
	struct bc_inode *ino;
	struct bcache_file **p;
	int rc = 0;

	if (!h)
		return 0;
	ino = h->ino;
	co_mutex_lock(&ino->lock);
	for (p = &ino->handles; *p != h; p = &(*p)->next)
		;
	*p = h->next;
	while (h->inflight)  /* eviction by another thread writing through our file_io */
		bc_wait(ino);
	if (!ino->handles)
		rc = drain(h);
	co_mutex_unlock(&ino->lock);
	free(h);
	bc_inode_unpin(ino);
	return rc;
}

uint32_t bcache_file_block(const struct bcache_file *h)
{
	return h->ino->bs;
}

void bcache_file_set_mode(struct bcache_file *h, enum bcache_mode mode)
{
	h->mode = mode;
}

uint64_t bcache_file_size_hint(struct bcache_file *h)
{
	return atomic_load(&h->ino->hint);
}

void bcache_file_restrict(struct bcache_file *h)
{
	atomic_store_explicit(&h->ino->restricted, true, memory_order_relaxed);
}

bool bcache_file_crowded(struct bcache_file *h)
{
	struct bc_inode *ino = h->ino;
	bool crowded;

	co_mutex_lock(&ino->lock);
	crowded = ino->bytes > ino->cache->file_limit / 2 && ino->win_completed * 4 >= ino->win_writes;
	co_mutex_unlock(&ino->lock);
	/* (bcache_wait_partial() asks the same under its own lock.) */
	return crowded;
}

/* Without the inode's lock unless the file is padded: every WRITE asks twice (its wcc_data), and
 * 32 writers of one file queued on the lock for it, a few milliseconds a WRITE. The disk's size
 * is right but while flush_past_eof() has a block written past it (pad_seq odd, read before and
 * after as a seqlock: the padding holds the lock, so the locked look waits for it to end). The
 * disk is looked at before the hint, which a truncate lowers before it cuts the disk. */
unsigned bcache_file_size_seq(struct bcache_file *h)
{
	return atomic_load(&h->ino->pad_seq);
}

int64_t bcache_file_size_seen(struct bcache_file *h, unsigned seq, int64_t disk)
{
	struct bc_inode *ino = h->ino;
	uint64_t hint = 0;

	if (!(seq & 1)) {
		atomic_thread_fence(memory_order_seq_cst);
		hint = atomic_load(&ino->hint);
		if (atomic_load(&ino->pad_seq) != seq)
			seq |= 1;
	}
	if (seq & 1) {
		co_mutex_lock(&ino->lock);
		disk = ino->cache->ops.disk_size(h->io);
		hint = ino->hint;
		co_mutex_unlock(&ino->lock);
	}
	if (disk < 0)
		return bc_io_result(ino->cache, (int)disk);
	return (int64_t)bc_max((uint64_t)disk, hint);
}

int64_t bcache_file_size(struct bcache_file *h)
{
	unsigned seq = bcache_file_size_seq(h);

	return bcache_file_size_seen(h, seq, seq & 1 ? 0 : h->ino->cache->ops.disk_size(h->io));
}

void bcache_get_stats(struct bcache *c, struct bcache_stats *out)
{
	*out = (struct bcache_stats){
		.writes = bc_load(&c->n.writes),
		.direct_middles = bc_load(&c->n.direct_middles),
		.bounced_middles = bc_load(&c->n.bounced_middles),
		.train_waits = bc_load(&c->n.train_waits),
		.train_writes = bc_load(&c->n.train_writes),
		.completed = bc_load(&c->n.completed),
		.fill_reads = bc_load(&c->n.fill_reads),
		.fill_reads_bound = bc_load(&c->n.fill_reads_bound),
		.fill_zeros = bc_load(&c->n.fill_zeros),
		.fill_holes = bc_load(&c->n.fill_holes),
		.eof_writes = bc_load(&c->n.eof_writes),
		.eof_trims = bc_load(&c->n.eof_trims),
		.read_once = bc_load(&c->n.read_once),
		.lone_writes = bc_load(&c->n.lone_writes),
		.forced = bc_load(&c->n.forced),
		.io_errors = bc_load(&c->n.io_errors),
		.adopted = bc_load(&c->n.adopted),
		.copied = bc_load(&c->n.copied),
		.frames = bc_load(&c->n.frames),
		.frames_warm = bc_load(&c->n.frames_warm),
		.frames_mapped = bc_load(&c->n.frames_mapped),
		.reserve_bytes = bc_load(&c->reserve_bytes),
		.wb_writes = bc_load(&c->n.wb_writes),
		.wb_bytes = bc_load(&c->n.wb_bytes),
		.read_hits = bc_load(&c->n.read_hits),
		.read_misses = bc_load(&c->n.read_misses),
		.read_cached = bc_load(&c->n.read_cached),
		.readahead_bytes = bc_load(&c->n.readahead_bytes),
		.bp_waits = bc_load(&c->n.bp_waits),
		.wb_failures = bc_load(&c->n.wb_failures),
		.wb_refused = bc_load(&c->n.wb_refused),
		.spread_holds = bc_load(&c->n.spread_holds),
		.syncs_behind = bc_load(&c->n.syncs_behind),
		.sync_writes = bc_load(&c->n.sync_writes),
		.written_bytes = bc_load(&c->written_bytes),
		.written_trimmed = bc_load(&c->n.written_trimmed),
	};
	for (unsigned i = 0; i < BCACHE_WB_HIST; i++)
		out->wb_hist[i] = bc_load(&c->n.wb_hist[i]);
	out->dirty_bytes = bc_load(&c->dirty_bytes);
	out->inflight_bytes = bc_load(&c->inflight_bytes);
	out->ready = bc_load(&c->nready);
	out->entries = atomic_load(&c->entries);
	out->entries_peak = atomic_load(&c->entries_peak);
	out->dirty = atomic_load(&c->ndirty);
	out->bytes = atomic_load(&c->bytes);
	out->bytes_peak = atomic_load(&c->bytes_peak);
	out->clean_bytes = out->bytes > out->dirty_bytes ? out->bytes - out->dirty_bytes : 0;
	/* (loaded apart: a read counted between the two loads shows in neither split) */
	out->fill_reads_commit = out->fill_reads > out->fill_reads_bound
				 ? out->fill_reads - out->fill_reads_bound : 0;
}
