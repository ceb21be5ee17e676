/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nfsd-uc as the portmapper: PMAP v2 (RFC 1833 section 3), RPCBIND v3 and v4 (RFC 1833 section
 * 2), on port 111, so that a client mounts with no rpcbind on the server host. The registry is
 * the programs' state (rq->prog, a struct pmap_reg: pmap.h); every handler copes with NULL
 * (GETPORT 0, GETADDR "", DUMP empty, SET/UNSET false). Codecs are libtirpc's (rpc/pmap_prot.h, rpc/rpcb_prot.h); results live in
 * rq->arena.
 *
 * Wiring (daemon.c, svc/listen.c, svc/dispatch.c):
 *  1. main.c, at start, once the ports are known:
 *       enum pmap_mode mode = pmap_decide(cfg);
 *       struct pmap_prog_port list[] = {
 *           {100003, 3, IPPROTO_TCP, cfg->port},                                  NFS
 *           {100005, 3, IPPROTO_TCP, cfg->mount_port}, {100005, 3, IPPROTO_UDP, ...},   MOUNT
 *           {100021, 1|3|4, IPPROTO_TCP|UDP, nlm port} (six entries),             NLM
 *           {100024, 1, IPPROTO_TCP|UDP, nsm port} (two entries),                 NSM
 *       };   each with .families = pmap_families(cfg)
 *     PMAP_RPCBIND: pmap_rpcbind_set(list, n, true) after the rings serve (false: log "rpcbind
 *       did not take every registration"), and pmap_rpcbind_set(list, n, false) at shutdown,
 *       where rpcbind_set(cfg, false) is today. Replaces rpcbind_set()'s pmap_set calls.
 *     PMAP_OWN: reg = pmap_reg_new(pmap_families(cfg)); pmap_reg_add_own_list(reg, list, n);
 *       and the portmapper itself: pmap_reg_add_own(reg, 100000, v, proto, 111) for v = 4, 3,
 *       2 and proto = IPPROTO_TCP, IPPROTO_UDP (rpcinfo -p lists it, as rpcbind's); the three
 *       programs registered with reg as their state (dispatch_add) before the rings start:
 *       handlers read it from any ring. After the rings stop: pmap_reg_free(reg).
 *     PMAP_NONE: nothing: the programs are not registered (PROG_UNAVAIL).
 *  2. svc/listen.c, PMAP_OWN only: listen on port 111, TCP and UDP, on every listen address AND on
 *     127.0.0.1 and ::1 (when not among them already): other local services register through
 *     libtirpc's rpcb_set, which, without /run/rpcbind.sock, calls RPCBIND v3 SET over TCP to
 *     the loopback (::1 when /etc/netconfig lists tcp6). A UDP datagram is one record: no
 *     record mark, reply to its source address with the reply header and result unframed.
 *     Fill rq->local with the address the call came to (getsockname of the accepted socket;
 *     IP_PKTINFO / IPV6_RECVPKTINFO for UDP on a wildcard socket): GETADDR answers with it.
 *  3. dispatch: pmap2_program, rpcb3_program, rpcb4_program added side by side (prog 100000,
 *     versions 2, 3, 4: another version gets PROG_MISMATCH 2..4), only while nfsd-uc is the
 *     portmapper, so a daemon that is not answers PROG_UNAVAIL. The local address is in
 *     svc_call.local (AF_UNSPEC when unknown). No procedure here has cache_reply (SET/UNSET
 *     answer the same on a retry).
 *
 * Not served: PMAP CALLIT (5), RPCBIND v3 CALLIT (5), v4 BCAST (5) and INDIRECT (10) have no
 * handler, so the dispatcher answers PROC_UNAVAIL. They forward a call to another program on
 * the caller's behalf, from the portmapper's address: the amplifier of reflection attacks and
 * the way around a service's address checks; current Linux rpcbind leaves them off unless
 * remote calls are enabled, for the same reasons. No client mounting NFS needs them.
 *
 * SET and UNSET are honoured only from a loopback caller (pmap_is_loopback): other services of
 * this host register with us as they would with rpcbind. From anyone else, and for an entry
 * nfsd-uc owns, the answer is false. Entries others set stay until they UNSET them. */
#include <arpa/inet.h>
#include <netconfig.h>
#include <rpc/rpc.h>
#include <rpc/pmap_prot.h>
#include <rpc/rpcb_prot.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "base/sockaddr.h"
#include "pmap/pmap.h"
#include "svc/dispatch.h"

static struct pmap_reg *reg_of(struct svc_call *rq)
{
	return rq->prog;
}

static const char *peer_text(const struct svc_call *rq, char out[INET6_ADDRSTRLEN])
{
	if (rq->peer.ss_family != AF_UNIX)
		return sa_str(&rq->peer, out);
	strcpy(out, "local");
	return out;
}

/* Only a caller on this host changes the registry. */
static bool may_change(struct svc_call *rq, const char *what, uint32_t prog, uint32_t vers)
{
	if (pmap_is_loopback(&rq->peer))
		return true;
	char host[INET6_ADDRSTRLEN];
	log_debug("portmapper: %s of %u v%u from %s refused (not a loopback caller)", what, prog,
		  vers, peer_text(rq, host));
	return false;
}

/* in as an address of family (an IPv4-mapped IPv6 address as IPv4), port 0; false when it is
 * of the other family, unknown, or the wildcard. */
static bool as_family(const struct sockaddr_storage *in, int family, struct sockaddr_storage *out)
{
	memset(out, 0, sizeof *out);
	if (in->ss_family == AF_INET && family == AF_INET) {
		const struct sockaddr_in *s = (const struct sockaddr_in *)in;
		if (s->sin_addr.s_addr == htonl(INADDR_ANY))
			return false;
		((struct sockaddr_in *)out)->sin_addr = s->sin_addr;
	} else if (in->ss_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)in)->sin6_addr;
		if (IN6_IS_ADDR_V4MAPPED(a) && family == AF_INET)
			memcpy(&((struct sockaddr_in *)out)->sin_addr, &a->s6_addr[12], 4);
		else if (!IN6_IS_ADDR_V4MAPPED(a) && !IN6_IS_ADDR_UNSPECIFIED(a) && family == AF_INET6)
			((struct sockaddr_in6 *)out)->sin6_addr = *a;
		else
			return false;
	} else {
		return false;
	}
	out->ss_family = (sa_family_t)family;
	return true;
}

