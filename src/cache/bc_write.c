/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The WRITE path: split at block boundaries, ends into entries; the middle straight to disk
 * (THROUGH) or into the cache as whole blocks (BEHIND). */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bc_bits.h"
#include "bc_internal.h"

/* Up to two partial pieces, each inside one block, and a middle of whole blocks. */
struct plan {
	uint64_t part_off[2];
	size_t part_len[2];
	int nparts;
	uint64_t mid, mid_end;  /* mid == mid_end: no middle */
};

static void add_part(struct plan *p, uint64_t off, uint64_t end)
{
	p->part_off[p->nparts] = off;
	p->part_len[p->nparts] = (size_t)(end - off);
	p->nparts++;
}

static void plan_write(const struct bc_inode *ino, uint64_t off, uint64_t end, struct plan *p)
{
	uint64_t mask = ino->bs - 1, up = (off + mask) & ~mask, down = end & ~mask;

	p->nparts = 0;
	p->mid = p->mid_end = 0;
	if (up > down) {  /* inside one block, not the whole of it: all prefix */
		add_part(p, off, end);
		return;
	}
	if (off != up)
		add_part(p, off, up);
	if (up < down) {
		p->mid = up;
		p->mid_end = down;
	}
	if (down != end)
		add_part(p, down, end);
}

/* Where the middle's bytes are written from: the caller's buffer when it is aligned, as the
 * server places payloads, else one aligned copy (*bounce, freed by the caller). NULL: ENOMEM. */
static const void *middle_source(struct bcache *c, uint32_t bs, const unsigned char *p,
				 size_t len, unsigned char **bounce)
{
	if (((uintptr_t)p & (bs - 1)) == 0) {
		bc_count(&c->n.direct_middles);
		return p;
	}
	*bounce = aligned_alloc(bs, len);
	if (!*bounce)
		return NULL;
	memcpy(*bounce, p, len);
	bc_count(&c->n.bounced_middles);
	return *bounce;
}

/* Where a WRITE's new entries get their images: memory of their own, or the file's frames
 * (bc_frame.c), opening new ones or not (bc_frame_wanted). */
enum frames { FRAMES_NONE, FRAMES_USE, FRAMES_OPEN };

/* A new entry's image as fr says: a frame's slot (*frame set), or NULL for memory of its own. */
static unsigned char *new_image(struct bc_inode *ino, uint64_t index, enum frames fr,
				struct bcache_buf **frame)
{
	*frame = NULL;
	return fr ? bc_frame_slot(ino, index, fr == FRAMES_OPEN, frame) : NULL;
}

/* Copy one piece into its block's entry; write the block and free the entry if that completed it.
 * The copy waits for a busy entry: its image is on the way to disk and must not change under
 * the write. A completed block under another WRITE's middle in flight is left to that middle,
 * which will supersede it (or fail, and leave it to the next COMMIT). */
static int write_part(struct bcache_file *h, uint64_t off, const unsigned char *src, size_t len,
		      enum frames fr)
{
	struct bc_inode *ino = h->ino;
	uint64_t index = off >> ino->bshift;
	uint32_t a = (uint32_t)(off & (ino->bs - 1));
	struct bc_entry *e;
	int rc;

	while ((e = bc_map_find(&ino->map, index)) && e->busy)
		bc_wait(ino);
	if (!e) {
		struct bcache_buf *frame;
		unsigned char *slot = new_image(ino, index, fr, &frame);

		if (!(e = bc_entry_new(ino, index, slot, frame)))
			return -ENOMEM;
	}
	if (bc_entry_own(ino, e))
		return -ENOMEM;
	memcpy(e->data + a, src, len);
	if (e->bits) {   /* else a whole block already: every byte counts as written */
		uint32_t before = e->nwritten;

		e->nwritten += bc_bits_change(e->bits, a, a + (uint32_t)len, true);
		if (before < ino->bs && e->nwritten == ino->bs && ino->nparked <= BC_PARK_EARLY_MAX)
			bc_partial_ended(ino, index, false);
	}
	e->covered = (uint32_t)bc_min(ino->bs, (uint64_t)e->covered + len);
	e->gen++;
	/* Young again for the per-file bound: the neighbour that shares the block may be on its
	 * way, and an old image freed now would leave its piece to be completed by a read. */
	bc_list_del(&e->ilink);
	bc_list_add_tail(&ino->age, &e->ilink);
	bc_hint_raise(ino, off + len);
	e->dirty = true;
	bc_entry_relist(ino, e);   /* dirty now, and maybe complete: ready for write-behind */
	if (e->nwritten < ino->bs || bc_span_covers(ino, index) || h->mode == BCACHE_BEHIND)
		return 0;
	rc = bc_entry_flush(ino, e, h, BC_FILL_COMMIT, NULL);   /* complete: no fill */
	if (rc == 0)
		bc_entry_free(ino, e);
	return rc;
}

