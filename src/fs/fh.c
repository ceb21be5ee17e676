/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Blocking calls here (io_uring has no equivalent): open_by_handle_at, name_to_handle_at; and at
 * start-up only, the key file's mkdir/open/read/write. All listed in docs/architecture.md. */
#include "fs/fh.h"
#include "fs/fh_int.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fdpath.h"
#include "cache/bcache.h"
#include "fs/cred.h"
#include "fs/exptable.h"
#include "fs/fileio.h"
#include "fs/fs_int.h"
#include "fs/verifier.h"
#include "io/fiber.h"
#include "io/ring.h"
#include "base/log.h"

#define FH_BUCKETS 4096
struct fh_cache {
	struct fs *fs;
	struct fh_entry *bucket[FH_BUCKETS];
	struct fh_entry *by_ino[FH_BUCKETS];
	struct fh_entry **by_fd;            /* O_PATH fd -> entry, for attribute requests by fd */
	unsigned nby_fd;
	struct fh_entry *lru_head, *lru_tail;
	struct fh_entry *doomed;            /* out of the cache, to be closed in a fiber (lnext chain) */
	unsigned n, max;
};

static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static uint32_t get32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }

static void mac(const uint8_t key[16], const uint8_t *data, size_t len, uint8_t out[FH_MAC])
{
	crypto_shorthash_siphash24(out, data, len, key);
}

int fh_load_key(const char *dir, uint8_t key[16])
{
	char path[4096];
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	snprintf(path, sizeof path, "%s/fh.key", dir);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = read(fd, key, 16);
		close(fd);
		return n == 16 ? 0 : -EINVAL;
	}
	if (errno != ENOENT)
		return -errno;
	/* First start: a fresh key, written and synced before any handle is issued under it. */
	randombytes_buf(key, 16);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	int rc = (write(fd, key, 16) == 16 && fsync(fd) == 0) ? 0 : -EIO;
	close(fd);
	return rc;
}

int fh_kernel_at(int dirfd, const char *name, bool connectable, struct fh_kernel *kh)
{
	int mount_id;
	int flags = name[0] ? 0 : AT_EMPTY_PATH;
	kh->h.handle_bytes = FH_KMAX;
	int rc = name_to_handle_at(dirfd, name, &kh->h, &mount_id,
				   flags | (connectable ? AT_HANDLE_CONNECTABLE : 0));
	/* A plain handle again: for an older kernel (EINVAL; so with AT_EMPTY_PATH too), and for
	 * a directory, which opens connected anyway and must keep one handle whichever way it
	 * was reached (MNT and LOOKUP "." give the plain one). */
	if ((rc < 0 && connectable && errno == EINVAL) ||
	    (rc == 0 && (kh->h.handle_type & FILEID_IS_DIR))) {
		kh->h.handle_bytes = FH_KMAX;
		rc = name_to_handle_at(dirfd, name, &kh->h, &mount_id, flags);
	}
	if (rc < 0)
		return errno == EOVERFLOW ? -ENAMETOOLONG : -errno;
	return 0;
}

struct to_handle {
	int dirfd;
	const char *name;
	bool connectable;
	struct fh_kernel *kh;
};

static long do_name_to_handle(void *arg)
{
	struct to_handle *a = arg;
	return fh_kernel_at(a->dirfd, a->name, a->connectable, a->kh);
}

int fh_compose(struct fs_chan *ch, const struct export_rt *exp, int dirfd, const char *name,
	       struct fh *out)
{
	struct fh_kernel kh;
	struct to_handle a = {dirfd, name, exp->subtree_check, &kh};
	long rc = cred_offload(ch, do_name_to_handle, &a);
	if (rc < 0)
		return (int)rc;
	fh_seal(ch->fs, exp, &kh, out);
	return 0;
}