/* The family of the transport the call came to: rq->local's (an IPv4-mapped address is IPv4);
 * AF_UNSPEC when unknown. */
static int local_family(const struct svc_call *rq)
{
	if (rq->local.ss_family == AF_INET)
		return AF_INET;
	if (rq->local.ss_family != AF_INET6)
		return AF_UNSPEC;
	const struct in6_addr *a = &((const struct sockaddr_in6 *)&rq->local)->sin6_addr;
	return IN6_IS_ADDR_V4MAPPED(a) ? AF_INET : AF_INET6;
}

/* e's universal address for this caller: the address e was registered with when it is not the
 * wildcard; else the address the client reached us on (rq->local); else the client's hint
 * (RPCBIND's r_addr: the address it used, as the Linux client sends); else the wildcard. NULL
 * when out of memory. */
static char *uaddr_of(struct svc_call *rq, const struct pmap_entry *e, const char *hint)
{
	struct sockaddr_storage ss = {0}, h;
	bool have = false;
	if (e->host[0]) {
		void *a = e->family == AF_INET ? (void *)&((struct sockaddr_in *)&ss)->sin_addr
					       : (void *)&((struct sockaddr_in6 *)&ss)->sin6_addr;
		have = inet_pton(e->family, e->host, a) == 1;
	}
	if (!have)
		have = as_family(&rq->local, e->family, &ss);
	if (!have && hint && *hint && uaddr_parse(hint, &h))
		have = as_family(&h, e->family, &ss);
	if (!have)
		memset(&ss, 0, sizeof ss);   /* the wildcard: 0.0.0.0 or :: */
	ss.ss_family = (sa_family_t)e->family;
	if (e->family == AF_INET)
		((struct sockaddr_in *)&ss)->sin_port = htons(e->port);
	else
		((struct sockaddr_in6 *)&ss)->sin6_port = htons(e->port);
	char *out = arena_alloc(&rq->arena, PMAP_UADDR_MAX);
	if (out && !uaddr_format((struct sockaddr *)&ss, out, PMAP_UADDR_MAX))
		out[0] = '\0';
	return out;
}

/* The encoded size of a string, and a list's: the dispatcher's reply buffer is 8 KiB unless the
 * handler says more (reply_hint), and a DUMP of many entries needs more. */
static size_t xdr_str_size(const char *s)
{
	return 4 + ((strlen(s) + 3) & ~(size_t)3);
}

static void hint_reply(struct svc_call *rq, size_t bytes)
{
	bytes += 64;   /* the final "no more" and slack */
	if (bytes > rq->reply_hint)
		rq->reply_hint = bytes;
}

