/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The handles of the entries READDIRPLUS looked up lately, filed under the state of their
 * directory, so that a listing of a directory that has not changed since looks each entry up
 * with one system call (statx) rather than two (and name_to_handle_at).
 *
 * Why a handle found here is the entry's own: a name's inode changes only when the name is
 * removed, renamed or replaced, which moves its directory's ctime; the key holds that ctime,
 * and the listing takes it only from a directory whose ctime the clock has passed by more than
 * the file system's grain (listcache_settled: a change after the reading then shows), reads it
 * again once its entries are looked up, and trusts nothing it found (nor files anything) when
 * the two differ. A found handle must also be for the inode the entry's statx just named. */
#ifndef NFSD_UC_FS_LISTCACHE_H
#define NFSD_UC_FS_LISTCACHE_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <sys/stat.h>

#include "fs/fh.h"

struct listcache;

/* A directory as a listing read it before its entries: what their handles are filed under. */
struct lc_dir {
	uint64_t dev, ino;
	struct statx_timestamp ctime;
	bool connectable;         /* handles that also name the parent (fh_kernel_at) */
};

/* slots entries at most (rounded up to a power of two), their memory the kernel's until they
 * are filed; key keys the hash that files them. NULL without memory. */
struct listcache *listcache_new(const uint8_t key[16], unsigned slots);
void listcache_free(struct listcache *lc);
/* Has the clock (now, CLOCK_REALTIME) passed ctime by more than a change of the directory could
 * be stamped within (the kernel's clock tick, and the file system's grain: whole seconds where
 * ctime has no nanoseconds)? */
bool listcache_settled(const struct statx_timestamp *ctime, const struct timespec *now);
/* The handle filed for name in d, if it is for inode ino: true with *kh set. */
bool listcache_get(struct listcache *lc, const struct lc_dir *d, const char *name, uint64_t ino,
		   struct fh_kernel *kh);
/* File kh, the handle of name (inode ino) in d, over the least recently used of its set. */
void listcache_put(struct listcache *lc, const struct lc_dir *d, const char *name, uint64_t ino,
		   const struct fh_kernel *kh);

/* Since the start: handles found (hits), entries of a settled directory looked up because none
 * was filed for them (misses), handles filed. */
struct listcache_stats {
	uint64_t hits, misses, filed;
};
void listcache_stats(struct listcache *lc, struct listcache_stats *out);

#endif
