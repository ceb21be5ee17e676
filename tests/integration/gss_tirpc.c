/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libtirpc's RPCSEC_GSS client. See gss_tirpc.h. */
#include "gss_tirpc.h"

#include <arpa/inet.h>
#include <gssapi/gssapi_krb5.h>
#include <netinet/in.h>
#include <rpc/auth_gss.h>
#include <rpc/rpc.h>
#include <stdio.h>
#include <string.h>

#define NFS_PROG 100003
#define NFS_V3 3
#define NFSPROC3_GETATTR 1

struct fh3 {
	u_int len;
	char *data;
};

/* fattr3's fields, of which the test looks at the type. */
struct getattr_res {
	u_int status;
	u_int type, mode, nlink, uid, gid;
	uint64_t size, used, rdev, fsid, fileid, atime, mtime, ctime;
};

/* xdr_void, in the shape xdrproc_t's casts accept */
static bool_t xdr_nothing(XDR *x, void *p)
{
	(void)x;
	(void)p;
	return TRUE;
}

static bool_t xdr_fh3(XDR *x, void *p)
{
	struct fh3 *f = p;

	return xdr_bytes(x, &f->data, &f->len, 64);
}

static bool_t xdr_getattr_res(XDR *x, void *p)
{
	struct getattr_res *r = p;
	uint64_t *wide[] = { &r->size, &r->used, &r->rdev, &r->fsid, &r->fileid,
	                     &r->atime, &r->mtime, &r->ctime };

	if (!xdr_u_int(x, &r->status))
		return FALSE;
	if (r->status != 0)
		return TRUE;
	if (!xdr_u_int(x, &r->type) || !xdr_u_int(x, &r->mode) || !xdr_u_int(x, &r->nlink) ||
	    !xdr_u_int(x, &r->uid) || !xdr_u_int(x, &r->gid))
		return FALSE;
	for (size_t i = 0; i < sizeof(wide) / sizeof(wide[0]); i++) {
		if (!xdr_uint64_t(x, wide[i]))
			return FALSE;
	}
	return TRUE;
}

static int calls(CLIENT *cl, const uint8_t *fh, uint32_t fh_len, uint32_t *status, uint32_t *type,
                 char *err, size_t errlen)
{
	struct timeval tv = { 10, 0 };
	struct fh3 f = { fh_len, (char *)fh };
	struct getattr_res res;
	enum clnt_stat st;

	st = clnt_call(cl, 0, (xdrproc_t)xdr_nothing, NULL, (xdrproc_t)xdr_nothing, NULL, tv);
	if (st != RPC_SUCCESS) {
		snprintf(err, errlen, "libtirpc: NFS NULL: %s", clnt_sperror(cl, ""));
		return -1;
	}
	memset(&res, 0, sizeof(res));
	st = clnt_call(cl, NFSPROC3_GETATTR, (xdrproc_t)xdr_fh3, (char *)&f,
	               (xdrproc_t)xdr_getattr_res, (char *)&res, tv);
	if (st != RPC_SUCCESS) {
		snprintf(err, errlen, "libtirpc: GETATTR: %s", clnt_sperror(cl, ""));
		return -1;
	}
	*status = res.status;
	*type = res.type;
	return 0;
}

int gss_tirpc_getattr(uint16_t port, gss_cred_id_t cred, const uint8_t *fh, uint32_t fh_len,
                      uint32_t *status, uint32_t *type, char *err, size_t errlen)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port),
	                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct rpc_gss_sec sec = { .mech = (gss_OID)gss_mech_krb5, .qop = GSS_C_QOP_DEFAULT,
	                           .svc = RPCSEC_GSS_SVC_PRIVACY, .cred = cred,
	                           .req_flags = GSS_C_MUTUAL_FLAG };
	char service[] = "nfs@localhost";
	int sock = RPC_ANYSOCK, rc;
	CLIENT *cl = clnttcp_create(&sa, NFS_PROG, NFS_V3, &sock, 0, 0);
	AUTH *auth;

	if (cl == NULL) {
		snprintf(err, errlen, "libtirpc: %s", clnt_spcreateerror("clnttcp_create"));
		return -1;
	}
	auth = authgss_create_default(cl, service, &sec);
	if (auth == NULL) {
		snprintf(err, errlen, "libtirpc: authgss_create_default: %s",
		         clnt_spcreateerror("no context"));
		clnt_destroy(cl);
		return -1;
	}
	cl->cl_auth = auth;
	rc = calls(cl, fh, fh_len, status, type, err, errlen);
	auth_destroy(auth);        /* sends RPCSEC_GSS_DESTROY */
	cl->cl_auth = NULL;
	clnt_destroy(cl);
	return rc;
}
