/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The file-system layer: the exports as served, file handles and each ring's cache of them,
 * credentials, file data through nfsd-uc's cache or the page cache, the write verifier.
 *
 * One struct fs per daemon. Each ring has its own part of it, a struct fs_chan (as SPDK's
 * channels: only that ring's thread touches it, but for what is marked atomic), made by
 * fs_new() and handed by the ring to every call it makes here. What the layer asks of the
 * rings (does another request run? a fiber of the ring's own, a wake-up) goes through struct
 * fs_ring_ops, which the rings' layer supplies: nothing here knows their structure. */
#ifndef NFSD_UC_FS_FS_H
#define NFSD_UC_FS_FS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "fs/exptable.h"
#include "fs/fh.h"
#include "fs/listcache.h"
#include "io/cosync.h"
#include "rpc/oncrpc.h"

struct arena;
struct bcache;
struct config;
struct fiber_sched;
struct fs;
struct fs_chan;
struct io_ring;
struct statfs;

/* A WRITE parked for its neighbour, listed on its ring while it waits: once no request runs
 * anywhere the ring kicks its wait (co_kick), so it needs no periodic look. */
struct fs_parked {
	struct co_kick kick;
	struct fs_parked *next, *prev;
};

/* What the layer asks of the rings. ring: the pointer the ring gave fs_chan_attach(). */
struct fs_ring_ops {
	/* Whether a request other than the caller's runs on any ring, parked ones not counted:
	 * one of them may be the WRITE a parked one waits for. */
	bool (*busy)(void *ring);
	/* When the latest request began on any ring (CLOCK_MONOTONIC ns). */
	uint64_t (*last_start)(void *ring);
	/* WRITEs parked on every ring now. */
	unsigned (*parked)(void *ring);
	/* The calling request stops (parking) or starts again (going on) being counted by busy. */
	void (*running)(void *ring, bool running);
	void (*park_begin)(void *ring, struct fs_parked *p);
	void (*park_end)(void *ring, struct fs_parked *p);
	/* fn(arg) in a new fiber of the ring, first run at its loop's next turn. 0 or -errno. */
	int (*spawn)(void *ring, void (*fn)(void *arg), void *arg);
	/* Wake the ring's loop from any thread (it then runs fs_chan_between()). */
	void (*wake)(void *ring);
};

struct fs_params {
	struct config *cfg;           /* its exports; read-only while the rings run */
	unsigned rings;               /* one fs_chan each */
	const struct fs_ring_ops *ops;
	const uint8_t *fh_key;        /* 16 bytes; NULL: state_dir/fh.key, made on first start */
	unsigned fh_cache_max;        /* handles per ring; 0: what RLIMIT_NOFILE has room for */
};

/* Open the exports, the cache, the blocking pool and the name resolver's threads. 0, or -1
 * with a log line (nothing left behind). */
int fs_new(const struct fs_params *p, struct fs **out);
/* After the rings ended: every handle closes (writing what the cache holds), the pools stop.
 * NULL is a no-op. */
void fs_free(struct fs *fs);
/* syncfs of every export's file system. 0, or -1 with a log line per failure. */
int fs_sync_exports(struct fs *fs);

/* SIGHUP, on the main thread: the exports of file again (fs/exptable.h). */
void fs_reload(struct fs *fs, const char *file, bool verbose);
/* A stop signal came while a reload waited: the daemon stops next. */
bool fs_stop_pending(const struct fs *fs);
size_t fs_nexports(const struct fs *fs);
/* fn(ctx, path) for each export in force now, from any thread (the metrics): under a lock a
 * reload takes only to put its new table in place, so fn must not block. */
void fs_exports_each(struct fs *fs, void (*fn)(void *ctx, const char *path), void *ctx);
/* A WRITE's payload is placed at an address congruent to its file offset modulo this. */
size_t fs_place_align(const struct fs *fs);
/* The cache, for its counters; and the stable WRITEs that completed a partial end block
 * without its neighbour (every fill read a stable WRITE causes is one of these). */
struct bcache *fs_cache(const struct fs *fs);
uint64_t fs_stable_alone(const struct fs *fs);
/* READDIRPLUS's listing cache (listcache.h), since the start: entries whose handle it had,
 * entries of an unchanged directory it had none for (looked up), handles filed. */
struct fs_list_stats {
	uint64_t hits, misses, filed;
};
void fs_list_stats(const struct fs *fs, struct fs_list_stats *out);

/* ---- a ring's part ---- */

struct fs_chan *fs_chan(struct fs *fs, unsigned ring);
/* On the main thread before the ring starts: its pointer for the ops, its io_uring and its
 * scheduler (messages from the main thread reach it there). */
void fs_chan_attach(struct fs_chan *ch, void *ring, struct io_ring *io, struct fiber_sched *sched);
/* On the ring's thread when it starts (ch) and ends (NULL): fs_chan_self() finds it. */
void fs_chan_bind(struct fs_chan *ch);
struct fs_chan *fs_chan_self(void);
/* The io_uring personality of the thread's current credentials: the ring's personality hook
 * (io_ring_set_personality_hook), so that every SQE a fiber submits runs as its caller. */
int fs_chan_personality(void *ch);
/* Between the ring's fibers: handles of deleted files let go, write-behind's end. Never waits. */
void fs_chan_between(struct fs_chan *ch);
/* The ring stops: write-behind fibers end once nothing is left to write. */
void fs_chan_stop(struct fs_chan *ch);
/* After the ring's loop, on its thread: its handles close, writing what the cache holds for
 * them through its ring. */
void fs_chan_end(struct fs_chan *ch);

/* The memory of a request's record. A WRITE that the cache keeps (write_mode = cached) lends it
 * the record instead of copying the payload: record_buf() turns the memory into a reference-
 * counted holder, which the request's end releases like any other reference. */
struct bcache_buf;
struct record_mem {
	void *mem;
	struct bcache_buf *hold;
};
struct bcache_buf *record_buf(struct record_mem *rm);
void record_mem_release(struct record_mem *rm);

/* ---- the verbs: one per operation, as knfsd's vfs.h ----
 *
 * A program's call uses the layer through a struct fs_call: the ring's channel, the caller's
 * credentials, the exports it began under and the handles it resolved. Every verb takes it and
 * acts as fc->cred (as sent, squashed by the rule of the export of the call's first handle):
 * the verb applies them to the ring's thread when they are not already, so the kernel checks
 * every access as it would for the user and every io_uring SQE carries them; opening a handle
 * runs as the server. Results are 0 (or a count) or -errno, and the three below, which have no
 * errno of their own (Linux's kernel-internal values). */
#define FS_EBADHANDLE 521         /* not a handle this server issued */
#define FS_EBADCOOKIE 523         /* a directory cookie that resumes no listing */
#define FS_ESERVERFAULT 526       /* the server's own failure (it could not take credentials) */

#define FS_CALL_PINS 4            /* handles one call may resolve */

struct fs_call {
	struct fs_chan *ch;           /* the calling ring's part; NULL: no file system (tests) */
	struct rpc_cred cred;         /* as sent; squashed when the first handle resolves */
	const struct sockaddr_storage *peer;   /* the client, for the exports' rules */
	struct arena *arena;          /* where its host name goes, if a rule asks for it */
	struct record_mem *rec;       /* the call's record, which a cached WRITE may keep */
	struct export_table *tbl;     /* the exports as they were when the call began */
	const struct export_rt *exp;  /* the export of the (first) handle resolved */
	const struct client_rule *rule;   /* its client's rule (MNT: set by fs_mount) */
	struct fh_entry *pins[FS_CALL_PINS];   /* resolved handles, open until the call ends */
	unsigned npins;
	/* Set by the program before its first handle: it does not hold calls to the rules' sec=
	 * unless they come with RPCSEC_GSS (NLM: clients lock with AUTH_SYS on krb5 mounts, and
	 * knfsd lets them). */
	bool sec_exempt;
	/* Set by GETATTR, FSINFO and FSSTAT: on an export's root, AUTH_SYS and AUTH_NONE pass the
	 * rule's sec= (RFC 2623 2.3.2; knfsd's NFSD_MAY_BYPASS_GSS_ON_ROOT), so that a client
	 * whose root has no Kerberos credential still mounts a krb5 export. */
	bool root_bypass;
	/* Set by fs_fh_get when it refused the call (-EACCES) because the rule's sec= does not
	 * list the call's flavor: the dispatcher answers AUTH_TOOWEAK instead of the handler's
	 * ACCES (issue 37; knfsd's NFSv3 leaves it NFS3ERR_ACCES). */
	bool wrongsec;
};

/* A call begins on ch (NULL: none) and ends: it holds the exports in force meanwhile. */
void fs_call_begin(struct fs_call *fc, struct fs_chan *ch, const struct rpc_cred *cred,
		   const struct sockaddr_storage *peer, struct arena *arena, struct record_mem *rec);
void fs_call_end(struct fs_call *fc);

/* Check and open a handle: the MAC, the export (-ESTALE when gone), the client's right to it
 * (-EACCES; a GSS call need not come from a privileged port), its flavor against the rule's
 * sec= (-EACCES and fc->wrongsec), subtree_check (-ESTALE outside), one export per call
 * (-EXDEV); then the call's credentials are squashed by that export's rule and taken.
 * -FS_EBADHANDLE: not ours. */
int fs_fh_get(struct fs_call *fc, const void *fh, size_t len, struct fh_obj *out);
/* The handle of dir/name (name "": dir itself), with its attributes; without following
 * symlinks, never past a mount point inside the export (-EACCES). fh->len is 0 when the object
 * exists but its handle could not be made. */
int fs_lookup(struct fs_call *fc, const struct fh_obj *dir, const char *name, struct statx *st,
	      struct fh *fh);
/* dir/name resolved as a handle of the call (for what is done to an object just made). */
int fs_open_at(struct fs_call *fc, const struct fh_obj *dir, const char *name, struct fh_obj *out);

/* Attributes as a client must see them: a regular file's size counts the bytes the cache holds;
 * -ESTALE once its last link is gone. */
int fs_getattr(struct fs_call *fc, const struct fh_obj *o, struct statx *st);
int fs_getattr_at(struct fs_call *fc, const struct fh_obj *dir, const char *name,
		  struct statx *st);
/* Type, inode and owner only: nothing of the cache is opened for the file (the lock manager). */
int fs_stat_plain(struct fs_call *fc, const struct fh_obj *o, struct statx *st);
/* access(2) of the object as the caller (R_OK, W_OK, X_OK): 0 or -errno. */
int fs_access(struct fs_call *fc, const struct fh_obj *o, int mode);
/* Whether the caller may read or write the object's data (mode R_OK or W_OK) as knfsd lets
 * it: root that was not squashed, anyone with the access, or the owner whatever the mode bits
 * say (a file created read-only, as "cp -a" makes them). 0 or -EACCES. */
int fs_permission(struct fs_call *fc, const struct fh_obj *o, const struct statx *st, int mode);

enum fs_time { FS_TIME_KEEP = 0, FS_TIME_NOW, FS_TIME_SET };
struct fs_sattr {
	bool set_mode, set_uid, set_gid, set_size;
	mode_t mode;
	uid_t uid;
	gid_t gid;
	uint64_t size;
	enum fs_time atime, mtime;
	struct timespec atime_set, mtime_set;
};
/* Size (through the cache; write access or ownership needed, -EFBIG past the export's bound),
 * then owner, mode and times. */
int fs_setattr(struct fs_call *fc, struct fh_obj *o, const struct fs_sattr *sa);
/* The symlink's target, at most size bytes, not terminated. Its length or -errno. */
long fs_readlink(struct fs_call *fc, const struct fh_obj *o, char *buf, size_t size);
int fs_statfs(struct fs_call *fc, const struct fh_obj *o, struct statfs *out);
/* The object's file system's link limit (fpathconf), 0 or less when unknown. */
long fs_link_max(struct fs_call *fc, const struct fh_obj *o);

/* What fs_create made: the new file's handle and attributes; fh.len 0 when they could not be
 * told without a lookup by name (fs_lookup). */
struct fs_new {
	struct fh fh;
	struct statx st;
};
/* A new regular file (O_EXCL: -EEXIST when the name is taken), with times when not NULL
 * (atime, mtime: an exclusive create's verifier; the file goes again if they cannot be set). */
int fs_create(struct fs_call *fc, const struct fh_obj *dir, const char *name, mode_t mode,
	      const struct timespec *times, struct fs_new *out);
int fs_mkdir(struct fs_call *fc, const struct fh_obj *dir, const char *name, mode_t mode);
int fs_symlink(struct fs_call *fc, const struct fh_obj *dir, const char *name,
	       const char *target);
int fs_mknod(struct fs_call *fc, const struct fh_obj *dir, const char *name, mode_t mode,
	     dev_t dev);
/* Remove dir/name (rmdir: a directory); once the inode's last link is gone, every ring lets go
 * of it and the cache drops what it held of it. */
int fs_remove(struct fs_call *fc, const struct fh_obj *dir, const char *name, bool rmdir);
/* The same for what a rename replaces. */
int fs_rename(struct fs_call *fc, const struct fh_obj *from, const char *fname,
	      const struct fh_obj *to, const char *tname);
int fs_link(struct fs_call *fc, const struct fh_obj *o, const struct fh_obj *dir,
	    const char *name);

/* A directory listing, a buffer of entries at a time (on the blocking pool). The struct is the
 * caller's (it holds that buffer). */
struct fs_dirent {
	const char *name;
	uint64_t ino;
	uint64_t cookie;              /* where the listing resumes after this entry */
};
struct plus_entry;
struct fs_dir {
	int fd;
	size_t len, pos;
	bool end;                     /* the directory has no more entries */
	unsigned delay_ms;            /* fault seam (NFSD_UC_FAULT_READDIR_DELAY_MS) */
	bool plus, is_root, connectable;
	int dirfd;                    /* the directory's O_PATH descriptor, for READDIRPLUS */
	const struct export_rt *exp;  /* the directory's export */
	struct plus_entry *pe;        /* READDIRPLUS: attributes and handle of each entry of buf */
	size_t npe, cur;              /* entries in pe; index of the entry last given */
	size_t room;                  /* READDIRPLUS: what is left of the reply (fs_dir_room) */
	size_t (*cost)(size_t namelen, size_t fh_len);
	size_t fh_guess;              /* the wire handle length of the last entry looked up */
	unsigned width;               /* pool threads the lookups may be spread over */
	bool wide;                    /* this buffer's lookups are (plus_fill_wide) */
	struct listcache *lc;         /* handles of entries listed lately (NULL: not for this fs) */
	struct lc_dir lcd;            /* the directory as this buffer's listing found it */
	bool lc_ok;                   /* lcd is settled: lc may be used (listcache.h) */
	_Alignas(8) char buf[16384];
};
/* Open dir for reading at cookie (0: the start; -FS_EBADCOOKIE). plus: each entry's attributes
 * and handle too. is_root: dir is its export's root, whose ".." is itself. */
int fs_dir_open(struct fs_call *fc, const struct fh_obj *dir, uint64_t cookie, bool plus,
		bool is_root, struct fs_dir *d);
/* READDIRPLUS: its reply has room bytes for entries, and an entry takes cost(the length of its
 * name, the length of its wire handle, or 0 when it has neither attributes nor handle) of them.
 * Entries past that room are not looked up (fs_dir_plus answers 2): a 16 KiB buffer of names
 * holds more entries than a 64 KiB reply, and each costs two system calls. Before the first
 * fs_dir_next. */
void fs_dir_room(struct fs_dir *d, size_t room, size_t (*cost)(size_t namelen, size_t fh_len));
/* The next entry: true, or false at the end (d->end) or on an error (*err, an errno). */
bool fs_dir_next(struct fs_call *fc, struct fs_dir *d, struct fs_dirent *e, int *err);
/* The attributes and handle of the entry fs_dir_next gave last (plus): 0 with *st and *fh set,
 * 1 when it is dir itself ("." and the root's ".."), 2 when it lies past the reply's room
 * (fs_dir_room), -1 when there are none (it vanished, or it is a mount point inside the
 * export). */
int fs_dir_plus(struct fs_call *fc, const struct fs_dir *d, const struct fh_obj *dir,
		const struct statx **st, struct fh *fh);
void fs_dir_close(struct fs_call *fc, struct fs_dir *d);

/* The data a READ hands to its reply, sent from where it lies: one buffer, or iovecs (cached
 * blocks); free(mem) once the reply has left. */
struct fs_payload {
	void *data;
	size_t len;
	const struct iovec *iov;      /* instead of data when set */
	int iovcnt;
	void *mem;
	void (*free)(void *mem);
};
#define FS_MAXIO (1024 * 1024)    /* the largest READ or WRITE, 1 MiB */
/* READ up to count bytes at off (size: the file's, from fs_getattr, which counts what a cached
 * file holds past the disk's end). *n, *eof, *out set. */
int fs_read(struct fs_call *fc, struct fh_obj *o, uint64_t off, uint32_t count, uint64_t size,
	    uint32_t *n, bool *eof, struct fs_payload *out);
enum fs_stable { FS_UNSTABLE = 0, FS_DATA_SYNC = 1, FS_FILE_SYNC = 2 };
/* WRITE count bytes at off, durable as stable says; may wait for the neighbour of a partial
 * block (fs/park.c). A failure that may have lost acknowledged data changes the verifier.
 * st: the file's attributes before the WRITE (fs_getattr's). *st_after is set when st
 * was brought to the attributes after it without asking the file system (the bytes only reached
 * the cache and the file's times did not move: its size is all that changed); else the caller
 * asks fs_getattr. */
int fs_write(struct fs_call *fc, struct fh_obj *o, uint64_t off, const void *data,
	     uint32_t count, enum fs_stable stable, struct statx *st, bool *st_after);
/* COMMIT [off, off + count) (count 0: to the end of the file). */
int fs_commit(struct fs_call *fc, struct fh_obj *o, uint64_t off, uint32_t count);
/* The write verifier as WRITE and COMMIT replies carry it. */
void fs_verifier(struct fs_call *fc, char out[8]);

/* MNT: the handle of path, an export or a directory below it, as the server (as rpc.mountd):
 * -ENOENT (no such export or directory), -EACCES (the client may not), -ENOTDIR,
 * -FS_ESERVERFAULT. *exp: the export, set once found; fc->rule: the client's rule, once
 * found, whose sec= MNT lists. The call's own flavor is not held to that list: Linux clients
 * call MNT with AUTH_SYS for every sec= and check the list themselves. */
int fs_mount(struct fs_call *fc, const char *path, struct fh *fh, const struct export_rt **exp);
/* The export holding path, of the exports the call began under; NULL: none. */
const struct export_rt *fs_export_of(struct fs_call *fc, const char *path);

/* The rest of the call acts as the server, until its next verb: a program's own work on a file
 * the caller was let at (the lock manager's lock, made on a reopened descriptor). 0 or
 * -FS_ESERVERFAULT. */
int fs_as_server(struct fs_call *fc);
/* fn(arg), which may block (the program's own state on disk, not an export's), on the blocking
 * pool as the server; the calling fiber waits, not its ring. fn's result. */
long fs_blocking(struct fs_call *fc, long (*fn)(void *arg), void *arg);

#endif
