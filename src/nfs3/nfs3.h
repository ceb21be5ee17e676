/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the NFSv3 procedure handlers share. Each handler decodes nothing and encodes nothing: the
 * dispatcher hands it decoded arguments and encodes the result it fills (as knfsd's nfs3proc.c). */
#ifndef NFSD_UC_NFS3_H
#define NFSD_UC_NFS3_H

#include <sys/stat.h>

#include "fs/fh.h"
#include <rpc/rpc.h>
#include "xdr/nfs3_prot.h"
#include "nfsd.h"

/* errno -> nfsstat3 (RFC 1813 section 2.6). */
nfsstat3 nfs3_errno(int err);

/* Resolve a handle for this request: checks the handle, the client's right to the export, squashes
 * the credential per the export's rule and switches the thread to it. */
nfsstat3 nfs3_fh_get(struct nfs_req *rq, const nfs_fh3 *fh, struct fh_obj *out);
/* Whether this client may modify the export (rw rule); ROFS otherwise. */
bool nfs3_writable(const struct nfs_req *rq);
/* A name a client may create or look up: not empty, no '/', at most NAME_MAX bytes. */
nfsstat3 nfs3_check_name(const char *name);

/* statx of an fd (AT_EMPTY_PATH) or of dirfd/name without following symlinks. 0 or -errno. */
int nfs3_stat(struct nfs_req *rq, int fd, struct statx *st);
int nfs3_stat_at(struct nfs_req *rq, int dirfd, const char *name, struct statx *st);
/* Attributes as the client must see them (size includes bytes still in the boundary cache). */
void nfs3_fattr(const struct nfs_req *rq, const struct statx *st, fattr3 *out);
void nfs3_post_op_attr(struct nfs_req *rq, int fd, post_op_attr *out);
void nfs3_pre_op_attr(const struct statx *st, pre_op_attr *out);
/* wcc_data: before (may be NULL: no pre-op attributes) and fresh post-op attributes of fd. */
void nfs3_wcc(struct nfs_req *rq, const struct statx *before, int fd, wcc_data *out);
/* Whether st, found by name inside exp, lies past a mount point: another file system, or the
 * root of a mount inside the export (a bind mount of a directory of the same device has the
 * export's st_dev). Not crossed, as knfsd without crossmnt; the export root itself may be a
 * mount root (a whole file system exported). */
bool nfs3_off_export(const struct export_rt *exp, const struct statx *st);
/* post_op_fh3 + post_op_attr of dirfd/name, as CREATE, MKDIR, SYMLINK, MKNOD and LOOKUP return. */
nfsstat3 nfs3_new_obj(struct nfs_req *rq, const struct export_rt *exp, int dirfd, const char *name,
		      post_op_fh3 *fh, post_op_attr *attr);
/* Put a composed handle into an nfs_fh3 (bytes live in the request arena). */
void nfs3_fh_out(struct nfs_req *rq, const struct fh *fh, nfs_fh3 *out);
/* Apply sattr3 to fd (O_PATH). 0 or -errno. */
int nfs3_setattr_fd(struct nfs_req *rq, struct fh_obj *o, const sattr3 *sa);

/* After REMOVE/RMDIR/RENAME: victim had these attributes before the call and no link is left now
 * (or it is replaced): forget its cached descriptors and boundary-cache entries. */
void nfs3_forget_inode(struct nfs_req *rq, const struct statx *victim);
/* The cookie verifier of a directory: changes whenever the directory does (from its mtime/ctime). */
void nfs3_cookieverf(const struct statx *dir, cookieverf3 out);

/* Procedure handlers: (request, decoded args, result to fill). */
#define NFS3_HANDLER(name) void nfs3_##name(struct nfs_req *rq, void *argp, void *resp)
NFS3_HANDLER(null); NFS3_HANDLER(getattr); NFS3_HANDLER(setattr); NFS3_HANDLER(lookup);
NFS3_HANDLER(access); NFS3_HANDLER(readlink); NFS3_HANDLER(read); NFS3_HANDLER(write);
NFS3_HANDLER(create); NFS3_HANDLER(mkdir); NFS3_HANDLER(symlink); NFS3_HANDLER(mknod);
NFS3_HANDLER(remove); NFS3_HANDLER(rmdir); NFS3_HANDLER(rename); NFS3_HANDLER(link);
NFS3_HANDLER(readdir); NFS3_HANDLER(readdirplus); NFS3_HANDLER(fsstat); NFS3_HANDLER(fsinfo);
NFS3_HANDLER(pathconf); NFS3_HANDLER(commit);

#endif