/* The file's recent WRITEs, for bcache_file_crowded(). */
static void count_window(struct bc_inode *ino)
{
	if (++ino->win_writes >= 4096) {
		ino->win_writes /= 2;
		ino->win_completed /= 2;
		ino->win_next /= 2;
	}
}

static bool spans_overlap(const struct bc_inode *ino, const struct bc_span *s)
{
	for (const struct bc_span *o = ino->spans; o; o = o->next)
		if (o->first <= s->last && s->first <= o->last)
			return true;
	return false;
}

static bool not_busy(struct bc_inode *ino, struct bc_entry *e, void *arg)
{
	(void)ino;
	(void)arg;
	return !e->busy;
}

/* Announce the middle before its data goes out. Overlapping middles take turns, so that the one
 * acknowledged last is also the one on disk; entry writes of the span's blocks already on the
 * way are waited for, and none start until span_leave. */
static void span_enter(struct bc_inode *ino, struct bc_span *s, uint64_t mid, uint64_t mid_end)
{
	s->first = mid >> ino->bshift;
	s->last = (mid_end >> ino->bshift) - 1;
	s->end = mid_end;
	while (spans_overlap(ino, s))
		bc_wait(ino);
	s->next = ino->spans;
	ino->spans = s;
	while (ino->nbusy && !bc_map_range(ino, s->first, s->last, not_busy, NULL))
		bc_wait(ino);
}

static bool supersede(struct bc_inode *ino, struct bc_entry *e, void *arg)
{
	(void)arg;
	assert(!e->busy);  /* span_enter waited, and no entry write starts under a span */
	bc_entry_free(ino, e);
	return true;
}

/* The middle's data is on disk (landed) or its write failed. Every entry of its blocks holds
 * older bytes than it: once landed they must never reach the disk. After a failure they stay,
 * to be written by the next COMMIT over whatever part of the middle made it. */
static void span_leave(struct bc_inode *ino, struct bc_span *s, bool landed)
{
	struct bc_span **p = &ino->spans;

	while (*p != s)
		p = &(*p)->next;
	*p = s->next;
	if (landed) {
		bc_map_range(ino, s->first, s->last, supersede, NULL);
		bc_hint_raise(ino, s->end);
	}
	/* The disk changed under any READ begun before (in part, when the write failed): what it
	 * read may not be kept (bcache_read_keep; another handle of the inode may be cached). */
	ino->wseq++;
	co_cond_broadcast(&ino->cond);
}

static int write_parts(struct bcache_file *h, const struct plan *p, uint64_t off,
		       const unsigned char *src, enum frames fr)
{
	int rc = 0;

	for (int i = 0; i < p->nparts; i++) {
		int r = write_part(h, p->part_off[i], src + (p->part_off[i] - off), p->part_len[i], fr);

		if (r && !rc)
			rc = r;
	}
	return rc;
}

/* A file whose write failed (ENOSPC, EIO) cannot make room by writing, and eviction passes its
 * dirty blocks over: past the bound, its WRITEs get the error at once (NFS3ERR_NOSPC or _IO, as
 * write(2) on a full file system answers), rather than grow the cache or wait for room that
 * will not come. What it holds stays for the COMMIT that reports the failure. Inode lock held. */
static int refused(struct bc_inode *ino)
{
	if (!ino->wb_stuck)
		return 0;
	if (ino->bytes < ino->cache->file_limit && !bc_over_limit(ino->cache))
		return 0;
	bc_count(&ino->cache->n.wb_refused);
	return ino->wb_stuck;
}

static int make_room(struct bcache_file *h);

/* The middle to disk now, from the caller's buffer; the ends into the cache. A BEHIND handle
 * makes room as write-behind does (make_room); a THROUGH one evicts, and may complete a partial
 * block by reading it: it has no write-behind to wait for. */
