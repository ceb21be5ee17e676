/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Entry life cycle and the cache-wide bookkeeping that follows it: counts, peaks, dirty bytes,
 * write-behind readiness, and the lists eviction picks from. Callers hold the inode lock. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/bufstash.h"
#include "bc_internal.h"

void bcache_buf_init(struct bcache_buf *b, void (*release)(struct bcache_buf *), size_t size)
{
	atomic_init(&b->refs, 1);
	atomic_init(&b->cached, 0);
	b->release = release;
	b->size = size;
}

struct heap_buf {
	struct bcache_buf b;
	void *mem;
};

static void heap_buf_release(struct bcache_buf *b)
{
	struct heap_buf *h = (struct heap_buf *)b;

	bufstash_free(h->mem);
	free(h);
}

struct bcache_buf *bcache_buf_heap(void *mem, size_t size)
{
	struct heap_buf *h = malloc(sizeof(*h));

	if (!h)
		return NULL;
	bcache_buf_init(&h->b, heap_buf_release, size);
	h->mem = mem;
	return &h->b;
}

void bcache_buf_put(struct bcache_buf *b)
{
	if (b && atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) == 1)
		b->release(b);
}

/* The memory an entry adds to the bound when it takes (or, when it lets go of, take false) its
 * image: a block of its own; the whole of an adopted buffer for the first entry to take it (and
 * the last to let go), nothing for the others. */
static uint64_t charge_of(const struct bc_inode *ino, struct bcache_buf *b, bool take)
{
	if (!b || !b->size)
		return ino->bs;
	if (take)
		return atomic_fetch_add_explicit(&b->cached, 1, memory_order_relaxed) == 0 ? b->size : 0;
	return atomic_fetch_sub_explicit(&b->cached, 1, memory_order_relaxed) == 1 ? b->size : 0;
}

static void charge(struct bc_inode *ino, uint64_t n)
{
	struct bcache *c = ino->cache;

	ino->bytes += n;
	bc_peak(&c->bytes_peak, atomic_fetch_add_explicit(&c->bytes, n, memory_order_relaxed) + n);
}

static void uncharge(struct bc_inode *ino, uint64_t n)
{
	ino->bytes -= n;
	atomic_fetch_sub_explicit(&ino->cache->bytes, n, memory_order_relaxed);
}

/* An entry lets go of its image (the entry goes, or its image moves to memory of its own). The
 * last block of a frame closes it if it is still open: an open frame with no block in it is
 * counted nowhere, and its inode kept it until its last close or a truncate (every file written
 * small record by small record and left open held up to 128 MiB: 1 GiB of RSS over 8 files
 * against a cache that counted 22 MiB). Inode lock held. */
static void let_go(struct bc_inode *ino, struct bcache_buf *b)
{
	uint64_t n = charge_of(ino, b, false);

	uncharge(ino, n);
	if (b && n == b->size && bc_buf_is_frame(b))
		bc_frame_emptied(ino, b);
}

static void entry_link(struct bc_inode *ino, struct bc_entry *e, uint64_t index, bool dirty)
{
	struct bcache *c = ino->cache;

	if (ino->frames && !(e->buf && bc_buf_is_frame(e->buf)))
		bc_frame_skip(ino, index);   /* an image elsewhere: the frame's slot stays empty */
	e->ino = ino;
	e->index = index;
	e->dirty = dirty;
	bc_list_init(&e->glink);
	e->id = atomic_fetch_add_explicit(&c->next_id, 1, memory_order_relaxed);
	bc_peak(&c->entries_peak, atomic_fetch_add_explicit(&c->entries, 1, memory_order_relaxed) + 1);
	charge(ino, charge_of(ino, e->buf, true));
	bc_map_insert(&ino->map, e);
	bc_list_add_tail(&ino->age, &e->ilink);
	bc_entry_relist(ino, e);
}

static struct bc_entry *entry_alloc(struct bc_inode *ino)
{
	return bc_map_reserve(&ino->map) ? NULL : calloc(1, sizeof(struct bc_entry));
}

/* e's image: slot, inside frame (whose reference e takes over), or memory of its own when slot
 * is NULL. */
static int entry_image(struct bc_inode *ino, struct bc_entry *e, unsigned char *slot,
		       struct bcache_buf *frame)
{
	if (slot) {
		e->buf = frame;
		e->data = slot;
		return 0;
	}
	e->data = aligned_alloc(ino->bs, ino->bs);
	return e->data ? 0 : -ENOMEM;
}

/* No entry after all: the frame reference bc_frame_slot gave for it goes. */
static struct bc_entry *entry_failed(struct bc_entry *e, struct bcache_buf *frame)
{
	if (e)
		free(e->bits);
	free(e);
	if (frame)
		bcache_buf_put(frame);
	return NULL;
}

