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
};

struct prog_desc {
	uint32_t prog, vers;
	const struct proc_desc *procs;
	size_t nprocs;
};

extern const struct prog_desc nfs3_program, mount3_program, stats_program;

/* An encoded reply, ready for the socket: hdr holds the record mark, the RPC reply header and the
 * encoded result; payload (if any) follows it, then pad zero bytes. */
struct reply {
	struct reply *next;
	uint8_t *hdr;
	size_t hdr_len;
	void *payload;
	size_t payload_len;
	void *payload_mem;
	void (*payload_free)(void *);
	size_t pad;
};

/* Handle one record. Usually the call is done when this returns: *out is the reply to send (NULL
 * when none is owed, or memory ran out), and the result is NULL. A handler may park its call instead
 * (it set rq->resume: a stable WRITE waiting for the neighbour that completes its blocks); then the
 * parked call is returned, the record is no longer needed, and the worker resumes it later. */
struct call;
struct call *dispatch_record(struct worker *w, const struct sockaddr_storage *peer, const uint8_t *rec,
			     size_t len, struct reply **out);
/* Run a parked call's continuation on worker w (force: it may not wait any longer). true when the
 * call is done (*out is its reply; the call is freed), false when it parked again. */
bool dispatch_resume(struct worker *w, struct call *cl, bool force, struct reply **out);
void reply_free(struct reply *r);

/* Where the payload of an NFS WRITE in this (partial) record starts and which file offset it writes,
 * so the receiver can place it in memory at an address congruent to the file offset. */
bool dispatch_peek_write(const uint8_t *rec, size_t avail, size_t *payload_idx, uint64_t *file_off);

#endif
