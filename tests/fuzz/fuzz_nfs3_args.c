/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Every NFSv3 procedure's argument decoder, exactly as the server's table nfs3_procs[] (through
 * nfs3_program) gives it: decoder, argument size and release, the rpcgen codecs and the zero-copy
 * WRITE3args one (src/xdr/nfs3_zc.c). Also each procedure's result codec (the server encodes with
 * it), and the zero-copy READ3res encoder against rpcgen's.
 *
 * Input: byte 0 picks the codec (modulo 2 * nprocs + 1: the arguments of procedure b, the result
 * of procedure b - nprocs, the READ3res comparison), the rest is what it decodes. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lock/nlm.h"
#include "mount/mount.h"
#include "nfs3/nfs3.h"
#include "ops/stats.h"
#include "svc/dispatch.h"
#include "fz_xdr.h"
#include "xdr/nfs3_prot.h"
#include "xdr/nfs3_zc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* write3args_peek() (what the receiver uses to place a WRITE's payload) must agree with the
 * decoder: same offset, length and payload position when the decoder takes the arguments; a
 * failure on WRITE3ARGS_HDR_MAX bytes or more means the decoder fails too; what it finds on the
 * bytes up to the payload it finds on all of them. */
static void inspect_write(const void *obj, bool ok, size_t used, const uint8_t *buf, size_t len)
{
	const WRITE3args *a = obj;
	uint64_t off;
	uint32_t dlen;
	size_t at;
	(void)used;
	bool pk = write3args_peek(buf, len, &off, &dlen, &at);
	if (ok)
		FZ_XCHECK(pk && off == a->offset && dlen == a->data.data_len &&
			  buf + at == (const uint8_t *)a->data.data_val);
	if (!pk && len >= WRITE3ARGS_HDR_MAX)
		FZ_XCHECK(!ok);
	if (pk && at + ((size_t)dlen + 3) / 4 * 4 <= len)
		FZ_XCHECK(ok);
	if (pk) {
		uint64_t off2;
		uint32_t dlen2;
		size_t at2;
		FZ_XCHECK(write3args_peek(buf, at, &off2, &dlen2, &at2) && off2 == off && dlen2 == dlen &&
			  at2 == at);
		FZ_XCHECK(!write3args_peek(buf, at - 1, &off2, &dlen2, &at2));
	}
}

/* xdr_READ3res_zc writes what xdr_READ3res does, up to the data's length word; the server then
 * sends the data and xdr_zc_pad() zero bytes. */
static void inspect_read_res(const void *obj, bool ok, size_t used, const uint8_t *buf, size_t len)
{
	(void)buf, (void)len;
	if (!ok)
		return;
	READ3res r = *(const READ3res *)obj;
	uint8_t *zc = malloc(used + 4);
	FZ_XCHECK(zc);
	XDR x;
	xdrmem_create(&x, (char *)zc, (u_int)(used + 4), XDR_ENCODE);
	bool zok = xdr_READ3res_zc(&x, &r);
	size_t n = xdr_getpos(&x);
	xdr_destroy(&x);
	FZ_XCHECK(zok);     /* decoded data is within NFS3_MAXDATA: the zc bound is the same */
	if (r.status == NFS3_OK) {
		uint32_t dl = r.READ3res_u.resok.data.data_len;
		FZ_XCHECK(n + dl + xdr_zc_pad(dl) == used);
		if (dl)
			memcpy(zc + n, r.READ3res_u.resok.data.data_val, dl);
		memcpy(zc + n + dl, xdr_zc_zero_pad(), xdr_zc_pad(dl));
		n += dl + xdr_zc_pad(dl);
	}
	FZ_XCHECK(n == used);
	/* rpcgen's encoding of the same value, the reference */
	uint8_t *ref = malloc(used + 4);
	FZ_XCHECK(ref);
	xdrmem_create(&x, (char *)ref, (u_int)(used + 4), XDR_ENCODE);
	FZ_XCHECK(xdr_READ3res(&x, &r) && xdr_getpos(&x) == used);
	xdr_destroy(&x);
	FZ_XCHECK(memcmp(zc, ref, used) == 0);
	free(ref);
	free(zc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t np = nfs3_program.nprocs;
	size_t sel = data[0] % (2 * np + 1);
	uint8_t *buf = fz_copy(data + 1, size - 1);
	size_t len = size - 1;
	if (sel < np) {
		const struct proc_desc *pd = &nfs3_program.procs[sel];
		struct fz_codec c = {pd->name, pd->decode, pd->release, pd->args_size};
		fz_xdr_check(&c, buf, len, sel == NFSPROC3_WRITE ? inspect_write : NULL);
	} else if (sel < 2 * np) {
		const struct proc_desc *pd = &nfs3_program.procs[sel - np];
		/* READ's result codec is encode-only (zero copy): rpcgen's, for the round trip */
		struct fz_codec c = {pd->name, pd->encode, NULL, pd->res_size};
		if (sel - np == NFSPROC3_READ)
			c.codec = (xdrproc_t)xdr_READ3res;
		fz_xdr_check(&c, buf, len, NULL);
	} else {
		struct fz_codec c = {"READ3res", (xdrproc_t)xdr_READ3res, NULL, sizeof(READ3res)};
		fz_xdr_check(&c, buf, len, inspect_read_res);
	}
	free(buf);
	return 0;
}
