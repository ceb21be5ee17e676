/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Zero-copy codecs for the two NFSv3 procedures that carry file data, WRITE (call) and READ
 * (reply). The rpcgen codecs copy opaque data into and out of malloc'd buffers; these leave the
 * payload where it lies, so the server can hand it to O_DIRECT I/O and to send() untouched.
 *
 * Everything else about these two procedures is as rpcgen generates it (nfs3_prot.h): the
 * union arm of a READ3res is r->READ3res_u.resok / r->READ3res_u.resfail. */
#ifndef NFSD_UC_NFS3_ZC_H
#define NFSD_UC_NFS3_ZC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rpc/rpc.h>

#include "xdr/nfs3_prot.h"

/* WRITE3args decoder that leaves a->data.data_val pointing INTO the decode buffer.
 *
 * Decode: only over an xdrmem stream (xdrmem_create); on any other stream it fails. *a is
 * cleared first, so it need not be initialised. The file handle is malloc'd as by
 * xdr_nfs_fh3; data_val is never allocated and stays valid only as long as the buffer given to
 * xdrmem_create. Rejected: a data length above NFS3_MAXDATA or longer than what remains in the
 * buffer (padding included), a file handle above NFS3_FHSIZE, a stable_how that is not one of
 * the three, and a->count other than a->data.data_len (RFC 1813 3.3.7 says they agree; knfsd
 * answers GARBAGE_ARGS when they do not). On failure nothing stays allocated. Release a
 * successful decode with write3args_zc_free.
 * Encode: as xdr_WRITE3args (copies data_len bytes from data_val into the stream).
 * Free: frees the file handle only, as write3args_zc_free. */
bool_t xdr_WRITE3args_zc(XDR *xdrs, WRITE3args *a);

/* Frees what xdr_WRITE3args_zc allocated (the file handle) and clears the data pointer, which
 * the buffer owns. Safe on a cleared struct and after a failed decode. */
void write3args_zc_free(WRITE3args *a);

/* Longest stretch of WRITE3args in front of the payload: file handle length word, largest
 * handle, offset, count, stable, data length word. */
#define WRITE3ARGS_HDR_MAX (4 + NFS3_FHSIZE + 8 + 4 + 4 + 4)

/* Reads, from the first avail bytes of a WRITE call's arguments (what follows the RPC call
 * header), the file offset of the write, the payload length and the payload's byte offset
 * from `args`, without decoding anything else and without needing the payload itself.
 * Returns false if the bytes up to the payload are not all there yet or are malformed (file
 * handle above NFS3_FHSIZE, data length above NFS3_MAXDATA or other than count, stable_how
 * outside the enum), the same cases in which
 * xdr_WRITE3args_zc would fail. When it fails with avail >= WRITE3ARGS_HDR_MAX the arguments
 * are malformed; below that it may only be that more bytes are needed. The server uses it to
 * receive the payload straight into an aligned buffer while the rest of the record arrives. */
/* A READ3args' count, from its encoded bytes. */
bool read3args_peek(const uint8_t *args, size_t avail, uint32_t *count);
bool write3args_peek(const uint8_t *args, size_t avail, uint64_t *file_off, uint32_t *data_len,
		     size_t *payload_off);

/* READ3res encoder that writes everything up to and including the length word of the data,
 * and not the data nor its XDR padding: the server sends r->READ3res_u.resok.data.data_val
 * (data_len bytes) from the buffer it was read into, followed by xdr_zc_pad(data_len) zero
 * bytes (xdr_zc_zero_pad()). A failure status is encoded exactly as xdr_READ3res does.
 * Fails on data_len above NFS3_MAXDATA. Encode only: decoding fails (clients decode with
 * xdr_READ3res); XDR_FREE does nothing, the data buffer is not the codec's to free. */
bool_t xdr_READ3res_zc(XDR *xdrs, READ3res *r);

/* Number of zero bytes XDR puts after `len` bytes of opaque data. */
static inline uint32_t xdr_zc_pad(uint32_t len)
{
	return (4 - len % 4) % 4;
}

/* Four zero bytes to send as that padding (read-only; one copy per translation unit). */
static inline const uint8_t *xdr_zc_zero_pad(void)
{
	static const uint8_t zeros[4];
	return zeros;
}

#endif
