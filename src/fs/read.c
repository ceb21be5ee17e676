/* SPDX-License-Identifier: GPL-2.0-or-later */
/* READ, per the export's mode: from the cache's blocks with no copy (write_mode cached, all
 * of the range cached), from disk with O_DIRECT and the cache's newer bytes laid over (with
 * readahead for a sequential reader, the blocks read kept in the cache), or through the page
 * cache. The reply's payload is the buffer or the blocks themselves, never copied. */
#include "fs/fileio.h"

#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/bufstash.h"
#include "cache/bcache.h"
#include "fs/fs_int.h"
#include "io/ring.h"


static void read_buf_put(void *p) { bcache_buf_put(p); }

/* What a disk read brought: the buffer (mem) in a holder (hold: the reply's payload, and in
 * cached mode also the image of the blocks the cache keeps from it, one reference each: freed
 * when the reply is sent and the last of those blocks has left the cache), where the READ's bytes
 * start in it (data), and how many bytes from the buffer's start are whole blocks the disk gave
 * (keep_len), for the cache to keep clean. */
struct disk_read {
	struct bcache_buf *hold;
	char *mem, *data;
	uint64_t keep_len;
};

/* The range a READ of [off, off + len) reads from disk: for O_DIRECT the aligned cover, stretched
 * to `extra` bytes past the READ (readahead); the range itself in the other modes. */
static void read_cover(const struct fh_obj *o, uint64_t off, uint64_t len, uint64_t extra,
		       uint64_t *a0, uint64_t *a1)
{
	bool direct = o->exp->read_mode == IO_MODE_DIRECT;
	uint64_t bs = direct ? o->exp->block : 1;
	*a0 = off & ~(bs - 1);
	*a1 = (off + len + (direct ? extra : 0) + bs - 1) & ~(bs - 1);
}

/* Read the cover [a0, a1) of a READ at off from the file as the export's read mode says, data
 * pointing at off inside it (no second copy). Bytes past the end of the file read as zeros.
 * 0 or -errno. */
static int read_disk(struct fs_call *fc, struct fh_obj *o, uint64_t off, uint64_t a0, uint64_t a1,
		     struct disk_read *dr)
{
	bool direct = o->exp->read_mode == IO_MODE_DIRECT;
	uint64_t bs = direct ? o->exp->block : 4096;
	int fd = fh_io_fd(fc->ch, o, direct);
	if (fd < 0)
		return fd;
	char *buf = bufstash_alloc(bs, ((a1 - a0) + bs - 1) & ~(bs - 1));
	struct bcache_buf *hold = buf ? bcache_buf_heap(buf, malloc_usable_size(buf)) : NULL;
	if (!hold) {
		bufstash_free(buf);
		return -ENOMEM;
	}
	int rwf = o->exp->read_mode == IO_MODE_DONTCACHE ? RWF_DONTCACHE : 0;
	ssize_t n = io_pread_flags(fc->ch->io, fd, buf, a1 - a0, a0, rwf);
	if (n == -EOPNOTSUPP && rwf)
		n = io_pread(fc->ch->io, fd, buf, a1 - a0, a0);
	if (n < 0) {
		bcache_buf_put(hold);
		return (int)n;
	}
	if ((uint64_t)n < a1 - a0)
		memset(buf + n, 0, a1 - a0 - (uint64_t)n);
	*dr = (struct disk_read){.hold = hold, .mem = buf, .data = buf + (off - a0),
				 .keep_len = direct ? (uint64_t)n & ~(bs - 1) : 0};
	return 0;
}

/* Where the file's data begins at or after off, and where that extent ends: [*d0, *d1), both
 * UINT64_MAX when only holes follow. A hole reads as zeros with no device read, and what the
 * cache kept of it would be memory for nothing: a flexfiles data server's files are mostly holes
 * (docs/data-server.md). A file system that cannot say (an error) is all data. */
static void data_extent(int fd, uint64_t off, uint64_t *d0, uint64_t *d1)
{
	off_t d = lseek(fd, (off_t)off, SEEK_DATA);
	if (d < 0 && errno == ENXIO) {
		*d0 = *d1 = UINT64_MAX;
		return;
	}
	if (d < 0)
		d = (off_t)off;
	off_t h = lseek(fd, d, SEEK_HOLE);
	*d0 = (uint64_t)d;
	*d1 = h < 0 ? UINT64_MAX : (uint64_t)h;
}

/* Keep the whole blocks the disk gave of [k0, k1) (the file's data there) in the cache, clean. */
static void keep_data(struct fh_obj *o, struct bcache_file *bf, const struct bcache_read *rd,
		      uint64_t a0, const struct disk_read *dr, uint64_t k0, uint64_t k1)
{
	uint64_t bs = o->exp->block;
	uint64_t from = (k0 + bs - 1) & ~(bs - 1), to = k1 & ~(bs - 1);
	if (from < a0)
		from = a0;
	if (to > a0 + dr->keep_len)
		to = a0 + dr->keep_len;
	if (from < to)
		bcache_read_keep(bf, rd, from, to - from, dr->mem + (from - a0), dr->hold);
}

/* The disk's bytes with the cache's newer ones laid over them. A cached block that left the cache
 * between the disk read and the overlay may have reached the disk after the read: read again.
 * In cached mode the blocks read of [k0, k1) stay in the cache, clean (k0 >= k1: none). */
