/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Reply checks: the RPC layer by hand (a few words, and every one must be right), results with
 * the rpcgen decoders a client would use. */
#include "fz_check.h"

#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rpc/rpc.h>
#include <rpc/pmap_prot.h>
#include <rpc/rpcb_prot.h>

#include "lock/nlm.h"
#include "mount/mount.h"
#include "nfs3/nfs3.h"
#include "ops/stats.h"
#include "svc/dispatch.h"
#include "xdr/mount3_prot.h"
#include "xdr/nfs3_prot.h"
#include "xdr/nfs3_zc.h"
#include "xdr/nlm_prot.h"
#include "xdr/nsm_prot.h"
#include "pmap/pmap.h"
#include "rpc/oncrpc.h"
#include "rpc/recmark.h"

bool fz_trace;

void fz_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s:%d: reply check failed: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

struct rd {
	const uint8_t *p, *end;
};

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint32_t take(struct rd *r, const char *what)
{
	FZ_CHECK(r->end - r->p >= 4, "reply ends before its %s", what);
	uint32_t v = be32(r->p);
	r->p += 4;
	return v;
}

/* A decoded reply header (RFC 5531 section 9). */
struct hdr {
	uint32_t xid, stat;           /* reply_stat: 0 accepted, 1 denied */
	uint32_t accept, reject, auth, low, high;
	const uint8_t *body;          /* result of an accepted SUCCESS */
	size_t body_len;
};

static void at_end(const struct rd *r, const char *what)
{
	FZ_CHECK(r->p == r->end, "%zu bytes after a %s reply", (size_t)(r->end - r->p), what);
}

static void parse_accepted(struct rd *r, struct hdr *h)
{
	uint32_t vflavor = take(r, "verifier");
	uint32_t vlen = take(r, "verifier length");
	/* The server answers with AUTH_NONE, whatever the call's verifier. */
	FZ_CHECK(vflavor == RPC_AUTH_NONE && vlen == 0, "verifier %u/%u", vflavor, vlen);
	h->accept = take(r, "accept_stat");
	switch (h->accept) {
	case ACCEPT_SUCCESS:
		h->body = r->p;
		h->body_len = (size_t)(r->end - r->p);
		return;
	case ACCEPT_PROG_MISMATCH:
		h->low = take(r, "low version");
		h->high = take(r, "high version");
		break;
	case ACCEPT_PROG_UNAVAIL: case ACCEPT_PROC_UNAVAIL: case ACCEPT_GARBAGE_ARGS:
	case ACCEPT_SYSTEM_ERR:
		break;
	default:
		FZ_FAIL("accept_stat %u", h->accept);
	}
	at_end(r, "short accepted");
}

static void parse_denied(struct rd *r, struct hdr *h)
{
	h->reject = take(r, "reject_stat");
	if (h->reject == 0) {           /* RPC_MISMATCH */
		h->low = take(r, "low version");
		h->high = take(r, "high version");
	} else {
		FZ_CHECK(h->reject == 1, "reject_stat %u", h->reject);
		h->auth = take(r, "auth_stat");
	}
	at_end(r, "denied");
}

/* One record, last fragment, its length what follows the mark. */
static void parse_reply(const uint8_t *rep, size_t rlen, struct hdr *h)
{
	memset(h, 0, sizeof *h);
	FZ_CHECK(rlen >= 4, "reply of %zu bytes", rlen);
	uint32_t m = recmark_get(rep);
	FZ_CHECK(recmark_is_last(m), "reply not marked as the last fragment");
	FZ_CHECK(recmark_len(m) == rlen - 4, "record mark says %u bytes, reply has %zu", recmark_len(m),
		 rlen - 4);
	struct rd r = {rep + 4, rep + rlen};
	h->xid = take(&r, "xid");
	FZ_CHECK(take(&r, "msg_type") == 1, "not a REPLY");
	h->stat = take(&r, "reply_stat");
	if (h->stat == 0)
		parse_accepted(&r, h);
	else if (h->stat == 1)
		parse_denied(&r, h);
	else
		FZ_FAIL("reply_stat %u", h->stat);
}

