/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What a reply must be, checked by the harnesses that run the server: a failed check prints what
 * is wrong and aborts, which libFuzzer reports as a crash with the input that caused it. */
#ifndef NFSD_UC_FZ_CHECK_H
#define NFSD_UC_FZ_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FZ_FAIL(...) fz_fail(__FILE__, __LINE__, __VA_ARGS__)
#define FZ_CHECK(cond, ...) do { if (!(cond)) FZ_FAIL(__VA_ARGS__); } while (0)
_Noreturn void fz_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Print every call and its outcome to stderr (fz_server.c sets it from FZ_TRACE). */
extern bool fz_trace;

/* A handle a reply handed out. */
struct fz_fh {
	uint32_t len;
	uint8_t data[64];
};

/* The reply rep (rlen bytes: record mark, RPC reply header, result, READ data and padding) to
 * the call record rec (len bytes, come over proto: IPPROTO_TCP or IPPROTO_UDP) must be one
 * record, with the call's xid, and the reply the header's verdict calls for (rpc_decode_call:
 * RPC_MISMATCH, AUTH_BADCRED/TOOWEAK, GARBAGE_ARGS, PROG_UNAVAIL, PROG_MISMATCH with the
 * program's lowest and highest version, PROC_UNAVAIL; the server serves NFS and its counters
 * over TCP only, MOUNT, NLM 1/3/4, NSM and the portmapper over both); an accepted
 * reply's result must decode (the client's decoder: rpcgen's, libtirpc's for the portmapper)
 * to exactly its length; NFSv3 and MOUNT statuses must be the protocol's, a READ must not return
 * more than asked; an NLM result echoes the call's cookie, with a status of its version and none
 * the procedure cannot give (BLOCKED but to a blocking LOCK); NSM's carry an odd state; the
 * portmapper's ports and universal addresses are well formed. Returns true and fills *fh when
 * the result carries a new handle (LOOKUP, CREATE, MKDIR, SYMLINK, MKNOD, MNT). rep NULL: there
 * must be no reply owed. replayed: the duplicate request cache answered (a call with the same
 * xid and key ran before), so the result is the earlier call's and is only held to its shape. */
bool fz_check_reply(const uint8_t *rec, size_t len, int proto, const uint8_t *rep, size_t rlen,
		    bool replayed, struct fz_fh *fh);

/* A reply read back from a connection, whose call is not known: one record, a REPLY, and a
 * well-formed accepted or denied body. rep starts at the record mark. */
void fz_check_reply_shape(const uint8_t *rep, size_t rlen);

#endif
