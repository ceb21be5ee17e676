/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The XDR checks the argument-decoder harnesses share. */
#ifndef NFSD_UC_FZ_XDR_H
#define NFSD_UC_FZ_XDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rpc/rpc.h>

struct fz_codec {
	const char *name;
	xdrproc_t codec;              /* decodes, encodes and frees (rpcgen's shape) */
	void (*release)(void *obj);   /* NULL: xdr_free(codec, obj) */
	size_t size;                  /* of the C type; 0: xdr_void */
};

/* Decode len bytes at buf (the caller's exact-size copy: ASan sees any read past it) into a
 * zeroed object, as dispatch.c's call_proc() does, and release it as call_free() does, whatever
 * the outcome: LeakSanitizer then finds what a partial decode leaves behind. A successful decode
 * must re-encode to no more bytes than it consumed (as many but for strings holding a NUL), and
 * decoding that encoding and encoding again must give the same bytes. inspect (may be NULL) sees the object before it is released. */
bool fz_xdr_check(const struct fz_codec *c, const uint8_t *buf, size_t len,
		  void (*inspect)(const void *obj, bool ok, size_t used, const uint8_t *buf, size_t len));

/* An exact-size copy of len bytes (malloc'd: aligned as the server's records are). */
uint8_t *fz_copy(const uint8_t *p, size_t len);

/* fuzz_mount_args's input: byte 0 picks the program (modulo FZ_ARGS_NPROG), byte 1 the codec
 * (FZ_ARGS_RESULT clear: procedure b's arguments; set: procedure b & 0x7f's result; modulo the
 * table's size), the rest is what it decodes. */
enum {
	FZ_ARGS_MOUNT3 = 0,
	FZ_ARGS_NLM1,
	FZ_ARGS_NLM3,
	FZ_ARGS_NLM4,
	FZ_ARGS_NSM1,
	FZ_ARGS_PMAP2,
	FZ_ARGS_RPCB3,
	FZ_ARGS_RPCB4,
	FZ_ARGS_NPROG,
};
#define FZ_ARGS_RESULT 0x80u

#define FZ_XCHECK(c) \
	do { if (!(c)) { fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #c); abort(); } } while (0)

#endif
