/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The exports as served, as one table that a reload (SIGHUP) replaces whole. Each ring holds the
 * table it got last; a request takes its ring's table when it begins and keeps it until it ends.
 * The main thread builds a new table, hands it to every ring by message (a ring switches between
 * its fibers: nothing of it is read from another thread), and frees the old one once every ring
 * says its last request using the old one has ended. */
#ifndef NFSD_UC_FS_EXPTABLE_H
#define NFSD_UC_FS_EXPTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "conf/config.h"

struct fs;
struct fs_chan;

/* An export as served: its configuration plus what start-up learnt of its file system. */
struct export_rt {
	const struct export_cfg *cfg;
	int root_fd;              /* O_RDONLY of the export root: open_by_handle_at refuses O_PATH */
	dev_t dev;                /* st_dev of the root: lookups never leave it */
	uint64_t root_ino;
	size_t block;             /* boundary-cache block size (resolved "auto") */
	enum io_mode write_mode;  /* after the O_DIRECT probe (direct may fall back to dontcache) */
	enum io_mode read_mode;
	/* Paged-mode export (write_mode dontcache or buffered) of a file system that another
	 * export serves through nfsd-uc's cache: its calls first flush and drop what that cache
	 * holds of the file (write.c). */
	bool shares_cache;
	/* write_mode cached on a file system whose handles open for writes that keep mtime and
	 * ctime (nocmtime.h): write-behind writes through such a descriptor. */
	bool keeps_times;
	/* The file system keeps an extent size hint (XFS; ext4 drops it and moves the ctime):
	 * probed at start on a temporary file, asked for on a file's first WRITE. */
	bool extent_hints;
	/* The largest file size the export takes (FSINFO's maxfilesize): the file system's
	 * s_maxbytes as probed at start (exptable.c), at most RLIMIT_FSIZE, and for an export
	 * through the cache a whole number of blocks (the cache writes whole blocks). WRITE,
	 * SETATTR and COMMIT past it answer NFS3ERR_FBIG before any I/O. */
	uint64_t maxbytes;
	/* Some client rule has subtree_check: its handles are connectable (fh_kernel_at). */
	bool subtree_check;
	/* The file system moves a directory's ctime on every change of its entries, at a grain
	 * statx shows (XFS, ext4, btrfs, tmpfs): READDIRPLUS may take handles from the listing
	 * cache (listcache.h). */
	bool list_handles;
	bool owns_root;           /* its export table closes root_fd (exptable.c) */
};

struct export_table {
	struct config *cfg;           /* the exports' configuration (and the rest of its file) */
	bool owns_cfg;                /* a reload's, freed with the table (not the start-up one) */
	struct export_rt *exports;    /* cfg->nexports of them */
	size_t n;
	unsigned gen;
};

/* At start: the table of fs->cfg's exports (opened and probed). 0 or -errno (logged). */
int exptable_open(struct fs *fs);
/* At exit, once the rings are gone: the current table and any a reload could not free. */
void exptable_close_all(struct fs *fs);

/* SIGHUP, on the main thread: read file again; exports, client lists and log_level take effect,
 * the rest is logged as ignored until a restart. A file that does not load, or has no export,
 * changes nothing. verbose: -v was given (the log level stays debug). */
void exptable_reload(struct fs *fs, const char *file, bool verbose);

/* A ring: its request begins (the table it uses) or ends. */
struct export_table *exptable_get(struct fs_chan *ch);
void exptable_put(struct fs_chan *ch, struct export_table *t);

/* The export of t with this fsid (NULL: none, or no table). */
const struct export_rt *exptable_by_fsid(const struct export_table *t, uint32_t fsid);
/* The export of t holding path (the longest match), and path's remainder below its root in
 * *rest ("" for the root itself); NULL: none. */
const struct export_rt *exptable_for_path(const struct export_table *t, const char *path,
					  const char **rest);

#endif