/* ---- PMAP v2 -------------------------------------------------------------------------------- */

static void pm_null(struct svc_call *rq, void *argp, void *resp)
{
	(void)rq, (void)argp, (void)resp;
}

static const char *prot_netid(unsigned long prot)
{
	return prot == IPPROTO_TCP ? "tcp" : prot == IPPROTO_UDP ? "udp" : NULL;
}

static void pm_set(struct svc_call *rq, void *argp, void *resp)
{
	const struct pmap *a = argp;
	bool_t *r = resp;
	const char *netid = prot_netid(a->pm_prot);
	char uaddr[PMAP_UADDR_MAX];
	*r = FALSE;
	if (!may_change(rq, "PMAP SET", (uint32_t)a->pm_prog, (uint32_t)a->pm_vers) || !netid ||
	    a->pm_port > 65535)
		return;
	snprintf(uaddr, sizeof uaddr, "0.0.0.0.%lu.%lu", a->pm_port >> 8, a->pm_port & 0xff);
	*r = pmap_reg_set(reg_of(rq), (uint32_t)a->pm_prog, (uint32_t)a->pm_vers, netid, uaddr,
			  "unknown");
	if (*r)
		log_ratelimited(pmap_reg_log(reg_of(rq)), LOG_INFO, "portmapper: %lu v%lu %s port %lu "
				"registered", a->pm_prog, a->pm_vers, netid, a->pm_port);
}

static void pm_unset(struct svc_call *rq, void *argp, void *resp)
{
	const struct pmap *a = argp;
	bool_t *r = resp;
	*r = FALSE;
	if (!may_change(rq, "PMAP UNSET", (uint32_t)a->pm_prog, (uint32_t)a->pm_vers))
		return;
	*r = pmap_reg_unset(reg_of(rq), (uint32_t)a->pm_prog, (uint32_t)a->pm_vers, NULL, PMAP_V2);
	if (*r)
		log_ratelimited(pmap_reg_log(reg_of(rq)), LOG_INFO, "portmapper: %lu v%lu unregistered",
				a->pm_prog, a->pm_vers);
}

static void pm_getport(struct svc_call *rq, void *argp, void *resp)
{
	const struct pmap *a = argp;
	u_int *port = resp;
	const char *netid = prot_netid(a->pm_prot);
	struct pmap_entry e;
	*port = 0;
	if (netid && pmap_reg_find(reg_of(rq), (uint32_t)a->pm_prog, (uint32_t)a->pm_vers, netid,
				   PMAP_V2, &e))
		*port = e.port;
}

struct pm_dump_ctx {
	struct svc_call *rq;
	struct pmaplist **tail;
	size_t bytes;
};

static void pm_dump_one(void *ctx, const struct pmap_entry *e)
{
	struct pm_dump_ctx *c = ctx;
	struct pmaplist *n = arena_alloc(&c->rq->arena, sizeof *n);
	if (!n)
		return;   /* a shorter list: better than none */
	n->pml_map.pm_prog = e->prog;
	n->pml_map.pm_vers = e->vers;
	n->pml_map.pm_prot = (unsigned long)e->proto;
	n->pml_map.pm_port = e->port;
	*c->tail = n;
	c->tail = &n->pml_next;
	c->bytes += 4 + 16;
}

static void pm_dump(struct svc_call *rq, void *argp, void *resp)
{
	(void)argp;
	struct pm_dump_ctx c = {rq, resp, 0};
	pmap_reg_each(reg_of(rq), PMAP_V2, pm_dump_one, &c);
	hint_reply(rq, c.bytes);
}

/* ---- RPCBIND v3 and v4 ---------------------------------------------------------------------- */

static void rb_set(struct svc_call *rq, void *argp, void *resp)
{
	const RPCB *a = argp;
	bool_t *r = resp;
	*r = FALSE;
	if (!may_change(rq, "RPCBIND SET", a->r_prog, a->r_vers))
		return;
	/* The owner is who the transport says, as rpcbind's: over IP we cannot tell. */
	*r = pmap_reg_set(reg_of(rq), a->r_prog, a->r_vers, a->r_netid, a->r_addr, "unknown");
	char qn[LOG_QUOTE_SIZE], qa[LOG_QUOTE_SIZE];
	if (*r)
		log_ratelimited(pmap_reg_log(reg_of(rq)), LOG_INFO, "portmapper: %u v%u %s at %s "
				"registered", a->r_prog, a->r_vers, log_quote(qn, a->r_netid),
				log_quote(qa, a->r_addr));
}

