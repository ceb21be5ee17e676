/* SPDX-License-Identifier: GPL-2.0-or-later */
/* RPCSEC_GSS's credential, decoded by hand as oncrpc.c decodes AUTH_SYS's: five fields, every
 * read bounds-checked against the body, the handle left in the record (no allocation per call,
 * unlike libtirpc's xdr_rpc_gss_cred, which the unit test checks this against). */
#include "rpc/gss.h"

#include <stddef.h>

static bool get32(const uint8_t **p, const uint8_t *end, uint32_t *v)
{
	if (end - *p < 4)
		return false;
	const uint8_t *b = *p;
	*v = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
	*p += 4;
	return true;
}

enum gss_cred_verdict gss_cred_decode(const uint8_t *body, uint32_t len, struct gss_cred *c)
{
	const uint8_t *p = body, *end = body + len;
	uint32_t vers, hlen;
	if (!get32(&p, end, &vers))
		return GSS_CRED_BAD;
	if (vers != RPCSEC_GSS_VERS_1)
		return GSS_CRED_VERSION;
	if (!get32(&p, end, &c->proc) || !get32(&p, end, &c->seq) ||
	    !get32(&p, end, &c->service) || !get32(&p, end, &hlen))
		return GSS_CRED_BAD;
	size_t padded = ((size_t)hlen + 3) & ~(size_t)3;
	if (hlen > GSS_HANDLE_MAX || (size_t)(end - p) != padded)
		return GSS_CRED_BAD;
	c->handle = p;
	c->handle_len = hlen;
	if (c->proc > GSS_PROC_DESTROY || c->service < GSS_SVC_NONE ||
	    c->service > GSS_SVC_PRIVACY)
		return GSS_CRED_BAD;
	/* INIT carries no handle yet; every other procedure names its context. */
	if ((c->proc == GSS_PROC_INIT) != (hlen == 0))
		return GSS_CRED_BAD;
	return GSS_CRED_OK;
}