void fh_seal(const struct fs *fs, const struct export_rt *exp, const struct fh_kernel *kh,
	     struct fh *out)
{
	uint8_t *p = out->data;
	p[0] = FH_VERSION;
	p[1] = (uint8_t)kh->h.handle_bytes;
	put32(p + 2, exp->cfg->fsid);
	put32(p + 6, (uint32_t)kh->h.handle_type);
	memcpy(p + FH_HDR, kh->h.f_handle, kh->h.handle_bytes);
	size_t n = FH_HDR + kh->h.handle_bytes;
	mac(fs->fh_key, p, n, p + n);
	out->len = (uint32_t)fh_sealed_len(kh);
}

size_t fh_sealed_len(const struct fh_kernel *kh)
{
	return FH_HDR + kh->h.handle_bytes + FH_MAC;
}

/* ---- cache ---- */

struct fh_cache *fh_cache_new(struct fs *fs, unsigned max_entries)
{
	struct fh_cache *c = calloc(1, sizeof *c);
	if (c) {
		c->fs = fs;
		c->max = max_entries ? max_entries : 1;
	}
	return c;
}

static void entry_close(struct fh_cache *c, struct fh_entry *e, bool gone)
{
	if (e->bf) {
		if (gone)
			bcache_file_drop(e->bf);
		/* The last handle of an inode writes what is still cached; if that fails, clients must
		 * learn through the verifier that their unstable data did not make it. */
		if (bcache_file_close(e->bf) < 0) {
			log_err("writing cached blocks of inode %llu failed: write verifier changed",
				(unsigned long long)e->ino);
			fs_rotate_verf(c->fs);
		}
	}
	if ((unsigned)e->fd < c->nby_fd)
		c->by_fd[e->fd] = NULL;
	close(e->fd);
	if (e->io_fd >= 0)
		close(e->io_fd);
	if (e->dio_fd >= 0)
		close(e->dio_fd);
	if (e->fio.fd_set && e->fio.wfd != e->fio.fd)
		close(e->fio.wfd);
	if (e->fio.fd_set && e->fio.tfd >= 0 && e->fio.tfd != e->io_fd)
		close(e->fio.tfd);
	if (gone)
		atomic_store(&c->fs->deleted_closed_ns, fiber_now_ns());
	free(e);
}

static void lru_unlink(struct fh_cache *c, struct fh_entry *e)
{
	if (e->lprev) e->lprev->lnext = e->lnext; else c->lru_head = e->lnext;
	if (e->lnext) e->lnext->lprev = e->lprev; else c->lru_tail = e->lprev;
	e->lprev = e->lnext = NULL;
}

static void lru_push(struct fh_cache *c, struct fh_entry *e)
{
	e->lnext = c->lru_head;
	e->lprev = NULL;
	if (c->lru_head) c->lru_head->lprev = e; else c->lru_tail = e;
	c->lru_head = e;
}

/* Out of every index of the cache, so that nobody finds it any more; not closed yet. */
static void cache_unlink(struct fh_cache *c, struct fh_entry *e)
{
	struct fh_entry **pp = &c->bucket[e->hash % FH_BUCKETS];
	while (*pp != e)
		pp = &(*pp)->hnext;
	*pp = e->hnext;
	for (pp = &c->by_ino[e->ino % FH_BUCKETS]; *pp != e;)
		pp = &(*pp)->inext;
	*pp = e->inext;
	lru_unlink(c, e);
	c->n--;
}

/* Closing may wait (for the file's cache lock, for its last writes): on a fiber only. */
static void cache_remove(struct fh_cache *c, struct fh_entry *e, bool gone)
{
	cache_unlink(c, e);
	entry_close(c, e, gone);
}

/* Closed later by fh_close_doomed. The sweeps run between the ring's fibers, where nothing may
 * wait (a fiber of this very ring may hold the file's cache lock), and walk chains that a close
 * could change under them while it waits. */
static void doom(struct fh_cache *c, struct fh_entry *e)
{
	cache_unlink(c, e);
	e->drop = true;
	e->lnext = c->doomed;
	c->doomed = e;
}