void fz_check_reply_shape(const uint8_t *rep, size_t rlen)
{
	struct hdr h;
	parse_reply(rep, rlen, &h);
}

/* Every program the fuzzed server serves (it runs the lock manager and is the portmapper). */
static const struct prog_desc *const progs[] = {
	&nfs3_program, &mount3_program, &stats_program, &nlm1_program, &nlm3_program, &nlm4_program,
	&nsm1_program, &pmap2_program, &rpcb3_program, &rpcb4_program,
};

/* The table of prog's version vers; NULL when not served (over proto: some programs are TCP
 * only), with *known whether any version of prog is, and the lowest and highest. */
static const struct prog_desc *find_prog(int proto, uint32_t prog, uint32_t vers, bool *known,
					 uint32_t *low, uint32_t *high)
{
	const struct prog_desc *found = NULL;
	*known = false;
	for (size_t i = 0; i < sizeof progs / sizeof progs[0]; i++) {
		if (progs[i]->prog != prog || (progs[i]->tcp_only && proto == IPPROTO_UDP))
			continue;
		if (!*known || progs[i]->vers < *low)
			*low = progs[i]->vers;
		if (!*known || progs[i]->vers > *high)
			*high = progs[i]->vers;
		*known = true;
		if (progs[i]->vers == vers)
			found = progs[i];
	}
	return found;
}

static bool nfsstat3_valid(uint32_t s)
{
	static const uint32_t ok[] = {0, 1, 2, 5, 6, 13, 17, 18, 19, 20, 21, 22, 27, 28, 30, 31, 63,
				      66, 69, 70, 71, 10001, 10002, 10003, 10004, 10005, 10006, 10007,
				      10008};
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
		if (s == ok[i])
			return true;
	return false;
}

static bool mountstat3_valid(uint32_t s)
{
	static const uint32_t ok[] = {0, 1, 2, 5, 13, 20, 22, 63, 10004, 10006};
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
		if (s == ok[i])
			return true;
	return false;
}

/* Decode the call's arguments as the server's table says: whether they decode. */
static bool args_decode(const struct proc_desc *pd, const struct rpc_call *c, void *args)
{
	XDR x;
	xdrmem_create(&x, (char *)c->args, (u_int)c->args_len, XDR_DECODE);
	bool ok = pd->decode(&x, args);
	xdr_destroy(&x);
	return ok;
}

static void args_release(const struct proc_desc *pd, void *args)
{
	if (pd->release)
		pd->release(args);
	else
		xdr_free(pd->decode, args);
}

static void keep_fh(const nfs_fh3 *f, struct fz_fh *fh)
{
	fh->len = f->data.data_len <= sizeof fh->data ? f->data.data_len : 0;
	memcpy(fh->data, f->data.data_val, fh->len);
}

/* A handle in an NFSv3 result: LOOKUP's object, or the new object of CREATE & co. */
static bool nfs3_new_handle(uint32_t proc, const void *res, struct fz_fh *fh)
{
	const post_op_fh3 *p = NULL;
	switch (proc) {
	case NFSPROC3_LOOKUP: {
		const LOOKUP3res *r = res;
		if (r->status != NFS3_OK)
			return false;
		keep_fh(&r->LOOKUP3res_u.resok.object, fh);
		return fh->len > 0;
	}
	case NFSPROC3_CREATE: p = &((const CREATE3res *)res)->CREATE3res_u.resok.obj; break;
	case NFSPROC3_MKDIR: p = &((const MKDIR3res *)res)->MKDIR3res_u.resok.obj; break;
	case NFSPROC3_SYMLINK: p = &((const SYMLINK3res *)res)->SYMLINK3res_u.resok.obj; break;
	case NFSPROC3_MKNOD: p = &((const MKNOD3res *)res)->MKNOD3res_u.resok.obj; break;
	default: return false;
	}
	if (*(const nfsstat3 *)res != NFS3_OK || !p->handle_follows)
		return false;
	keep_fh(&p->post_op_fh3_u.handle, fh);
	return fh->len > 0;
}

