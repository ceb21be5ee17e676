/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Zero-copy WRITE3args decoder and READ3res encoder: see nfs3_zc.h for the contracts. */
#include "nfs3_zc.h"

#include <limits.h>
#include <string.h>

/* The decode buffer's address is only known for xdrmem streams (x_base is where xdrmem_create
 * started). libtirpc picks one of two xdrmem op tables by the buffer's alignment, so compare
 * against both rather than trust x_base on a stream of another kind. */
static bool is_xdrmem(const XDR *xdrs)
{
	uint32_t probe[2];
	XDR aligned, unaligned;

	xdrmem_create(&aligned, (char *)probe, sizeof(probe), XDR_DECODE);
	xdrmem_create(&unaligned, (char *)probe + 1, sizeof(probe) - 1, XDR_DECODE);
	return xdrs->x_ops == aligned.x_ops || xdrs->x_ops == unaligned.x_ops;
}

/* Points *data at the next `len` bytes of an xdrmem stream and steps over them and their
 * padding. xdrmem's setpos refuses a position past the end of the buffer; the explicit bound
 * keeps the position arithmetic inside u_int. */
static bool_t skip_opaque_inline(XDR *xdrs, u_int len, char **data)
{
	u_int pos = xdr_getpos(xdrs);
	uint64_t end = (uint64_t)pos + RNDUP((uint64_t)len);

	if (end > UINT_MAX || !xdr_setpos(xdrs, (u_int)end))
		return FALSE;
	*data = xdrs->x_base + pos;
	return TRUE;
}

static bool_t decode_write3args_zc(XDR *xdrs, WRITE3args *a)
{
	memset(a, 0, sizeof(*a));
	if (!is_xdrmem(xdrs))
		return FALSE;
	/* stable_how is an enum of three: knfsd's NFSv4 decoder refuses any other value (its
	 * NFSv3 one echoed it back as committed = 7); count must be the data's length, as knfsd's
	 * nfs3svc_decode_writeargs asks. */
	if (!xdr_nfs_fh3(xdrs, &a->file) || !xdr_offset3(xdrs, &a->offset) ||
	    !xdr_count3(xdrs, &a->count) || !xdr_stable_how(xdrs, &a->stable) ||
	    (unsigned)a->stable > FILE_SYNC ||
	    !xdr_u_int(xdrs, &a->data.data_len) || a->data.data_len > NFS3_MAXDATA ||
	    a->data.data_len != a->count ||
	    !skip_opaque_inline(xdrs, a->data.data_len, &a->data.data_val)) {
		write3args_zc_free(a);
		return FALSE;
	}
	return TRUE;
}

bool_t xdr_WRITE3args_zc(XDR *xdrs, WRITE3args *a)
{
	switch (xdrs->x_op) {
	case XDR_DECODE:
		return decode_write3args_zc(xdrs, a);
	case XDR_ENCODE:
		return xdr_WRITE3args(xdrs, a);
	case XDR_FREE:
		write3args_zc_free(a);
		return TRUE;
	}
	return FALSE;
}

void write3args_zc_free(WRITE3args *a)
{
	xdr_free((xdrproc_t)xdr_nfs_fh3, (char *)&a->file);
	a->file.data.data_val = NULL;
	a->file.data.data_len = 0;
	a->data.data_val = NULL;
	a->data.data_len = 0;
}

static uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

bool read3args_peek(const uint8_t *args, size_t avail, uint32_t *count)
{
	if (avail < 4)
		return false;
	uint32_t fh_len = get_be32(args);
	if (fh_len > NFS3_FHSIZE)
		return false;
	size_t count_pos = 4 + RNDUP((size_t)fh_len) + 8;   /* after the handle and offset3 */
	if (avail < count_pos + 4)
		return false;
	*count = get_be32(args + count_pos);
	return true;
}

bool write3args_peek(const uint8_t *args, size_t avail, uint64_t *file_off, uint32_t *data_len,
		     size_t *payload_off)
{
	if (avail < 4)
		return false;
	uint32_t fh_len = get_be32(args);
	if (fh_len > NFS3_FHSIZE)
		return false;

	size_t off_pos = 4 + RNDUP((size_t)fh_len);
	size_t len_pos = off_pos + 8 + 4 + 4;   /* offset3, count3, stable_how */
	if (avail < len_pos + 4)
		return false;
	uint32_t len = get_be32(args + len_pos);
	/* what the decoder refuses (decode_write3args_zc): a payload too long, a count that is
	 * not its length, a stable_how outside the enum */
	if (len > NFS3_MAXDATA || get_be32(args + off_pos + 8) != len ||
	    get_be32(args + off_pos + 12) > FILE_SYNC)
		return false;

	*file_off = (uint64_t)get_be32(args + off_pos) << 32 | get_be32(args + off_pos + 4);
	*data_len = len;
	*payload_off = len_pos + 4;
	return true;
}

static bool_t encode_read3resok_zc(XDR *xdrs, READ3resok *ok)
{
	if (ok->data.data_len > NFS3_MAXDATA)
		return FALSE;
	return xdr_post_op_attr(xdrs, &ok->file_attributes) && xdr_count3(xdrs, &ok->count) &&
	       xdr_bool(xdrs, &ok->eof) && xdr_u_int(xdrs, &ok->data.data_len);
}

bool_t xdr_READ3res_zc(XDR *xdrs, READ3res *r)
{
	if (xdrs->x_op == XDR_FREE)
		return TRUE;
	if (xdrs->x_op != XDR_ENCODE)
		return FALSE;
	if (!xdr_nfsstat3(xdrs, &r->status))
		return FALSE;
	if (r->status == NFS3_OK)
		return encode_read3resok_zc(xdrs, &r->READ3res_u.resok);
	return xdr_READ3resfail(xdrs, &r->READ3res_u.resfail);
}
