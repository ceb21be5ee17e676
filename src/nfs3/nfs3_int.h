/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the NFSv3 procedure handlers share. Each handler decodes nothing and encodes nothing: the
 * dispatcher hands it decoded arguments and encodes the result it fills (as knfsd's nfs3proc.c). */
#ifndef NFSD_UC_NFS3_NFS3_INT_H
#define NFSD_UC_NFS3_NFS3_INT_H

#include <sys/stat.h>

#include <rpc/rpc.h>
#include "fs/fs.h"
#include "nfs3/nfs3.h"
#include "svc/dispatch.h"
#include "xdr/nfs3_prot.h"

/* -errno, or fs/fs.h's own, -> nfsstat3 (RFC 1813 section 2.6). */
nfsstat3 nfs3_errno(int err);

/* Resolve a handle for this request (fs_fh_get: the handle, the client's right to the export,
 * the credential squashed per the export's rule and taken). */
nfsstat3 nfs3_fh_get(struct svc_call *rq, const nfs_fh3 *fh, struct fh_obj *out);
/* Whether this client may modify the export (rw rule); ROFS otherwise. */
bool nfs3_writable(const struct svc_call *rq);
/* A name a client may create or look up: not empty, no '/', at most NAME_MAX bytes. */
nfsstat3 nfs3_check_name(const char *name);

/* Attributes as the client must see them (fs_getattr: size includes bytes still cached). */
void nfs3_fattr(const struct svc_call *rq, const struct statx *st, fattr3 *out);
void nfs3_post_op_attr(struct svc_call *rq, const struct fh_obj *o, post_op_attr *out);
/* post_op_attr from attributes the call already holds (no second statx). */
void nfs3_post_op_from(const struct svc_call *rq, const struct statx *st, post_op_attr *out);
void nfs3_pre_op_attr(const struct statx *st, pre_op_attr *out);
/* wcc_data: before (may be NULL: no pre-op attributes) and fresh post-op attributes of o (NULL:
 * none). */
void nfs3_wcc(struct svc_call *rq, const struct statx *before, const struct fh_obj *o,
	      wcc_data *out);
/* post_op_fh3 + post_op_attr of dir/name, as CREATE, MKDIR, SYMLINK, MKNOD and LOOKUP return. */
nfsstat3 nfs3_new_obj(struct svc_call *rq, const struct fh_obj *dir, const char *name,
		      post_op_fh3 *fh, post_op_attr *attr);
/* Put a composed handle into an nfs_fh3 (bytes live in the request arena). */
void nfs3_fh_out(struct svc_call *rq, const struct fh *fh, nfs_fh3 *out);
/* sattr3 as the file-system layer takes it. */
void nfs3_sattr(const sattr3 *in, struct fs_sattr *out);

/* The cookie verifier of a directory: changes whenever the directory does (from its mtime/ctime). */
void nfs3_cookieverf(const struct statx *dir, cookieverf3 out);

/* The procedures' handlers, the table's (nfs3proc.c): the request, its decoded arguments, the
 * result to fill. Single objects and the file system: nfs3proc.c. */
void nfs3_null(struct svc_call *rq, void *argp, void *resp);
void nfs3_getattr(struct svc_call *rq, void *argp, void *resp);
void nfs3_setattr(struct svc_call *rq, void *argp, void *resp);
void nfs3_lookup(struct svc_call *rq, void *argp, void *resp);
void nfs3_access(struct svc_call *rq, void *argp, void *resp);
void nfs3_readlink(struct svc_call *rq, void *argp, void *resp);
void nfs3_read(struct svc_call *rq, void *argp, void *resp);
void nfs3_write(struct svc_call *rq, void *argp, void *resp);
void nfs3_commit(struct svc_call *rq, void *argp, void *resp);
void nfs3_fsstat(struct svc_call *rq, void *argp, void *resp);
void nfs3_fsinfo(struct svc_call *rq, void *argp, void *resp);
void nfs3_pathconf(struct svc_call *rq, void *argp, void *resp);
/* Directories' changes: nfs3dir.c. */
void nfs3_create(struct svc_call *rq, void *argp, void *resp);
void nfs3_mkdir(struct svc_call *rq, void *argp, void *resp);
void nfs3_symlink(struct svc_call *rq, void *argp, void *resp);
void nfs3_mknod(struct svc_call *rq, void *argp, void *resp);
void nfs3_remove(struct svc_call *rq, void *argp, void *resp);
void nfs3_rmdir(struct svc_call *rq, void *argp, void *resp);
void nfs3_rename(struct svc_call *rq, void *argp, void *resp);
void nfs3_link(struct svc_call *rq, void *argp, void *resp);
/* Listings: nfs3readdir.c. */
void nfs3_readdir(struct svc_call *rq, void *argp, void *resp);
void nfs3_readdirplus(struct svc_call *rq, void *argp, void *resp);

#endif
