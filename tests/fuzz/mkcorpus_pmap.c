/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mkcorpus's seeds of the portmapper: every procedure of PMAP 2 and RPCBIND 3 and 4, and a
 * local service's registration as a sequence. */
#include "mkcorpus.h"

#include <stdio.h>

/* ---- the portmapper ---- */

#define PM(NAME, V, PROC, ENC, ARG) \
	emit(&(struct call){NAME, PMAPPROG, V, PROC, AUTH_ROOT, (xdrproc_t)ENC, ARG})

void pmap_calls(void)
{
	struct pmap nfs = {NFS_PROGRAM, NFS_V3, IPPROTO_TCP, 0}, nlm = {NLM_PROG, NLM4_VERS, IPPROTO_UDP, 0};
	struct pmap other = {400123, 2, IPPROTO_UDP, 4321};
	PM("pmap_null", 2, PMAPPROC_NULL, NULL, NULL);
	PM("pmap_getport", 2, PMAPPROC_GETPORT, xdr_pmap, &nfs);
	PM("pmap_getport_nlm", 2, PMAPPROC_GETPORT, xdr_pmap, &nlm);
	PM("pmap_set", 2, PMAPPROC_SET, xdr_pmap, &other);
	PM("pmap_set_own", 2, PMAPPROC_SET, xdr_pmap, &nfs);
	PM("pmap_unset", 2, PMAPPROC_UNSET, xdr_pmap, &other);
	PM("pmap_dump", 2, PMAPPROC_DUMP, NULL, NULL);
	PM("pmap_callit", 2, PMAPPROC_CALLIT, NULL, NULL);
	RPCB nfs3 = {NFS_PROGRAM, NFS_V3, "tcp", "127.0.0.1.0.111", ""};
	RPCB nlm6 = {NLM_PROG, NLM4_VERS, "udp6", "::1.0.111", "superuser"};
	RPCB set = {400123, 1, "udp", "127.0.0.1.16.225", "superuser"};
	RPCB set6 = {400124, 1, "tcp6", "::1.3.4", "superuser"};
	RPCB any = {MOUNT_PROGRAM, 1, "", "", ""};
	char *u4 = "127.0.0.1.8.1", *u6 = "fe80::1:2.0.111", *bad = "1.2.3.4.256.1";
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(2049),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct netbuf nb = {sizeof sin, sizeof sin, &sin};
	for (uint32_t v = 3; v <= 4; v++) {
		char name[64];
#define RB(WHAT, PROC, ENC, ARG) \
		(snprintf(name, sizeof name, "rpcb%u_%s", v, WHAT), PM(name, v, PROC, ENC, ARG))
		RB("null", 0, NULL, NULL);
		RB("getaddr", RPCBPROC_GETADDR, xdr_rpcb, &nfs3);
		RB("getaddr_v6", RPCBPROC_GETADDR, xdr_rpcb, &nlm6);
		RB("getaddr_other_vers", RPCBPROC_GETADDR, xdr_rpcb, &any);
		RB("set", RPCBPROC_SET, xdr_rpcb, &set);
		RB("set6", RPCBPROC_SET, xdr_rpcb, &set6);
		RB("unset", RPCBPROC_UNSET, xdr_rpcb, &set);
		RB("unset_all", RPCBPROC_UNSET, xdr_rpcb, &any);
		RB("dump", RPCBPROC_DUMP, NULL, NULL);
		RB("gettime", RPCBPROC_GETTIME, NULL, NULL);
		RB("uaddr2taddr", RPCBPROC_UADDR2TADDR, xdr_wrapstring, &u4);
		RB("uaddr2taddr6", RPCBPROC_UADDR2TADDR, xdr_wrapstring, &u6);
		RB("uaddr2taddr_bad", RPCBPROC_UADDR2TADDR, xdr_wrapstring, &bad);
		RB("taddr2uaddr", RPCBPROC_TADDR2UADDR, xdr_netbuf, &nb);
		RB("callit", 5, NULL, NULL);
	}
	uint32_t v = 4;
	char name[64];
	RB("getversaddr", RPCBPROC_GETVERSADDR, xdr_rpcb, &nfs3);
	RB("getaddrlist", RPCBPROC_GETADDRLIST, xdr_rpcb, &nlm6);
	RB("getstat", RPCBPROC_GETSTAT, NULL, NULL);
	RB("indirect", RPCBPROC_INDIRECT, NULL, NULL);
#undef RB
	emit(&(struct call){"pmap_v5", PMAPPROG, 5, 0, AUTH_ROOT, NULL, NULL});
}

/* A local service registers, is found, and goes. */
void pmap_sequences(void)
{
	RPCB set = {400123, 1, "udp", "127.0.0.1.16.225", "superuser"};
	RPCB get = {400123, 1, "udp", "", ""};
	struct pmap pm = {400123, 1, IPPROTO_UDP, 0}, pm2 = {400125, 2, IPPROTO_TCP, 999};
	struct call p[] = {
		{"RPCB_SET", PMAPPROG, 3, RPCBPROC_SET, AUTH_ROOT, (xdrproc_t)xdr_rpcb, &set},
		{"RPCB_GETADDR", PMAPPROG, 4, RPCBPROC_GETADDR, AUTH_ROOT, (xdrproc_t)xdr_rpcb, &get},
		{"PMAP_GETPORT", PMAPPROG, 2, PMAPPROC_GETPORT, AUTH_ROOT, (xdrproc_t)xdr_pmap, &pm},
		{"PMAP_SET", PMAPPROG, 2, PMAPPROC_SET, AUTH_ROOT, (xdrproc_t)xdr_pmap, &pm2},
		{"RPCB_DUMP", PMAPPROG, 4, RPCBPROC_DUMP, AUTH_ROOT, NULL, NULL},
		{"RPCB_GETADDRLIST", PMAPPROG, 4, RPCBPROC_GETADDRLIST, AUTH_ROOT, (xdrproc_t)xdr_rpcb, &get},
		{"RPCB_UNSET", PMAPPROG, 3, RPCBPROC_UNSET, AUTH_ROOT, (xdrproc_t)xdr_rpcb, &set},
		{"PMAP_UNSET", PMAPPROG, 2, PMAPPROC_UNSET, AUTH_ROOT, (xdrproc_t)xdr_pmap, &pm2},
		{"PMAP_DUMP", PMAPPROG, 2, PMAPPROC_DUMP, AUTH_ROOT, NULL, NULL},
	};
	emit_seq("seq_pmap_register", p, sizeof p / sizeof p[0], false, 0x1f);
}
