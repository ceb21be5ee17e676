/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "fake_disk.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/types.h>

void fake_disk_init(struct fake_disk *d, uint32_t align)
{
	memset(d, 0, sizeof(*d));
	pthread_mutex_init(&d->lock, NULL);
	d->align = align;
}

void fake_disk_fini(struct fake_disk *d)
{
	for (unsigned i = 0; i < d->spawned; i++)
		pthread_join(d->helpers[i], NULL);
	free(d->data);
	free(d->has);
	free(d->durable);
	pthread_mutex_destroy(&d->lock);
}

/* Grow the array to hold [0, end); new bytes are zeros, like a hole. Lock held. */
static void reserve(struct fake_disk *d, uint64_t end)
{
	size_t cap = d->cap ? d->cap : 65536;

	if (end <= d->cap)
		return;
	while (cap < end)
		cap *= 2;
	d->data = realloc(d->data, cap);
	d->has = realloc(d->has, cap / d->align);
	if (!d->data || !d->has)
		abort();
	memset(d->data + d->cap, 0, cap - d->cap);
	memset(d->has + d->cap / d->align, 0, (cap - d->cap) / d->align);
	d->cap = cap;
}

/* Data was written to [off, off + len): its blocks are not holes any more. Lock held. */
static void mark_data(struct fake_disk *d, uint64_t off, uint64_t len)
{
	for (uint64_t b = off / d->align; b * d->align < off + len; b++)
		d->has[b] = 1;
}

static void set_size(struct fake_disk *d, uint64_t size)
{
	reserve(d, size);
	if (size < d->size) {  /* what a later extension uncovers must read as zeros */
		memset(d->data + size, 0, d->size - size);
		uint64_t first = (size + d->align - 1) / d->align;   /* a cut block keeps its data */
		memset(d->has + first, 0, d->cap / d->align - first);
	}
	d->size = size;
}

void fake_disk_put(struct fake_disk *d, uint64_t off, const void *buf, uint64_t len)
{
	pthread_mutex_lock(&d->lock);
	reserve(d, off + len);
	memcpy(d->data + off, buf, len);
	mark_data(d, off, len);
	if (off + len > d->size)
		d->size = off + len;
	pthread_mutex_unlock(&d->lock);
}

void fake_fail_writes(struct fake_disk *d, int err, unsigned n)
{
	pthread_mutex_lock(&d->lock);
	d->write_err = err;
	d->write_fail_n = n;
	pthread_mutex_unlock(&d->lock);
}

void fake_fail_syncs(struct fake_disk *d, int err, unsigned n)
{
	pthread_mutex_lock(&d->lock);
	d->sync_err = err;
	d->sync_fail_n = n;
	pthread_mutex_unlock(&d->lock);
}

unsigned fake_writes_over(struct fake_disk *d, uint64_t off, uint64_t len)
{
	unsigned n = 0;

	pthread_mutex_lock(&d->lock);
	for (unsigned i = 0; i < d->writes && i < FAKE_LOG_MAX; i++)
		if (d->log[i].off < off + len && off < d->log[i].off + d->log[i].len)
			n++;
	pthread_mutex_unlock(&d->lock);
	return n;
}

static bool aligned(const struct fake_disk *d, uint64_t off, const void *buf, size_t len)
{
	return off % d->align == 0 && len % d->align == 0 && (uintptr_t)buf % d->align == 0;
}

/* The credentials writer_begin took on this thread: -1 none, 0 the server's, 1 restricted. */
static _Thread_local int writer_mode = -1;

static void fake_writer_begin(void *io, bool restricted, struct bcache_writer_saved *saved)
{
	(void)io;
	memcpy(saved->bytes, &writer_mode, sizeof writer_mode);
	writer_mode = restricted;
}

static void fake_writer_end(void *io, const struct bcache_writer_saved *saved)
{
	(void)io;
	memcpy(&writer_mode, saved->bytes, sizeof writer_mode);
}

/* What the block layer counts as a write's segments, before page boundaries: memory pieces. */
static int pieces(const struct iovec *iov, int iovcnt)
{
	int n = 0;

	for (int i = 0; i < iovcnt; i++)
		n += !i || (char *)iov[i - 1].iov_base + iov[i - 1].iov_len != iov[i].iov_base;
	return n;
}

/* The block at off (aligned) holds data of the file's that the page cache does not: a device
 * read to fill it. */
static bool holds_data(const struct fake_disk *d, uint64_t off)
{
	return off < d->size && off / d->align < d->cap / d->align && d->has[off / d->align] &&
	       d->kept != off + 1;
}

/* How a write reaches the disk: O_DIRECT, or through the page cache (write_eof), which drops its
 * pages once written (RWF_DONTCACHE) or keeps the last one (write_eof's keep). */