static int write_through(struct bcache_file *h, uint64_t off, const void *data, size_t len)
{
	struct bc_inode *ino = h->ino;
	struct bcache *c = ino->cache;
	const unsigned char *src = data;
	unsigned char *bounce = NULL;
	const void *mid_src = NULL;
	struct bc_span span;
	struct plan p;
	int rc, mrc = 0;

	plan_write(ino, off, off + len, &p);
	if (p.mid < p.mid_end) {
		mid_src = middle_source(c, ino->bs, src + (p.mid - off), p.mid_end - p.mid, &bounce);
		if (!mid_src)
			return -ENOMEM;
	}
	co_mutex_lock(&ino->lock);
	if ((rc = refused(ino))) {
		co_mutex_unlock(&ino->lock);
		free(bounce);
		return rc;
	}
	count_window(ino);
	if (mid_src)
		span_enter(ino, &span, p.mid, p.mid_end);
	rc = write_parts(h, &p, off, src, FRAMES_NONE);
	if (mid_src) {
		mrc = bc_train_write(h, &span, mid_src);
		span_leave(ino, &span, mrc == 0);
	}
	co_mutex_unlock(&ino->lock);
	free(bounce);
	if (h->mode == BCACHE_BEHIND)
		make_room(h);
	else
		bc_reclaim(h);   /* a failed eviction leaves its block dirty for the next COMMIT */
	return rc ? rc : mrc;
}

/* Wait while a THROUGH middle in flight overlaps blocks [first, last]: it is older than this
 * WRITE, and when it lands it supersedes whatever the cache holds there. */
static void wait_spans(struct bc_inode *ino, uint64_t first, uint64_t last)
{
	struct bc_span probe = { .first = first, .last = last };

	while (spans_overlap(ino, &probe))
		bc_wait(ino);
}

/* Is adopting buf for a middle of len bytes worth it? An adopted buffer stays whole, and counts
 * whole against the bound, until its last block goes: a small WRITE's (a 6000-byte record holds
 * one whole block, if any, in an allocation of 8 to 12 KiB) would keep two or three times its
 * bytes, so its block is copied (its only copy: the partial ends are copied anyway) and the
 * buffer goes back to the allocator with the reply, still warm. */
static bool worth_adopting(const struct bcache_buf *buf, uint64_t len)
{
	return buf && (!buf->size || 2 * len >= buf->size);
}

/* Where a WRITE's blocks go. Into its file's frames when the file is being filled side by side
 * (bc_frame_wanted): the record then goes back to the allocator with the reply, warm, to be
 * received into again, and the frame, laid out as the file, is written behind as one piece of
 * memory and used again once its blocks are written and trimmed (WRITTEN), so that a stream of
 * WRITEs runs in memory the cache already has. Adopting records instead kept every record
 * until its blocks left the cache, and each new one was memory the kernel faulted in and
 * cleared: 32 writers of 47008-byte records, one in flight each, spent a third of the daemon's
 * time in page faults. Else adopted when worth it, or copied into memory of their own. */
static enum frames plan_images(struct bc_inode *ino, uint64_t off, size_t len, uint64_t mid_len,
			       const struct bcache_buf *buf, bool *adopt)
{
	bool framed = bc_frame_wanted(ino, off >> ino->bshift, (off + len - 1) >> ino->bshift,
				      worth_adopting(buf, mid_len)) &&
		      !bc_frame_closed_recently(ino, off >> ino->bshift);

	*adopt = worth_adopting(buf, mid_len) && !framed;
	return *adopt ? FRAMES_NONE : framed ? FRAMES_OPEN : FRAMES_USE;
}

/* The middle's whole blocks into the cache: adopted from buf where aligned (adopt: the WRITE is
 * worth adopting), else copied (into frames as fr says). */
static int cache_middle(struct bc_inode *ino, uint64_t mid, uint64_t mid_end,
			const unsigned char *src, struct bcache_buf *buf, bool adopt, enum frames fr)
{
	for (uint64_t at = mid; at < mid_end; at += ino->bs) {
		const unsigned char *p = src + (at - mid);
		uint64_t index = at >> ino->bshift;
		struct bc_entry *e, *n;

		/* a block on its way to disk keeps its image until the write ends */
		while ((e = bc_map_find(&ino->map, index)) && e->busy)
			bc_wait(ino);
		bool aligned = ((uintptr_t)p & (ino->bs - 1)) == 0;

		if (adopt && aligned) {
			n = bc_entry_new_whole(ino, index, p, buf, true);
		} else {
			if (adopt)   /* the payload was not placed: counted as THROUGH counts it */
				bc_count(&ino->cache->n.bounced_middles);
			struct bcache_buf *frame;
			unsigned char *slot = new_image(ino, index, fr, &frame);

			n = bc_entry_new_copy(ino, index, p, slot, frame);
		}
		if (!n)
			return -ENOMEM;   /* the older entry, if any, stays */
		if (e)
			bc_entry_free(ino, e);   /* older bytes: this WRITE's replace them whole */
		bc_hint_raise(ino, at + ino->bs);
	}
	return 0;
}

