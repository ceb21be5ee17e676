/* SPDX-License-Identifier: GPL-2.0-or-later */
/* RPCSEC_GSS's credential, decoded by hand as oncrpc.c decodes AUTH_SYS's: five fields, every
 * read bounds-checked against the body, the handle left in the record (no allocation per call,
 * unlike libtirpc's xdr_rpc_gss_cred, which the unit test checks this against); and the shapes
 * of its integrity and privacy bodies. */
#include "rpc/gss.h"

#include <stddef.h>

#include "rpc/xdrbuf.h"

enum gss_cred_verdict gss_cred_decode(const uint8_t *body, uint32_t len, struct gss_cred *c)
{
	struct xdr_rd r = {body, body + len};
	uint32_t vers;
	if (!xdr_get32(&r, &vers))
		return GSS_CRED_BAD;
	if (vers != RPCSEC_GSS_VERS_1)
		return GSS_CRED_VERSION;
	if (!xdr_get32(&r, &c->proc) || !xdr_get32(&r, &c->seq) || !xdr_get32(&r, &c->service) ||
	    !xdr_get_opaque(&r, GSS_HANDLE_MAX, &c->handle, &c->handle_len) || r.p != r.end)
		return GSS_CRED_BAD;
	if (c->proc > GSS_PROC_DESTROY || c->service < GSS_SVC_NONE ||
	    c->service > GSS_SVC_PRIVACY)
		return GSS_CRED_BAD;
	/* INIT carries no handle yet; every other procedure names its context. */
	if ((c->proc == GSS_PROC_INIT) != (c->handle_len == 0))
		return GSS_CRED_BAD;
	return GSS_CRED_OK;
}

bool gss_integ_split(const uint8_t *args, size_t len, const uint8_t **body, uint32_t *body_len,
		     const uint8_t **mic, uint32_t *mic_len)
{
	struct xdr_rd r = {args, args + len};
	return xdr_get_opaque(&r, UINT32_MAX, body, body_len) &&
	       xdr_get_opaque(&r, GSS_MIC_MAX, mic, mic_len) && r.p == r.end && *body_len >= 4;
}

bool gss_priv_split(const uint8_t *args, size_t len, const uint8_t **tok, uint32_t *tok_len)
{
	struct xdr_rd r = {args, args + len};
	return xdr_get_opaque(&r, UINT32_MAX, tok, tok_len) && r.p == r.end;
}
