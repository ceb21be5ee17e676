/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Frames: where the blocks that small WRITEs copy go, laid out as in the file.
 *
 * A small WRITE's bytes are copied into the cache (bc_write.c: worth_adopting), each block into
 * an allocation of its own. A write-behind run of such blocks is then as many pieces of memory as
 * blocks, and the block layer gives a request at most max_segments of them (128 on a loop device
 * or an NVMe drive): a 1 MiB run of 4 KiB blocks reached the device as two requests of about
 * 512 KiB. A frame is one huge-page-aligned allocation for a BC_FRAME_BYTES-aligned stretch of
 * one file; block i of the stretch has slot i, so a run of blocks copied into one frame is one
 * piece of memory, physically contiguous where the kernel backs it with a huge page, and one
 * request.
 *
 * A frame is a bcache_buf like an adopted record: each entry whose image lies in it holds a
 * reference, it counts whole against the bound while any entry holds it, and its memory goes
 * with the last reference (entries and READ replies). A slot is used once: an entry of the block
 * made again later (after a truncate, or a block superseded) gets memory of its own. A frame is
 * opened only where a copied block finds a neighbour in the cache and the file's WRITEs land next
 * to each other's (a file filled small piece by small piece); random small WRITEs do not open
 * one. Open frames are the inode's (inode lock). Their memory comes from the reserve
 * (bc_reserve.c), which has it faulted in ahead of need and takes it back. */
#include <stdlib.h>

#include "bc_internal.h"

#define FRAME_WORDS (BC_FRAME_BYTES / 512 / 64)   /* a bit per slot of the smallest block */

struct bc_frame {
	struct bcache_buf b;
	unsigned char *mem;
	struct bc_reserve *res;        /* where mem came from and goes back to (bc_reserve.c) */
	uint64_t key;                  /* file offset / BC_FRAME_BYTES */
	struct bc_frame *next;         /* the inode's open frames, most recently used first */
	uint64_t last_take;            /* the inode's frame_takes when a slot was last taken here */
	uint32_t used;                 /* slots taken, */
	uint64_t taken[FRAME_WORDS];   /* and which */
};

static void frame_release(struct bcache_buf *b)
{
	struct bc_frame *f = (struct bc_frame *)b;

	bc_reserve_give(f->res, f->mem);
	free(f);
}

bool bc_buf_is_frame(const struct bcache_buf *b)
{
	return b->release == frame_release;
}

/* Stop filling f (the inode's reference goes; its entries keep theirs). */
static void frame_close(struct bc_inode *ino, struct bc_frame **link)
{
	struct bc_frame *f = *link;

	*link = f->next;
	ino->nframes--;
	ino->frames_closed[ino->nclosed++ % BC_FRAMES_CLOSED] = f->key;
	bcache_buf_put(&f->b);
}

/* Take slot of f; false if it was taken already. f closes once every slot is taken: *link must
 * point at it then. */
static bool take_slot(struct bc_inode *ino, struct bc_frame **link, uint32_t slot)
{
	struct bc_frame *f = *link;
	uint64_t bit = UINT64_C(1) << (slot % 64);

	if (f->taken[slot / 64] & bit)
		return false;
	f->taken[slot / 64] |= bit;
	if (++f->used == BC_FRAME_BYTES >> ino->bshift)
		frame_close(ino, link);
	return true;
}

static struct bc_frame *frame_new(struct bcache *c, uint64_t key)
{
	struct bc_frame *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->mem = bc_reserve_take(c, &f->res);
	if (!f->mem) {
		free(f);
		return NULL;
	}
	bcache_buf_init(&f->b, frame_release, BC_FRAME_BYTES);   /* the inode's reference */
	f->key = key;
	bc_count(&c->n.frames);
	return f;
}

static bool dirty_at(const struct bc_inode *ino, uint64_t index)
{
	const struct bc_entry *e = bc_map_find(&ino->map, index);

	return e && e->dirty;
}


/* How many frames an inode keeps open: what its writers' spread needs, but no more than a
 * quarter of its bound, as a frame counts whole while any block is in it. */
static unsigned frames_max(const struct bcache *c)
{
	size_t spread = c->spread_chunks * BC_CHUNK / BC_FRAME_BYTES + 4;
	size_t quarter = c->file_limit / 4 / BC_FRAME_BYTES;

	return (unsigned)(spread < quarter ? spread : quarter);
}

/* WRITEs a file must have had before its WRITEs' landing next to each other means anything. */
#define FILLING_WRITES 8