/* Over the bound: the WRITE's reply waits (on the fiber, no thread held: the backpressure) until
 * there is room again. Clean blocks go first, at no cost; then write-behind's own work is done,
 * here, in the whole chunks and runs it writes (not the small run around the oldest block), or
 * waited for when it is all on its way; only when nothing is ready to go at all are blocks
 * completed and written as eviction finds them. */
#define ROOM_TRIES 40
static int make_room(struct bcache_file *h)
{
	struct bcache *c = h->ino->cache;

	bc_reserve_trim(c);   /* memory kept ready for frames goes before any data */
	bc_trim_written(c);
	bool wrote = bc_reclaim_file(h);
	if (!bc_over_limit(c)) {
		if (wrote)
			bc_count(&c->n.bp_waits);
		return 0;
	}
	bc_count(&c->n.bp_waits);
	for (int i = 0; i < ROOM_TRIES; i++) {
		bc_reclaim_clean(c);
		if (!bc_over_limit(c))
			return 0;
		/* A failure is another file's as likely as this one's: it stays with the file's
		 * inode for its COMMIT, and this WRITE looks for room elsewhere. */
		ssize_t n = bcache_writeback(c);
		if (n != 0)
			continue;
		if (!atomic_load_explicit(&c->inflight_bytes, memory_order_relaxed)) {
			bc_reclaim(h);   /* what fails to go stays dirty: COMMIT says so */
			return 0;
		}
		bc_room_wait(c);
	}
	return 0;
}

/* Is the byte at pos in the cache (written by a WRITE, or in a whole image)? */
static bool byte_cached(struct bc_inode *ino, uint64_t pos)
{
	struct bc_entry *e = bc_map_find(&ino->map, pos >> ino->bshift);
	uint32_t a = (uint32_t)(pos & (ino->bs - 1));

	return e && (!e->bits || (e->bits[a / 64] >> (a % 64) & 1));
}

/* A WRITE that finds the bytes just before or just after it cached has a neighbour that came
 * first: its writer is not ahead of the file's others. */
static bool next_to_data(struct bc_inode *ino, uint64_t off, uint64_t end)
{
	return (off > 0 && byte_cached(ino, off - 1)) || byte_cached(ino, end);
}

/* Does [off, end) start where one of the file's last aligned WRITEs ended, or end where one
 * began (or start the file)? Inode lock held. */
static bool touches_recent(const struct bc_inode *ino, uint64_t off, uint64_t end)
{
	bool found = off == 0;

	for (unsigned i = 0; i < BC_RECENT && !found; i++)
		found = ino->recent[i].end == off || ino->recent[i].start == end;
	return found;
}

/* Do the file's aligned WRITEs land near its front (three in four, lately, within the spread
 * the cache allows writers, bc_hold_ahead), as a file being filled by one writer or many in
 * step does, and a random writer's all over a large file do not? Counts the WRITE ending at
 * end. Inode lock held. */
static bool streams(struct bc_inode *ino, uint64_t end)
{
	uint64_t span = (uint64_t)ino->cache->spread_chunks * BC_CHUNK;

	if (end > ino->front)
		ino->front = end;
	ino->al_near += end + span >= ino->front;
	if (++ino->al_writes >= 4096) {
		ino->al_writes /= 2;
		ino->al_near /= 2;
	}
	return (uint64_t)ino->al_near * 4 >= (uint64_t)ino->al_writes * 3;
}

/* A WRITE of whole blocks that lands next to no cached byte and to none of the file's recent
 * WRITEs, in a file whose WRITEs mostly land far from its front: a random writer's (a database,
 * 4 KiB WRITEs all over a file). Its blocks go to disk now, as in THROUGH: nothing will come to
 * join them, and held, each kept its record (or a copy) in memory until written behind and
 * then in the written share, so that the next WRITEs were received into memory the kernel
 * faulted in and cleared (40000 random 4 KiB WRITEs over 2 GiB: 46 MiB/s cached, 95 direct, at
 * 2.8 times the CPU). Sequential and interleaved writers write near their file's front, and
 * meet one another's ends (the last 128: 32 writers with 4 in flight each, whose neighbours
 * may have gone straight too) or find the blocks beside them cached: they stay behind. Inode
 * lock held. */