static int read_overlaid(struct fs_call *fc, struct fh_obj *o, struct bcache_file *bf, uint64_t off,
			 uint32_t len, uint64_t extra, uint64_t k0, uint64_t k1,
			 struct disk_read *dr)
{
	uint64_t a0, a1;
	read_cover(o, off, len, extra, &a0, &a1);
	for (int tries = 0; tries < 16; tries++) {
		struct bcache_read rd;
		/* The whole buffer is overlaid: what the cache keeps of it must be current too. */
		bcache_read_begin(bf, &rd, a0, a1 - a0);
		int rc = read_disk(fc, o, off, a0, a1, dr);
		if (rc < 0) {
			bcache_read_cancel(bf, &rd);
			return rc;
		}
		if (bcache_read_overlay(bf, &rd, dr->mem) == 0) {
			if (k0 < k1 && behind(o) && dr->keep_len)
				keep_data(o, bf, &rd, a0, dr, k0, k1);
			return 0;
		}
		bcache_buf_put(dr->hold);
	}
	return -EIO;
}

/* Readahead for a sequential reader in cached mode: the READ that misses reads up to this much
 * more (the window grows from 1 MiB while the reader stays sequential), which the following
 * READs then find in the cache. */
#define READAHEAD_MAX (8u << 20)

/* A READ served from cached blocks with no copy: the reply's payload is their images, pinned
 * until it is sent. Enough iovecs for a whole-size READ of single blocks, and its two ends (on
 * the fiber's stack while the cache is asked; a hit keeps what it got, sized to it). */
#define PIN_MAX (FS_MAXIO / 4096 + 2)

struct pinned_read {
	int npins;
	struct bcache_buf **pins;   /* npins of them, after iov[] in the same allocation */
	struct iovec iov[];
};

static void pinned_read_free(void *p)
{
	struct pinned_read *pr = p;
	for (int i = 0; i < pr->npins; i++)
		bcache_buf_put(pr->pins[i]);
	free(pr);
}

/* 1 when the READ was answered from the cache (*out set), 0 on a miss, or -errno. */
static int read_hit(struct bcache_file *bf, uint64_t off, uint32_t len, struct fs_payload *out)
{
	struct iovec iov[PIN_MAX];
	struct bcache_buf *pins[PIN_MAX];
	int npins;
	int n = bcache_read_pinned(bf, off, len, iov, PIN_MAX, pins, &npins);
	if (n <= 0)
		return n;
	struct pinned_read *pr = malloc(sizeof *pr + (size_t)n * sizeof *iov +
					(size_t)npins * sizeof *pins);
	if (!pr) {
		for (int i = 0; i < npins; i++)
			bcache_buf_put(pins[i]);
		return -ENOMEM;
	}
	pr->npins = npins;
	pr->pins = (struct bcache_buf **)(pr->iov + n);
	memcpy(pr->iov, iov, (size_t)n * sizeof *iov);
	memcpy(pr->pins, pins, (size_t)npins * sizeof *pins);
	*out = (struct fs_payload){.iov = pr->iov, .iovcnt = n, .len = len, .mem = pr,
				   .free = pinned_read_free};
	return 1;
}

static int read_cached(struct fs_call *fc, struct fh_obj *o, struct bcache_file *bf, uint64_t off,
		       uint32_t len, uint64_t size, struct disk_read *dr, struct fs_payload *out)
{
	if (!behind(o))
		return read_overlaid(fc, o, bf, off, len, 0, 0, 0, dr);
	int rc = read_hit(bf, off, len, out);
	if (rc != 0)
		return rc;   /* 1: answered */
	bool keep = bcache_read_worth_keeping(bf, off, len);   /* not a stream's first READ */
	uint64_t d0 = 0, d1 = 0;
	if (keep) {
		int fd = fh_io_fd(fc->ch, o, o->exp->read_mode == IO_MODE_DIRECT);
		if (fd < 0)
			return fd;
		data_extent(fd, off, &d0, &d1);
		keep = d0 < off + len;    /* a READ all in a hole: nothing to keep or read ahead */
	}
	uint64_t ra_off, ra_len, extra = 0;
	bool ra = keep && bcache_readahead(bf, off, len, READAHEAD_MAX, &ra_off, &ra_len);
	if (ra && ra_off + ra_len > off + len)
		extra = ra_off + ra_len - (off + len);
	if (off + len + extra > size)    /* not past the end of file */
		extra = size > off + len ? size - (off + len) : 0;
	rc = read_overlaid(fc, o, bf, off, len, extra, keep ? d0 : 0, keep ? d1 : 0, dr);
	if (ra)
		bcache_readahead_end(bf);
	return rc;
}

int fs_read(struct fs_call *fc, struct fh_obj *o, uint64_t off, uint32_t count, uint64_t size,
	    uint32_t *n, bool *eof, struct fs_payload *out)
{
	struct bcache_file *bf = NULL;
	int err = 0;
	if (fs_as_caller(fc) < 0)
		return -FS_ESERVERFAULT;
	if (uses_cache(o)) {
		bf = cache_of(fc, o, &err);
		if (!bf)
			return -err;
		int64_t sz = bcache_file_size(bf);
		if (sz < 0)
			return (int)sz;
		size = (uint64_t)sz;
	}
	*n = 0;
	*eof = off >= size;
	if (*eof || count == 0)
		return 0;
	uint32_t len = size - off < count ? (uint32_t)(size - off) : count;
	struct disk_read dr;
	int rc = bf ? 0 : fileio_paged_coherent(fc, o);
	if (rc == 0 && bf) {
		rc = read_cached(fc, o, bf, off, len, size, &dr, out);
	} else if (rc == 0) {
		uint64_t a0, a1;
		read_cover(o, off, len, 0, &a0, &a1);
		rc = read_disk(fc, o, off, a0, a1, &dr);
	}
	if (rc < 0)
		return rc;
	*n = len;
	*eof = off + len >= size;
	if (rc == 1)
		return 0;    /* from the cache: read_hit set the payload */
	*out = (struct fs_payload){.data = dr.data, .len = len, .mem = dr.hold,
				   .free = read_buf_put};
	return 0;
}
