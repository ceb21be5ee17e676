/* SPDX-License-Identifier: GPL-2.0-or-later */
/* File handles: what they hold, how they are checked, and the per-worker cache of resolved ones.
 *
 * Wire layout (at most 64 bytes, opaque to clients):
 *   u8 version | u8 kernel handle length n | u32 fsid | i32 kernel handle type | n bytes | 8-byte MAC
 * The MAC is SipHash-2-4 under a key kept in state_dir, over everything before it: a handle the
 * server did not issue (forged, altered, from another server) fails the check and gets BADHANDLE,
 * never another file. The kernel handle (name_to_handle_at) survives a daemon restart. */
#ifndef NFSD_UC_FS_FH_H
#define NFSD_UC_FS_FH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <fcntl.h>
#include <sys/stat.h>

struct bcache_file;
struct export_rt;
struct fh_entry;
struct fs;
struct fs_call;
struct fs_chan;

#define FH_MAX 64

struct fh {
	uint32_t len;
	uint8_t data[FH_MAX];
};

/* A resolved handle. fd is owned by the cache (O_PATH, or a CREATE's O_RDONLY one): valid until
 * the request ends. */
struct fh_obj {
	int fd;
	const struct export_rt *exp;
	struct fh_entry *ent;
	struct fh fh;
};

enum fh_status { FH_OK = 0, FH_BADHANDLE, FH_STALE, FH_ERR };

/* Load the 16-byte key from state_dir/fh.key, creating dir and key on first start. */
int fh_load_key(const char *state_dir, uint8_t key[16]);

/* A kernel handle, as name_to_handle_at gives it (at most what a wire handle has room for). */
struct fh_kernel {
	struct file_handle h;
	unsigned char bytes[FH_MAX];
};
/* name_to_handle_at of dirfd/name, not following symlinks: a plain call on the calling thread,
 * for code already on the blocking pool (READDIRPLUS's batch). connectable: a handle that also
 * names the parent (exports with subtree_check), where the kernel has them. 0 or -errno. */
int fh_kernel_at(int dirfd, const char *name, bool connectable, struct fh_kernel *kh);
/* The wire handle of a kernel handle of exp's file system (version, fsid, MAC). */
void fh_seal(const struct fs *fs, const struct export_rt *exp, const struct fh_kernel *kh,
	     struct fh *out);
/* The length of the wire handle fh_seal makes of kh. */
size_t fh_sealed_len(const struct fh_kernel *kh);

/* The handle of dirfd/name (name "" with fd = the object itself), not following symlinks. */
int fh_compose(struct fs_chan *ch, const struct export_rt *exp, int dirfd, const char *name,
	       struct fh *out);

/* Check and open a handle (as root: open_by_handle_at needs CAP_DAC_READ_SEARCH). The entry is
 * pinned for the rest of the request (fh_unpin_all at its end): other fibers of the ring cannot
 * evict it meanwhile. On FH_ERR, *err holds the errno. */
enum fh_status fh_resolve(struct fs_call *fc, const void *data, size_t len, struct fh_obj *out,
			  int *err);
/* A CREATE's new file, open on fd (O_RDONLY: an O_PATH descriptor cannot create), of inode
 * (dev, ino), whose handle fh is: the cache takes fd, or closes it, so that the file's first
 * WRITE does not open it by handle again on the blocking pool. */
void fh_adopt(struct fs_chan *ch, const struct fh *fh, int fd, dev_t dev, uint64_t ino);
/* subtree_check: whether the object lies under its export's root now (fh.c says how). */
bool fh_in_subtree(struct fh_obj *o);
/* The request is over: release what fh_resolve pinned. */
void fh_unpin_all(struct fs_call *fc);

/* A descriptor for READ/WRITE on a regular file: opened once per handle as the server (access
 * is checked per request by the caller), O_DIRECT when direct is set. -errno on failure. */
int fh_io_fd(struct fs_chan *ch, struct fh_obj *o, bool direct);

/* The inode is gone (last link removed, or replaced by RENAME): its cached handles leave the
 * cache, to be closed, their cached data dropped unwritten, by fh_close_doomed (or at the unpin
 * of the last request using one). Entries whose file still has a link are left alone (the number
 * may have been reused already). Never waits: also run between the ring's fibers. */
void fh_forget(struct fs_chan *ch, dev_t dev, uint64_t ino);

/* The 1 MiB extent size hint on an empty file, asked once per handle by a WRITE, where the
 * export's file system keeps it; never from a reading call. true: set now, which moved the
 * file's ctime. */
bool fh_hint_extents(struct fs_chan *ch, struct fh_obj *o);
/* Set the hint on fd if the file is empty: 1 if the file system kept it, 0 if the file is not
 * empty or has one, -errno (-EOPNOTSUPP: taken and dropped, as ext4 does). */
int fh_set_extent_hint(int fd);
/* The boundary-cache handle of a regular file (direct mode), opened on first use with an O_DIRECT
 * descriptor. NULL with *err set on failure. */
struct bcache_file *fh_bcache(struct fs_chan *ch, struct fh_obj *o, uint32_t block, int *err);
/* The cache's handle on o's file if it has one open already, else NULL (opens nothing). */
struct bcache_file *fh_bcache_if_open(const struct fh_obj *o);
/* The per-handle state the data verbs keep for o's file (fs/fileio.h). */
struct file_io *fh_file_io(struct fh_obj *o);
/* The cached handle whose O_PATH descriptor is fd (exp is not set), if any. */
bool fh_obj_of_fd(struct fs_chan *ch, int fd, struct fh_obj *out);


/* Take out of the cache the handles of files that lost their last link behind our back (a local
 * rm, or a REMOVE through another worker), for fh_close_doomed; returns how many. Never waits. */
unsigned fh_sweep(struct fs_chan *ch);
/* Whether fh_forget or fh_sweep left handles to close. */
bool fh_doomed(struct fs_chan *ch);
/* Close them, so that their space is freed: on a fiber of the ring (a close waits for the file's
 * cache lock and writes). How many. */
unsigned fh_close_doomed(struct fs_chan *ch);

struct fh_cache *fh_cache_new(struct fs *fs, unsigned max_entries);
void fh_cache_free(struct fh_cache *c);

#endif
