/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The NFSv3 procedure tests' working directory (nfs3_ctx.c): one per test under the rw export,
 * with a client and its handle, and its files read and written on disk directly. */
#ifndef NFSD_UC_IT_NFS3_CTX_H
#define NFSD_UC_IT_NFS3_CTX_H

#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

#include "checks.h"

/* Each test works in its own directory under the rw export. */
struct ctx {
	struct itest *t;
	struct nfsclient *c;
	struct fh root, dir;
	char path[PATH_MAX];      /* the directory on disk */
};

/* A client of the rw export and the test's own directory NAME in it (it_workdir). */
void ctx_open(void **state, const char *name, struct ctx *x);
/* On-disk path of name inside the test's directory. */
const char *disk(const struct ctx *x, const char *name);
/* Writes a file of the test's directory on disk. */
void put_file(const struct ctx *x, const char *name, const void *data, size_t len);
/* The file's LEN bytes at OFF on disk are WANT. */
void disk_expect(const struct ctx *x, const char *name, off_t off, const void *want, size_t len);

/* ---- the tests of test_nfs3_dirs.c, listed by test_nfs3.c ---- */

void test_create(void **state);
void test_mkdir(void **state);
void test_mknod(void **state);
void test_remove(void **state);
void test_rmdir(void **state);
void test_rename(void **state);
void test_link(void **state);
void test_readdir(void **state);
void test_readdirplus(void **state);

#endif
