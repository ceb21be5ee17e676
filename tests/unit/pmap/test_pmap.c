/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The portmapper (src/pmap) through its procedure tables, the way the dispatcher calls them:
 * arguments XDR-encoded with libtirpc, decoded by the table's decoder, the handler run on a
 * request whose peer and local address the test sets, the result encoded by the table's encoder
 * and decoded back with libtirpc. GETPORT hits, misses and protocols; DUMP in v2 and v3; GETADDR's
 * universal address from the local address (IPv4, IPv6, IPv4-mapped), the hint, or neither;
 * GETVERSADDR's exact version; SET and UNSET from loopback, from elsewhere, and on nfsd-uc's own
 * entries; UADDR2TADDR and TADDR2UADDR; GETADDRLIST; a server that is not the portmapper. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netconfig.h>
#include <rpc/rpc.h>
#include <rpc/pmap_prot.h>
#include <rpc/rpcb_prot.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conf/config.h"
#include "svc/dispatch.h"
#include "pmap/pmap.h"
#include "svc/dispatch.h"

#define NFS 100003u
#define MOUNT 100005u
#define NSM 100024u

/* The programs' state, as the daemon registers them with it. */
struct env {
	struct pmap_reg *reg;
};

static struct sockaddr_storage addr(const char *host, uint16_t port)
{
	struct sockaddr_storage ss = {0};
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
	if (!host)
		return ss;   /* AF_UNSPEC: unknown */
	if (inet_pton(AF_INET, host, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
	} else {
		assert_int_equal(inet_pton(AF_INET6, host, &s6->sin6_addr), 1);
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
	}
	return ss;
}

static const struct pmap_prog_port own[] = {
	{NFS, 3, IPPROTO_TCP, 2049, 0},
	{MOUNT, 3, IPPROTO_TCP, 20048, 0},
	{MOUNT, 3, IPPROTO_UDP, 20048, 0},
};

static int setup_families(void **state, unsigned families)
{
	struct env *e = calloc(1, sizeof *e);
	assert_non_null(e);
	e->reg = pmap_reg_new(families);
	assert_non_null(e->reg);
	assert_int_equal(pmap_reg_add_own_list(e->reg, own, sizeof own / sizeof own[0]), 0);
	*state = e;
	return 0;
}

static int setup(void **state)
{
	return setup_families(state, PMAP_INET | PMAP_INET6);
}

static int setup_v4(void **state)
{
	return setup_families(state, PMAP_INET);
}

static int teardown(void **state)
{
	struct env *e = *state;
	pmap_reg_free(e->reg);
	free(e);
	return 0;
}

/* One call as the dispatcher makes it; *res is decoded with dec (libtirpc), the caller frees it. */
static void call(struct env *e, const struct prog_desc *prog, uint32_t proc, xdrproc_t enc,
		 void *args, xdrproc_t dec, void *res, struct sockaddr_storage peer,
		 struct sockaddr_storage local)
{
	static char in[8192], out[1 << 18];
	assert_true(proc < prog->nprocs);
	const struct proc_desc *pd = &prog->procs[proc];
	assert_non_null(pd->handler);
	assert_false(pd->cache_reply);

	XDR x;
	xdrmem_create(&x, in, sizeof in, XDR_ENCODE);
	assert_true(enc(&x, args));
	u_int inlen = xdr_getpos(&x);
	xdr_destroy(&x);

	void *a = calloc(1, pd->args_size ? pd->args_size : 1);
	void *r = calloc(1, pd->res_size ? pd->res_size : 1);
	assert_non_null(a);
	assert_non_null(r);
	xdrmem_create(&x, in, inlen, XDR_DECODE);
	assert_true(pd->decode(&x, a));
	xdr_destroy(&x);

	struct svc_call rq = {.prog = e->reg, .peer = peer, .local = local};
	pd->handler(&rq, a, r);

	xdrmem_create(&x, out, sizeof out, XDR_ENCODE);
	assert_true(pd->encode(&x, r));
	u_int outlen = xdr_getpos(&x);
	xdr_destroy(&x);
	/* The dispatcher's reply buffer: 8 KiB, or what the handler asked for. */
	assert_true(outlen <= (rq.reply_hint > 8192 ? rq.reply_hint : 8192));
	xdr_free(pd->decode, a);
	free(a);
	free(r);
	arena_free(&rq.arena);

