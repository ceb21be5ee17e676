/* SPDX-License-Identifier: GPL-2.0-or-later */
/* READ: served from the cache when every block is there; else cached bytes over what the caller
 * read from disk, and (BEHIND) the blocks read kept as clean entries; readahead's window. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bc_bits.h"
#include "bc_internal.h"

void bcache_read_begin(struct bcache_file *h, struct bcache_read *rd, uint64_t off, uint64_t len)
{
	struct bc_inode *ino = h->ino;

	rd->off = off;
	rd->len = len;
	rd->stale = false;
	co_mutex_lock_barge(&ino->lock);
	rd->wseq = ino->wseq;
	rd->next = ino->readers;
	ino->readers = rd;
	co_mutex_unlock(&ino->lock);
}

static void unlink_reader(struct bc_inode *ino, struct bcache_read *rd)
{
	struct bcache_read **p = &ino->readers;

	while (*p && *p != rd)
		p = &(*p)->next;
	if (*p)
		*p = rd->next;
}

void bcache_read_cancel(struct bcache_file *h, struct bcache_read *rd)
{
	co_mutex_lock_barge(&h->ino->lock);
	unlink_reader(h->ino, rd);
	co_mutex_unlock(&h->ino->lock);
}

struct overlay {
	const struct bcache_read *rd;
	unsigned char *buf;
};

/* The part of e's block inside the READ: all of it when the image is complete, else the runs
 * WRITEs gave. Bytes filled from disk equal the disk's unless a newer entry write followed, and
 * then the image is the newer one: copying them is right either way. */
static bool overlay_entry(struct bc_inode *ino, struct bc_entry *e, void *arg)
{
	const struct overlay *o = arg;
	uint64_t base = bc_block_off(ino, e->index), rend = o->rd->off + o->rd->len;
	uint32_t a = o->rd->off > base ? (uint32_t)(o->rd->off - base) : 0;
	uint32_t b = rend < base + ino->bs ? (uint32_t)(rend - base) : ino->bs;
	unsigned char *dst = o->buf + (base + a - o->rd->off);

	if (bc_entry_complete(ino, e)) {
		memcpy(dst, e->data + a, b - a);
		return true;
	}
	for (uint32_t x = bc_bits_find(e->bits, a, b, true); x < b;) {
		uint32_t y = bc_bits_find(e->bits, x, b, false);

		memcpy(dst + (x - a), e->data + x, y - x);
		x = bc_bits_find(e->bits, y, b, true);
	}
	return true;
}

int bcache_read_overlay(struct bcache_file *h, struct bcache_read *rd, void *buf)
{
	struct bc_inode *ino = h->ino;
	struct overlay o = { .rd = rd, .buf = buf };

	co_mutex_lock_barge(&ino->lock);
	unlink_reader(ino, rd);
	if (rd->stale) {
		co_mutex_unlock(&ino->lock);
		return -EAGAIN;
	}
	if (rd->len)
		bc_map_range(ino, rd->off >> ino->bshift, (rd->off + rd->len - 1) >> ino->bshift,
			     overlay_entry, &o);
	co_mutex_unlock(&ino->lock);
	return 0;
}

/* The range a READ wants from the cache, and how many of its blocks were found. */
struct copy_out {
	uint64_t off, len;
	uint64_t seen;
};

/* The READ's part of e's block, [*a, *b) relative to the block. */
static void part_of(const struct bc_inode *ino, const struct bc_entry *e, const struct copy_out *co,
		    uint32_t *a, uint32_t *b)
{
	uint64_t base = bc_block_off(ino, e->index), end = co->off + co->len;

	*a = co->off > base ? (uint32_t)(co->off - base) : 0;
	*b = end < base + ino->bs ? (uint32_t)(end - base) : ino->bs;
}

/* e's image in a holder, so that a READ reply can pin an entry's own image like an adopted one
 * (freed when the entry and every reply are done with it). Size 0: the entry still counts as one
 * block of its own. */
static struct bcache_buf *holder_of(struct bc_entry *e)
{
	if (!e->buf)
		e->buf = bcache_buf_heap(e->data, 0);
	return e->buf;
}

struct pin_out {
	struct copy_out co;
	struct iovec *iov;
	int max, n;
	struct bcache_buf **pins;
	int npins;
	bool nomem;
};

/* If e holds every byte the READ wants of its block (complete, or written there by WRITEs), the
 * block's image goes into the iovecs, pinned, and is shared from now on (never written in
 * place); false (a miss) otherwise. */
