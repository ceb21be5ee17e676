/* SPDX-License-Identifier: GPL-2.0-or-later */
/* From a reassembled RPC record to an encoded reply (dispatch.c), as the connections and the
 * datagram sockets use it. */
#ifndef NFSD_UC_SVC_REPLY_H
#define NFSD_UC_SVC_REPLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

struct record_mem;
struct svc_gss;
struct worker;

/* An encoded reply, ready for the socket: hdr holds the record mark, the RPC reply header and the
 * encoded result; payload (if any) follows it, then pad zero bytes, then tail (a krb5i reply's
 * checksum, made over the payload where it lies: svc/gss_call.c). tail points into hdr's memory. */
struct reply {
	struct reply *next;
	uint8_t *hdr;
	size_t hdr_len;
	void *payload;
	size_t payload_len;
	const struct iovec *payload_iov;  /* instead of payload when set (owned by payload_mem) */
	int payload_iovcnt;
	void *payload_mem;
	void (*payload_free)(void *);
	size_t pad;
	const uint8_t *tail;
	size_t tail_len;
	size_t charged;       /* receive memory the sender gives back once it is sent (server.c) */
};

/* Handle one record, in the calling fiber of w's ring (the handler may suspend it while it
 * waits): *out is the reply to send, NULL when none is owed or memory ran out. local: our
 * address the call came to (NULL: not known); proto: IPPROTO_TCP or IPPROTO_UDP. */
void dispatch_record(struct worker *w, const struct sockaddr_storage *peer,
		     const struct sockaddr_storage *local, int proto, struct record_mem *rm,
		     const uint8_t *rec, size_t len, struct reply **out);
void reply_free(struct reply *r);
/* r's payload (its pieces, or its one buffer) and its padding as iovecs at v, which has room for
 * REPLY_BODY_IOVS(r): how many were written. The socket, the datagram and krb5i's checksum and
 * krb5p's seal all take the body so, where it lies. */
#define REPLY_BODY_IOVS(r) ((size_t)((r)->payload_iov ? (r)->payload_iovcnt : 1) + 1)
int reply_body_iov(const struct reply *r, struct iovec *v);

/* What the receiver needs of a (partial) record before the call runs, from one look at its call
 * header: where an NFS WRITE's payload starts and which file offset it writes (so that it is
 * placed in memory at an address congruent to that offset), or an NFS READ's count (so that
 * the reply's memory is charged). Neither flag set: something else, or not decodable yet.
 * g: the server's RPCSEC_GSS (NULL: none), which deciphers a krb5p call's first bytes. */
struct dispatch_peek {
	bool write, read;
	size_t payload_idx;
	uint64_t file_off;
	uint32_t read_count;
};
void dispatch_peek(struct svc_gss *g, const uint8_t *rec, size_t avail,
		   struct dispatch_peek *pk);

#endif
