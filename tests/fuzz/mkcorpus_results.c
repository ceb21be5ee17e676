/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mkcorpus's result seeds: replies of NFSv3, MOUNT, the lock manager, NSM and the portmapper
 * encoded with the codecs the server encodes with, for the argument harnesses' result arms. */
#include "mkcorpus.h"

#include <stdlib.h>

#include "fz_xdr.h"

/* ---- results (the codecs the server encodes with) ---- */

static void result(const char *target, const char *name, uint8_t sel, xdrproc_t enc, void *obj)
{
	struct buf *b = calloc(1, sizeof *b);
	put_bytes(b, &sel, 1);
	put_xdr(b, enc, obj);
	save(target, name, b);
	free(b);
}

/* A result seed of fuzz_mount_args: program, procedure, the encoded result. */
static void res2(const char *name, unsigned prog, unsigned proc, xdrproc_t enc, void *obj)
{
	struct buf *b = calloc(1, sizeof *b);
	uint8_t sel[2] = {(uint8_t)prog, (uint8_t)(proc | FZ_ARGS_RESULT)};
	put_bytes(b, sel, 2);
	put_xdr(b, enc, obj);
	save("mount_args", name, b);
	free(b);
}

void results(void)
{
	uint8_t np = 22;
	GETATTR3res ga = {NFS3_OK, .GETATTR3res_u.resok.obj_attributes = {.type = NF3REG, .mode = 0644,
									   .nlink = 1, .size = 20000}};
	result("nfs3_args", "res_getattr", np + NFSPROC3_GETATTR, (xdrproc_t)xdr_GETATTR3res, &ga);
	READ3res rd = {NFS3_OK, .READ3res_u.resok = {.file_attributes.attributes_follow = FALSE, .count = 5,
						   .eof = TRUE, .data = {5, "hello"}}};
	result("nfs3_args", "res_read", np + NFSPROC3_READ, (xdrproc_t)xdr_READ3res, &rd);
	result("nfs3_args", "read_res_zc", 2 * np, (xdrproc_t)xdr_READ3res, &rd);
	LOOKUP3res lk = {.status = NFS3ERR_NOENT};
	result("nfs3_args", "res_lookup", np + NFSPROC3_LOOKUP, (xdrproc_t)xdr_LOOKUP3res, &lk);
	entry3 e2 = {7, "b", 2, NULL}, e1 = {6, "a", 1, &e2};
	READDIR3res rdd = {NFS3_OK, .READDIR3res_u.resok = {.dir_attributes.attributes_follow = FALSE,
							     .reply = {&e1, TRUE}}};
	result("nfs3_args", "res_readdir", np + NFSPROC3_READDIR, (xdrproc_t)xdr_READDIR3res, &rdd);
	WRITE3res wr = {NFS3_OK, .WRITE3res_u.resok = {.count = 100, .committed = FILE_SYNC, .verf = "verifier"}};
	result("nfs3_args", "res_write", np + NFSPROC3_WRITE, (xdrproc_t)xdr_WRITE3res, &wr);

	int flavors[] = {1};
	mountres3 mr = {MNT3_OK, .mountres3_u.mountinfo = {{8, "handle!!"}, {1, flavors}}};
	res2("res_mnt", FZ_ARGS_MOUNT3, MOUNTPROC3_MNT, (xdrproc_t)xdr_mountres3, &mr);
	mountbody m2 = {"h2", "/b", NULL}, m1 = {"h1", "/a", &m2};
	mountlist ml = &m1;
	res2("res_dump", FZ_ARGS_MOUNT3, MOUNTPROC3_DUMP, (xdrproc_t)xdr_mountlist, &ml);
	groupnode g = {"127.0.0.1", NULL};
	exportnode x = {"/srv", &g, NULL};
	exports ex = &x;
	res2("res_export", FZ_ARGS_MOUNT3, MOUNTPROC3_EXPORT, (xdrproc_t)xdr_exports, &ex);

	/* the lock manager's and the portmapper's */
	nlm4_testres t4 = {{8, "cookie!!"}, {NLM4_DENIED, .nlm4_testrply_u.holder =
						  {TRUE, 7, {5, "owner"}, 1ull << 40, 0}}};
	res2("res_nlm4_test", FZ_ARGS_NLM4, NLMPROC_TEST, (xdrproc_t)xdr_nlm4_testres, &t4);
	nlm_testres t1 = {{4, "ck01"}, {nlm_denied, .nlm_testrply_u.holder = {FALSE, 9, {2, "oh"}, 10, 20}}};
	res2("res_nlm1_test", FZ_ARGS_NLM1, NLMPROC_TEST, (xdrproc_t)xdr_nlm_testres, &t1);
	nlm4_res r4 = {{8, "cookie!!"}, {NLM4_BLOCKED}};
	res2("res_nlm4_lock", FZ_ARGS_NLM4, NLMPROC_LOCK, (xdrproc_t)xdr_nlm4_res, &r4);
	nlm4_shareres sh = {{0, NULL}, NLM4_GRANTED, 1};
	res2("res_nlm4_share", FZ_ARGS_NLM4, NLMPROC_SHARE, (xdrproc_t)xdr_nlm4_shareres, &sh);
	nlm_shareres sh1 = {{3, "abc"}, nlm_denied, 0};
	res2("res_nlm3_share", FZ_ARGS_NLM3, NLMPROC_SHARE, (xdrproc_t)xdr_nlm_shareres, &sh1);
	sm_stat_res ss = {stat_fail, 3};
	res2("res_sm_stat", FZ_ARGS_NSM1, SM_STAT, (xdrproc_t)xdr_sm_stat_res, &ss);
	struct pmaplist p2 = {{100021, 4, IPPROTO_UDP, 32803}, NULL}, p1 = {{100003, 3, IPPROTO_TCP, 2049}, &p2};
	struct pmaplist *pl = &p1;
	res2("res_pmap_dump", FZ_ARGS_PMAP2, PMAPPROC_DUMP, (xdrproc_t)xdr_pmaplist, &pl);
	u_int port = 2049;
	res2("res_pmap_getport", FZ_ARGS_PMAP2, PMAPPROC_GETPORT, (xdrproc_t)xdr_u_int, &port);
	rpcblist b2 = {{100005, 3, "udp6", "::1.78.80", "superuser"}, NULL};
	rpcblist b1 = {{100003, 3, "tcp", "127.0.0.1.8.1", "unknown"}, &b2};
	rpcblist_ptr bl = &b1;
	res2("res_rpcb_dump", FZ_ARGS_RPCB3, RPCBPROC_DUMP, (xdrproc_t)xdr_rpcblist_ptr, &bl);
	rpcb_entry_list l2 = {{"::1.8.1", "tcp6", 3, "inet6", "tcp"}, NULL};
	rpcb_entry_list l1 = {{"127.0.0.1.8.1", "udp", 1, "inet", "udp"}, &l2};
	rpcb_entry_list_ptr el = &l1;
	res2("res_rpcb_addrlist", FZ_ARGS_RPCB4, RPCBPROC_GETADDRLIST,
	     (xdrproc_t)xdr_rpcb_entry_list_ptr, &el);
	char *ua = "127.0.0.1.0.111";
	res2("res_rpcb_getaddr", FZ_ARGS_RPCB4, RPCBPROC_GETADDR, (xdrproc_t)xdr_wrapstring, &ua);
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(111),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct netbuf nb = {sizeof sin, sizeof sin, &sin};
	res2("res_rpcb_taddr", FZ_ARGS_RPCB3, RPCBPROC_UADDR2TADDR, (xdrproc_t)xdr_netbuf, &nb);
	static rpcb_stat_byvers st;
	rpcbs_addrlist al = {100003, 3, 5, 1, "tcp", NULL};
	rpcbs_rmtcalllist rl = {100021, 4, 12, 2, 1, 3, "udp", NULL};
	st[0].setinfo = 4;
	st[2].addrinfo = &al;
	st[2].rmtinfo = &rl;
	res2("res_rpcb_stat", FZ_ARGS_RPCB4, RPCBPROC_GETSTAT, (xdrproc_t)xdr_rpcb_stat_byvers, st);
}