static bool pin_entry(struct bc_inode *ino, struct bc_entry *e, void *arg)
{
	struct pin_out *po = arg;
	uint32_t a, b;

	part_of(ino, e, &po->co, &a, &b);
	if (!bc_entry_complete(ino, e) && bc_bits_find(e->bits, a, b, false) < b)
		return false;
	struct bcache_buf *h = holder_of(e);
	if (!h || po->n == po->max) {
		po->nomem = !h;
		return false;
	}
	unsigned char *p = e->data + a;
	struct iovec *last = po->n ? &po->iov[po->n - 1] : NULL;
	if (last && (unsigned char *)last->iov_base + last->iov_len == p)
		last->iov_len += b - a;
	else
		po->iov[po->n++] = (struct iovec){ p, b - a };
	if (!po->npins || po->pins[po->npins - 1] != h) {
		atomic_fetch_add_explicit(&h->refs, 1, memory_order_relaxed);
		po->pins[po->npins++] = h;
	}
	e->shared = true;
	bc_entry_touch(ino, e);   /* read again: 2Q's second list (also when the READ then misses) */
	po->co.seen++;
	return true;
}

/* Blocks are visited in index order when the range is short enough (bc_map_range looks each up);
 * a long one (walked slot by slot) would give iovecs out of order: pinned reads stay short. */
int bcache_read_pinned(struct bcache_file *h, uint64_t off, uint64_t len, struct iovec *iov,
		       int max, struct bcache_buf **pins, int *npins)
{
	struct bc_inode *ino = h->ino;
	struct bcache *c = ino->cache;
	struct pin_out po = { .co = { off, len, 0 }, .iov = iov, .max = max, .pins = pins };
	uint64_t first = off >> ino->bshift, last;
	bool hit;

	*npins = 0;
	if (len == 0)
		return 0;
	last = (off + len - 1) >> ino->bshift;
	co_mutex_lock_barge(&ino->lock);
	/* A readahead is reading this: its blocks are about to be here. Waited for on its own
	 * condition: the inode's is broadcast at every block freed or written, and a cold scan
	 * through a full cache frees one per 4 KiB read (each a wake-up across rings: 13% of the
	 * daemon's time). */
	while (ino->ra_to && off < ino->ra_to && ino->ra_from < off + len)
		co_cond_wait(&ino->ra_done, &ino->lock, 0);
	/* Every block there and complete (dirty or clean, busy or not: a busy image does not
	 * change until its write ends). */
	hit = last - first < 2 * ino->map.count &&
	      bc_map_range(ino, first, last, pin_entry, &po) && po.co.seen == last - first + 1;
	co_mutex_unlock(&ino->lock);
	if (!hit) {
		for (int i = 0; i < po.npins; i++)
			bcache_buf_put(po.pins[i]);
		if (po.nomem)
			return -ENOMEM;
	}
	bc_count(hit ? &c->n.read_hits : &c->n.read_misses);
	*npins = hit ? po.npins : 0;
	return hit ? po.n : 0;
}

/* Whether caching the disk's blocks could still show old bytes: a write reached the disk, or
 * the file was cut, after the READ looked. */
static bool disk_moved(const struct bc_inode *ino, const struct bcache_read *rd)
{
	return ino->wseq != rd->wseq;
}

void bcache_read_keep(struct bcache_file *h, const struct bcache_read *rd, uint64_t off,
		      uint64_t len, const void *buf, struct bcache_buf *owner)
{
	struct bc_inode *ino = h->ino;
	const unsigned char *p = buf;

	/* A READ never writes: room for what it keeps is made by freeing clean blocks only, and
	 * when dirty data fills the cache, nothing is kept. */
	bc_reclaim_clean(ino->cache);
	if (bc_over_limit(ino->cache))
		return;
	co_mutex_lock_barge(&ino->lock);
	if (!disk_moved(ino, rd)) {
		for (uint64_t at = off; at + ino->bs <= off + len; at += ino->bs) {
			uint64_t index = at >> ino->bshift;

			if (bc_map_find(&ino->map, index))
				continue;   /* the cache's own bytes are newer, or the same */
			struct bc_entry *e = bc_entry_new_whole(ino, index, p + (at - off), owner, false);
			if (!e)
				break;
			e->shared = owner != NULL;
			bc_count(&ino->cache->n.read_cached);
		}
	}
	co_mutex_unlock(&ino->lock);
	bc_reclaim_clean(ino->cache);
}

/* A READ this large is a stream's, as a WRITE that goes straight to disk (bc_write.c). */
#define READ_LARGE (BC_CHUNK / 2)
/* Slots of the table of chunks large READs touched: a chunk whose slot holds another's counts
 * as not seen (kept from the second READ on, as before the table). 4096 chunks: 4 GiB. */
#define SEEN_SLOTS 4096u

/* Does a READ at off continue the file's last READ? Inode lock held. */
static bool continues_last_read(const struct bc_inode *ino, uint64_t off)
{
	return ino->seq_read_known && off == ino->seq_read_end;
}