	xdrmem_create(&x, out, outlen, XDR_DECODE);
	assert_true(dec(&x, res));
	assert_int_equal(xdr_getpos(&x), outlen);   /* the whole result, nothing left over */
	xdr_destroy(&x);
}

#define X(f) XDRPROC(f)
#define LOOPBACK addr("127.0.0.1", 700)
#define REMOTE addr("10.0.0.5", 700)
#define NOWHERE addr(NULL, 0)

static u_int getport(struct env *e, uint32_t prog, uint32_t vers, int proto)
{
	struct pmap a = {prog, vers, (unsigned long)proto, 0};
	u_int port = 12345;
	call(e, &pmap2_program, PMAPPROC_GETPORT, X(xdr_pmap), &a, X(xdr_u_int), &port, REMOTE, NOWHERE);
	return port;
}

/* GETADDR (v3) or GETVERSADDR (v4) into out. */
static void getaddr(struct env *e, const struct prog_desc *prog, uint32_t proc, uint32_t pr,
		    uint32_t vers, const char *netid, const char *hint, struct sockaddr_storage local,
		    char *out, size_t len)
{
	RPCB a = {pr, vers, (char *)netid, (char *)hint, (char *)""};
	char *s = NULL;
	call(e, prog, proc, X(xdr_rpcb), &a, X(xdr_wrapstring), &s, REMOTE, local);
	assert_non_null(s);
	snprintf(out, len, "%s", s);
	xdr_free(X(xdr_wrapstring), (char *)&s);
}

static bool_t rpcb_change(struct env *e, uint32_t proc, uint32_t prog, uint32_t vers,
			  const char *netid, const char *uaddr, struct sockaddr_storage peer)
{
	RPCB a = {prog, vers, (char *)netid, (char *)uaddr, (char *)"tester"};
	bool_t ok = 7;
	call(e, &rpcb3_program, proc, X(xdr_rpcb), &a, X(xdr_bool), &ok, peer, NOWHERE);
	return ok;
}

static bool_t pmap_change(struct env *e, uint32_t proc, uint32_t prog, uint32_t vers, int proto,
			  u_long port, struct sockaddr_storage peer)
{
	struct pmap a = {prog, vers, (unsigned long)proto, port};
	bool_t ok = 7;
	call(e, &pmap2_program, proc, X(xdr_pmap), &a, X(xdr_bool), &ok, peer, NOWHERE);
	return ok;
}

static void test_getport(void **state)
{
	struct env *e = *state;
	assert_int_equal(getport(e, NFS, 3, IPPROTO_TCP), 2049);
	assert_int_equal(getport(e, MOUNT, 3, IPPROTO_TCP), 20048);
	assert_int_equal(getport(e, MOUNT, 3, IPPROTO_UDP), 20048);
	assert_int_equal(getport(e, NFS, 3, IPPROTO_UDP), 0);        /* NFS is TCP only */
	assert_int_equal(getport(e, NFS, 3, 99), 0);                 /* not a protocol */
	assert_int_equal(getport(e, 100099, 1, IPPROTO_TCP), 0);     /* not registered */
	/* Another version of a registered program: its port, as rpcbind (the server answers
	 * PROG_MISMATCH then). */
	assert_int_equal(getport(e, NFS, 4, IPPROTO_TCP), 2049);
	/* The null procedure answers; the indirect call is not served (PROC_UNAVAIL). */
	assert_non_null(pmap2_program.procs[PMAPPROC_NULL].handler);
	assert_null(pmap2_program.procs[PMAPPROC_CALLIT].handler);
	assert_int_equal(pmap2_program.prog, 100000);
	assert_int_equal(pmap2_program.vers, 2);
}

/* The v2 DUMP: every entry once per protocol; a registration of another service is in it. */
static void test_dump_v2(void **state)
{
	struct env *e = *state;
	assert_true(pmap_change(e, PMAPPROC_SET, NSM, 1, IPPROTO_UDP, 1000, LOOPBACK));
	struct pmaplist *l = NULL;
	call(e, &pmap2_program, PMAPPROC_DUMP, X(xdr_void), NULL, X(xdr_pmaplist), &l, REMOTE, NOWHERE);
	static const struct { u_long prog, vers, prot, port; } want[] = {
		{NFS, 3, IPPROTO_TCP, 2049}, {MOUNT, 3, IPPROTO_TCP, 20048},
		{MOUNT, 3, IPPROTO_UDP, 20048}, {NSM, 1, IPPROTO_UDP, 1000},
	};
	size_t n = 0;
	for (struct pmaplist *p = l; p; p = p->pml_next, n++) {
		assert_true(n < sizeof want / sizeof want[0]);
		assert_int_equal(p->pml_map.pm_prog, want[n].prog);
		assert_int_equal(p->pml_map.pm_vers, want[n].vers);
		assert_int_equal(p->pml_map.pm_prot, want[n].prot);
		assert_int_equal(p->pml_map.pm_port, want[n].port);
	}
	assert_int_equal(n, sizeof want / sizeof want[0]);
	xdr_free(X(xdr_pmaplist), (char *)&l);
}

/* The v3 DUMP: own entries for each family served, with the address the client reached. */
static void test_dump_v3(void **state)
{
	struct env *e = *state;
	assert_true(rpcb_change(e, RPCBPROC_SET, NSM, 1, "tcp6", "::1.3.233", addr("::1", 800)));
	rpcblist_ptr l = NULL;
	call(e, &rpcb3_program, RPCBPROC_DUMP, X(xdr_void), NULL, X(xdr_rpcblist_ptr), &l, REMOTE,
	     addr("192.168.1.20", 111));
	static const struct { uint32_t prog; const char *netid, *addr, *owner; } want[] = {
		{NFS, "tcp", "192.168.1.20.8.1", "nfsd-uc"}, {NFS, "tcp6", "::.8.1", "nfsd-uc"},
		{MOUNT, "tcp", "192.168.1.20.78.80", "nfsd-uc"}, {MOUNT, "tcp6", "::.78.80", "nfsd-uc"},
		{MOUNT, "udp", "192.168.1.20.78.80", "nfsd-uc"}, {MOUNT, "udp6", "::.78.80", "nfsd-uc"},
		{NSM, "tcp6", "::1.3.233", "unknown"},
	};
	size_t n = 0;
	for (rpcblist_ptr p = l; p; p = p->rpcb_next, n++) {
		assert_true(n < sizeof want / sizeof want[0]);
		assert_int_equal(p->rpcb_map.r_prog, want[n].prog);
		assert_string_equal(p->rpcb_map.r_netid, want[n].netid);
		assert_string_equal(p->rpcb_map.r_addr, want[n].addr);
		assert_string_equal(p->rpcb_map.r_owner, want[n].owner);
	}
	assert_int_equal(n, sizeof want / sizeof want[0]);
	xdr_free(X(xdr_rpcblist_ptr), (char *)&l);
}

/* A full registry's DUMP does not fit the dispatcher's default 8 KiB: the handlers ask for more. */
static void test_dump_large(void **state)
{
	struct env *e = *state;
	char uaddr[PMAP_UADDR_MAX];
	for (uint32_t i = 0; i < PMAP_SET_MAX / 2; i++) {
		snprintf(uaddr, sizeof uaddr, "fd00::1234:5678:%x.%u.%u", i, (i >> 8) & 0xff, i & 0xff);
		assert_true(rpcb_change(e, RPCBPROC_SET, 400000 + i, 1, "udp6", uaddr, LOOPBACK));
		assert_true(pmap_change(e, PMAPPROC_SET, 600000 + i, 1, IPPROTO_TCP, i, LOOPBACK));
	}
	/* The bound on entries others set. */
	assert_false(pmap_change(e, PMAPPROC_SET, 700000, 1, IPPROTO_TCP, 1, LOOPBACK));
	rpcblist_ptr l = NULL;
	call(e, &rpcb3_program, RPCBPROC_DUMP, X(xdr_void), NULL, X(xdr_rpcblist_ptr), &l, REMOTE,
	     addr("fd00::7", 111));
	size_t n = 0;
	for (rpcblist_ptr p = l; p; p = p->rpcb_next)
		n++;
	assert_int_equal(n, 6 + PMAP_SET_MAX);
	xdr_free(X(xdr_rpcblist_ptr), (char *)&l);
	struct pmaplist *pl = NULL;
	call(e, &pmap2_program, PMAPPROC_DUMP, X(xdr_void), NULL, X(xdr_pmaplist), &pl, REMOTE, NOWHERE);
	n = 0;
	for (struct pmaplist *p = pl; p; p = p->pml_next)
		n++;
	assert_int_equal(n, 3 + PMAP_SET_MAX / 2);   /* IPv4 entries only */
	xdr_free(X(xdr_pmaplist), (char *)&pl);
}

static void test_getaddr(void **state)
{
	struct env *e = *state;
	char u[PMAP_UADDR_MAX];
	/* The address the client reached us on, the port split in two bytes: 2049 = 8.1. */
	getaddr(e, &rpcb3_program, RPCBPROC_GETADDR, NFS, 3, "tcp", "", addr("192.168.1.20", 111),
		u, sizeof u);
	assert_string_equal(u, "192.168.1.20.8.1");
	getaddr(e, &rpcb3_program, RPCBPROC_GETADDR, MOUNT, 3, "udp", "", addr("10.9.8.7", 111),
		u, sizeof u);
	assert_string_equal(u, "10.9.8.7.78.80");   /* 20048 = 78 * 256 + 80 */
	getaddr(e, &rpcb4_program, RPCBPROC_GETADDR, NFS, 3, "tcp6", "", addr("fd00::7", 111),
		u, sizeof u);
	assert_string_equal(u, "fd00::7.8.1");
	/* IPv4 reached through a dual-stack socket: an IPv4 address for "tcp". */
	getaddr(e, &rpcb3_program, RPCBPROC_GETADDR, NFS, 3, "tcp", "", addr("::ffff:192.168.1.20", 111),
		u, sizeof u);
	assert_string_equal(u, "192.168.1.20.8.1");
	/* No local address: the client's hint (the address it used, port 0 as Linux sends). */
	getaddr(e, &rpcb3_program, RPCBPROC_GETADDR, NFS, 3, "tcp", "10.1.2.3.0.0", NOWHERE, u, sizeof u);
	assert_string_equal(u, "10.1.2.3.8.1");
	getaddr(e, &rpcb3_program, RPCBPROC_GETADDR, NFS, 3, "tcp6", "fd00::9.0.0", NOWHERE, u, sizeof u);
	assert_string_equal(u, "fd00::9.8.1");
	/* Neither: the wildcard, with the port. */
	getaddr(e, &rpcb3_program, RPCBPROC_GETADDR, NFS, 3, "tcp", "", NOWHERE, u, sizeof u);
	assert_string_equal(u, "0.0.0.0.8.1");
	/* An empty netid: TCP of the local address's family. */
	getaddr(e, &rpcb3_program, RPCBPROC_GETADDR, NFS, 3, "", "", addr("fd00::7", 111), u, sizeof u);
	assert_string_equal(u, "fd00::7.8.1");
	/* Not registered: "". */
	getaddr(e, &rpcb3_program, RPCBPROC_GETADDR, NFS, 3, "udp", "", addr("192.168.1.20", 111),
		u, sizeof u);
	assert_string_equal(u, "");
	getaddr(e, &rpcb3_program, RPCBPROC_GETADDR, 100099, 1, "tcp", "", addr("192.168.1.20", 111),
		u, sizeof u);
	assert_string_equal(u, "");
	getaddr(e, &rpcb3_program, RPCBPROC_GETADDR, NFS, 3, "rdma", "", addr("192.168.1.20", 111),
		u, sizeof u);
	assert_string_equal(u, "");
	assert_null(rpcb3_program.procs[RPCBPROC_CALLIT].handler);
}

/* A registry for IPv4 listeners only has no tcp6 entries. */
static void test_getaddr_ipv4_only(void **state)
{
	struct env *e = *state;
	char u[PMAP_UADDR_MAX];
	getaddr(e, &rpcb3_program, RPCBPROC_GETADDR, NFS, 3, "tcp6", "", addr("fd00::7", 111), u, sizeof u);
	assert_string_equal(u, "");
	getaddr(e, &rpcb3_program, RPCBPROC_GETADDR, NFS, 3, "tcp", "", addr("192.168.1.20", 111),
		u, sizeof u);
	assert_string_equal(u, "192.168.1.20.8.1");
	/* PMAP v2 has no families: it answers whatever the registry's. */
	assert_int_equal(getport(e, NFS, 3, IPPROTO_TCP), 2049);
}

static void test_getversaddr(void **state)
{
	struct env *e = *state;
	char u[PMAP_UADDR_MAX];
	struct sockaddr_storage l = addr("192.168.1.20", 111);
	getaddr(e, &rpcb4_program, RPCBPROC_GETVERSADDR, NFS, 3, "tcp", "", l, u, sizeof u);
	assert_string_equal(u, "192.168.1.20.8.1");
	getaddr(e, &rpcb4_program, RPCBPROC_GETVERSADDR, NFS, 4, "tcp", "", l, u, sizeof u);
	assert_string_equal(u, "");                   /* exactly this version: none */
	getaddr(e, &rpcb4_program, RPCBPROC_GETADDR, NFS, 4, "tcp", "", l, u, sizeof u);
	assert_string_equal(u, "192.168.1.20.8.1");   /* GETADDR: any version of the program */
	assert_null(rpcb4_program.procs[RPCBPROC_BCAST].handler);
	assert_null(rpcb4_program.procs[RPCBPROC_INDIRECT].handler);
	assert_int_equal(rpcb4_program.nprocs, RPCBPROC_GETSTAT + 1);
	assert_int_equal(rpcb3_program.nprocs, RPCBPROC_TADDR2UADDR + 1);
}

/* Local services register as with rpcbind, through either protocol, and unregister. */
static void test_set_from_loopback(void **state)
{
	struct env *e = *state;
	char u[PMAP_UADDR_MAX];
	assert_true(rpcb_change(e, RPCBPROC_SET, NSM, 1, "udp", "0.0.0.0.3.232", LOOPBACK));
	assert_int_equal(getport(e, NSM, 1, IPPROTO_UDP), 1000);
	assert_int_equal(getport(e, NSM, 1, IPPROTO_TCP), 0);
	getaddr(e, &rpcb4_program, RPCBPROC_GETVERSADDR, NSM, 1, "udp", "", addr("192.168.1.20", 111),
		u, sizeof u);
	assert_string_equal(u, "192.168.1.20.3.232");
	/* A second SET of the same (prog, vers, netid) is refused, as rpcbind does. */
	assert_false(rpcb_change(e, RPCBPROC_SET, NSM, 1, "udp", "0.0.0.0.3.233", LOOPBACK));
	/* Malformed: the netid, the address, or an address of the other family. */
	assert_false(rpcb_change(e, RPCBPROC_SET, NSM, 2, "local", "/run/x.sock", LOOPBACK));
	assert_false(rpcb_change(e, RPCBPROC_SET, NSM, 2, "udp", "0.0.0.0.3", LOOPBACK));
	assert_false(rpcb_change(e, RPCBPROC_SET, NSM, 2, "udp6", "0.0.0.0.3.232", LOOPBACK));
	/* A service bound to one address: that address, whatever the client reached. */
	assert_true(rpcb_change(e, RPCBPROC_SET, 300001, 1, "tcp", "127.0.0.1.4.0", addr("::1", 900)));
	getaddr(e, &rpcb3_program, RPCBPROC_GETADDR, 300001, 1, "tcp", "", addr("192.168.1.20", 111),
		u, sizeof u);
	assert_string_equal(u, "127.0.0.1.4.0");

	/* PMAP v2 SET from ::1 and from an IPv4-mapped loopback address. */
	assert_true(pmap_change(e, PMAPPROC_SET, 300000, 1, IPPROTO_TCP, 5555, addr("::1", 600)));
	assert_int_equal(getport(e, 300000, 1, IPPROTO_TCP), 5555);
	assert_true(pmap_change(e, PMAPPROC_SET, 300000, 2, IPPROTO_UDP, 5556,
				addr("::ffff:127.0.0.2", 600)));
	assert_int_equal(getport(e, 300000, 2, IPPROTO_UDP), 5556);
	assert_false(pmap_change(e, PMAPPROC_SET, 300000, 3, 99, 5557, LOOPBACK));

	/* UNSET: v3 for one netid, v2 for both protocols. */
	assert_true(rpcb_change(e, RPCBPROC_UNSET, NSM, 1, "udp", "", LOOPBACK));
	assert_int_equal(getport(e, NSM, 1, IPPROTO_UDP), 0);
	assert_true(pmap_change(e, PMAPPROC_UNSET, 300000, 1, 0, 0, LOOPBACK));
	assert_int_equal(getport(e, 300000, 1, IPPROTO_TCP), 0);
	assert_int_equal(getport(e, 300000, 2, IPPROTO_UDP), 5556);   /* another version stays */
	/* UNSET of what is not there: true, as rpcbind. */
	assert_true(rpcb_change(e, RPCBPROC_UNSET, 300009, 1, "", "", LOOPBACK));
}

static void test_set_from_remote_refused(void **state)
{
	struct env *e = *state;
	assert_false(rpcb_change(e, RPCBPROC_SET, NSM, 1, "udp", "0.0.0.0.3.232", REMOTE));
	assert_false(pmap_change(e, PMAPPROC_SET, NSM, 1, IPPROTO_UDP, 1000, REMOTE));
	assert_false(pmap_change(e, PMAPPROC_SET, NSM, 1, IPPROTO_UDP, 1000, addr("fd00::5", 700)));
	assert_false(pmap_change(e, PMAPPROC_SET, NSM, 1, IPPROTO_UDP, 1000, addr("::ffff:10.0.0.5", 7)));
	assert_int_equal(getport(e, NSM, 1, IPPROTO_UDP), 0);
	/* Nor may anyone else UNSET what a local service set. */
	assert_true(rpcb_change(e, RPCBPROC_SET, NSM, 1, "udp", "0.0.0.0.3.232", LOOPBACK));
	assert_false(rpcb_change(e, RPCBPROC_UNSET, NSM, 1, "udp", "", REMOTE));
	assert_false(pmap_change(e, PMAPPROC_UNSET, NSM, 1, 0, 0, REMOTE));
	assert_int_equal(getport(e, NSM, 1, IPPROTO_UDP), 1000);
}

static void test_own_entries_refused(void **state)
{
	struct env *e = *state;
	assert_false(rpcb_change(e, RPCBPROC_UNSET, NFS, 3, "tcp", "", LOOPBACK));
	assert_false(rpcb_change(e, RPCBPROC_UNSET, NFS, 3, "", "", LOOPBACK));
	assert_false(pmap_change(e, PMAPPROC_UNSET, MOUNT, 3, 0, 0, LOOPBACK));
	/* Nor can they be set over, in any family. */
	assert_false(rpcb_change(e, RPCBPROC_SET, NFS, 3, "tcp", "0.0.0.0.8.2", LOOPBACK));
	assert_false(rpcb_change(e, RPCBPROC_SET, NFS, 3, "tcp6", "::.8.2", LOOPBACK));
	assert_false(pmap_change(e, PMAPPROC_SET, MOUNT, 3, IPPROTO_UDP, 1, LOOPBACK));
	assert_int_equal(getport(e, NFS, 3, IPPROTO_TCP), 2049);
	assert_int_equal(getport(e, MOUNT, 3, IPPROTO_UDP), 20048);
	/* The unused protocol of an own program is free for a local service. */
	assert_true(rpcb_change(e, RPCBPROC_SET, NFS, 3, "udp", "0.0.0.0.8.1", LOOPBACK));
	assert_int_equal(getport(e, NFS, 3, IPPROTO_UDP), 2049);
}

static void call_uaddr2taddr(struct env *e, const char *uaddr, struct netbuf *nb)
{
	*nb = (struct netbuf){0};
	call(e, &rpcb3_program, RPCBPROC_UADDR2TADDR, X(xdr_wrapstring), &uaddr, X(xdr_netbuf), nb,
	     REMOTE, NOWHERE);
}

static void call_taddr2uaddr(struct env *e, struct netbuf *nb, char *out, size_t len)
{
	char *s = NULL;
	call(e, &rpcb4_program, RPCBPROC_TADDR2UADDR, X(xdr_netbuf), nb, X(xdr_wrapstring), &s,
	     REMOTE, NOWHERE);
	snprintf(out, len, "%s", s);
	xdr_free(X(xdr_wrapstring), (char *)&s);
}

static void test_uaddr_taddr(void **state)
{
	struct env *e = *state;
	struct netbuf nb;
	char u[PMAP_UADDR_MAX];

	call_uaddr2taddr(e, "192.168.1.20.8.1", &nb);
	assert_int_equal(nb.len, sizeof(struct sockaddr_in));
	struct sockaddr_in s4;
	memcpy(&s4, nb.buf, sizeof s4);
	assert_int_equal(s4.sin_family, AF_INET);
	assert_int_equal(ntohs(s4.sin_port), 2049);
	assert_int_equal(ntohl(s4.sin_addr.s_addr), 0xc0a80114);
	call_taddr2uaddr(e, &nb, u, sizeof u);
	assert_string_equal(u, "192.168.1.20.8.1");
	xdr_free(X(xdr_netbuf), (char *)&nb);

	call_uaddr2taddr(e, "fd00::7.0.111", &nb);
	assert_int_equal(nb.len, sizeof(struct sockaddr_in6));
	struct sockaddr_in6 s6;
	memcpy(&s6, nb.buf, sizeof s6);
	assert_int_equal(s6.sin6_family, AF_INET6);
	assert_int_equal(ntohs(s6.sin6_port), 111);
	call_taddr2uaddr(e, &nb, u, sizeof u);
	assert_string_equal(u, "fd00::7.0.111");
	xdr_free(X(xdr_netbuf), (char *)&nb);

	/* Junk: an empty netbuf, and an empty or short one gives "". */
	call_uaddr2taddr(e, "not an address", &nb);
	assert_int_equal(nb.len, 0);
	call_taddr2uaddr(e, &nb, u, sizeof u);
	assert_string_equal(u, "");
	xdr_free(X(xdr_netbuf), (char *)&nb);
	struct sockaddr_in6 big = {.sin6_family = AF_INET6};
	struct netbuf shortbuf = {.maxlen = 16, .len = 16, .buf = &big};   /* too short for IPv6 */
	call_taddr2uaddr(e, &shortbuf, u, sizeof u);
	assert_string_equal(u, "");
}

static void test_getaddrlist(void **state)
{
	struct env *e = *state;
	RPCB a = {MOUNT, 3, (char *)"", (char *)"", (char *)""};
	rpcb_entry_list_ptr l = NULL;
	/* Reached over IPv4: the IPv4 addresses only. */
	call(e, &rpcb4_program, RPCBPROC_GETADDRLIST, X(xdr_rpcb), &a, X(xdr_rpcb_entry_list_ptr), &l,
	     REMOTE, addr("192.168.1.20", 111));
	rpcb_entry_list_ptr p = l;
	assert_non_null(p);
	assert_string_equal(p->rpcb_entry_map.r_maddr, "192.168.1.20.78.80");
	assert_string_equal(p->rpcb_entry_map.r_nc_netid, "tcp");
	assert_int_equal(p->rpcb_entry_map.r_nc_semantics, NC_TPI_COTS_ORD);
	assert_string_equal(p->rpcb_entry_map.r_nc_protofmly, "inet");
	assert_string_equal(p->rpcb_entry_map.r_nc_proto, "tcp");
	p = p->rpcb_entry_next;
	assert_non_null(p);
	assert_string_equal(p->rpcb_entry_map.r_maddr, "192.168.1.20.78.80");
	assert_string_equal(p->rpcb_entry_map.r_nc_netid, "udp");
	assert_int_equal(p->rpcb_entry_map.r_nc_semantics, NC_TPI_CLTS);
	assert_string_equal(p->rpcb_entry_map.r_nc_proto, "udp");
	assert_null(p->rpcb_entry_next);
	xdr_free(X(xdr_rpcb_entry_list_ptr), (char *)&l);

	/* Unknown transport, no netid: every family. */
	call(e, &rpcb4_program, RPCBPROC_GETADDRLIST, X(xdr_rpcb), &a, X(xdr_rpcb_entry_list_ptr), &l,
	     REMOTE, NOWHERE);
	size_t n = 0;
	for (p = l; p; p = p->rpcb_entry_next)
		n++;
	assert_int_equal(n, 4);
	xdr_free(X(xdr_rpcb_entry_list_ptr), (char *)&l);

	/* Exact version only. */
	a.r_vers = 1;
	call(e, &rpcb4_program, RPCBPROC_GETADDRLIST, X(xdr_rpcb), &a, X(xdr_rpcb_entry_list_ptr), &l,
	     REMOTE, NOWHERE);
	assert_null(l);
}

static void test_time_stat_null(void **state)
{
	struct env *e = *state;
	u_int t = 0;
	time_t before = time(NULL);
	call(e, &rpcb3_program, RPCBPROC_GETTIME, X(xdr_void), NULL, X(xdr_u_int), &t, REMOTE, NOWHERE);
	assert_true(t >= (u_int)before && t <= (u_int)time(NULL));
	rpcb_stat_byvers st;
	memset(st, 0xff, sizeof st);
	call(e, &rpcb4_program, RPCBPROC_GETSTAT, X(xdr_void), NULL, X(xdr_rpcb_stat_byvers), st,
	     REMOTE, NOWHERE);
	for (int v = 0; v < RPCBVERS_STAT; v++) {
		assert_int_equal(st[v].setinfo, 0);
		assert_null(st[v].addrinfo);
		assert_null(st[v].rmtinfo);
	}
	char dummy = 0;
	call(e, &rpcb4_program, 0, X(xdr_void), NULL, X(xdr_void), &dummy, REMOTE, NOWHERE);
	call(e, &pmap2_program, PMAPPROC_NULL, X(xdr_void), NULL, X(xdr_void), &dummy, REMOTE, NOWHERE);
}

/* A server that is not the portmapper does not register these programs (PROG_UNAVAIL); called
 * anyway, without a registry, every handler answers, with nothing. */
static void test_no_registry(void **state)
{
	(void)state;
	struct env e0 = {0};
	struct env *e = &e0;
	assert_int_equal(getport(e, NFS, 3, IPPROTO_TCP), 0);
	char u[PMAP_UADDR_MAX];
	getaddr(e, &rpcb3_program, RPCBPROC_GETADDR, NFS, 3, "tcp", "", addr("192.168.1.20", 111),
		u, sizeof u);
	assert_string_equal(u, "");
	assert_false(rpcb_change(e, RPCBPROC_SET, NSM, 1, "udp", "0.0.0.0.3.232", LOOPBACK));
	assert_false(pmap_change(e, PMAPPROC_UNSET, NSM, 1, 0, 0, LOOPBACK));
	struct pmaplist *l = NULL;
	call(e, &pmap2_program, PMAPPROC_DUMP, X(xdr_void), NULL, X(xdr_pmaplist), &l, REMOTE, NOWHERE);
	assert_null(l);
	rpcblist_ptr r = NULL;
	call(e, &rpcb3_program, RPCBPROC_DUMP, X(xdr_void), NULL, X(xdr_rpcblist_ptr), &r, REMOTE, NOWHERE);
	assert_null(r);
}

/* ---- the pieces below the handlers --------------------------------------------------------- */

static void test_uaddr_syntax(void **state)
{
	(void)state;
	struct sockaddr_storage ss;
	char u[PMAP_UADDR_MAX];
	static const char *const good[] = {"1.2.3.4.0.111", "0.0.0.0.255.255", "::1.0.111",
					   "::.8.1", "fe80::1:2.1.0", "::ffff:10.0.0.1.8.1"};
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		assert_true(uaddr_parse(good[i], &ss));
		assert_true(uaddr_format((struct sockaddr *)&ss, u, sizeof u));
		assert_string_equal(u, good[i]);
	}
	static const char *const bad[] = {"", "1.2.3.4", "1.2.3.4.1", "1.2.3.4.256.0", "1.2.3.4.1.x",
					  "1.2.3.4..1", "1.2.3.4.1.", ".1.2", "1.2.3.0.1.2.3",
					  "::1.1", "nope.1.2", "1.2.3.4.-1.0", "1.2.3.4.0001.0"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		if (uaddr_parse(bad[i], &ss))
			print_error("accepted '%s'\n", bad[i]);
		assert_false(uaddr_parse(bad[i], &ss));
	}
	assert_false(uaddr_parse(NULL, &ss));
	struct sockaddr_in6 s6 = {.sin6_family = AF_INET6, .sin6_port = htons(2049)};
	assert_false(uaddr_format((struct sockaddr *)&s6, u, 5));   /* "::.8.1" needs 7 */
	assert_true(uaddr_format((struct sockaddr *)&s6, u, 7));
	assert_string_equal(u, "::.8.1");
}

