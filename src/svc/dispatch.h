/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What a program is to the dispatcher, and what its handlers get: a procedure table per program
 * version (decode, handler, encode, kept apart as in knfsd's nfsd_procedures3[]) and, for each
 * call, a struct svc_call. The programs include this, the file-system layer and xdr/, nothing of
 * the rings: a program is registered with its state by the daemon (svc/svc.h: dispatch_add). */
#ifndef NFSD_UC_SVC_DISPATCH_H
#define NFSD_UC_SVC_DISPATCH_H

#include <rpc/rpc.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "base/arena.h"
#include "fs/fs.h"
#include "rpc/oncrpc.h"

/* rpcgen's codecs have the (XDR *, T *) shape but tirpc declares xdr_void(void): cast via void(*)(void). */
#define XDRPROC(f) ((xdrproc_t)(void (*)(void))(f))

/* One RPC call being handled. */
struct svc_call {
	void *prog;                   /* the program's state, as registered with dispatch_add() */
	const struct rpc_call *call;
	struct sockaddr_storage peer;
	struct sockaddr_storage local;   /* the server's address the call came to (AF_UNSPEC: unknown) */
	int proto;                    /* IPPROTO_TCP or IPPROTO_UDP: what it came over */
	struct fs_call fs;            /* its use of the file system: credentials, exports, handles */
	struct arena arena;           /* what the result points to, freed once it is encoded */
	size_t reply_hint;            /* bytes the encoded result may need, when more than the default */
	struct fs_payload payload;    /* zero-copy tail of the reply (READ data) */
};

typedef void (*proc_handler)(struct svc_call *rq, void *args, void *res);

struct proc_desc {
	const char *name;
	xdrproc_t decode;         /* arguments (xdr_void for none) */
	void (*release)(void *args);  /* NULL: xdr_free(decode, args) */
	xdrproc_t encode;         /* result; pointers in it belong to the request arena */
	size_t args_size, res_size;
	proc_handler handler;
	bool cache_reply;         /* the duplicate request cache keeps its replies (rpc/drc.h) */
};

struct prog_desc {
	uint32_t prog, vers;
	const struct proc_desc *procs;
	size_t nprocs;
	bool tcp_only;            /* not over UDP (NFS itself, as knfsd's default; the stats): over
				   * UDP its calls get PROG_UNAVAIL */
	/* The status procedure proc's result (res) holds, for the metrics (svc_observer); -1:
	 * none. NULL: the program's results have none. */
	int64_t (*status)(uint32_t proc, const void *res);
};

#endif