enum way { DIRECT, PAGES, PAGES_KEEP };

/* The page cache after a write of [off, end) that way. Disk's lock. */
static void pages_after(struct fake_disk *d, uint64_t off, uint64_t end, enum way way)
{
	if (way == PAGES_KEEP && end % d->align)
		d->kept = end / d->align * d->align + 1;
	else if (d->kept && d->kept - 1 + d->align > off && d->kept - 1 < end)
		d->kept = 0;   /* an O_DIRECT write invalidates it; RWF_DONTCACHE drops it */
}

/* A write through the page cache reads first each block it covers only in part where the file
 * holds data in that block: Linux's buffered write does. Disk's lock, before the write lands. */
static unsigned page_cache_reads(const struct fake_disk *d, uint64_t off, uint64_t len)
{
	uint64_t first = off / d->align * d->align, end = off + len;
	uint64_t last = end / d->align * d->align;   /* the block the write ends in */
	bool head = off % d->align && holds_data(d, first);
	bool tail = end % d->align && (last != first || !(off % d->align)) && holds_data(d, last);

	return len ? (unsigned)head + (unsigned)tail : 0;
}

/* One device write of iov[0, iovcnt) at off, as pwritev is: logged once, with its total length.
 * Through the page cache (the file's last block, write_eof) only off must be aligned. */
static int write_vec(struct fake_disk *d, uint64_t off, const struct iovec *iov, int iovcnt,
		     enum way way)
{
	bool eof = way != DIRECT;
	uint64_t len = 0;
	int rc = 0;

	for (int i = 0; i < iovcnt; i++)
		len += iov[i].iov_len;
	if (d->write_hook && !d->hook_after)
		d->write_hook(d, off, len, d->hook_arg);
	if (d->write_delay_us) {
		pthread_mutex_lock(&d->lock);
		if (++d->writing > d->max_writing)
			d->max_writing = d->writing;
		pthread_mutex_unlock(&d->lock);
		usleep(d->write_delay_us);
	}
	pthread_mutex_lock(&d->lock);
	if (d->write_delay_us)
		d->writing--;
	if (d->write_fail_n) {
		d->write_fail_n--;
		rc = -d->write_err;
	} else {
		if (d->writes < FAKE_LOG_MAX)
			d->log[d->writes] = (struct fake_write){ off, len, pieces(iov, iovcnt) };
		d->writes++;
		d->eof_writes += eof;
		if (writer_mode == 0)
			d->server_writes++;
		else if (writer_mode == 1)
			d->restricted_writes++;
		reserve(d, off + len);
		if (eof)
			d->pc_reads += page_cache_reads(d, off, len);
		uint64_t at = off;
		for (int i = 0; i < iovcnt; at += iov[i].iov_len, i++) {
			if (eof ? at % d->align != 0 : !aligned(d, at, iov[i].iov_base, iov[i].iov_len))
				d->misaligned++;
			memcpy(d->data + at, iov[i].iov_base, iov[i].iov_len);
		}
		mark_data(d, off, len);
		pages_after(d, off, off + len, way);
		if (off + len > d->size)
			d->size = off + len;
	}
	pthread_mutex_unlock(&d->lock);
	if (d->write_hook && d->hook_after)
		d->write_hook(d, off, len, d->hook_arg);
	return rc;
}

static int fake_write(void *io, uint64_t off, const void *buf, size_t len)
{
	struct iovec v = { (void *)buf, len };

	return write_vec(io, off, &v, 1, DIRECT);
}

static int fake_write_eof(void *io, uint64_t off, const struct iovec *iov, int iovcnt, bool keep)
{
	struct fake_disk *d = io;

	if (d->no_write_eof || (d->write_eof_one_piece && iovcnt > 1))
		return -EOPNOTSUPP;
	return write_vec(d, off, iov, iovcnt, keep ? PAGES_KEEP : PAGES);
}

static int fake_writev(void *io, uint64_t off, const struct iovec *iov, int iovcnt)
{
	struct fake_disk *d = io;

	pthread_mutex_lock(&d->lock);
	d->vectored++;
	pthread_mutex_unlock(&d->lock);
	return write_vec(d, off, iov, iovcnt, DIRECT);
}

/* The start of a sync (fake_sync's, or a write's that syncs itself): the hook, the delay, then the
 * disk's lock, held on return; -errno when an injected failure (fake_fail_syncs) is due. */
static int sync_start(struct fake_disk *d)
{
	if (d->sync_hook)
		d->sync_hook(d, d->sync_hook_arg);
	if (d->sync_delay_ms)
		usleep(d->sync_delay_ms * 1000u);
	pthread_mutex_lock(&d->lock);
	if (!d->sync_fail_n)
		return 0;
	d->sync_fail_n--;
	return -d->sync_err;
}