bool fh_doomed(struct fs_chan *ch)
{
	return ch->fhc->doomed != NULL;
}

static unsigned close_doomed(struct fh_cache *c)
{
	unsigned n = 0;

	/* Each is taken off the list before its close waits: others may doom more meanwhile. */
	for (struct fh_entry *e; (e = c->doomed); n++) {
		c->doomed = e->lnext;
		entry_close(c, e, e->drop);
	}
	return n;
}

unsigned fh_close_doomed(struct fs_chan *ch)
{
	return close_doomed(ch->fhc);
}

void fh_cache_free(struct fh_cache *c)
{
	if (!c)
		return;
	while (c->lru_head)
		cache_remove(c, c->lru_head, false);
	close_doomed(c);
	free(c->by_fd);
	free(c);
}

static struct fh_entry *cache_find(struct fh_cache *c, const uint8_t *data, size_t len, uint64_t hash)
{
	for (struct fh_entry *e = c->bucket[hash % FH_BUCKETS]; e; e = e->hnext)
		if (e->hash == hash && e->fh.len == len && memcmp(e->fh.data, data, len) == 0)
			return e;
	return NULL;
}

void fh_forget(struct fs_chan *ch, dev_t dev, uint64_t ino)
{
	struct fh_cache *c = ch->fhc;
	for (struct fh_entry *e = c->by_ino[ino % FH_BUCKETS], *next; e; e = next) {
		next = e->inext;
		if (e->dev != dev || e->ino != ino)
			continue;
		/* Only if it is really gone: the inode number may already belong to a new file, whose
		 * cached data must not be dropped. */
		struct stat sb;
		if (fstat(e->fd, &sb) == 0 && sb.st_nlink > 0)
			continue;
		if (e->pins)
			e->gone = true;   /* a request still uses it: its cached data goes at unpin */
		else
			doom(c, e);
	}
}

/* The least recently used entry no request holds; false when every entry is held. */
static bool evict_one(struct fh_cache *c)
{
	struct fh_entry *v = c->lru_tail;
	while (v && v->pins)
		v = v->lprev;
	if (v)
		cache_remove(c, v, false);
	return v != NULL;
}

/* The process is out of descriptors (EMFILE, ENFILE): the rings' caches hold most of them, so
 * this ring closes an eighth of its entries that no request holds, and keeps no more than it has
 * left from now on. True when it closed any: worth opening again. On a fiber (closing may write
 * a file's cached blocks). */
bool fh_relieve(struct fh_cache *c, int err)
{
	if (err != EMFILE && err != ENFILE)
		return false;
	unsigned want = c->n / 8 ? c->n / 8 : 1, closed = 0;
	while (closed < want && evict_one(c))
		closed++;
	if (c->n < c->max) {
		c->max = c->n > 16 ? c->n : 16;
		log_ratelimited(&c->fs->fh_log, LOG_WARNING, "out of file descriptors (%s): this "
				"ring keeps at most %u file handles open from now on", strerror(err),
				c->max);
	}
	return closed > 0;
}

static void entry_unpin(struct fh_cache *c, struct fh_entry *e)
{
	if (--e->pins == 0 && e->gone)
		cache_remove(c, e, true);
}

void fh_unpin_all(struct fs_call *fc)
{
	while (fc->npins)
		entry_unpin(fc->ch->fhc, fc->pins[--fc->npins]);
}

unsigned fh_sweep(struct fs_chan *ch)
{
	struct fh_cache *c = ch->fhc;
	unsigned n = 0;
	for (struct fh_entry *e = c->lru_head, *next; e; e = next) {
		next = e->lnext;
		struct stat sb;
		if (e->gone || fstat(e->fd, &sb) < 0 || sb.st_nlink > 0)
			continue;
		if (e->pins) {
			e->gone = true;   /* closed as its last request ends */
		} else {
			doom(c, e);
			n++;
		}
	}
	return n;
}