static bool lands_alone(struct bc_inode *ino, uint64_t off, size_t len)
{
	uint64_t mask = ino->bs - 1;

	if ((off & mask) || (len & mask))
		return false;
	/* (the ring is looked through only where the cheaper tests leave the WRITE alone: a
	 * streaming writer's WRITEs pay a comparison and a store) */
	bool alone = !streams(ino, off + len) && !next_to_data(ino, off, off + len) &&
		     !touches_recent(ino, off, off + len);

	ino->recent[ino->recent_next++ % BC_RECENT] = (struct bc_extent){ off, off + len };
	if (alone)
		bc_count(&ino->cache->n.lone_writes);
	return alone;
}

static int write_behind(struct bcache_file *h, uint64_t off, const void *data, size_t len,
			struct bcache_buf *buf)
{
	struct bc_inode *ino = h->ino;
	const unsigned char *src = data;
	struct plan p;
	int rc = 0;

	plan_write(ino, off, off + len, &p);
	co_mutex_lock(&ino->lock);
	if ((rc = refused(ino))) {
		co_mutex_unlock(&ino->lock);
		return rc;
	}
	if (lands_alone(ino, off, len)) {
		co_mutex_unlock(&ino->lock);
		return write_through(h, off, data, len);
	}
	count_window(ino);
	wait_spans(ino, off >> ino->bshift, (off + len - 1) >> ino->bshift);
	uint64_t opened = ino->chunks_opened;
	bool adopt;
	enum frames fr = plan_images(ino, off, len, p.mid_end - p.mid, buf, &adopt);
	if (p.mid < p.mid_end)
		rc = cache_middle(ino, p.mid, p.mid_end, src + (p.mid - off), buf, adopt, fr);
	if (rc == 0)
		rc = write_parts(h, &p, off, src, fr);
	bc_trim_written_of(ino);
	bool next = next_to_data(ino, off, off + len);
	ino->win_next += next;
	/* At the front: it began a chunk, and nobody had written next to it. */
	if (rc == 0 && ino->chunks_opened != opened && !next)
		bc_hold_ahead(h);   /* a failed write stays with the file for its COMMIT */
	co_mutex_unlock(&ino->lock);
	int brc = make_room(h);
	return rc ? rc : brc;
}

/* A middle this large goes to disk as the WRITE arrives, in BEHIND mode too: its blocks are a
 * run of their own, as large as write-behind would make, and nothing is gained by holding them.
 * Held (adopted), each such record stayed until written behind, so that the next ones were
 * received into memory the kernel had to fault in and clear: 1 MiB WRITEs in order ran at 325
 * MiB/s cached against 744 direct. Written now, the record goes back to the allocator with the
 * reply, warm. The ends still wait in the cache for the WRITEs that share their blocks. */
#define STRAIGHT_MIN (BC_CHUNK / 2)

static bool goes_straight(const struct bc_inode *ino, uint64_t off, size_t len)
{
	uint64_t mask = ino->bs - 1, up = (off + mask) & ~mask, down = (off + len) & ~mask;

	return down > up && down - up >= STRAIGHT_MIN;
}

/* now: the middle to disk before returning, whatever the mode (bcache_write_now). */
static int write_one(struct bcache_file *h, uint64_t off, const void *data, size_t len,
		     struct bcache_buf *buf, bool now)
{
	bc_count(&h->ino->cache->n.writes);
	if (len == 0)
		return 0;
	if (off > (uint64_t)INT64_MAX || len > (uint64_t)INT64_MAX - off)
		return -EFBIG;
	if (!now && h->mode == BCACHE_BEHIND && !goes_straight(h->ino, off, len))
		return write_behind(h, off, data, len, buf);
	return write_through(h, off, data, len);
}

int bcache_write_buf(struct bcache_file *h, uint64_t off, const void *data, size_t len,
		     struct bcache_buf *buf)
{
	return write_one(h, off, data, len, buf, false);
}

/* Held in BEHIND mode, a stable WRITE's middle was copied into the file's frames only to be
 * written by its own COMMIT round a moment later: aligned 49152-byte FILE_SYNC records, 32
 * writers, cost 1.3-1.5x the CPU of direct mode at the same MiB/s. */
int bcache_write_now(struct bcache_file *h, uint64_t off, const void *data, size_t len)
{
	return write_one(h, off, data, len, NULL, true);
}

int bcache_write(struct bcache_file *h, uint64_t off, const void *data, size_t len)
{
	return bcache_write_buf(h, off, data, len, NULL);
}