/* Did a small READ miss block index of ino lately? Records that this one did. A tag per slot of
 * a table the whole cache shares: another block's tag in the slot counts as not read. */
static bool read_again(struct bc_inode *ino, uint64_t index)
{
	uint64_t tag = ((uint64_t)(uintptr_t)ino ^ (index * UINT64_C(0x9E3779B97F4A7C15))) | 1;
	_Atomic uint64_t *slot = &ino->cache->ghost[(tag >> 20) % BC_GHOST_SLOTS];
	bool again = atomic_load_explicit(slot, memory_order_relaxed) == tag;

	atomic_store_explicit(slot, tag, memory_order_relaxed);
	return again;
}

/* A small READ's blocks are kept when it starts the file or continues the file's last READ (a
 * stream, which readahead serves) or when its first block missed lately already (data read
 * again); a random reader's first READ of a block is not: held, each READ's buffer kept the
 * next ones in memory new to the process (40000 random 4 KiB READs over 2 GiB: 68 MiB/s
 * cached, 94 direct, 139 through the kernel's page cache dropped behind). */
static bool small_worth_keeping(struct bc_inode *ino, uint64_t off, uint64_t len)
{
	co_mutex_lock_barge(&ino->lock);
	bool keep = off == 0 || continues_last_read(ino, off) ||
		    read_again(ino, off >> ino->bshift);

	if (!keep) {   /* (readahead, which records it otherwise, is only asked for kept READs) */
		ino->seq_read_known = true;
		ino->seq_read_end = off + len;
	}
	co_mutex_unlock(&ino->lock);
	if (!keep)
		bc_count(&ino->cache->n.read_once);
	return keep;
}

/* Kept blocks of a READ read once cost more than they save: each READ's buffer stays in the
 * cache, so every next one is received into memory the kernel must fault in and clear, and a
 * cold sequential read of 1 MiB READs, 32 in flight, ran at a quarter of direct mode's speed
 * at seven times its CPU (readahead could not help: READs that arrive out of order are not
 * sequential to it). A table per inode remembers which chunks were read that way; the blocks
 * of a chunk read a second time are kept, so that data read again and again is still served
 * from the cache. */
bool bcache_read_worth_keeping(struct bcache_file *h, uint64_t off, uint64_t len)
{
	struct bc_inode *ino = h->ino;
	bool keep = false;

	if (len < READ_LARGE)
		return small_worth_keeping(ino, off, len);
	co_mutex_lock_barge(&ino->lock);
	if (!ino->seen)
		ino->seen = calloc(SEEN_SLOTS, sizeof(*ino->seen));
	if (!ino->seen) {
		co_mutex_unlock(&ino->lock);
		return true;
	}
	for (uint64_t k = off >> ino->chunk_shift >> ino->bshift;
	     k <= (off + len - 1) >> ino->chunk_shift >> ino->bshift; k++) {
		uint64_t *slot = &ino->seen[k % SEEN_SLOTS];

		keep |= *slot == k + 1;
		*slot = k + 1;
	}
	co_mutex_unlock(&ino->lock);
	if (!keep)
		bc_count(&ino->cache->n.read_once);
	return keep;
}

#define RA_MIN (1u << 20)

bool bcache_readahead(struct bcache_file *h, uint64_t off, uint64_t len, uint64_t max_window,
		      uint64_t *ra_off, uint64_t *ra_len)
{
	struct bc_inode *ino = h->ino;
	uint64_t end = off + len, mask = ino->bs - 1;
	bool want = false;

	co_mutex_lock_barge(&ino->lock);
	bool sequential = continues_last_read(ino, off);
	if (!sequential)
		ino->ra_window = RA_MIN;
	uint64_t a = (end + mask) & ~mask, b = (end + ino->ra_window + mask) & ~mask;
	/* Only when the window's first block is missing (a window already read or written is
	 * not read again) and no other readahead is on its way (the READs behind it wait). */
	if (sequential && ino->ra_to == 0 && !bc_map_find(&ino->map, a >> ino->bshift)) {
		*ra_off = a;
		*ra_len = b - a;
		ino->ra_from = off & ~mask;
		ino->ra_to = b;
		if (ino->ra_window < max_window)
			ino->ra_window *= 2;
		bc_count_add(&ino->cache->n.readahead_bytes, b - a);
		want = true;
	}
	ino->seq_read_known = true;
	ino->seq_read_end = end;
	co_mutex_unlock(&ino->lock);
	return want;
}

void bcache_readahead_end(struct bcache_file *h)
{
	struct bc_inode *ino = h->ino;

	co_mutex_lock_barge(&ino->lock);
	ino->ra_to = 0;
	co_cond_broadcast(&ino->ra_done);
	co_mutex_unlock(&ino->lock);
}
