/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A disk for the cache's unit tests: a file as a byte array behind struct bcache_ops, with what
 * the tests check (device reads, writes, alignment of every O_DIRECT call, a "durable" copy taken
 * at each sync, how many writes ran at once) and what they inject (write and sync errors, a hook
 * inside a write, slow writes, helper threads for ops.spawn). Thread-safe. */
#ifndef FAKE_DISK_H
#define FAKE_DISK_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cache/bcache.h"

#define FAKE_LOG_MAX 4096
#define FAKE_HELPERS_MAX 256

struct fake_write {
	uint64_t off, len;
	int pieces;                /* separate pieces of memory it came from (adjacent iovecs merged) */
};

struct fake_disk {
	pthread_mutex_t lock;
	uint32_t align;            /* every write/read must be aligned to this */
	unsigned char *data;       /* current contents */
	unsigned char *has;        /* per `align` block: data was written there (else a hole) */
	uint64_t size;
	size_t cap;
	unsigned char *durable;    /* contents as of the last successful sync */
	uint64_t durable_size;
	unsigned reads, writes, syncs, truncates, misaligned;
	/* of the writes, those that synced themselves (ops.writev_sync): durable are their own
	 * bytes and the size they set, nothing else (as a FUA write is) */
	unsigned sync_writes;
	unsigned eof_writes;       /* of the writes, those through ops.write_eof (not aligned) */
	/* Blocks the kernel's page cache would read from the device (reads: the cache's own): one a
	 * write_eof gives in part where the file has data and the page is not cached, one a
	 * truncate cuts (its tail is zeroed in the page cache) */
	unsigned pc_reads;
	bool no_write_eof;         /* ops.write_eof refuses (-EOPNOTSUPP), as with no tail fd */
	bool write_eof_one_piece;  /* it refuses writes of more than one piece (no RWF_DONTCACHE) */
	uint64_t kept;             /* 1 + offset of the one block the page cache holds, or 0 */
	unsigned vectored;         /* of the writes, those made through writev */
	/* of the writes, those made inside writer_begin/end, as the server or restricted */
	unsigned server_writes, restricted_writes;
	struct fake_write log[FAKE_LOG_MAX];  /* first FAKE_LOG_MAX writes */
	int write_err;             /* the next write_fail_n writes fail with -write_err */
	unsigned write_fail_n;
	int sync_err;
	unsigned sync_fail_n;
	unsigned sync_delay_ms;    /* each sync takes this long (set before any thread runs) */
	/* Called at the start of each sync (and of a write's that syncs itself), without the disk's
	 * lock. */
	void (*sync_hook)(struct fake_disk *d, void *arg);
	void *sync_hook_arg;
	/* Called inside each write, without the disk's lock: before its bytes land, or after
	 * (hook_after) when the write is still to return. */
	void (*write_hook)(struct fake_disk *d, uint64_t off, uint64_t len, void *arg);
	void *hook_arg;
	bool hook_after;
	/* Each write takes this long, and how many were under way at once at most (set the delay
	 * before any thread runs). */
	unsigned write_delay_us;
	unsigned writing, max_writing;
	/* ops.spawn: off unless set (the cache then does its work alone); on, each helper is a
	 * thread of its own, joined by fake_disk_fini(). */
	bool spawn;
	unsigned spawned;
	/* ops.hole answers from `has` when set (as SEEK_DATA would); off, every block is data. */
	bool holes;
	pthread_t helpers[FAKE_HELPERS_MAX];
};

extern const struct bcache_ops fake_ops;

void fake_disk_init(struct fake_disk *d, uint32_t align);
void fake_disk_fini(struct fake_disk *d);
/* Put len bytes at off directly (a file that existed before), not counted as a write. */
void fake_disk_put(struct fake_disk *d, uint64_t off, const void *buf, uint64_t len);
void fake_fail_writes(struct fake_disk *d, int err, unsigned n);
void fake_fail_syncs(struct fake_disk *d, int err, unsigned n);
/* How many logged writes touched [off, off + len). */
unsigned fake_writes_over(struct fake_disk *d, uint64_t off, uint64_t len);

#endif