/* What the result says against what was asked: READ and WRITE never do more than the count. */
static void nfs3_semantics(const struct rpc_call *c, uint32_t proc, const void *res)
{
	if (proc == NFSPROC3_READ && ((const READ3res *)res)->status == NFS3_OK) {
		const READ3resok *ok = &((const READ3res *)res)->READ3res_u.resok;
		READ3args a;
		memset(&a, 0, sizeof a);
		XDR x;
		xdrmem_create(&x, (char *)c->args, (u_int)c->args_len, XDR_DECODE);
		bool_t dec = xdr_READ3args(&x, &a);
		xdr_destroy(&x);
		FZ_CHECK(dec, "READ answered but its arguments do not decode");
		FZ_CHECK(ok->count == ok->data.data_len, "READ count %u, data %u", ok->count,
			 ok->data.data_len);
		FZ_CHECK(ok->count <= a.count, "READ of %u bytes returned %u", a.count, ok->count);
		xdr_free((xdrproc_t)xdr_READ3args, (char *)&a);
	}
	if (proc == NFSPROC3_WRITE && ((const WRITE3res *)res)->status == NFS3_OK) {
		uint64_t off;
		uint32_t dlen;
		size_t at;
		FZ_CHECK(write3args_peek(c->args, c->args_len, &off, &dlen, &at), "WRITE args");
		uint32_t n = ((const WRITE3res *)res)->WRITE3res_u.resok.count;
		FZ_CHECK(n <= dlen, "WRITE of %u bytes says %u written", dlen, n);
	}
}

/* ---- the lock manager and the portmapper ---- */

static bool netobj_eq(const netobj *a, const netobj *b)
{
	return a->n_len == b->n_len && (!a->n_len || memcmp(a->n_bytes, b->n_bytes, a->n_len) == 0);
}

/* Every NLM result but the void ones begins with the call's cookie, then its status: one of
 * nlm4_stats in version 4, of the first five in versions 1 and 3 (knfsd maps the rest). As no
 * lock client, the server answers a GRANTED with DENIED. */
static void nlm_semantics(const struct rpc_call *c, const struct proc_desc *pd, const void *args,
			  const void *res)
{
	if (!pd->res_size || !args)
		return;       /* void, or a reply replayed for other arguments */
	FZ_CHECK(netobj_eq(args, res), "%s v%u: cookie of %u bytes answered with %u", pd->name,
		 c->vers, ((const netobj *)args)->n_len, ((const netobj *)res)->n_len);
	uint32_t st;
	bool v4 = c->vers == NLM4_VERS;
	if (c->proc == NLMPROC_TEST)
		st = v4 ? (uint32_t)((const nlm4_testres *)res)->stat.stat
			: (uint32_t)((const nlm_testres *)res)->stat.stat;
	else if (c->proc == NLMPROC_SHARE || c->proc == NLMPROC_UNSHARE)
		st = v4 ? (uint32_t)((const nlm4_shareres *)res)->stat
			: (uint32_t)((const nlm_shareres *)res)->stat;
	else
		st = v4 ? (uint32_t)((const nlm4_res *)res)->stat.stat
			: (uint32_t)((const nlm_res *)res)->stat.stat;
	if (fz_trace)
		fprintf(stderr, "fz: %s v%u xid %08x: status %u\n", pd->name, c->vers, c->xid, st);
	FZ_CHECK(st <= (v4 ? (uint32_t)NLM4_FAILED : (uint32_t)nlm_denied_grace_period),
		 "%s v%u: status %u", pd->name, c->vers, st);
	if (c->proc == NLMPROC_GRANTED)
		FZ_CHECK(st == NLM4_DENIED, "%s: status %u", pd->name, st);
	if (c->proc == NLMPROC_UNSHARE || c->proc == NLMPROC_CANCEL || c->proc == NLMPROC_UNLOCK)
		FZ_CHECK(st != NLM4_BLOCKED && st != NLM4_DENIED, "%s: status %u", pd->name, st);
	if (c->proc != NLMPROC_LOCK)
		FZ_CHECK(st != NLM4_BLOCKED, "%s: BLOCKED", pd->name);
	if (c->proc == NLMPROC_LOCK && st == NLM4_BLOCKED)
		FZ_CHECK(v4 ? ((const nlm4_lockargs *)args)->block : ((const nlm_lockargs *)args)->block,
			 "LOCK without block answered BLOCKED");
}

