/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The engine's calls and replies as bytes (rpccb_int.h): a call's header (AUTH_SYS as this
 * host's root, as lockd's and statd's callbacks are), the portmapper's GETPORT (PMAP v2, IPv4)
 * and GETADDR (RPCBIND v4) and their answers, and the reply's status. */
#include <errno.h>
#include <string.h>

#include <rpc/rpc.h>
#include <rpc/rpcb_prot.h>
#include <rpc/pmap_prot.h>

#include "rpc/rpccb_int.h"
#include "rpc/uaddr.h"

/* ---- encoding */

/* The whole call datagram: header by xdr_callmsg (AUTH_SYS root credential encoded by
 * xdr_authunix_parms, AUTH_NONE verifier), then the arguments as given. With rm, as one TCP
 * record: the mark of its only (last) fragment first. */
int cb_encode_call(struct rpccb *e, struct call *c, uint32_t prog, uint32_t vers,
		   uint32_t proc, const void *args, size_t args_len, bool rm)
{
	char cred[MAX_AUTH_BYTES], verf[4];
	struct authunix_parms aup = {.aup_time = (u_long)time(NULL), .aup_machname = e->host};
	XDR x;
	xdrmem_create(&x, cred, sizeof cred, XDR_ENCODE);
	bool ok = xdr_authunix_parms(&x, &aup);
	u_int cred_len = xdr_getpos(&x);
	xdr_destroy(&x);
	if (!ok)
		return -EINVAL;
	size_t lead = rm ? 4 : 0, cap = lead + HDR_MAX + args_len;
	uint8_t *p = malloc(cap);
	if (!p)
		return -ENOMEM;
	struct rpc_msg m = {
		.rm_xid = c->xid, .rm_direction = CALL,
		.rm_call = {.cb_rpcvers = RPC_MSG_VERSION, .cb_prog = prog, .cb_vers = vers,
			    .cb_proc = proc,
			    .cb_cred = {.oa_flavor = AUTH_SYS, .oa_base = cred, .oa_length = cred_len},
			    .cb_verf = {.oa_flavor = AUTH_NONE, .oa_base = verf, .oa_length = 0}},
	};
	xdrmem_create(&x, (char *)p + lead, (u_int)(cap - lead), XDR_ENCODE);
	ok = xdr_callmsg(&x, &m);
	size_t hdr = xdr_getpos(&x);
	xdr_destroy(&x);
	if (!ok) {
		free(p);
		return -EINVAL;
	}
	if (args_len)
		memcpy(p + lead + hdr, args, args_len);
	if (rm) {
		uint32_t mark = htonl(RM_LAST | (uint32_t)(hdr + args_len));
		memcpy(p, &mark, 4);
	}
	free(c->pkt);
	c->pkt = p;
	c->pkt_len = lead + hdr + args_len;
	return 0;
}

/* PMAP v2 (GETPORT) is IPv4's protocol: an IPv6 client's portmapper is asked RPCBIND v4's
 * GETADDR instead (RFC 1833), for the udp6 or tcp6 address. */
static bool wants_getaddr(const struct call *c)
{
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&c->t.host;
	return c->t.host.ss_family == AF_INET6 && !IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr);
}

/* RPCBPROC_GETADDR {prog, vers, "udp6" or "tcp6", "", ""}. */
static int encode_getaddr(struct rpccb *e, struct call *c)
{
	char a[64], empty[] = "";
	RPCB r = {.r_prog = c->t.prog, .r_vers = c->t.vers,
		  .r_netid = c->t.proto == IPPROTO_TCP ? "tcp6" : "udp6", .r_addr = empty,
		  .r_owner = empty};
	XDR x;
	xdrmem_create(&x, a, sizeof a, XDR_ENCODE);
	bool ok = xdr_rpcb(&x, &r);
	u_int len = xdr_getpos(&x);
	xdr_destroy(&x);
	if (!ok)
		return -EINVAL;
	return cb_encode_call(e, c, RPCBPROG, RPCBVERS4, RPCBPROC_GETADDR, a, len, false);
}