static void rb_unset(struct svc_call *rq, void *argp, void *resp)
{
	const RPCB *a = argp;
	bool_t *r = resp;
	*r = FALSE;
	if (!may_change(rq, "RPCBIND UNSET", a->r_prog, a->r_vers))
		return;
	*r = pmap_reg_unset(reg_of(rq), a->r_prog, a->r_vers, a->r_netid, 0);
	char qn[LOG_QUOTE_SIZE];
	if (*r)
		log_ratelimited(pmap_reg_log(reg_of(rq)), LOG_INFO, "portmapper: %u v%u %s unregistered",
				a->r_prog, a->r_vers, a->r_netid && *a->r_netid
				? log_quote(qn, a->r_netid) : "(every netid)");
}

/* The netid a GETADDR means. RFC 1833 infers it from the transport the call came on, which the
 * handler knows only partly (rq->local's family, not TCP or UDP), so the client's r_netid is
 * taken when it is one we serve (Linux and libtirpc clients name the transport they ask over);
 * an empty one means TCP of rq->local's family; NULL for a netid we do not serve. */
static const char *call_netid(struct svc_call *rq, const char *r_netid)
{
	int proto, family;
	if (r_netid && pmap_netid_parse(r_netid, &proto, &family))
		return r_netid;
	if (r_netid && *r_netid)
		return NULL;
	return local_family(rq) == AF_INET6 ? "tcp6" : "tcp";
}

static void getaddr(struct svc_call *rq, const RPCB *a, char **r, unsigned flags)
{
	static char none[] = "";
	const char *netid = call_netid(rq, a->r_netid);
	struct pmap_entry e;
	*r = none;
	if (netid && pmap_reg_find(reg_of(rq), a->r_prog, a->r_vers, netid, flags, &e)) {
		char *u = uaddr_of(rq, &e, a->r_addr);
		if (u)
			*r = u;
	}
}

static void rb_getaddr(struct svc_call *rq, void *argp, void *resp)
{
	getaddr(rq, argp, resp, 0);
}

static void rb_getversaddr(struct svc_call *rq, void *argp, void *resp)
{
	getaddr(rq, argp, resp, PMAP_EXACT);
}

struct rb_dump_ctx {
	struct svc_call *rq;
	rpcblist_ptr *tail;
	size_t bytes;
};

static void rb_dump_one(void *ctx, const struct pmap_entry *e)
{
	struct rb_dump_ctx *c = ctx;
	struct arena *ar = &c->rq->arena;
	rpcblist_ptr n = arena_alloc(ar, sizeof *n);
	if (!n)
		return;
	n->rpcb_map.r_prog = e->prog;
	n->rpcb_map.r_vers = e->vers;
	n->rpcb_map.r_netid = arena_strdup(ar, e->netid);
	n->rpcb_map.r_addr = uaddr_of(c->rq, e, NULL);
	n->rpcb_map.r_owner = arena_strdup(ar, e->owner);
	if (!n->rpcb_map.r_netid || !n->rpcb_map.r_addr || !n->rpcb_map.r_owner)
		return;
	*c->tail = n;
	c->tail = &n->rpcb_next;
	c->bytes += 4 + 8 + xdr_str_size(n->rpcb_map.r_netid) + xdr_str_size(n->rpcb_map.r_addr) +
		    xdr_str_size(n->rpcb_map.r_owner);
}

static void rb_dump(struct svc_call *rq, void *argp, void *resp)
{
	(void)argp;
	struct rb_dump_ctx c = {rq, resp, 0};
	pmap_reg_each(reg_of(rq), 0, rb_dump_one, &c);
	hint_reply(rq, c.bytes);
}

static void rb_gettime(struct svc_call *rq, void *argp, void *resp)
{
	(void)rq, (void)argp;
	*(u_int *)resp = (u_int)time(NULL);
}

/* A universal address as the transport address rpcbind gives: the bytes of a struct sockaddr_in
 * or sockaddr_in6, as this host lays them out; an empty netbuf for junk. */
static void rb_uaddr2taddr(struct svc_call *rq, void *argp, void *resp)
{
	char *const *uaddr = argp;
	struct netbuf *r = resp;
	struct sockaddr_storage ss;
	*r = (struct netbuf){0};
	if (!uaddr_parse(*uaddr, &ss))
		return;
	size_t len = ss.ss_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
	void *buf = arena_alloc(&rq->arena, len);
	if (!buf)
		return;
	memcpy(buf, &ss, len);
	r->buf = buf;
	r->len = r->maxlen = (unsigned)len;
}