/* We monitor no one: SM_STAT and SM_MON fail; every answer carries our state, odd while we
 * run. */
static void nsm_semantics(const struct rpc_call *c, const struct proc_desc *pd, const void *res)
{
	int32_t state;
	if (c->proc == SM_STAT || c->proc == SM_MON) {
		const sm_stat_res *r = res;
		FZ_CHECK(r->res_stat == stat_fail, "%s: res_stat %d", pd->name, (int)r->res_stat);
		state = r->state;
	} else if (c->proc == SM_UNMON || c->proc == SM_UNMON_ALL) {
		state = ((const sm_stat *)res)->state;
	} else {
		return;
	}
	FZ_CHECK(state > 0 && state % 2 == 1, "%s: state %d", pd->name, state);
}

/* A universal address in a result: empty (none) or one of the families we serve. */
static void uaddr_ok(const char *what, const char *u)
{
	struct sockaddr_storage ss;
	FZ_CHECK(u, "%s: no address", what);
	FZ_CHECK(!*u || uaddr_parse(u, &ss), "%s: address \"%s\"", what, u);
}

static void pmap_semantics(const struct rpc_call *c, const struct proc_desc *pd, const void *res)
{
	int proto, family;
	if (c->vers == 2) {
		if (c->proc == PMAPPROC_GETPORT)
			FZ_CHECK(*(const u_int *)res <= 65535, "GETPORT port %u", *(const u_int *)res);
		if (c->proc != PMAPPROC_DUMP)
			return;
		for (const struct pmaplist *l = *(struct pmaplist *const *)res; l; l = l->pml_next) {
			const struct pmap *m = &l->pml_map;
			FZ_CHECK(m->pm_port <= 65535 &&
				 (m->pm_prot == IPPROTO_TCP || m->pm_prot == IPPROTO_UDP),
				 "PMAP DUMP entry %lu v%lu prot %lu port %lu", m->pm_prog, m->pm_vers,
				 m->pm_prot, m->pm_port);
		}
		return;
	}
	switch (c->proc) {
	case RPCBPROC_GETADDR:
	case RPCBPROC_TADDR2UADDR:
	case RPCBPROC_GETVERSADDR:
		uaddr_ok(pd->name, *(char *const *)res);
		break;
	case RPCBPROC_UADDR2TADDR: {
		const struct netbuf *nb = res;
		bool size_ok = nb->len == 0 || nb->len == sizeof(struct sockaddr_in) ||
			       nb->len == sizeof(struct sockaddr_in6);
		FZ_CHECK(nb->len == nb->maxlen && size_ok, "UADDR2TADDR: %u bytes of %u", nb->len,
			 nb->maxlen);
		break;
	}
	case RPCBPROC_DUMP:
		for (rpcblist_ptr l = *(const rpcblist_ptr *)res; l; l = l->rpcb_next) {
			FZ_CHECK(pmap_netid_parse(l->rpcb_map.r_netid, &proto, &family), "DUMP netid %s",
				 l->rpcb_map.r_netid);
			uaddr_ok("RPCB_DUMP", l->rpcb_map.r_addr);
			FZ_CHECK(*l->rpcb_map.r_addr, "RPCB_DUMP: an entry without an address");
		}
		break;
	case RPCBPROC_GETADDRLIST:
		if (c->vers != 4)
			break;
		for (rpcb_entry_list_ptr l = *(const rpcb_entry_list_ptr *)res; l; l = l->rpcb_entry_next) {
			const rpcb_entry *e = &l->rpcb_entry_map;
			FZ_CHECK(pmap_netid_parse(e->r_nc_netid, &proto, &family), "GETADDRLIST netid %s",
				 e->r_nc_netid);
			uaddr_ok("GETADDRLIST", e->r_maddr);
		}
		break;
	}
}

