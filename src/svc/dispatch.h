/* SPDX-License-Identifier: GPL-2.0-or-later */
/* From a reassembled RPC record to an encoded reply: the programs' procedure tables, decode, handle,
 * encode, kept apart as in knfsd's nfsd_procedures3[]. */
#ifndef NFSD_UC_DISPATCH_H
#define NFSD_UC_DISPATCH_H

#include <rpc/rpc.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "nfsd.h"

/* rpcgen's codecs have the (XDR *, T *) shape but tirpc declares xdr_void(void): cast via void(*)(void). */
#define XDRPROC(f) ((xdrproc_t)(void (*)(void))(f))

typedef void (*proc_handler)(struct nfs_req *rq, void *args, void *res);

struct proc_desc {
	const char *name;
	xdrproc_t decode;         /* arguments (xdr_void for none) */
	void (*release)(void *args);  /* NULL: xdr_free(decode, args) */
	xdrproc_t encode;         /* result; pointers in it belong to the request arena */
	size_t args_size, res_size;
	proc_handler handler;
	bool cache_reply;         /* the duplicate request cache keeps its replies (drc.h) */
};

struct prog_desc {
	uint32_t prog, vers;
	const struct proc_desc *procs;
	size_t nprocs;
	/* NULL, or whether this daemon serves the program now (the lock manager and the portmapper
	 * can be off): when not, its calls get PROG_UNAVAIL. w may be NULL (tests). */
	bool (*serves)(const struct worker *w);
	bool tcp_only;            /* not over UDP (NFS itself, as knfsd's default; the stats): over
				   * UDP its calls get PROG_UNAVAIL */
};

extern const struct prog_desc nfs3_program, mount3_program, stats_program;
/* The lock manager (lock/nlmproc.c, lock/nsmproc.c) and the portmapper (pmap/pmapproc.c). */
extern const struct prog_desc nlm1_program, nlm3_program, nlm4_program, nsm1_program;
extern const struct prog_desc pmap2_program, rpcb3_program, rpcb4_program;

/* An encoded reply, ready for the socket: hdr holds the record mark, the RPC reply header and the
 * encoded result; payload (if any) follows it, then pad zero bytes. */
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
	size_t charged;       /* receive memory the sender gives back once it is sent (server.c) */
};

/* Handle one record, in the calling fiber (the handler may suspend it while it waits): *out is the
 * reply to send, NULL when none is owed or memory ran out. local: our address the call came to
 * (NULL: not known); proto: IPPROTO_TCP or IPPROTO_UDP, what it came over. */
void dispatch_record(struct worker *w, const struct sockaddr_storage *peer,
		     const struct sockaddr_storage *local, int proto, struct record_mem *rm,
		     const uint8_t *rec, size_t len, struct reply **out);
void reply_free(struct reply *r);

/* What the receiver needs of a (partial) record before the call runs, from one look at its call
 * header: where an NFS WRITE's payload starts and which file offset it writes (so that it is
 * placed in memory at an address congruent to that offset), or an NFS READ's count (so that
 * the reply's memory is charged). Neither flag set: something else, or not decodable yet. */
struct dispatch_peek {
	bool write, read;
	size_t payload_idx;
	uint64_t file_off;
	uint32_t read_count;
};
void dispatch_peek(const uint8_t *rec, size_t avail, struct dispatch_peek *pk);

#endif