bool bc_frame_wanted(const struct bc_inode *ino, uint64_t first, uint64_t last, bool large)
{
	if (frames_max(ino->cache) < 2 || !bc_interleaved(ino))
		return false;   /* a bound too small for frames counted whole */
	if (large && ino->win_writes >= FILLING_WRITES)
		return true;
	return (first > 0 && dirty_at(ino, first - 1)) || dirty_at(ino, last + 1);
}


/* Room for one more open frame: under frames_max, or the least recently used one is stale and
 * closes (as many slots taken elsewhere since its last as four frames hold: its writers moved
 * on). Closing one still in use would open a second frame for its stretch, and writers drifted
 * apart (a loaded machine) then spread their blocks over frames that never fill. */
static bool frame_room(struct bc_inode *ino)
{
	struct bc_frame **p = &ino->frames;

	if (ino->nframes < frames_max(ino->cache))
		return true;
	while ((*p)->next)
		p = &(*p)->next;
	if (ino->frame_takes - (*p)->last_take < 4 * (uint64_t)(BC_FRAME_BYTES >> ino->bshift))
		return false;
	frame_close(ino, p);
	return true;
}

bool bc_frame_closed_recently(const struct bc_inode *ino, uint64_t index)
{
	uint64_t key = bc_block_off(ino, index) / BC_FRAME_BYTES;
	unsigned n = ino->nclosed < BC_FRAMES_CLOSED ? ino->nclosed : BC_FRAMES_CLOSED;

	for (unsigned i = 0; i < n; i++)
		if (ino->frames_closed[i] == key)
			return true;
	return false;
}

/* The open frame of key, moved to the front; else a new one when may_open and there is room. An
 * inode keeps as many open as its writers' spread needs (bc_behind.c: they drift apart by up to
 * spread_chunks before the ones ahead are held). */
static struct bc_frame *frame_of(struct bc_inode *ino, uint64_t key, bool may_open)
{
	struct bc_frame **p = &ino->frames, *f;

	while ((f = *p) && f->key != key)
		p = &f->next;
	if (f) {
		*p = f->next;
	} else {
		/* A stretch whose frame closed lately gets no second one: what comes now is a
		 * writer far behind the others, with a record or two for it, and a frame would
		 * hold 2 MiB for them (32 writers drifting apart: 1306 frames opened for 512
		 * frames of data, a third of them to hold one record). */
		if (!may_open || bc_frame_closed_recently(ino, key * (BC_FRAME_BYTES >> ino->bshift)) ||
		    !frame_room(ino) || !(f = frame_new(ino->cache, key)))
			return NULL;   /* the block gets memory of its own */
		ino->nframes++;
	}
	f->next = ino->frames;
	ino->frames = f;
	return f;
}

unsigned char *bc_frame_slot(struct bc_inode *ino, uint64_t index, bool may_open,
			    struct bcache_buf **buf)
{
	if (ino->bs > BC_FRAME_BYTES / 2)
		return NULL;
	uint64_t off = bc_block_off(ino, index);
	struct bc_frame *f = frame_of(ino, off / BC_FRAME_BYTES, may_open);

	if (!f)
		return NULL;
	uint32_t slot = (uint32_t)((off % BC_FRAME_BYTES) >> ino->bshift);
	unsigned char *mem = f->mem + (off % BC_FRAME_BYTES);

	f->last_take = ++ino->frame_takes;
	/* The entry's reference first: a slot that fills the frame closes it (f is at the front),
	 * and the inode's reference may be the last. */
	atomic_fetch_add_explicit(&f->b.refs, 1, memory_order_relaxed);
	if (!take_slot(ino, &ino->frames, slot)) {
		bcache_buf_put(&f->b);
		return NULL;
	}
	*buf = &f->b;
	return mem;
}

void bc_frame_skip(struct bc_inode *ino, uint64_t index)
{
	uint64_t off = bc_block_off(ino, index), key = off / BC_FRAME_BYTES;
	struct bc_frame **p = &ino->frames;

	while (*p && (*p)->key != key)
		p = &(*p)->next;
	if (*p)
		take_slot(ino, p, (uint32_t)((off % BC_FRAME_BYTES) >> ino->bshift));
}

void bc_frame_emptied(struct bc_inode *ino, struct bcache_buf *b)
{
	for (struct bc_frame **p = &ino->frames; *p; p = &(*p)->next)
		if (&(*p)->b == b) {
			frame_close(ino, p);
			return;
		}
}

void bc_frames_close(struct bc_inode *ino)
{
	while (ino->frames)
		frame_close(ino, &ino->frames);
	ino->nclosed = 0;   /* the file starts afresh (a truncate, its last close) */
}