/* A new entry is dirty from the start: its creator copies a WRITE into it before unlocking. */
struct bc_entry *bc_entry_new(struct bc_inode *ino, uint64_t index, unsigned char *slot,
			      struct bcache_buf *frame)
{
	struct bc_entry *e = entry_alloc(ino);

	if (!e)
		return entry_failed(NULL, frame);
	e->bits = calloc(ino->bs / 64, sizeof(uint64_t));
	if (!e->bits || entry_image(ino, e, slot, frame))
		return entry_failed(e, frame);
	entry_link(ino, e, index, true);
	return e;
}

struct bc_entry *bc_entry_new_copy(struct bc_inode *ino, uint64_t index, const void *src,
				   unsigned char *slot, struct bcache_buf *frame)
{
	struct bc_entry *e = entry_alloc(ino);

	if (!e || entry_image(ino, e, slot, frame))
		return entry_failed(e, frame);
	memcpy(e->data, src, ino->bs);
	bc_count(&ino->cache->n.copied);
	e->nwritten = e->covered = ino->bs;
	entry_link(ino, e, index, true);
	return e;
}

struct bc_entry *bc_entry_new_whole(struct bc_inode *ino, uint64_t index, const void *data,
				    struct bcache_buf *buf, bool dirty)
{
	struct bc_entry *e = entry_alloc(ino);

	if (!e)
		return NULL;
	if (buf) {
		atomic_fetch_add_explicit(&buf->refs, 1, memory_order_relaxed);
		e->buf = buf;
		e->data = (unsigned char *)data;
		bc_count(&ino->cache->n.adopted);
	} else if (entry_image(ino, e, NULL, NULL)) {
		free(e);
		return NULL;
	} else {
		memcpy(e->data, data, ino->bs);
	}
	e->nwritten = e->covered = dirty ? ino->bs : 0;
	e->filled = !dirty;
	entry_link(ino, e, index, dirty);
	return e;
}

static void count_dirty(struct bc_inode *ino, struct bc_entry *e)
{
	struct bcache *c = ino->cache;

	if (e->dirty == e->gdirty)
		return;
	if (e->dirty) {
		atomic_fetch_add_explicit(&c->ndirty, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&c->dirty_bytes, ino->bs, memory_order_relaxed);
	} else {
		atomic_fetch_sub_explicit(&c->ndirty, 1, memory_order_relaxed);
		atomic_fetch_sub_explicit(&c->dirty_bytes, ino->bs, memory_order_relaxed);
	}
	e->gdirty = e->dirty;
}

static void list_move(struct bc_inode *ino, struct bc_entry *e, uint8_t want)
{
	struct bcache *c = ino->cache;
	struct bc_shard *sh = &c->shard[ino->shard];

	pthread_mutex_lock(&sh->lock);
	bc_list_del(&e->glink);
	if (e->glist == BC_GL_HOT)
		atomic_fetch_sub_explicit(&c->hot_bytes, ino->bs, memory_order_relaxed);
	else if (e->glist == BC_GL_WRITTEN)
		atomic_fetch_sub_explicit(&c->written_bytes, ino->bs, memory_order_relaxed);
	if (want != BC_GL_NONE) {
		bc_list_add_tail(bc_shard_list(sh, want), &e->glink);
		e->lstamp = atomic_fetch_add_explicit(&c->stamp, 1, memory_order_relaxed);
	}
	if (want == BC_GL_HOT)
		atomic_fetch_add_explicit(&c->hot_bytes, ino->bs, memory_order_relaxed);
	else if (want == BC_GL_WRITTEN)
		atomic_fetch_add_explicit(&c->written_bytes, ino->bs, memory_order_relaxed);
	e->glist = want;
	pthread_mutex_unlock(&sh->lock);
}

/* The clean list e belongs on: HOT once a READ came back to it; WRITTEN while its bytes are all
 * WRITEs' and unread (a block completed from disk or zeros waits on probation for the
 * neighbour that shares it: WRITTEN's trim must not make that neighbour read it). */
static uint8_t clean_list(const struct bc_inode *ino, const struct bc_entry *e)
{
	if (e->hot)
		return BC_GL_HOT;
	return e->wrote && e->nwritten == ino->bs ? BC_GL_WRITTEN : BC_GL_CLEAN;
}

void bc_entry_relist(struct bc_inode *ino, struct bc_entry *e)
{
	if (e->dirty)
		e->wrote = true;
	uint8_t want = e->busy ? BC_GL_NONE : e->dirty ? BC_GL_DIRTY : clean_list(ino, e);

	count_dirty(ino, e);
	bc_chunk_update(ino, e);
	if (want != e->glist)
		list_move(ino, e, want);
}