static void rb_taddr2uaddr(struct svc_call *rq, void *argp, void *resp)
{
	const struct netbuf *a = argp;
	char **r = resp;
	static char none[] = "";
	struct sockaddr_storage ss = {0};
	*r = none;
	if (!a->buf || a->len < sizeof(sa_family_t))
		return;
	memcpy(&ss, a->buf, a->len < sizeof ss ? a->len : sizeof ss);
	if ((ss.ss_family == AF_INET && a->len < sizeof(struct sockaddr_in)) ||
	    (ss.ss_family == AF_INET6 && a->len < sizeof(struct sockaddr_in6)))
		return;
	char *u = arena_alloc(&rq->arena, PMAP_UADDR_MAX);
	if (u && uaddr_format((struct sockaddr *)&ss, u, PMAP_UADDR_MAX))
		*r = u;
}

struct rb_list_ctx {
	struct svc_call *rq;
	const RPCB *a;
	int family;               /* AF_UNSPEC: every family */
	rpcb_entry_list_ptr *tail;
	size_t bytes;
};

static void rb_list_one(void *ctx, const struct pmap_entry *e)
{
	struct rb_list_ctx *c = ctx;
	struct arena *ar = &c->rq->arena;
	if (e->prog != c->a->r_prog || e->vers != c->a->r_vers ||
	    (c->family != AF_UNSPEC && e->family != c->family))
		return;
	rpcb_entry_list_ptr n = arena_alloc(ar, sizeof *n);
	if (!n)
		return;
	rpcb_entry *m = &n->rpcb_entry_map;
	m->r_maddr = uaddr_of(c->rq, e, c->a->r_addr);
	m->r_nc_netid = arena_strdup(ar, e->netid);
	m->r_nc_semantics = e->proto == IPPROTO_TCP ? NC_TPI_COTS_ORD : NC_TPI_CLTS;
	m->r_nc_protofmly = arena_strdup(ar, e->family == AF_INET6 ? NC_INET6 : NC_INET);
	m->r_nc_proto = arena_strdup(ar, e->proto == IPPROTO_TCP ? NC_TCP : NC_UDP);
	if (!m->r_maddr || !m->r_nc_netid || !m->r_nc_protofmly || !m->r_nc_proto)
		return;
	*c->tail = n;
	c->tail = &n->rpcb_entry_next;
	c->bytes += 4 + xdr_str_size(m->r_maddr) + xdr_str_size(m->r_nc_netid) + 4 +
		    xdr_str_size(m->r_nc_protofmly) + xdr_str_size(m->r_nc_proto);
}

/* Every address of (prog, this version) in the protocol family the call came in (rpcbind's
 * rule): rq->local's, else r_netid's, else all. */
static void rb_getaddrlist(struct svc_call *rq, void *argp, void *resp)
{
	const RPCB *a = argp;
	int proto, family = local_family(rq);
	if (family == AF_UNSPEC && !pmap_netid_parse(a->r_netid, &proto, &family))
		family = AF_UNSPEC;
	struct rb_list_ctx c = {rq, a, family, resp, 0};
	pmap_reg_each(reg_of(rq), 0, rb_list_one, &c);
	hint_reply(rq, c.bytes);
}

static void rb_getstat(struct svc_call *rq, void *argp, void *resp)
{
	(void)rq, (void)argp, (void)resp;   /* no statistics kept: zeros, empty lists */
}

/* ---- the tables ----------------------------------------------------------------------------- */

#define VOID XDRPROC(xdr_void)
#define UNSERVED(n) {n, VOID, NULL, VOID, 0, 0, NULL, false}

static const struct proc_desc pmap2_procs[] = {
	[PMAPPROC_NULL] = {"PMAP_NULL", VOID, NULL, VOID, 0, 0, pm_null, false},
	[PMAPPROC_SET] = {"PMAP_SET", XDRPROC(xdr_pmap), NULL, XDRPROC(xdr_bool), sizeof(struct pmap),
			  sizeof(bool_t), pm_set, false},
	[PMAPPROC_UNSET] = {"PMAP_UNSET", XDRPROC(xdr_pmap), NULL, XDRPROC(xdr_bool),
			    sizeof(struct pmap), sizeof(bool_t), pm_unset, false},
	[PMAPPROC_GETPORT] = {"PMAP_GETPORT", XDRPROC(xdr_pmap), NULL, XDRPROC(xdr_u_int),
			      sizeof(struct pmap), sizeof(u_int), pm_getport, false},
	[PMAPPROC_DUMP] = {"PMAP_DUMP", VOID, NULL, XDRPROC(xdr_pmaplist), 0, sizeof(struct pmaplist *),
			   pm_dump, false},
	[PMAPPROC_CALLIT] = UNSERVED("PMAP_CALLIT"),
};

