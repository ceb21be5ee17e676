/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What fh.c (the handle cache) and fhio.c (a handle's descriptors for I/O) share: a cached
 * handle's entry, and the wire handle's layout. */
#ifndef NFSD_UC_FS_FH_INT_H
#define NFSD_UC_FS_FH_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "fs/fh.h"
#include "fs/fileio.h"

#define FH_VERSION 1
#define FH_HDR 10           /* version, length, fsid, handle type */
#define FH_MAC 8
#define FH_KMAX (FH_MAX - FH_HDR - FH_MAC)

struct fh_entry {
	struct fh_entry *hnext;             /* hash chain, by handle */
	struct fh_entry *inext;             /* hash chain, by inode (fh_forget) */
	struct fh_entry *lprev, *lnext;     /* LRU, most recent at head */
	struct fh fh;
	uint64_t hash;
	int fd;                             /* O_PATH, or O_RDONLY from a CREATE (fh_adopt) */
	int io_fd, dio_fd;                  /* lazily opened for READ/WRITE; -1 until then */
	struct bcache_file *bf;             /* boundary-cache handle (direct mode), lazily */
	unsigned pins;                      /* requests using it: not evicted meanwhile */
	bool gone;                          /* its file was removed while pinned: close at unpin */
	bool drop;                          /* doomed: its file is gone, its cached data goes unwritten */
	struct file_io fio;                 /* what bf's I/O uses: dio_fd */
	dev_t dev;
	uint64_t ino;
};

/* Linux 6.13: a handle that also names the parent, so that opening it gives a connected path;
 * its type carries these flags. */
#ifndef AT_HANDLE_CONNECTABLE
#define AT_HANDLE_CONNECTABLE 0x002
#endif
#ifndef FILEID_IS_CONNECTABLE
#define FILEID_IS_CONNECTABLE 0x10000
#define FILEID_IS_DIR 0x20000
#endif

struct fh_cache;
/* The process is out of descriptors (err EMFILE or ENFILE): close some of the ring's unused
 * entries. True when it closed any: worth opening again. On a fiber. */
bool fh_relieve(struct fh_cache *c, int err);

#endif
