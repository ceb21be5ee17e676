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
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
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
		     bool hole, struct disk_read *dr)
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
	/* A cover the file system says is all hole reads as zeros: set here, with no call into it
	 * (an O_DIRECT read of a hole is the kernel zeroing the buffer page by page: 37% of the
	 * daemon's CPU for a data server's READs of holes). Nothing of it is kept. */
	int rwf = o->exp->read_mode == IO_MODE_DONTCACHE ? RWF_DONTCACHE : 0;
	ssize_t n = hole ? 0 : io_pread_flags(fc->ch->io, fd, buf, a1 - a0, a0, rwf);
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

/* The file's data extent at or after a READ: [d0, d1), d0 UINT64_MAX when only holes follow. A
 * hole reads as zeros with no device read, and what the cache kept of it would be memory for
 * nothing: a flexfiles data server's files are mostly holes (docs/data-server.md). A file system
 * that cannot say (an error) is all data. d0 (SEEK_DATA) is asked for every miss, d1 (SEEK_HOLE)
 * only for one whose blocks the cache keeps. */
struct extent {
	uint64_t d0, d1;
};

static uint64_t data_start(int fd, uint64_t off)
{
	off_t d = lseek(fd, (off_t)off, SEEK_DATA);
	if (d < 0)
		return errno == ENXIO ? UINT64_MAX : off;
	return (uint64_t)d;
}

static uint64_t data_end(int fd, uint64_t d0)
{
	off_t h = d0 == UINT64_MAX ? -1 : lseek(fd, (off_t)d0, SEEK_HOLE);
	return h < 0 ? UINT64_MAX : (uint64_t)h;
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
 * ext: the file's data extent at or after off (a cover before its start is a hole, not read);
 * keep: in cached mode the blocks read of it stay in the cache, clean. */
static int read_overlaid(struct fs_call *fc, struct fh_obj *o, struct bcache_file *bf, uint64_t off,
			 uint32_t len, uint64_t extra, const struct extent *ext, bool keep,
			 struct disk_read *dr)
{
	uint64_t a0, a1;
	read_cover(o, off, len, extra, &a0, &a1);
	for (int tries = 0; tries < 16; tries++) {
		struct bcache_read rd;
		/* The whole buffer is overlaid: what the cache keeps of it must be current too. */
		bcache_read_begin(bf, &rd, a0, a1 - a0);
		/* Only the first try trusts the extent map looked at before it: a retry follows a
		 * write that reached the disk meanwhile. */
		int rc = read_disk(fc, o, off, a0, a1, tries == 0 && ext->d0 >= a1, dr);
		if (rc < 0) {
			bcache_read_cancel(bf, &rd);
			return rc;
		}
		if (bcache_read_overlay(bf, &rd, dr->mem) == 0) {
			if (keep && behind(o) && dr->keep_len)
				keep_data(o, bf, &rd, a0, dr, ext->d0, ext->d1);
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

/* What a READ of a hole is answered from when the cache holds nothing of the file: a read-only
 * mapping whose every page is the kernel's zero page, shared by all rings and never written. A
 * data server's files are mostly holes, read 1 MiB at a time: zeroing a buffer for each cost the
 * daemon 2.5 CPU s/GiB (memset, and faulting in buffers that 512 READs in flight would not let
 * stay warm), against Ganesha's 1.4. */
static const char *zero_region;
static pthread_once_t zero_once = PTHREAD_ONCE_INIT;

static void zero_map(void)
{
	void *p = mmap(NULL, FS_MAXIO, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	zero_region = p == MAP_FAILED ? NULL : p;
}

/* 1 with *out the zeros of a READ that lies in a hole of a file the cache holds nothing of, 0
 * otherwise (read as any other: the cache's bytes are laid over zeros). */
static int read_hole(struct bcache_file *bf, const struct extent *ext, uint64_t off, uint32_t len,
		     struct fs_payload *out)
{
	if (ext->d0 < off + len || len > FS_MAXIO || bcache_file_entries(bf) != 0)
		return 0;
	pthread_once(&zero_once, zero_map);
	if (!zero_region)
		return 0;
	*out = (struct fs_payload){.data = (void *)zero_region, .len = len};
	return 1;
}

static int read_cached(struct fs_call *fc, struct fh_obj *o, struct bcache_file *bf, uint64_t off,
		       uint32_t len, uint64_t size, struct disk_read *dr, struct fs_payload *out)
{
	int rc = behind(o) ? read_hit(bf, off, len, out) : 0;
	if (rc != 0)
		return rc;   /* 1: answered */
	int fd = fh_io_fd(fc->ch, o, o->exp->read_mode == IO_MODE_DIRECT);
	if (fd < 0)
		return fd;
	struct extent ext = {.d0 = data_start(fd, off), .d1 = UINT64_MAX};
	if ((rc = read_hole(bf, &ext, off, len, out)) != 0)
		return rc;
	/* Not a stream's first READ, and not all in a hole: what it reads, and reads ahead, stays. */
	bool keep = behind(o) && bcache_read_worth_keeping(bf, off, len) && ext.d0 < off + len;
	if (keep)
		ext.d1 = data_end(fd, ext.d0);
	uint64_t ra_off, ra_len, extra = 0;
	bool ra = keep && bcache_readahead(bf, off, len, READAHEAD_MAX, &ra_off, &ra_len);
	if (ra && ra_off + ra_len > off + len)
		extra = ra_off + ra_len - (off + len);
	if (off + len + extra > size)    /* not past the end of file */
		extra = size > off + len ? size - (off + len) : 0;
	rc = read_overlaid(fc, o, bf, off, len, extra, &ext, keep, dr);
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
		/* size needs no second look: fs_getattr counted the cache's bytes past the disk's
		 * end (an fstat per READ when it was looked up again here) */
		bf = cache_of(fc, o, &err);
		if (!bf)
			return -err;
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
		rc = read_disk(fc, o, off, a0, a1, false, &dr);
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
