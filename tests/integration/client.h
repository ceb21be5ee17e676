/* A synchronous client over libnfs's raw (procedure-level) async API: any NFSv3 or MOUNT v3
 * procedure can be called with arbitrary arguments and its decoded result inspected.
 *
 * One helper waits for any callback (nc_wait); the macros below queue a call with nc_cb as its
 * callback and wait. libnfs frees a decoded result when its callback returns, so nc_cb keeps a
 * private copy (re-encoded and decoded again with the same codec) that lives until
 * nc_release() or nc_close().
 */
#ifndef NFSD_UC_IT_CLIENT_H
#define NFSD_UC_IT_CLIENT_H

#include <stddef.h>
#include <stdint.h>
#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-mount.h>
#include <nfsc/libnfs-raw-nfs.h>

#include "harness.h"

struct nc_arena;

struct nc_call {
	int done;
	int status;              /* RPC_STATUS_* the callback saw */
	char err[256];           /* libnfs's words when status is not RPC_STATUS_SUCCESS */
	zdrproc_t codec;         /* result codec; NULL for procedures without results */
	void *res;
	size_t res_size;
	struct nc_arena **arenas;
};

struct nfsclient {
	struct rpc_context *rpc;
	struct nc_call call;     /* the one call in flight */
	struct nc_arena *arenas; /* memory of the results copied so far */
};

/* Connect to 127.0.0.1:port for program/version with AUTH_SYS uid/gid (gids: extra groups).
 * NULL on failure (reason on stderr). */
struct nfsclient *nc_connect(uint16_t port, int program, int version, int uid, int gid,
                             uint32_t ngids, const uint32_t *gids);
/* Same with AUTH_NONE. */
struct nfsclient *nc_connect_authnone(uint16_t port, int program, int version);
void nc_close(struct nfsclient *c);
/* Free every result copied so far (loops over many calls use it). */
void nc_release(struct nfsclient *c);

void nc_arm(struct nfsclient *c, zdrproc_t codec, void *res, size_t res_size);
void nc_cb(struct rpc_context *rpc, int status, void *data, void *private_data);
/* Wait (60 s at most) for the call queued with nc_cb: queued is the rpc_*_async return.
 * 0 when a reply was accepted (its result, if any, is in *res), -1 otherwise (c->call.err). */
int nc_wait(struct nfsclient *c, int queued);

#define NC_CODEC(fn) ((zdrproc_t)(void (*)(void))(fn))
/* fn(rpc, cb, arg, private) with a result decoded by codec into *resp */
#define NC_CALL(c, fn, argp, codec, resp) \
	(nc_arm((c), NC_CODEC(codec), (resp), sizeof(*(resp))), \
	 nc_wait((c), fn((c)->rpc, nc_cb, (argp), &(c)->call)))
/* fn(rpc, cb, private) with a result */
#define NC_CALL0(c, fn, codec, resp) \
	(nc_arm((c), NC_CODEC(codec), (resp), sizeof(*(resp))), \
	 nc_wait((c), fn((c)->rpc, nc_cb, &(c)->call)))
/* procedures without results: fn(rpc, cb, arg, private) and fn(rpc, cb, private) */
#define NC_VOID(c, fn, argp) \
	(nc_arm((c), NULL, NULL, 0), nc_wait((c), fn((c)->rpc, nc_cb, (argp), &(c)->call)))
#define NC_VOID0(c, fn) \
	(nc_arm((c), NULL, NULL, 0), nc_wait((c), fn((c)->rpc, nc_cb, &(c)->call)))

/* NFS3(c, getattr, GETATTR, &args, &res): rpc_nfs3_getattr_async decoded by zdr_GETATTR3res */
#define NFS3(c, lname, UNAME, argp, resp) \
	NC_CALL(c, rpc_nfs3_##lname##_async, argp, zdr_##UNAME##3res, resp)

/* The same, as an nfsstat3 (-1 when the call failed): for NFS_OK() / NFS_EXPECT(). */
#define NFS3_STATUS(c, lname, UNAME, argp, resp) \
	(NFS3(c, lname, UNAME, argp, resp) < 0 ? -1 : (int)(resp)->status)

/* ---- owned file handles ---- */
struct fh {
	u_int len;
	char data[NFS3_FHSIZE];
};
/* A view of f for arguments (points into f). */
nfs_fh3 fh3(struct fh *f);
void fh_copy(struct fh *to, const nfs_fh3 *from);
int fh_equal(const struct fh *a, const struct fh *b);

/* ---- conveniences over NFS3(): return the nfsstat3 (mountstat3 for nc_mnt), or -1 when the
 * call itself failed. Out-parameters may be NULL and are set on NFS3_OK only. ---- */
int nc_mnt(struct nfsclient *m, const char *path, struct fh *root);
int nc_getattr(struct nfsclient *c, struct fh *f, fattr3 *attr);
int nc_lookup(struct nfsclient *c, struct fh *dir, const char *name, struct fh *out, fattr3 *attr);
int nc_create(struct nfsclient *c, struct fh *dir, const char *name, uint32_t mode, struct fh *out);
int nc_mkdir(struct nfsclient *c, struct fh *dir, const char *name, uint32_t mode, struct fh *out);
int nc_remove(struct nfsclient *c, struct fh *dir, const char *name);
int nc_write(struct nfsclient *c, struct fh *f, uint64_t off, const void *data, uint32_t len,
             stable_how how, WRITE3resok *ok);
/* READ up to count bytes into buf; *got and *eof from the reply. */
int nc_read(struct nfsclient *c, struct fh *f, uint64_t off, uint32_t count, void *buf,
            uint32_t *got, int *eof);
int nc_commit(struct nfsclient *c, struct fh *f, uint64_t off, uint32_t count, char verf[8]);
int nc_setattr_mode(struct nfsclient *c, struct fh *f, uint32_t mode);

/* ---- what most tests start with ---- */
/* MNT export e (over the MOUNT port) and connect an NFS client as uid/gid; asserts. */
struct nfsclient *it_client(struct itest *t, enum it_export e, int uid, int gid, struct fh *root);
/* MKDIR name (mode 0777, made exact with SETATTR) under the root of export e; asserts. */
void it_workdir(struct nfsclient *c, struct fh *root, const char *name, struct fh *dir);

/* A fresh high-level libnfs client (nfs_mount by URL with nfsport/mountport) mounts the rw
 * export, writes, reads back and stats a file; and the daemon is still running. */
void it_assert_served(struct itest *t);

/* Assertions that name the nfsstat3 values (and libnfs's error when the call failed). */
void nc_check(struct nfsclient *c, int got, int want, const char *what, const char *file, int line);
#define NFS_EXPECT(c, want, expr) nc_check((c), (expr), (want), #expr, __FILE__, __LINE__)
#define NFS_OK(c, expr) nc_check((c), (expr), NFS3_OK, #expr, __FILE__, __LINE__)
const char *nc_status_name(int status);

#endif
