/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Port 111: who answers it (pmap_decide), registering with the host's rpcbind (pmap_rpcbind_set),
 * and, when nfsd-uc is the portmapper itself, the registry its PMAP v2 / RPCBIND v3, v4 handlers
 * (pmapproc.c) read and change. The registry is shared by every ring: a mutex guards it. */
#ifndef NFSD_UC_PMAP_H
#define NFSD_UC_PMAP_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "rpc/uaddr.h"

struct config;
struct log_ratelimit;
struct prog_desc;

#define PMAP_PROG 100000u

/* What to do about port 111, from [server] rpcbind (config.h's enum rpcbind_mode). */
enum pmap_mode {
	PMAP_NONE = 0,            /* nothing: clients give the ports */
	PMAP_RPCBIND,             /* register with the host's running rpcbind */
	PMAP_OWN,                 /* serve port 111 ourselves, from a struct pmap_reg */
};

/* Address families a registry (or an rpcbind registration) covers: which netids exist. */
#define PMAP_INET  1u             /* "tcp", "udp" */
#define PMAP_INET6 2u             /* "tcp6", "udp6" */

/* One (program, version, transport, port) nfsd-uc serves. */
struct pmap_prog_port {
	uint32_t prog, vers;
	int proto;                /* IPPROTO_TCP or IPPROTO_UDP */
	uint16_t port;
	unsigned families;        /* PMAP_INET | PMAP_INET6 (pmap_rpcbind_set; 0: PMAP_INET) */
};

/* no: NONE; own: OWN; yes: RPCBIND when an rpcbind answers (/run/rpcbind.sock, else a TCP
 * connect to 127.0.0.1:111 within 500 ms), else NONE, logged; auto: RPCBIND when one answers,
 * else OWN. Logs what it decided (but for yes with an rpcbind: the registration says it). */
enum pmap_mode pmap_decide(const struct config *cfg);
/* The probe pmap_decide makes. */
bool pmap_rpcbind_answers(void);
/* The families cfg's listen addresses reach: an IPv4 address PMAP_INET, an IPv6 one PMAP_INET6,
 * and "::" alone (dual-stack: server.c sets IPV6_V6ONLY only beside other addresses) both. */
unsigned pmap_families(const struct config *cfg);

/* Register (on) or unregister (!on) each entry with the running rpcbind, for the netids of its
 * families (rpcb_set/rpcb_unset with /etc/netconfig's entry; the address is the wildcard with
 * the entry's port). A registration first drops whatever holds that (prog, vers, netid), as
 * libtirpc's svc_reg does: a daemon killed before it unregistered leaves its entries behind.
 * true when every call succeeded. */
bool pmap_rpcbind_set(const struct pmap_prog_port *list, size_t n, bool on);

/* ---- the registry (nfsd-uc as the portmapper) ------------------------------------------- */

#define PMAP_NETID_MAX 8          /* "tcp", "udp", "tcp6", "udp6" */
#define PMAP_OWNER_MAX 32
#define PMAP_UADDR_MAX (INET6_ADDRSTRLEN + 8)   /* "x:...:y.p1.p2" */
#define PMAP_SET_MAX 1024         /* entries other services may set */

/* An entry as the handlers see it: an own entry appears once per family served. */
struct pmap_entry {
	uint32_t prog, vers;
	char netid[PMAP_NETID_MAX];
	int proto;                /* IPPROTO_TCP, IPPROTO_UDP */
	int family;               /* AF_INET, AF_INET6 */
	uint16_t port;
	char host[INET6_ADDRSTRLEN];   /* the address it was registered with; "" for the wildcard
					* and for own entries (the handlers put the address the
					* client reached) */
	char owner[PMAP_OWNER_MAX];
	bool own;                 /* nfsd-uc's: SET and UNSET cannot touch it */
};

struct pmap_reg;

/* A registry whose own entries stand for the families given (PMAP_INET | PMAP_INET6; 0 means
 * PMAP_INET). NULL when out of memory. */
struct pmap_reg *pmap_reg_new(unsigned families);
void pmap_reg_free(struct pmap_reg *reg);

/* nfsd-uc's own (prog, vers, proto, port), for every family of the registry. 0, or -1 (out of
 * memory, or proto not IPPROTO_TCP/UDP). Adding the same one twice keeps one. */
int pmap_reg_add_own(struct pmap_reg *reg, uint32_t prog, uint32_t vers, int proto, uint16_t port);
/* The same for a list (the one given to pmap_rpcbind_set; its families are not used). */
int pmap_reg_add_own_list(struct pmap_reg *reg, const struct pmap_prog_port *list, size_t n);

/* Another service's registration (RPCBIND SET): netid "tcp", "udp", "tcp6" or "udp6", uaddr
 * a universal address of that family. false when either is malformed, when the (prog, vers,
 * netid) is registered already (nfsd-uc's own included), or at PMAP_SET_MAX entries. */
bool pmap_reg_set(struct pmap_reg *reg, uint32_t prog, uint32_t vers, const char *netid,
		  const char *uaddr, const char *owner);

/* Every entry other services set goes; nfsd-uc's own stay (a test's fresh start). */
void pmap_reg_drop_set(struct pmap_reg *reg);

/* Lookups and UNSET: which entries a call means. */
#define PMAP_EXACT 1u             /* this version only (GETVERSADDR, GETADDRLIST); otherwise,
				   * as rpcbind, another version of the program when this one
				   * is not there: the client learns the truth from the server */
#define PMAP_V2    2u             /* PMAP v2, IPv4's protocol: netids "tcp"/"udp" only, and own
				   * entries whatever the registry's families */

/* RPCBIND UNSET of (prog, vers) for netid (NULL or "": every netid); with PMAP_V2, PMAP's UNSET
 * (tcp and udp). false, and nothing removed, when an own entry is among them; true otherwise,
 * also when there was nothing to remove (as rpcbind). */
bool pmap_reg_unset(struct pmap_reg *reg, uint32_t prog, uint32_t vers, const char *netid,
		    unsigned flags);

/* The entry a GETPORT/GETADDR of (prog, vers, netid) finds: this version, or (without
 * PMAP_EXACT) the last registered of another. false when none. */
bool pmap_reg_find(struct pmap_reg *reg, uint32_t prog, uint32_t vers, const char *netid,
		   unsigned flags, struct pmap_entry *out);

/* Every entry (PMAP_V2: those PMAP v2 shows, own entries once per protocol) to fn, under the
 * registry's lock: fn must not call back into the registry. */
void pmap_reg_each(struct pmap_reg *reg, unsigned flags,
		   void (*fn)(void *ctx, const struct pmap_entry *e), void *ctx);

/* ---- netids, and callers on this host (universal addresses: rpc/uaddr.h) ---- */

/* "tcp" -> IPPROTO_TCP, AF_INET; ... false for any other netid. */
bool pmap_netid_parse(const char *netid, int *proto, int *family);
/* 127.0.0.0/8, ::1, ::ffff:127.x.y.z, or an AF_UNIX peer: a caller on this host. */
bool pmap_is_loopback(const struct sockaddr_storage *ss);

/* The lines its handlers log about SET and UNSET, at most one a second. */
struct log_ratelimit *pmap_reg_log(struct pmap_reg *reg);

/* The portmapper's programs (pmapproc.c): 100000 versions 2, 3 and 4, each registered with the
 * struct pmap_reg as its state. */
extern const struct prog_desc pmap2_program, rpcb3_program, rpcb4_program;

#endif
