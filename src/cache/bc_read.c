/* SPDX-License-Identifier: GPL-2.0-or-later */
/* READ: cached bytes over what the caller read from disk. */
#include <errno.h>
#include <string.h>

#include "bc_bits.h"
#include "bc_internal.h"

void bcache_read_begin(struct bcache_file *h, struct bcache_read *rd, uint64_t off, uint64_t len)
{
	struct bc_inode *ino = h->ino;

	rd->off = off;
	rd->len = len;
	rd->stale = false;
	co_mutex_lock(&ino->lock);
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
	co_mutex_lock(&h->ino->lock);
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

	co_mutex_lock(&ino->lock);
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
