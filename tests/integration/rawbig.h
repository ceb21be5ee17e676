/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Large records built by hand, for the receive path's tests: a WRITE whose payload does not fit
 * struct xb, sent whole, in fragments or only begun, with deadlines so that a server that stops
 * reading fails the test instead of hanging it. */
#ifndef NFSD_UC_IT_RAWBIG_H
#define NFSD_UC_IT_RAWBIG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rawnfs.h"

/* The call and arguments of an UNSTABLE WRITE of len bytes at off, up to the payload's opaque
 * length (the payload follows them in the record), without a record mark. Its length. */
size_t rb_write_args(uint8_t *out, size_t cap, uint32_t xid, const struct rn_fh *fh, uint64_t off,
                     uint32_t len);
/* The same with the record mark of the whole record (args + len bytes) in front. */
size_t rb_write_head(uint8_t *out, size_t cap, uint32_t xid, const struct rn_fh *fh, uint64_t off,
                     uint32_t len);

/* Send all of p before the CLOCK_MONOTONIC deadline (ms from rb_now_ms()): 0, or -1 (timed out
 * or the connection failed). */
int rb_send_by(int fd, const void *p, size_t len, long long deadline_ms);
/* As much of p as the peer takes before the deadline: how many bytes that was. */
size_t rb_send_until(int fd, const void *p, size_t len, long long deadline_ms);
long long rb_now_ms(void);

/* A whole WRITE of len bytes of data (a record of one fragment) and its reply, within
 * timeout_ms: the NFS status, -2 when it did not come in time, -1 on a transport error. */
int rb_write(int fd, uint32_t xid, const struct rn_fh *fh, uint64_t off, const void *data,
             uint32_t len, int timeout_ms);
/* The reply to the WRITE xid of len bytes (sent by hand), within timeout_ms: as rb_write. */
int rb_write_reply(int fd, uint32_t xid, uint32_t len, int timeout_ms);

/* CPU time (user + system) the process has used, in clock ticks; -1 if unknown. */
long rb_cpu_ticks(pid_t pid);

#endif
