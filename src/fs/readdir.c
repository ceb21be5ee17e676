/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Directory listings (the READDIR and READDIRPLUS verbs).
 *
 * The cookie of an entry is the d_off getdents64 gives it: the file system's own position of the
 * next entry, stable across calls on ext4 (hash), XFS, btrfs and tmpfs, so a listing resumes with
 * lseek(cookie) however many calls it takes.
 *
 * Blocking system calls made here because io_uring has no operation for them:
 *   - getdents64 (reading the entries), on the blocking pool
 *   - lseek      (resuming at a cookie), in place: memory only
 * plus, for READDIRPLUS, statx and name_to_handle_at of each entry its reply has room for, on
 * the pool with the buffer that read them. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "base/fdpath.h"
#include "fs/fh.h"
#include "fs/fs_int.h"
#include "fs/listcache.h"
#include "io/ring.h"

/* What READDIRPLUS adds to one entry, found on the pool with the entries themselves. */
struct plus_entry {
	int rc;                  /* 0; PLUS_SELF, PLUS_PAST; -errno (none: vanished, off the export) */
	bool listed;             /* kh came from the listing cache (listcache.h) */
	struct statx st;
	struct fh_kernel kh;
};
enum { PLUS_SELF = 1, PLUS_PAST = 2 };   /* as fs_dir_plus answers them */

/* A reply with room for this many bytes of entries (about 90 of short names) has its lookups
 * spread over the pool's threads (plus_fill_wide), in parts of at least WIDE_PART entries (each
 * costs a thread's wake-up), at most WIDE_MAX of them. */
#define WIDE_ROOM 16384
#define WIDE_PART 32
#define WIDE_MAX 4

/* Open the directory for reading at cookie. Through the descriptor's /proc link rather than
 * openat(fd, "."), because "." would also need search permission: READDIR needs only read. */