/* An accepted SUCCESS result must decode (the client's decoder) to exactly its bytes, with a
 * status of its protocol's; args are the call's, decoded. */
static bool check_result(const struct rpc_call *c, const struct proc_desc *pd, const void *args,
			 const struct hdr *h, bool replayed, struct fz_fh *fh)
{
	bool nfs = c->prog == NFS_PROGRAM, mnt = c->prog == MOUNT_PROGRAM;
	if (c->prog == stats_program.prog)
		return false;      /* the stats program: no client decoder to hold it to */
	xdrproc_t dec = nfs && c->proc == NFSPROC3_READ ? (xdrproc_t)xdr_READ3res : pd->encode;
	size_t size = nfs && c->proc == NFSPROC3_READ ? sizeof(READ3res) : pd->res_size;
	void *res = calloc(1, size ? size : 1);
	/* The body's own copy, of its exact size: a decoder reading past it is caught by ASan. */
	char *body = malloc(h->body_len ? h->body_len : 1);
	FZ_CHECK(res && body, "out of memory");
	memcpy(body, h->body, h->body_len);
	XDR x;
	xdrmem_create(&x, body, (u_int)h->body_len, XDR_DECODE);
	bool ok = dec(&x, res);
	u_int pos = xdr_getpos(&x);
	xdr_destroy(&x);
	FZ_CHECK(ok, "%s result of %zu bytes does not decode", pd->name, h->body_len);
	FZ_CHECK(pos == h->body_len, "%s result: %u of %zu bytes decoded", pd->name, pos, h->body_len);
	bool got = false;
	if (fz_trace && (nfs || mnt))
		fprintf(stderr, "fz: %s xid %08x: status %u\n", pd->name, c->xid,
			size ? *(const uint32_t *)res : 0);
	if (c->prog == NLM_PROG && !replayed)
		nlm_semantics(c, pd, args, res);
	else if (c->prog == SM_PROG)
		nsm_semantics(c, pd, res);
	else if (c->prog == PMAP_PROG)
		pmap_semantics(c, pd, res);
	if (size && (nfs || mnt)) {
		uint32_t st = *(const uint32_t *)res;
		if (nfs) {
			FZ_CHECK(nfsstat3_valid(st), "%s status %u is no nfsstat3", pd->name, st);
			if (!replayed)
				nfs3_semantics(c, c->proc, res);
			got = nfs3_new_handle(c->proc, res, fh);
		} else if (c->proc == MOUNTPROC3_MNT) {
			const mountres3 *m = res;
			FZ_CHECK(mountstat3_valid(st), "MNT status %u is no mountstat3", st);
			if (m->fhs_status == MNT3_OK) {
				const fhandle3 *f = &m->mountres3_u.mountinfo.fhandle;
				fh->len = f->fhandle3_len <= sizeof fh->data ? f->fhandle3_len : 0;
				memcpy(fh->data, f->fhandle3_val, fh->len);
				got = fh->len > 0;
			}
		}
	}
	xdr_free(dec, res);
	free(res);
	free(body);
	return got;
}

