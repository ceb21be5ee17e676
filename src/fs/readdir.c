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
#include <unistd.h>

#include "fs/fh.h"
#include "fs/fs_int.h"
#include "io/ring.h"

/* What READDIRPLUS adds to one entry, found on the pool with the entries themselves. */
struct plus_entry {
	int rc;                  /* 0; PLUS_SELF, PLUS_PAST; -errno (none: vanished, off the export) */
	struct statx st;
	struct fh_kernel kh;
};
enum { PLUS_SELF = 1, PLUS_PAST = 2 };   /* as fs_dir_plus answers them */

/* Open the directory for reading at cookie. Through the descriptor's /proc link rather than
 * openat(fd, "."), because "." would also need search permission: READDIR needs only read. */
int fs_dir_open(struct fs_call *fc, const struct fh_obj *dir, uint64_t cookie, bool plus,
		bool is_root, struct fs_dir *d)
{
	char path[32];
	snprintf(path, sizeof path, "/proc/self/fd/%d", dir->fd);
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

/* Stat and name one entry. A mount point inside the export is left as a vanished entry is:
 * its handle would lead off the export's file system. */
static void plus_one(const struct fs_dir *c, const char *name, struct plus_entry *pe)
{
	if (strcmp(name, ".") == 0 || (c->is_root && strcmp(name, "..") == 0))
		pe->rc = PLUS_SELF;
	else if (statx(c->dirfd, name, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS | STATX_BTIME,
		       &pe->st) < 0)
		pe->rc = -errno;
	else if (fs_off_export(c->exp, &pe->st))
		pe->rc = -EXDEV;
	else
		pe->rc = fh_kernel_at(c->dirfd, name, c->connectable, &pe->kh);
}

/* Take an entry's share of the reply's room; once the room is gone, none is looked up. An entry
 * of the directory itself is charged as one without attributes: the charge may fall short of
 * what the reply spends, never exceed it, so no entry that fits goes without. */
static void plus_charge(struct fs_dir *c, const char *name, const struct plus_entry *pe)
{
	if (!c->cost)
		return;
	size_t cost = c->cost(strlen(name), pe->rc == 0 ? fh_sealed_len(&pe->kh) : 0);
	c->room = cost < c->room ? c->room - cost : 0;
}

/* Stat and name the entries of the buffer just read that the reply has room for, on the pool
 * thread that read them: one trip per 16 KiB of entries, not two per entry. */
static void plus_fill(struct fs_dir *c)
{
	size_t n = 0;
	for (size_t pos = 0; pos < c->len; n++)
		pos += ((const struct dirent64 *)(c->buf + pos))->d_reclen;
	struct plus_entry *pe = realloc(c->pe, (n ? n : 1) * sizeof *pe);
	if (!pe) {
		c->npe = 0;      /* every entry then goes without attributes and handle */
		return;
	}
	c->pe = pe;
	c->npe = n;
	size_t k = 0;
	for (size_t pos = 0; pos < c->len; k++) {
		const struct dirent64 *de = (const struct dirent64 *)(c->buf + pos);
		pos += de->d_reclen;
		if (c->room == 0) {
			pe[k].rc = PLUS_PAST;
			continue;
		}
		plus_one(c, de->d_name, &pe[k]);
		plus_charge(c, de->d_name, &pe[k]);
	}
}

static long do_getdents(void *arg)
{
	struct fs_dir *c = arg;
	if (c->delay_ms) {
		/* A slow or stuck file system, for the tests: wherever this runs, it blocks. */
		struct timespec ts = {(time_t)(c->delay_ms / 1000), (long)(c->delay_ms % 1000) * 1000000};
		nanosleep(&ts, NULL);
	}
	ssize_t n = getdents64(c->fd, c->buf, sizeof c->buf);
	if (n < 0)
		return -errno;
	c->len = (size_t)n;
	if (c->plus && n > 0)
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
		long n = fs_as_caller(fc) < 0 ? -FS_ESERVERFAULT : cred_offload(fc->ch, do_getdents, d);
		if (n <= 0) {
			if (n < 0)
				*err = (int)-n;
			else
				d->end = true;
			return false;
		}
		d->len = (size_t)n;
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