/* PMAPPROC_GETPORT {prog, vers, UDP or TCP, 0}. */
int cb_encode_getport(struct rpccb *e, struct call *c)
{
	if (wants_getaddr(c))
		return encode_getaddr(e, c);
	char a[16];
	struct pmap pm = {.pm_prog = c->t.prog, .pm_vers = c->t.vers,
			  .pm_prot = (u_long)c->t.proto};
	XDR x;
	xdrmem_create(&x, a, sizeof a, XDR_ENCODE);
	bool ok = xdr_pmap(&x, &pm);
	xdr_destroy(&x);
	if (!ok)
		return -EINVAL;
	return cb_encode_call(e, c, PMAPPROG, PMAPVERS, PMAPPROC_GETPORT, a, sizeof a, false);
}

/* ---- decoding */

/* Stands in for the results' XDR routine: leaves them undecoded, so the position after
 * xdr_replymsg is where they start. */
static bool_t results_stay(XDR *x, ...)
{
	(void)x;
	return TRUE;
}

/* The status of a reply whose header decoded (the mapping documented in rpccb.h). */
static int reply_status(const struct rpc_msg *m)
{
	if (m->rm_reply.rp_stat == MSG_DENIED)
		return m->rjcted_rply.rj_stat == AUTH_ERROR ? -EACCES :
		       m->rjcted_rply.rj_stat == RPC_MISMATCH ? -EPROTO : -EBADMSG;
	if (m->rm_reply.rp_stat != MSG_ACCEPTED)
		return -EBADMSG;
	switch (m->acpted_rply.ar_stat) {
	case SUCCESS: return 0;
	case PROG_UNAVAIL: return -EPFNOSUPPORT;
	case PROG_MISMATCH: return -EPROTONOSUPPORT;
	case PROC_UNAVAIL: return -EOPNOTSUPP;
	case GARBAGE_ARGS: return -EIO;
	case SYSTEM_ERR: return -EREMOTEIO;
	}
	return -EBADMSG;
}

/* Decode the reply header in rx[0..n). Its status, and *off where the results start. */
int cb_decode_reply(uint8_t *rx, size_t n, size_t *off)
{
	char verf[MAX_AUTH_BYTES];             /* so xdr_opaque_auth does not allocate */
	struct rpc_msg m;
	memset(&m, 0, sizeof m);
	m.acpted_rply.ar_verf.oa_base = verf;
	m.acpted_rply.ar_results.where = NULL;
	m.acpted_rply.ar_results.proc = results_stay;
	XDR x;
	xdrmem_create(&x, (char *)rx, (u_int)n, XDR_DECODE);
	bool ok = xdr_replymsg(&x, &m);
	*off = xdr_getpos(&x);
	xdr_destroy(&x);
	return ok ? reply_status(&m) : -EBADMSG;
}

/* The port of GETADDR's universal address "x:...:y.p1.p2" ("" when not registered). */
static int getaddr_answer(const uint8_t *res, size_t len)
{
	/* By hand, not xdr_string: libtirpc reads a string's padding into one static buffer, which
	 * other threads' decoders share (a race ThreadSanitizer reports, harmless but noisy). */
	char buf[128], *uaddr = buf;
	u_int n = 0;
	XDR x;
	xdrmem_create(&x, (char *)(uintptr_t)res, (u_int)len, XDR_DECODE);
	bool ok = xdr_u_int(&x, &n) && n < sizeof buf && 4 + (size_t)n <= len;
	xdr_destroy(&x);
	if (!ok)
		return -EBADMSG;
	memcpy(buf, res + 4, n);
	buf[n] = '\0';
	if (!*uaddr)
		return -ENOENT;
	struct sockaddr_storage ss;
	if (!uaddr_parse(uaddr, &ss))
		return -EBADMSG;
	uint16_t port = ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
						 : ((struct sockaddr_in *)&ss)->sin_port;
	return port ? ntohs(port) : -EBADMSG;
}

/* The port in a GETPORT answer, or -errno. */
int cb_getport_answer(const struct call *c, const uint8_t *res, size_t len)
{
	if (wants_getaddr(c))
		return getaddr_answer(res, len);
	u_int port = 0;
	XDR x;
	xdrmem_create(&x, (char *)(uintptr_t)res, (u_int)len, XDR_DECODE);
	bool ok = xdr_u_int(&x, &port);
	xdr_destroy(&x);
	if (!ok || port > 65535)
		return -EBADMSG;
	return port ? (int)port : -ENOENT;
}