int fs_dir_open(struct fs_call *fc, const struct fh_obj *dir, uint64_t cookie, bool plus,
		bool is_root, struct fs_dir *d)
{
	struct fd_path fp;
	const char *path = fd_path(&fp, dir->fd);
	d->len = d->pos = 0;
	d->end = false;
	d->pe = NULL;
	d->npe = 0;
	d->delay_ms = fc->ch->fs->fault_readdir_delay_ms;
	d->plus = plus;
	d->is_root = is_root;
	d->connectable = dir->exp->subtree_check;
	d->dirfd = dir->fd;
	d->exp = dir->exp;
	d->room = SIZE_MAX;
	d->cost = NULL;
	d->fh_guess = dir->fh.len;
	d->lc = dir->exp->list_handles ? fc->ch->fs->listcache : NULL;
	unsigned width = cred_offload_width(fc->ch);
	d->width = width < WIDE_MAX ? width : WIDE_MAX;
	if (fs_as_caller(fc) < 0) {
		d->fd = -1;
		return -FS_ESERVERFAULT;
	}
	d->fd = io_openat(fc->ch->io, AT_FDCWD, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	if (d->fd < 0)
		return d->fd;
	if (cookie == 0)
		return 0;
	if (cookie <= INT64_MAX && lseek(d->fd, (off_t)cookie, SEEK_SET) >= 0)
		return 0;
	io_close(fc->ch->io, d->fd);
	d->fd = -1;
	return -FS_EBADCOOKIE;
}

void fs_dir_close(struct fs_call *fc, struct fs_dir *d)
{
	if (d->fd >= 0)
		io_close(fc->ch->io, d->fd);
	d->fd = -1;
	free(d->pe);
	d->pe = NULL;
	d->npe = 0;
}

void fs_dir_room(struct fs_dir *d, size_t room, size_t (*cost)(size_t namelen, size_t fh_len))
{
	d->room = room;
	d->cost = cost;
}

/* Stat and name one entry: its handle from the listing cache when the directory is as the
 * cache filed it. A mount point inside the export is left as a vanished entry is: its handle
 * would lead off the export's file system. */
static void plus_one(const struct fs_dir *c, const char *name, struct plus_entry *pe)
{
	pe->listed = false;
	if (strcmp(name, ".") == 0 || (c->is_root && strcmp(name, "..") == 0))
		pe->rc = PLUS_SELF;
	else if (statx(c->dirfd, name, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS | STATX_BTIME,
		       &pe->st) < 0)
		pe->rc = -errno;
	else if (fs_off_export(c->exp, &pe->st))
		pe->rc = -EXDEV;
	else if (c->lc_ok && listcache_get(c->lc, &c->lcd, name, pe->st.stx_ino, &pe->kh)) {
		pe->listed = true;
		pe->rc = 0;
	} else {
		pe->rc = fh_kernel_at(c->dirfd, name, c->connectable, &pe->kh);
	}
}

/* The directory's state for the listing cache, read before its entries: lc_ok when the cache
 * may be used. */
static void plus_dir_state(struct fs_dir *c)
{
	struct statx st;
	struct timespec now;
	c->lc_ok = false;
	if (!c->lc || statx(c->dirfd, "", AT_EMPTY_PATH, STATX_INO | STATX_CTIME, &st) < 0 ||
	    !(st.stx_mask & STATX_CTIME) || clock_gettime(CLOCK_REALTIME, &now) < 0)
		return;
	c->lcd = (struct lc_dir){.dev = makedev(st.stx_dev_major, st.stx_dev_minor),
				 .ino = st.stx_ino, .ctime = st.stx_ctime,
				 .connectable = c->connectable};
	c->lc_ok = listcache_settled(&st.stx_ctime, &now);
}

/* After entries [k, end) of the buffer (the first at byte pos) were looked up: if the
 * directory is as it was before, file the handles looked up afresh; if it changed meanwhile,
 * the ones the cache gave may be of a name since replaced: looked up again. */
static void plus_file(const struct fs_dir *c, size_t k, size_t end, size_t pos)
{
	struct statx st;
	if (!c->lc_ok)
		return;
	bool same = statx(c->dirfd, "", AT_EMPTY_PATH, STATX_CTIME, &st) == 0 &&
		    st.stx_ctime.tv_sec == c->lcd.ctime.tv_sec &&
		    st.stx_ctime.tv_nsec == c->lcd.ctime.tv_nsec;
	for (; k < end; k++) {
		const struct dirent64 *de = (const struct dirent64 *)(c->buf + pos);
		struct plus_entry *pe = &c->pe[k];
		pos += de->d_reclen;
		if (pe->rc != 0)
			continue;
		if (same && !pe->listed)
			listcache_put(c->lc, &c->lcd, de->d_name, pe->st.stx_ino, &pe->kh);
		else if (!same && pe->listed)
			pe->rc = fh_kernel_at(c->dirfd, de->d_name, c->connectable, &pe->kh);
	}
}

/* Take an entry's share of the reply's room; once the room is gone, none is looked up. An entry
 * of the directory itself is charged as one without attributes: the charge may fall short of
 * what the reply spends, never exceed it, so no entry that fits goes without. */
static void plus_charge(struct fs_dir *c, const char *name, const struct plus_entry *pe)
{
	if (!c->cost)
		return;
	size_t fh_len = pe->rc == 0 ? fh_sealed_len(&pe->kh) : 0;
	size_t cost = c->cost(strlen(name), fh_len);
	c->room = cost < c->room ? c->room - cost : 0;
	if (fh_len)
		c->fh_guess = fh_len;
}

static const struct dirent64 *entry_at(const struct fs_dir *c, size_t pos)
{
	return (const struct dirent64 *)(c->buf + pos);
}

/* Room in pe for every entry of the buffer just read; false without memory (every entry then
 * goes without attributes and handle). */
static bool plus_index(struct fs_dir *c)
{
	size_t n = 0;
	for (size_t pos = 0; pos < c->len; n++)
		pos += entry_at(c, pos)->d_reclen;
	struct plus_entry *pe = realloc(c->pe, (n ? n : 1) * sizeof *pe);
	if (!pe) {
		c->npe = 0;
		return false;
	}
	c->pe = pe;
	c->npe = n;
	return true;
}

/* Entries [k, end) of the buffer, the first at byte pos. */
struct plus_part {
	struct fs_dir *c;
	size_t k, end, pos;
	long rc;
};

/* Look up the part's entries in order while the reply has room, charging each; the rest PAST. */
static long plus_in_order(void *arg)
{
	struct plus_part *p = arg;
	for (size_t k = p->k, pos = p->pos; k < p->end; k++) {
		const struct dirent64 *de = entry_at(p->c, pos);
		pos += de->d_reclen;
		if (p->c->room == 0) {
			p->c->pe[k].rc = PLUS_PAST;
			continue;
		}
		plus_one(p->c, de->d_name, &p->c->pe[k]);
		plus_charge(p->c, de->d_name, &p->c->pe[k]);
	}
	plus_file(p->c, p->k, p->end, p->pos);
	return 0;
}

/* Look up every entry of the part, charging nothing (plus_fill_wide charges them in order). */
static long plus_any_order(void *arg)
{
	struct plus_part *p = arg;
	for (size_t k = p->k, pos = p->pos; k < p->end; k++) {
		const struct dirent64 *de = entry_at(p->c, pos);
		pos += de->d_reclen;
		plus_one(p->c, de->d_name, &p->c->pe[k]);
	}
	plus_file(p->c, p->k, p->end, p->pos);
	return 0;
}

/* Stat and name the entries of the buffer just read that the reply has room for, on the pool
 * thread that read them: one trip per 16 KiB of entries, not two per entry. */
static void plus_fill(struct fs_dir *c)
{
	if (!plus_index(c))
		return;
	struct plus_part all = {.c = c, .end = c->npe};
	plus_in_order(&all);
}

/* How many of the buffer's entries the reply may hold, each handle guessed as long as the last
 * one looked up (the directory's own at first), and a sixteenth more: the guess may fall short. */
static size_t plus_guess(const struct fs_dir *c)
{
	size_t k = 0, room = c->room;
	for (size_t pos = 0; pos < c->len && room; k++) {
		const struct dirent64 *de = entry_at(c, pos);
		size_t cost = c->cost(strlen(de->d_name), c->fh_guess);
		pos += de->d_reclen;
		room = cost < room ? room - cost : 0;
	}
	k += k / 16 + 2;
	return k < c->npe ? k : c->npe;
}

/* A part not looked up: past the room (rc PLUS_PAST), or one that could not be run as the
 * caller (-errno: its entries go without attributes and handle). */
static void plus_part_mark(const struct plus_part *p)
{
	for (size_t k = p->k; k < p->end; k++)
		p->c->pe[k].rc = (int)p->rc;
}

/* Cut entries [0, end) into n parts of about equal counts. */
static void plus_cut(struct fs_dir *c, size_t end, unsigned n, struct plus_part *parts)
{
	size_t k = 0, pos = 0;
	for (unsigned i = 0; i < n; i++) {
		parts[i] = (struct plus_part){.c = c, .k = k, .end = end * (i + 1) / n, .pos = pos};
		for (; k < parts[i].end; k++)
			pos += entry_at(c, pos)->d_reclen;
	}
}

/* Look up entries [0, end) side by side on n of the pool's threads, as the caller. */
static void plus_spread(struct fs_call *fc, struct fs_dir *c, size_t end, unsigned n)
{
	struct plus_part parts[WIDE_MAX];
	void *args[WIDE_MAX];
	long rcs[WIDE_MAX];
	plus_cut(c, end, n, parts);
	for (unsigned i = 0; i < n; i++)
		args[i] = &parts[i];
	cred_offload_all(fc->ch, n, plus_any_order, args, rcs);
	for (unsigned i = 0; i < n; i++) {
		parts[i].rc = rcs[i];
		if (rcs[i] < 0)
			plus_part_mark(&parts[i]);
	}
}

/* The lookups of a buffer side by side on the pool's threads: a listing is a chain of calls,
 * one at a time, and one thread took 5 us an entry (two system calls) while the client waited
 * for the whole reply. The parts reach as far as the reply may hold; the room is then charged
 * in order, here, and the entries the guess left out are looked up in order after. */
static void plus_fill_wide(struct fs_call *fc, struct fs_dir *c)
{
	if (!plus_index(c))
		return;
	size_t end = plus_guess(c), k = 0, pos = 0;
	unsigned n = end / WIDE_PART < c->width ? (unsigned)(end / WIDE_PART) : c->width;
	if (n < 2)
		end = 0;        /* too few to share: all in order, below */
	else
		plus_spread(fc, c, end, n);
	for (; k < end; k++) {
		const struct dirent64 *de = entry_at(c, pos);
		pos += de->d_reclen;
		if (c->room == 0)
			c->pe[k].rc = PLUS_PAST;
		else
			plus_charge(c, de->d_name, &c->pe[k]);
	}
	struct plus_part rest = {.c = c, .k = k, .end = c->npe, .pos = pos, .rc = PLUS_PAST};
	if (k < c->npe && c->room == 0)
		plus_part_mark(&rest);   /* past the room: none looked up */
	else if (k < c->npe && (rest.rc = cred_offload(fc->ch, plus_in_order, &rest)) < 0)
		plus_part_mark(&rest);
}

static long do_getdents(void *arg)
{
	struct fs_dir *c = arg;
	if (c->delay_ms) {
		/* A slow or stuck file system, for the tests: wherever this runs, it blocks. */
		struct timespec ts = {(time_t)(c->delay_ms / 1000), (long)(c->delay_ms % 1000) * 1000000};
		nanosleep(&ts, NULL);
	}
	if (c->plus)
		plus_dir_state(c);
	ssize_t n = getdents64(c->fd, c->buf, sizeof c->buf);
	if (n < 0)
		return -errno;
	c->len = (size_t)n;
	if (c->plus && n > 0 && !c->wide)
		plus_fill(c);
	return n;
}

/* Each buffer of entries is read on the blocking pool: a huge directory or a stuck file system
 * holds a pool thread, not the ring. */
bool fs_dir_next(struct fs_call *fc, struct fs_dir *d, struct fs_dirent *e, int *err)
{
	if (d->pos >= d->len) {
		if (d->end)
			return false;
		d->wide = d->plus && d->cost && d->width >= 2 && d->room >= WIDE_ROOM;
		long n = fs_as_caller(fc) < 0 ? -FS_ESERVERFAULT : cred_offload(fc->ch, do_getdents, d);
		if (n <= 0) {
			if (n < 0)
				*err = (int)-n;
			else
				d->end = true;
			return false;
		}
		d->len = (size_t)n;
		if (d->wide)
			plus_fill_wide(fc, d);
		d->pos = 0;
		d->cur = (size_t)-1;
	}
	const struct dirent64 *de = (const struct dirent64 *)(d->buf + d->pos);
	d->pos += de->d_reclen;
	d->cur++;
	*e = (struct fs_dirent){.name = de->d_name, .ino = de->d_ino, .cookie = (uint64_t)de->d_off};
	return true;
}

/* From the batch plus_fill made. An entry that vanished, or a mount point leading off the
 * export's file system, gets neither: the client LOOKUPs it if it cares. */
int fs_dir_plus(struct fs_call *fc, const struct fs_dir *d, const struct fh_obj *dir,
		const struct statx **st, struct fh *fh)
{
	if (d->cur >= d->npe)
		return -1;
	const struct plus_entry *pe = &d->pe[d->cur];
	if (pe->rc != 0)
		return pe->rc > 0 ? pe->rc : -1;
	fh_seal(fc->ch->fs, dir->exp, &pe->kh, fh);
	*st = &pe->st;
	return 0;
}
