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

/* Procedure handlers: (request, decoded args, result to fill). */
#define NFS3_HANDLER(name) void nfs3_##name(struct svc_call *rq, void *argp, void *resp)
NFS3_HANDLER(null); NFS3_HANDLER(getattr); NFS3_HANDLER(setattr); NFS3_HANDLER(lookup);
NFS3_HANDLER(access); NFS3_HANDLER(readlink); NFS3_HANDLER(read); NFS3_HANDLER(write);
NFS3_HANDLER(create); NFS3_HANDLER(mkdir); NFS3_HANDLER(symlink); NFS3_HANDLER(mknod);
NFS3_HANDLER(remove); NFS3_HANDLER(rmdir); NFS3_HANDLER(rename); NFS3_HANDLER(link);
NFS3_HANDLER(readdir); NFS3_HANDLER(readdirplus); NFS3_HANDLER(fsstat); NFS3_HANDLER(fsinfo);
NFS3_HANDLER(pathconf); NFS3_HANDLER(commit);

#endif
