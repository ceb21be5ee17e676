/* SPDX-License-Identifier: GPL-2.0-or-later */
/* XDR's words and opaques over a buffer, by hand, for the few headers nfsd-uc decodes and writes
 * itself (the call header, RPCSEC_GSS's credential, bodies and replies): every read bounds-
 * checked against the buffer's end, an opaque left where it lies. */
#ifndef NFSD_UC_RPC_XDRBUF_H
#define NFSD_UC_RPC_XDRBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct xdr_rd {
	const uint8_t *p, *end;
};

static inline size_t xdr_padded(size_t n) { return (n + 3) & ~(size_t)3; }

static inline uint32_t xdr_word(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline bool xdr_get32(struct xdr_rd *r, uint32_t *v)
{
	if (r->end - r->p < 4)
		return false;
	*v = xdr_word(r->p);
	r->p += 4;
	return true;
}

/* An opaque<max>: its bytes (in place) and length, the reader past its padding. */
static inline bool xdr_get_opaque(struct xdr_rd *r, uint32_t max, const uint8_t **b,
				  uint32_t *len)
{
	if (!xdr_get32(r, len) || *len > max || (size_t)(r->end - r->p) < xdr_padded(*len))
		return false;
	*b = r->p;
	r->p += xdr_padded(*len);
	return true;
}

static inline uint8_t *xdr_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
	return p + 4;
}

/* An opaque: length, bytes, zero padding. Returns the end. */
static inline uint8_t *xdr_put_opaque(uint8_t *p, const void *b, size_t len)
{
	p = xdr_put32(p, (uint32_t)len);
	if (len)
		memcpy(p, b, len);
	memset(p + len, 0, xdr_padded(len) - len);
	return p + xdr_padded(len);
}

#endif