static void test_loopback(void **state)
{
	(void)state;
	struct sockaddr_storage ss;
	static const char *const yes[] = {"127.0.0.1", "127.255.0.9", "::1", "::ffff:127.0.0.1"};
	static const char *const no[] = {"10.0.0.5", "128.0.0.1", "::2", "::ffff:10.0.0.5", "fd00::1",
					 "::", "0.0.0.0"};
	for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
		ss = addr(yes[i], 1);
		assert_true(pmap_is_loopback(&ss));
	}
	for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
		ss = addr(no[i], 1);
		assert_false(pmap_is_loopback(&ss));
	}
	ss = addr(NULL, 0);
	assert_false(pmap_is_loopback(&ss));
	ss.ss_family = AF_UNIX;
	assert_true(pmap_is_loopback(&ss));
}

static void test_families_and_mode(void **state)
{
	(void)state;
	struct config cfg = {0};
	static const struct { const char *addrs[2]; unsigned want; } cases[] = {
		{{"127.0.0.1", NULL}, PMAP_INET},
		{{"::1", NULL}, PMAP_INET6},
		{{"::", NULL}, PMAP_INET | PMAP_INET6},       /* dual-stack alone */
		{{"::", "0.0.0.0"}, PMAP_INET | PMAP_INET6},
		{{"fd00::7", "192.168.1.20"}, PMAP_INET | PMAP_INET6},
		{{"::", "fd00::7"}, PMAP_INET6},              /* IPV6_V6ONLY beside another */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		cfg.nlisten = 0;
		for (int k = 0; k < 2 && cases[i].addrs[k]; k++)
			snprintf(cfg.listen_addr[cfg.nlisten++], sizeof cfg.listen_addr[0], "%s",
				 cases[i].addrs[k]);
		assert_int_equal(pmap_families(&cfg), cases[i].want);
	}
	cfg.rpcbind = RPCBIND_NO;
	assert_int_equal(pmap_decide(&cfg), PMAP_NONE);
	cfg.rpcbind = RPCBIND_OWN;
	assert_int_equal(pmap_decide(&cfg), PMAP_OWN);
	bool up = pmap_rpcbind_answers();
	cfg.rpcbind = RPCBIND_AUTO;
	assert_int_equal(pmap_decide(&cfg), up ? PMAP_RPCBIND : PMAP_OWN);
	cfg.rpcbind = RPCBIND_YES;
	assert_int_equal(pmap_decide(&cfg), up ? PMAP_RPCBIND : PMAP_NONE);
	assert_string_equal(rpcbind_mode_name(RPCBIND_AUTO), "auto");
	assert_string_equal(rpcbind_mode_name(RPCBIND_OWN), "own");
}