int bc_entry_own(struct bc_inode *ino, struct bc_entry *e)
{
	if (!e->shared)
		return 0;
	unsigned char *d = aligned_alloc(ino->bs, ino->bs);
	if (!d)
		return -ENOMEM;
	memcpy(d, e->data, ino->bs);
	let_go(ino, e->buf);
	charge(ino, ino->bs);
	bcache_buf_put(e->buf);
	e->buf = NULL;
	e->data = d;
	e->shared = false;
	return 0;
}

/* A READ hit a clean entry: it moves to HOT. Once there it stays where it is (HOT is kept in
 * the order blocks were promoted, not last used): a READ of 1 MiB costs no lock per block. */
void bc_entry_touch(struct bc_inode *ino, struct bc_entry *e)
{
	if (e->busy || e->dirty || e->hot)
		return;
	e->hot = true;
	list_move(ino, e, BC_GL_HOT);
}

void bc_entry_set_busy(struct bc_inode *ino, struct bc_entry *e, bool busy)
{
	struct bcache *c = ino->cache;

	e->busy = busy;
	if (busy) {
		ino->nbusy++;
		atomic_fetch_add_explicit(&c->inflight_bytes, ino->bs, memory_order_relaxed);
	} else {
		ino->nbusy--;
		atomic_fetch_sub_explicit(&c->inflight_bytes, ino->bs, memory_order_relaxed);
		co_cond_broadcast(&ino->cond);
		bc_parked_landing(ino);
	}
	bc_entry_relist(ino, e);
}

void bc_entry_wrote(struct bc_inode *ino, struct bc_entry *e, bool by_writes)
{
	if (by_writes) {
		bc_count(&ino->cache->n.completed);
		ino->win_completed++;
	}
	bc_entry_landed(ino, e);
}

void bc_wake_waiters(struct bc_inode *ino)
{
	co_cond_broadcast(&ino->cond);
	bc_parked_landing(ino);
	bc_room_made(ino->cache);
}

void bc_parked_landing(struct bc_inode *ino)
{
	if (ino->nparked <= BC_PARK_EARLY_MAX || ino->parked_woken)
		return;   /* (a run's landing sets many entries free: one wake-up of all is enough) */
	for (struct bc_parked *p = ino->parked; p; p = p->next)
		co_cond_broadcast(&p->cond);
	ino->parked_woken = true;
}

void bc_partial_ended(struct bc_inode *ino, uint64_t index, bool room)
{
	for (struct bc_parked *p = ino->parked; p; p = p->next)
		if ((p->first <= index && index <= p->last) || (room && p->while_crowded))
			co_cond_broadcast(&p->cond);
}

/* A READ between bcache_read_begin and _overlay may have read the disk before these bytes got
 * there, and will not find them in the cache any more: it must read again. */
void bc_readers_stale(struct bc_inode *ino, uint64_t index)
{
	uint64_t start = bc_block_off(ino, index), end = start + ino->bs;

	for (struct bcache_read *r = ino->readers; r; r = r->next)
		if (r->off < end && start < r->off + r->len)
			r->stale = true;
}

void bc_entry_free(struct bc_inode *ino, struct bc_entry *e)
{
	struct bcache *c = ino->cache;
	uint64_t index = e->index;

	bc_readers_stale(ino, e->index);
	bc_map_remove(&ino->map, e);
	bc_list_del(&e->ilink);
	let_go(ino, e->buf);
	e->dirty = false;
	count_dirty(ino, e);
	bc_chunk_update(ino, e);   /* e is not ready any more */
	if (e->glist != BC_GL_NONE)
		list_move(ino, e, BC_GL_NONE);
	atomic_fetch_sub_explicit(&c->entries, 1, memory_order_relaxed);
	if (e->buf)
		bcache_buf_put(e->buf);
	else
		free(e->data);
	free(e->bits);
	free(e);
	/* Above the bound bc_wake_waiters wakes every parked WRITE (or they are all awake already):
	 * the targeted walk first would only walk the list twice. */
	if (ino->nparked <= BC_PARK_EARLY_MAX)
		bc_partial_ended(ino, index, true);
	bc_wake_waiters(ino);   /* room was made, or a block went to disk */
}

/* Callers first wait for nbusy == 0. */
void bc_entry_free_all(struct bc_inode *ino)
{
	while (!bc_list_empty(&ino->age))
		bc_entry_free(ino, bc_container_of(ino->age.next, struct bc_entry, ilink));
	bc_frames_close(ino);   /* their slots are used: blocks made again start frames afresh */
}