/* What a write that syncs itself makes durable: its own bytes, and the size if it grew the file;
 * a failing sync leaves them written but not durable, as the kernel's does. */
static int sync_own(struct fake_disk *d, uint64_t off, uint64_t len)
{
	int rc = sync_start(d);

	if (rc == 0) {
		uint64_t end = off + len, size = end > d->durable_size ? end : d->durable_size;
		unsigned char *p = realloc(d->durable, size ? size : 1);

		if (!p) {
			rc = -ENOMEM;
		} else {
			memset(p + d->durable_size, 0, size - d->durable_size);
			memcpy(p + off, d->data + off, len);
			d->durable = p;
			d->durable_size = size;
			d->sync_writes++;
		}
	}
	pthread_mutex_unlock(&d->lock);
	return rc;
}

static int fake_writev_sync(void *io, uint64_t off, const struct iovec *iov, int iovcnt,
			    bool datasync)
{
	struct fake_disk *d = io;
	uint64_t len = 0;

	(void)datasync;
	for (int i = 0; i < iovcnt; i++)
		len += iov[i].iov_len;
	int rc = fake_writev(io, off, iov, iovcnt);
	return rc ? rc : sync_own(d, off, len);
}


static ssize_t fake_read(void *io, uint64_t off, void *buf, size_t len)
{
	struct fake_disk *d = io;
	ssize_t n = 0;

	pthread_mutex_lock(&d->lock);
	if (!aligned(d, off, buf, len))
		d->misaligned++;
	d->reads++;
	if (off < d->size) {
		n = (ssize_t)(d->size - off < len ? d->size - off : len);
		memcpy(buf, d->data + off, (size_t)n);
	}
	pthread_mutex_unlock(&d->lock);
	return n;
}

static int64_t fake_disk_size(void *io)
{
	struct fake_disk *d = io;
	int64_t size;

	pthread_mutex_lock(&d->lock);
	size = (int64_t)d->size;
	pthread_mutex_unlock(&d->lock);
	return size;
}

static int fake_sync(void *io, bool datasync)
{
	struct fake_disk *d = io;
	int rc = sync_start(d);

	(void)datasync;
	if (rc == 0) {
		d->syncs++;
		free(d->durable);
		d->durable = malloc(d->size ? d->size : 1);
		if (!d->durable)
			abort();
		if (d->size)
			memcpy(d->durable, d->data, d->size);
		d->durable_size = d->size;
	}
	pthread_mutex_unlock(&d->lock);
	return rc;
}

static int fake_truncate(void *io, uint64_t size)
{
	struct fake_disk *d = io;

	pthread_mutex_lock(&d->lock);
	d->truncates++;
	/* Linux zeroes a cut block's tail in the page cache (xfs_truncate_page): a read where the
	 * page was not there, which stays there after */
	if (size < d->size && size % d->align && holds_data(d, size / d->align * d->align)) {
		d->pc_reads++;
		d->kept = size / d->align * d->align + 1;
	}
	set_size(d, size);
	pthread_mutex_unlock(&d->lock);
	return 0;
}

static int fake_hole(void *io, uint64_t off, size_t len)
{
	struct fake_disk *d = io;
	int hole = d->holes;

	pthread_mutex_lock(&d->lock);
	for (uint64_t b = off / d->align; hole && b * d->align < off + len; b++)
		hole = b >= d->cap / d->align || !d->has[b];
	pthread_mutex_unlock(&d->lock);
	return hole;
}

struct helper_call {
	void (*fn)(void *arg);
	void *arg;
};

static void *helper_main(void *p)
{
	struct helper_call call = *(struct helper_call *)p;

	free(p);
	call.fn(call.arg);
	return NULL;
}

static int fake_spawn(void *io, void (*fn)(void *arg), void *arg)
{
	struct fake_disk *d = io;
	struct helper_call *call;
	int rc = -EAGAIN;

	pthread_mutex_lock(&d->lock);
	if (d->spawn && d->spawned < FAKE_HELPERS_MAX && (call = malloc(sizeof(*call)))) {
		*call = (struct helper_call){ fn, arg };
		rc = -pthread_create(&d->helpers[d->spawned], NULL, helper_main, call);
		if (rc == 0)
			d->spawned++;
		else
			free(call);
	}
	pthread_mutex_unlock(&d->lock);
	return rc;
}

const struct bcache_ops fake_ops = {
	.write = fake_write,
	.read = fake_read,
	.disk_size = fake_disk_size,
	.sync = fake_sync,
	.truncate = fake_truncate,
	.writev = fake_writev,
	.writer_begin = fake_writer_begin,
	.writer_end = fake_writer_end,
	.spawn = fake_spawn,
	.hole = fake_hole,
	.write_eof = fake_write_eof,
	.writev_sync = fake_writev_sync,
};