/* Check the layout and the MAC; *exp is the export the handle names. */
static enum fh_status fh_check(const struct fs *fs, const struct export_table *tbl,
			       const uint8_t *p, size_t len, const struct export_rt **exp)
{
	if (len < FH_HDR + FH_MAC || len > FH_MAX || p[0] != FH_VERSION || len != (size_t)FH_HDR + p[1] + FH_MAC)
		return FH_BADHANDLE;
	uint8_t want[FH_MAC];
	mac(fs->fh_key, p, len - FH_MAC, want);
	if (sodium_memcmp(want, p + len - FH_MAC, FH_MAC) != 0)
		return FH_BADHANDLE;
	*exp = exptable_by_fsid(tbl, get32(p + 2));
	return *exp ? FH_OK : FH_STALE;
}

struct by_handle {
	int root_fd;
	struct fh_kernel *kh;
};

static long do_open_by_handle(void *arg)
{
	struct by_handle *a = arg;
	int fd = open_by_handle_at(a->root_fd, &a->kh->h, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	return fd >= 0 ? fd : -errno;
}

static enum fh_status open_handle(struct fs_chan *ch, const struct export_rt *exp, const uint8_t *p,
				  int *fd, int *err)
{
	struct fh_kernel kh;
	kh.h.handle_bytes = p[1];
	kh.h.handle_type = (int)get32(p + 6);
	memcpy(kh.h.f_handle, p + FH_HDR, p[1]);
	cred_root(ch);   /* open_by_handle_at needs CAP_DAC_READ_SEARCH, which a user's fsuid drops */
	struct by_handle a = {exp->root_fd, &kh};
	long rc = cred_offload(ch, do_open_by_handle, &a);
	if (rc >= 0) {
		*fd = (int)rc;
		return FH_OK;
	}
	*err = (int)-rc;
	return (rc == -ESTALE || rc == -ENOENT) ? FH_STALE : FH_ERR;
}

/* Remember which entry owns an O_PATH fd (best effort: without the index, attributes simply do
 * not see cached bytes... so grow it, and only fail on ENOMEM). */
static void index_fd(struct fh_cache *c, struct fh_entry *e)
{
	if ((unsigned)e->fd >= c->nby_fd) {
		unsigned n = (unsigned)e->fd * 2 + 64;
		struct fh_entry **p = realloc(c->by_fd, n * sizeof *p);
		if (!p)
			return;
		memset(p + c->nby_fd, 0, (n - c->nby_fd) * sizeof *p);
		c->by_fd = p;
		c->nby_fd = n;
	}
	c->by_fd[e->fd] = e;
}

/* The entry of sealed handle p (len bytes; hash: its MAC) on fd, in the cache's indexes but not
 * in its LRU; NULL without memory (fd left to the caller). */
static struct fh_entry *entry_add(struct fh_cache *c, const uint8_t *p, size_t len, uint64_t hash,
				  int fd, dev_t dev, uint64_t ino)
{
	struct fh_entry *e = calloc(1, sizeof *e);
	if (!e)
		return NULL;
	*e = (struct fh_entry){.fd = fd, .io_fd = -1, .dio_fd = -1, .hash = hash, .dev = dev,
			       .ino = ino};
	e->fh.len = (uint32_t)len;
	memcpy(e->fh.data, p, len);
	e->hnext = c->bucket[hash % FH_BUCKETS];
	c->bucket[hash % FH_BUCKETS] = e;
	e->inext = c->by_ino[e->ino % FH_BUCKETS];
	c->by_ino[e->ino % FH_BUCKETS] = e;
	c->n++;
	index_fd(c, e);
	return e;
}

void fh_adopt(struct fs_chan *ch, const struct fh *fh, int fd, dev_t dev, uint64_t ino)
{
	struct fh_cache *c = ch->fhc;
	uint64_t hash;
	memcpy(&hash, fh->data + fh->len - FH_MAC, sizeof hash);
	struct fh_entry *e = NULL;
	if (cache_find(c, fh->data, fh->len, hash) ||
	    !(e = entry_add(c, fh->data, fh->len, hash, fd, dev, ino))) {
		close(fd);
		return;
	}
	lru_push(c, e);
	if (c->n > c->max)
		evict_one(c);
}

bool fh_obj_of_fd(struct fs_chan *ch, int fd, struct fh_obj *out)
{
	struct fh_cache *c = ch->fhc;
	if (fd < 0 || (unsigned)fd >= c->nby_fd || !c->by_fd[fd])
		return false;
	struct fh_entry *e = c->by_fd[fd];
	*out = (struct fh_obj){.fd = e->fd, .ent = e, .fh = e->fh};
	return true;
}

enum fh_status fh_resolve(struct fs_call *fc, const void *data, size_t len, struct fh_obj *out,
			  int *err)
{
	struct fs_chan *ch = fc->ch;
	if (fc->npins == FS_CALL_PINS) {
		*err = EINVAL;      /* no procedure resolves this many handles */
		return FH_ERR;
	}
	const uint8_t *p = data;
	const struct export_rt *exp = NULL;
	enum fh_status st = fh_check(ch->fs, fc->tbl, p, len, &exp);
	if (st != FH_OK)
		return st;
	uint64_t hash;
	memcpy(&hash, p + len - FH_MAC, sizeof hash);   /* the MAC is a keyed hash already */
	struct fh_cache *c = ch->fhc;
	struct fh_entry *e = cache_find(c, p, len, hash);
	if (!e) {
		int fd;
		st = open_handle(ch, exp, p, &fd, err);
		if (st == FH_ERR && fh_relieve(c, *err))
			st = open_handle(ch, exp, p, &fd, err);
		if (st != FH_OK)
			return st;
		struct stat sb;
		if (fstat(fd, &sb) < 0 || sb.st_dev != exp->dev) {
			close(fd);
			return FH_STALE;
		}
		/* Another fiber of the ring may have opened the same handle while we waited. */
		if ((e = cache_find(c, p, len, hash))) {
			close(fd);
			lru_unlink(c, e);
			goto found;
		}
		if (!(e = entry_add(c, p, len, hash, fd, sb.st_dev, sb.st_ino))) {
			close(fd);
			*err = ENOMEM;
			return FH_ERR;
		}
	} else {
		lru_unlink(c, e);
	}
found:
	lru_push(c, e);
	/* Pinned before anything can yield: eviction below may write a victim's cached blocks,
	 * and other fibers of the ring use the cache meanwhile. */
	e->pins++;
	fc->pins[fc->npins++] = e;
	if (c->n > c->max)
		evict_one(c);
	*out = (struct fh_obj){.fd = e->fd, .exp = exp, .ent = e, .fh = e->fh};
	return FH_OK;
}

/* subtree_check: where the handle's object is now, by its descriptor's path. A handle holds no
 * path, so a file moved out of the exported directory, or one reached by a handle through a bind
 * mount or another export of the file system, still opens; this says whether it lies under the
 * export root. Files get connectable handles (fh_kernel_at), so their path is the real one even
 * after the dentry cache forgot them; a file whose path is unknown (a disconnected dentry reads
 * as "/", from a handle made before subtree_check was on or by a kernel older than 6.13) counts
 * as outside, as knfsd's check fails for what it cannot reconnect. Memory only (d_path), in
 * place, at every use of the handle, as knfsd checks. */
static bool under(const char *path, const char *root)
{
	size_t n = strlen(root);
	if (n == 1)
		return path[0] == '/';
	return strncmp(path, root, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

bool fh_in_subtree(struct fh_obj *o)
{
	struct fd_path fp;
	char path[PATH_MAX];
	ssize_t n = readlink(fd_path(&fp, o->fd), path, sizeof path - 1);
	if (n <= 0)
		return false;
	path[n] = '\0';
	return under(path, o->exp->cfg->path);
}