/* Procedures 0..8, the same in v3 and v4 but for 5 (CALLIT, BCAST: neither served). */
#define RPCB_COMMON \
	[0] = {"RPCB_NULL", VOID, NULL, VOID, 0, 0, pm_null, false}, \
	[RPCBPROC_SET] = {"RPCB_SET", XDRPROC(xdr_rpcb), NULL, XDRPROC(xdr_bool), sizeof(RPCB), \
			  sizeof(bool_t), rb_set, false}, \
	[RPCBPROC_UNSET] = {"RPCB_UNSET", XDRPROC(xdr_rpcb), NULL, XDRPROC(xdr_bool), sizeof(RPCB), \
			    sizeof(bool_t), rb_unset, false}, \
	[RPCBPROC_GETADDR] = {"RPCB_GETADDR", XDRPROC(xdr_rpcb), NULL, XDRPROC(xdr_wrapstring), \
			      sizeof(RPCB), sizeof(char *), rb_getaddr, false}, \
	[RPCBPROC_DUMP] = {"RPCB_DUMP", VOID, NULL, XDRPROC(xdr_rpcblist_ptr), 0, \
			   sizeof(rpcblist_ptr), rb_dump, false}, \
	[RPCBPROC_GETTIME] = {"RPCB_GETTIME", VOID, NULL, XDRPROC(xdr_u_int), 0, sizeof(u_int), \
			      rb_gettime, false}, \
	[RPCBPROC_UADDR2TADDR] = {"RPCB_UADDR2TADDR", XDRPROC(xdr_wrapstring), NULL, \
				  XDRPROC(xdr_netbuf), sizeof(char *), sizeof(struct netbuf), \
				  rb_uaddr2taddr, false}, \
	[RPCBPROC_TADDR2UADDR] = {"RPCB_TADDR2UADDR", XDRPROC(xdr_netbuf), NULL, \
				  XDRPROC(xdr_wrapstring), sizeof(struct netbuf), sizeof(char *), \
				  rb_taddr2uaddr, false}

static const struct proc_desc rpcb3_procs[] = {
	RPCB_COMMON,
	[RPCBPROC_CALLIT] = UNSERVED("RPCB_CALLIT"),
};

static const struct proc_desc rpcb4_procs[] = {
	RPCB_COMMON,
	[RPCBPROC_BCAST] = UNSERVED("RPCB_BCAST"),
	[RPCBPROC_GETVERSADDR] = {"RPCB_GETVERSADDR", XDRPROC(xdr_rpcb), NULL, XDRPROC(xdr_wrapstring),
				  sizeof(RPCB), sizeof(char *), rb_getversaddr, false},
	[RPCBPROC_INDIRECT] = UNSERVED("RPCB_INDIRECT"),
	[RPCBPROC_GETADDRLIST] = {"RPCB_GETADDRLIST", XDRPROC(xdr_rpcb), NULL,
				  XDRPROC(xdr_rpcb_entry_list_ptr), sizeof(RPCB),
				  sizeof(rpcb_entry_list_ptr), rb_getaddrlist, false},
	[RPCBPROC_GETSTAT] = {"RPCB_GETSTAT", VOID, NULL, XDRPROC(xdr_rpcb_stat_byvers), 0,
			      sizeof(rpcb_stat_byvers), rb_getstat, false},
};

const struct prog_desc pmap2_program = {.prog = PMAP_PROG, .vers = 2, .procs = pmap2_procs,
					.nprocs = sizeof pmap2_procs / sizeof pmap2_procs[0]};
const struct prog_desc rpcb3_program = {.prog = PMAP_PROG, .vers = 3, .procs = rpcb3_procs,
					.nprocs = sizeof rpcb3_procs / sizeof rpcb3_procs[0]};
const struct prog_desc rpcb4_program = {.prog = PMAP_PROG, .vers = 4, .procs = rpcb4_procs,
					.nprocs = sizeof rpcb4_procs / sizeof rpcb4_procs[0]};