static void test_registry_direct(void **state)
{
	(void)state;
	struct pmap_reg *r = pmap_reg_new(0);   /* 0: IPv4 */
	assert_non_null(r);
	assert_int_equal(pmap_reg_add_own(r, NFS, 3, IPPROTO_TCP, 2049), 0);
	assert_int_equal(pmap_reg_add_own(r, NFS, 3, IPPROTO_TCP, 2050), 0);   /* same: one entry */
	assert_int_equal(pmap_reg_add_own(r, NFS, 3, IPPROTO_SCTP, 2049), -1);
	struct pmap_entry e;
	assert_true(pmap_reg_find(r, NFS, 3, "tcp", 0, &e));
	assert_int_equal(e.port, 2050);
	assert_true(e.own);
	assert_false(pmap_reg_find(r, NFS, 3, "tcp6", 0, &e));
	assert_false(pmap_reg_find(r, NFS, 3, "bogus", 0, &e));
	assert_false(pmap_reg_find(NULL, NFS, 3, "tcp", 0, &e));
	/* The bound on others' entries. */
	for (uint32_t i = 0; i < PMAP_SET_MAX; i++)
		assert_true(pmap_reg_set(r, 400000 + i, 1, "udp", "0.0.0.0.1.1", "x"));
	assert_false(pmap_reg_set(r, 500000, 1, "udp", "0.0.0.0.1.1", "x"));
	assert_true(pmap_reg_unset(r, 400000, 1, "udp", 0));
	assert_true(pmap_reg_set(r, 500000, 1, "udp", "0.0.0.0.1.1", "x"));
	pmap_reg_free(r);
	pmap_reg_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_getport, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dump_v2, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dump_v3, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dump_large, setup, teardown),
		cmocka_unit_test_setup_teardown(test_getaddr, setup, teardown),
		cmocka_unit_test_setup_teardown(test_getaddr_ipv4_only, setup_v4, teardown),
		cmocka_unit_test_setup_teardown(test_getversaddr, setup, teardown),
		cmocka_unit_test_setup_teardown(test_set_from_loopback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_set_from_remote_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_own_entries_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_uaddr_taddr, setup, teardown),
		cmocka_unit_test_setup_teardown(test_getaddrlist, setup, teardown),
		cmocka_unit_test_setup_teardown(test_time_stat_null, setup, teardown),
		cmocka_unit_test(test_no_registry),
		cmocka_unit_test(test_uaddr_syntax),
		cmocka_unit_test(test_loopback),
		cmocka_unit_test(test_families_and_mode),
		cmocka_unit_test(test_registry_direct),
	};
	return cmocka_run_group_tests_name("pmap", tests, NULL, NULL);
}