/* RPC_OK: the program, version and procedure decide, then the arguments. */
static bool check_dispatched(const struct rpc_call *c, int proto, const struct hdr *h,
			     bool replayed, struct fz_fh *fh)
{
	FZ_CHECK(h->stat == 0, "call with a good header denied");
	bool known;
	uint32_t low = 0, high = 0;
	const struct prog_desc *p = find_prog(proto, c->prog, c->vers, &known, &low, &high);
	if (!known) {
		FZ_CHECK(h->accept == ACCEPT_PROG_UNAVAIL, "program %u over %s: accept_stat %u", c->prog,
			 proto == IPPROTO_UDP ? "UDP" : "TCP", h->accept);
		return false;
	}
	if (!p) {
		FZ_CHECK(h->accept == ACCEPT_PROG_MISMATCH && h->low == low && h->high == high,
			 "program %u version %u: accept_stat %u (%u..%u), expected PROG_MISMATCH %u..%u",
			 c->prog, c->vers, h->accept, h->low, h->high, low, high);
		return false;
	}
	if (c->proc >= p->nprocs || !p->procs[c->proc].handler) {
		FZ_CHECK(h->accept == ACCEPT_PROC_UNAVAIL, "procedure %u: accept_stat %u", c->proc, h->accept);
		return false;
	}
	const struct proc_desc *pd = &p->procs[c->proc];
	FZ_CHECK(h->accept != ACCEPT_SYSTEM_ERR, "%s: SYSTEM_ERR (reply did not encode)", pd->name);
	void *args = calloc(1, pd->args_size ? pd->args_size : 1);
	FZ_CHECK(args, "out of memory");
	bool decodes = args_decode(pd, c, args);
	/* A reply from the duplicate request cache answered an earlier call with the same key,
	 * whose arguments may differ past what the key covers. */
	FZ_CHECK(replayed || decodes == (h->accept == ACCEPT_SUCCESS), "%s: arguments %s, accept_stat %u",
		 pd->name, decodes ? "decode" : "do not decode", h->accept);
	bool got = h->accept == ACCEPT_SUCCESS &&
		   check_result(c, pd, decodes ? args : NULL, h, replayed, fh);
	args_release(pd, args);
	free(args);
	return got;
}

bool fz_check_reply(const uint8_t *rec, size_t len, int proto, const uint8_t *rep, size_t rlen,
		    bool replayed, struct fz_fh *fh)
{
	struct rpc_call c;
	enum rpc_verdict v = rpc_decode_call(rec, len, &c);
	if (v == RPC_DROP) {
		FZ_CHECK(!rep, "a reply to a record that is no call");
		return false;
	}
	FZ_CHECK(rep, "no reply to call xid %08x (verdict %d)", c.xid, (int)v);
	struct hdr h;
	parse_reply(rep, rlen, &h);
	FZ_CHECK(h.xid == c.xid, "reply xid %08x to call %08x", h.xid, c.xid);
	if (fz_trace)
		fprintf(stderr, "fz: xid %08x prog %u vers %u proc %u: verdict %d, reply_stat %u, "
			"accept_stat %u%s\n", c.xid, c.prog, c.vers, c.proc, (int)v, h.stat, h.accept,
			replayed ? " (replayed)" : "");
	switch (v) {
	case RPC_REPLY_RPC_MISMATCH:
		FZ_CHECK(h.stat == 1 && h.reject == 0 && h.low == 2 && h.high == 2, "RPC_MISMATCH expected");
		return false;
	case RPC_REPLY_AUTH_BADCRED:
	case RPC_REPLY_AUTH_TOOWEAK:
		FZ_CHECK(h.stat == 1 && h.reject == 1 && h.auth == (v == RPC_REPLY_AUTH_BADCRED ? 1u : 5u),
			 "AUTH_ERROR %s expected", v == RPC_REPLY_AUTH_BADCRED ? "BADCRED" : "TOOWEAK");
		return false;
	case RPC_REPLY_GARBAGE_ARGS:
		FZ_CHECK(h.stat == 0 && h.accept == ACCEPT_GARBAGE_ARGS, "GARBAGE_ARGS expected");
		return false;
	case RPC_OK:
		if (c.cred.flavor == RPC_AUTH_GSS) {
			/* The program and procedure are looked up first, as for any flavor. */
			FZ_CHECK((h.stat == 1 && h.reject == 1 && h.auth == 1) ||
				 (h.stat == 0 && (h.accept == ACCEPT_PROG_UNAVAIL ||
						  h.accept == ACCEPT_PROG_MISMATCH ||
						  h.accept == ACCEPT_PROC_UNAVAIL)),
				 "AUTH_BADCRED expected: RPCSEC_GSS without a keytab");
			return false;
		}
		return check_dispatched(&c, proto, &h, replayed, fh);
	case RPC_DROP:
	case RPC_REPLY_AUTH_BADVERF:      /* never the decoder's: the RPCSEC_GSS checks' */
	case RPC_REPLY_GSS_CREDPROBLEM:
	case RPC_REPLY_GSS_CTXPROBLEM:
		break;
	}
	return false;
}
