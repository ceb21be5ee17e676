/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What mkcorpus's sources share: a seed's buffer and how it is written, the placeholders of
 * fz_marks.h as the calls carry them, one call and the seeds it makes (mkcorpus.c), and each
 * program's generators, which mkcorpus.c's main() runs. */
#ifndef NFSD_UC_MKCORPUS_H
#define NFSD_UC_MKCORPUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <netinet/in.h>
#include <rpc/rpc.h>
#include <rpc/pmap_prot.h>
#include <rpc/rpcb_prot.h>

#include "fz_marks.h"
#include "xdr/mount3_prot.h"
#include "xdr/nfs3_prot.h"
#include "xdr/nlm_prot.h"
#include "xdr/nsm_prot.h"

#define STATS_PROGRAM 0x20004e55u   /* src/stats.h */
#define BUF_MAX (256 * 1024)

struct buf {
	uint8_t b[BUF_MAX];
	size_t n;
};

void put32(struct buf *b, uint32_t v);
void put_bytes(struct buf *b, const void *p, size_t n);
void put_xdr(struct buf *b, xdrproc_t f, void *obj);
/* The seed NAME of TARGET: OUTDIR/TARGET/NAME. */
void save(const char *target, const char *name, const struct buf *b);

/* ---- placeholders ---- */

/* The handle of object OBJ of export EXP, and a path in export EXP. */
nfs_fh3 fh(unsigned exp, unsigned obj);
char *path(unsigned exp, const char *suffix);

/* ---- calls ---- */

enum auth { AUTH_ROOT, AUTH_USER, AUTH_NOBODY_NONE, AUTH_MANY_GROUPS };

struct call {
	const char *name;
	uint32_t prog, vers, proc;
	enum auth auth;
	xdrproc_t enc;                /* NULL: no arguments */
	void *args;
};

/* Every target's seed from one call. */
void emit(const struct call *c);
/* Several calls: for dispatch one input of records in a row (record i over UDP when bit i of
 * udp is set, else TCP), for conn one stream, with every record cut in two fragments when split
 * is set. */
void emit_seq(const char *name, const struct call *cs, size_t n, bool split, uint32_t udp);

/* What WRITEs carry (mkcorpus.c's main fills it). */
extern char payload[65536];

/* ---- each program's generators, in the order main() runs them ---- */

/* mkcorpus_nfs.c */
void nfs3_calls(void);
void mount_calls(void);
/* mkcorpus_lock.c */
void lock_calls(void);
/* mkcorpus_pmap.c */
void pmap_calls(void);
/* mkcorpus_lock.c */
void lock_sequences(void);
/* mkcorpus_pmap.c */
void pmap_sequences(void);
/* mkcorpus_nfs.c */
void odd_headers(void);
/* mkcorpus_results.c */
void results(void);
/* mkcorpus_nfs.c */
void sequences(void);
/* mkcorpus_streams.c */
void recmark_streams(void);
void recmark_one_byte_frags(void);
void http_requests(void);

#endif
