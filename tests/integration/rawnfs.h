/* SPDX-License-Identifier: GPL-2.0-or-later */
/* NFSv3 calls hand-encoded over rawrpc, for what libnfs's one-call-at-a-time API cannot do:
 * hundreds of calls pipelined on one connection, or two connections known to be consecutive
 * accepts (so they land on two different rings of the daemon). Each rn_enc_* writes a whole
 * call (header, AUTH_SYS root) into b; each rn_dec_* reads the procedure result of a reply. */
#ifndef NFSD_UC_IT_RAWNFS_H
#define NFSD_UC_IT_RAWNFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rawrpc.h"

struct rn_fh {
	uint32_t len;
	uint8_t data[64];
};

enum { RN_UNSTABLE = 0, RN_DATA_SYNC = 1, RN_FILE_SYNC = 2 };
enum { RN_UNCHECKED = 0, RN_GUARDED = 1 };   /* createmode3 (EXCLUSIVE needs a verifier) */

/* Calls (xid given by the caller). */
void rn_enc_mnt(struct xb *b, uint32_t xid, const char *path);
void rn_enc_create(struct xb *b, uint32_t xid, const struct rn_fh *dir, const char *name);
/* CREATE with mode how (RN_UNCHECKED, RN_GUARDED), nothing set. */
void rn_enc_create_how(struct xb *b, uint32_t xid, const struct rn_fh *dir, const char *name,
                       int how);
void rn_enc_write(struct xb *b, uint32_t xid, const struct rn_fh *fh, uint64_t off, const void *data,
                  uint32_t len, int stable);
void rn_enc_read(struct xb *b, uint32_t xid, const struct rn_fh *fh, uint64_t off, uint32_t count);
void rn_enc_getattr(struct xb *b, uint32_t xid, const struct rn_fh *fh);
/* The same calls as another user (AUTH_SYS uid/gid, no groups). */
void rn_enc_getattr_as(struct xb *b, uint32_t xid, const struct rn_fh *fh, uint32_t uid, uint32_t gid);
void rn_enc_lookup_as(struct xb *b, uint32_t xid, const struct rn_fh *dir, const char *name,
                      uint32_t uid, uint32_t gid);
void rn_enc_read_as(struct xb *b, uint32_t xid, const struct rn_fh *fh, uint64_t off, uint32_t count,
                    uint32_t uid, uint32_t gid);
void rn_enc_remove_as(struct xb *b, uint32_t xid, const struct rn_fh *dir, const char *name,
                      uint32_t uid, uint32_t gid);
void rn_enc_mnt_as(struct xb *b, uint32_t xid, const char *path, uint32_t uid, uint32_t gid);
void rn_enc_readdir(struct xb *b, uint32_t xid, const struct rn_fh *dir, uint32_t count);
void rn_enc_commit(struct xb *b, uint32_t xid, const struct rn_fh *fh, uint64_t off, uint32_t count);
void rn_enc_fsinfo(struct xb *b, uint32_t xid, const struct rn_fh *fh);

/* Results: the nfsstat3 (or MOUNT status), -1 when the reply is malformed. */
int rn_dec_mnt(const struct raw_reply *r, struct rn_fh *fh);
int rn_dec_create(const struct raw_reply *r, struct rn_fh *fh);
int rn_dec_lookup(const struct raw_reply *r, struct rn_fh *fh);
int rn_dec_write(const struct raw_reply *r, uint32_t *count, uint32_t *committed);
/* The same, and the write verifier (NFS3_OK only). */
int rn_dec_write_verf(const struct raw_reply *r, uint32_t *count, uint32_t *committed,
                      uint8_t verf[8]);
/* *data points into the reply. */
int rn_dec_read(const struct raw_reply *r, const uint8_t **data, uint32_t *count, bool *eof);
int rn_dec_getattr(const struct raw_reply *r, uint64_t *size);
/* GETATTR's owner: the attributes' uid and gid. */
int rn_dec_getattr_ids(const struct raw_reply *r, uint32_t *uid, uint32_t *gid);
int rn_dec_commit(const struct raw_reply *r);
int rn_dec_commit_verf(const struct raw_reply *r, uint8_t verf[8]);
/* FSINFO's largest READ and WRITE. */
int rn_dec_fsinfo(const struct raw_reply *r, uint32_t *rtmax, uint32_t *wtmax);
/* Just the status. */
int rn_dec_status(const struct raw_reply *r);

/* Send b and receive its reply into buf (cap bytes): 0 or -1. */
int rn_exchange(int fd, const struct xb *b, uint8_t *buf, size_t cap, struct raw_reply *r);

/* One call and its reply on fd: the status as above, -1 on a transport error. */
int rn_mnt(int fd, const char *path, struct rn_fh *fh);
int rn_create(int fd, const struct rn_fh *dir, const char *name, struct rn_fh *fh);
/* LOOKUP of dir/name as root: its NFS status (0: *fh set), -1 on a transport error. */
int rn_lookup(int fd, const struct rn_fh *dir, const char *name, struct rn_fh *fh);
/* WRITE of any length, sent as calls of at most 4 KiB one after the other. */
int rn_write(int fd, const struct rn_fh *fh, uint64_t off, const void *data, uint32_t len, int stable);
int rn_commit(int fd, const struct rn_fh *fh);
/* READ of len bytes at off into out (must all arrive). */
int rn_read(int fd, const struct rn_fh *fh, uint64_t off, void *out, uint32_t len);

/* The daemon's counter name (its private stats program), or UINT64_MAX if it has none
 * (rn_counter_must, harness.h, fails the test instead). */
uint64_t rn_counter(uint16_t port, const char *name);

#endif
