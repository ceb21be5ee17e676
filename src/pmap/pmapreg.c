/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The portmapper's registry, universal addresses, and the choice between the host's rpcbind and
 * our own port 111 (see pmap.h). The registry is an array under one mutex: a few dozen entries,
 * read by GETPORT/GETADDR/DUMP from any ring, changed by the rare SET/UNSET of a local service.
 * nfsd-uc's own entries hold a port only and stand for every family the registry was made for,
 * so one entry per (prog, vers, protocol) answers "tcp" and "tcp6" alike. */
#include "pmap/pmap.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netconfig.h>
#include <poll.h>
#include <pthread.h>
#include <rpc/rpc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <unistd.h>

#include "conf/config.h"
#include "base/sockaddr.h"
#include "base/log.h"

/* ---- netids ---- */

bool pmap_netid_parse(const char *netid, int *proto, int *family)
{
	static const struct { const char *name; int proto, family; } ids[] = {
		{"tcp", IPPROTO_TCP, AF_INET}, {"udp", IPPROTO_UDP, AF_INET},
		{"tcp6", IPPROTO_TCP, AF_INET6}, {"udp6", IPPROTO_UDP, AF_INET6},
	};
	for (size_t i = 0; netid && i < sizeof ids / sizeof ids[0]; i++)
		if (strcmp(netid, ids[i].name) == 0) {
			*proto = ids[i].proto;
			*family = ids[i].family;
			return true;
		}
	return false;
}

static const char *netid_of(int proto, int family)
{
	if (family == AF_INET6)
		return proto == IPPROTO_UDP ? "udp6" : "tcp6";
	return proto == IPPROTO_UDP ? "udp" : "tcp";
}

bool pmap_is_loopback(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_UNIX)
		return true;
	if (ss->ss_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)ss)->sin_addr.s_addr) >> 24) == 127;
	if (ss->ss_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)ss)->sin6_addr;
		return IN6_IS_ADDR_LOOPBACK(a) || (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
	}
	return false;
}

/* ---- the registry ------------------------------------------------------------------------- */

struct reg_ent {
	uint32_t prog, vers;
	int proto;
	int family;               /* AF_INET, AF_INET6; own entries: AF_UNSPEC (every family) */
	uint16_t port;
	char host[INET6_ADDRSTRLEN];
	char owner[PMAP_OWNER_MAX];
	bool own;
};

struct pmap_reg {
	pthread_mutex_t lock;
	unsigned families;
	struct reg_ent *ents;     /* in the order registered, as rpcbind's list */
	size_t n, cap;
	size_t nset;              /* of them set by others */
	struct log_ratelimit log; /* the handlers' lines about SET and UNSET */
};

struct log_ratelimit *pmap_reg_log(struct pmap_reg *reg)
{
	return &reg->log;
}

struct pmap_reg *pmap_reg_new(unsigned families)
{
	struct pmap_reg *r = calloc(1, sizeof *r);
	if (!r)
		return NULL;
	pthread_mutex_init(&r->lock, NULL);
	r->families = families & (PMAP_INET | PMAP_INET6) ? families & (PMAP_INET | PMAP_INET6)
							   : PMAP_INET;
	return r;
}

void pmap_reg_free(struct pmap_reg *reg)
{
	if (!reg)
		return;
	pthread_mutex_destroy(&reg->lock);
	free(reg->ents);
	free(reg);
}

static unsigned family_bit(int family)
{
	return family == AF_INET ? PMAP_INET : family == AF_INET6 ? PMAP_INET6 : 0;
}

/* Does e answer for (proto, family)? proto 0 and family AF_UNSPEC: any. */
static bool covers(const struct pmap_reg *r, const struct reg_ent *e, int proto, int family,
		   unsigned flags)
{
	if (proto && e->proto != proto)
		return false;
	if (e->own)
		return (flags & PMAP_V2) || family == AF_UNSPEC || (r->families & family_bit(family));
	if (flags & PMAP_V2)
		return e->family == AF_INET;
	return family == AF_UNSPEC || e->family == family;
}

static int append(struct pmap_reg *r, const struct reg_ent *e)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 32;
		struct reg_ent *p = realloc(r->ents, cap * sizeof *p);
		if (!p)
			return -1;
		r->ents = p;
		r->cap = cap;
	}
	r->ents[r->n++] = *e;
	return 0;
}

int pmap_reg_add_own(struct pmap_reg *reg, uint32_t prog, uint32_t vers, int proto, uint16_t port)
{
	if (proto != IPPROTO_TCP && proto != IPPROTO_UDP)
		return -1;
	struct reg_ent e = {.prog = prog, .vers = vers, .proto = proto, .family = AF_UNSPEC,
			    .port = port, .owner = "nfsd-uc", .own = true};
	int rc = 0;
	pthread_mutex_lock(&reg->lock);
	size_t i;
	for (i = 0; i < reg->n; i++) {
		struct reg_ent *o = &reg->ents[i];
		if (o->own && o->prog == prog && o->vers == vers && o->proto == proto) {
			o->port = port;
			break;
		}
	}
	if (i == reg->n)
		rc = append(reg, &e);
	pthread_mutex_unlock(&reg->lock);
	return rc;
}

int pmap_reg_add_own_list(struct pmap_reg *reg, const struct pmap_prog_port *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (pmap_reg_add_own(reg, list[i].prog, list[i].vers, list[i].proto, list[i].port) < 0)
			return -1;
	return 0;
}

bool pmap_reg_set(struct pmap_reg *reg, uint32_t prog, uint32_t vers, const char *netid,
		  const char *uaddr, const char *owner)
{
	int proto, family;
	struct sockaddr_storage ss;
	if (!reg || !pmap_netid_parse(netid, &proto, &family) || !uaddr_parse(uaddr, &ss) ||
	    ss.ss_family != family)
		return false;
	struct reg_ent e = {.prog = prog, .vers = vers, .proto = proto, .family = family};
	if (family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)&ss;
		e.port = ntohs(s4->sin_port);
		if (s4->sin_addr.s_addr != htonl(INADDR_ANY))
			inet_ntop(AF_INET, &s4->sin_addr, e.host, sizeof e.host);
	} else {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&ss;
		e.port = ntohs(s6->sin6_port);
		if (!IN6_IS_ADDR_UNSPECIFIED(&s6->sin6_addr))
			inet_ntop(AF_INET6, &s6->sin6_addr, e.host, sizeof e.host);
	}
	snprintf(e.owner, sizeof e.owner, "%s", owner ? owner : "unknown");
	bool ok = false;
	pthread_mutex_lock(&reg->lock);
	for (size_t i = 0; i < reg->n; i++) {
		const struct reg_ent *o = &reg->ents[i];
		/* An own entry is nfsd-uc's in every family, served or not. */
		if (o->prog == prog && o->vers == vers && o->proto == proto &&
		    (o->own || o->family == family))
			goto out;
	}
	if (reg->nset < PMAP_SET_MAX && append(reg, &e) == 0) {
		reg->nset++;
		ok = true;
	}
out:
	pthread_mutex_unlock(&reg->lock);
	return ok;
}

void pmap_reg_drop_set(struct pmap_reg *reg)
{
	pthread_mutex_lock(&reg->lock);
	size_t k = 0;
	for (size_t i = 0; i < reg->n; i++)
		if (reg->ents[i].own)
			reg->ents[k++] = reg->ents[i];
	reg->n = k;
	reg->nset = 0;
	pthread_mutex_unlock(&reg->lock);
}

bool pmap_reg_unset(struct pmap_reg *reg, uint32_t prog, uint32_t vers, const char *netid,
		    unsigned flags)
{
	int proto = 0, family = AF_UNSPEC;
	if (!reg)
		return false;
	if (flags & PMAP_V2)
		family = AF_INET;
	else if (netid && *netid && !pmap_netid_parse(netid, &proto, &family))
		return true;   /* nothing is registered under a netid we do not know */
	bool ok = true;
	pthread_mutex_lock(&reg->lock);
	for (size_t i = 0; i < reg->n; i++) {
		const struct reg_ent *o = &reg->ents[i];
		if (o->own && o->prog == prog && o->vers == vers && (!proto || o->proto == proto)) {
			ok = false;
			goto out;
		}
	}
	size_t k = 0;
	for (size_t i = 0; i < reg->n; i++) {
		const struct reg_ent *o = &reg->ents[i];
		if (o->prog == prog && o->vers == vers && covers(reg, o, proto, family, flags)) {
			reg->nset--;
			continue;
		}
		reg->ents[k++] = *o;
	}
	reg->n = k;
out:
	pthread_mutex_unlock(&reg->lock);
	return ok;
}

static void to_entry(const struct reg_ent *e, int family, struct pmap_entry *out)
{
	*out = (struct pmap_entry){.prog = e->prog, .vers = e->vers, .proto = e->proto,
				   .family = family, .port = e->port, .own = e->own};
	snprintf(out->netid, sizeof out->netid, "%s", netid_of(e->proto, family));
	memcpy(out->host, e->host, sizeof out->host);
	memcpy(out->owner, e->owner, sizeof out->owner);
}

bool pmap_reg_find(struct pmap_reg *reg, uint32_t prog, uint32_t vers, const char *netid,
		   unsigned flags, struct pmap_entry *out)
{
	int proto, family;
	if (!reg || !pmap_netid_parse(netid, &proto, &family))
		return false;
	const struct reg_ent *hit = NULL;
	pthread_mutex_lock(&reg->lock);
	for (size_t i = 0; i < reg->n; i++) {
		const struct reg_ent *e = &reg->ents[i];
		if (e->prog != prog || !covers(reg, e, proto, family, flags))
			continue;
		if (e->vers == vers) {
			hit = e;
			break;
		}
		if (!(flags & PMAP_EXACT))
			hit = e;
	}
	if (hit)
		to_entry(hit, family, out);
	pthread_mutex_unlock(&reg->lock);
	return hit != NULL;
}

void pmap_reg_each(struct pmap_reg *reg, unsigned flags,
		   void (*fn)(void *ctx, const struct pmap_entry *e), void *ctx)
{
	if (!reg)
		return;
	struct pmap_entry out;
	pthread_mutex_lock(&reg->lock);
	for (size_t i = 0; i < reg->n; i++) {
		const struct reg_ent *e = &reg->ents[i];
		if (!e->own) {
			if (!(flags & PMAP_V2) || e->family == AF_INET) {
				to_entry(e, e->family, &out);
				fn(ctx, &out);
			}
			continue;
		}
		if ((flags & PMAP_V2) || (reg->families & PMAP_INET)) {
			to_entry(e, AF_INET, &out);
			fn(ctx, &out);
		}
		if (!(flags & PMAP_V2) && (reg->families & PMAP_INET6)) {
			to_entry(e, AF_INET6, &out);
			fn(ctx, &out);
		}
	}
	pthread_mutex_unlock(&reg->lock);
}

/* ---- port 111: the host's rpcbind or ours ------------------------------------------------- */

static bool unix_answers(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	bool ok = connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0;
	close(fd);
	return ok;
}

#define PROBE_MS 500

static bool tcp_answers(void)
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(PMAP_PORT),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	bool ok = connect(fd, (struct sockaddr *)&sin, sizeof sin) == 0;
	if (!ok && errno == EINPROGRESS) {
		struct pollfd p = {.fd = fd, .events = POLLOUT};
		int err = 0;
		socklen_t len = sizeof err;
		ok = poll(&p, 1, PROBE_MS) == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 &&
		     err == 0;
	}
	close(fd);
	return ok;
}

bool pmap_rpcbind_answers(void)
{
	return unix_answers("/run/rpcbind.sock") || unix_answers("/var/run/rpcbind.sock") ||
	       tcp_answers();
}

enum pmap_mode pmap_decide(const struct config *cfg)
{
	switch (cfg->rpcbind) {
	case RPCBIND_NO:
		return PMAP_NONE;
	case RPCBIND_OWN:
		log_info("rpcbind = own: serving port %u (portmapper) ourselves", PMAP_PORT);
		return PMAP_OWN;
	case RPCBIND_YES:
		if (pmap_rpcbind_answers())
			return PMAP_RPCBIND;
		log_info("rpcbind is not running: serving on the fixed ports only");
		return PMAP_NONE;
	case RPCBIND_AUTO:
		break;
	}
	if (pmap_rpcbind_answers()) {
		log_info("rpcbind answers: registering with it");
		return PMAP_RPCBIND;
	}
	log_info("rpcbind is not running: serving port %u (portmapper) ourselves", PMAP_PORT);
	return PMAP_OWN;
}

unsigned pmap_families(const struct config *cfg)
{
	unsigned f = 0;
	for (size_t i = 0; i < cfg->nlisten; i++) {
		struct in_addr a4;
		struct in6_addr a6;
		if (inet_pton(AF_INET, cfg->listen_addr[i], &a4) == 1) {
			f |= PMAP_INET;
		} else if (inet_pton(AF_INET6, cfg->listen_addr[i], &a6) == 1) {
			if (IN6_IS_ADDR_V4MAPPED(&a6))
				f |= PMAP_INET;
			else
				f |= PMAP_INET6;
			if (cfg->nlisten == 1 && IN6_IS_ADDR_UNSPECIFIED(&a6))
				f |= PMAP_INET;
		}
	}
	return f ? f : PMAP_INET;
}

/* One (prog, vers, netid) with the host's rpcbind: the wildcard address with port. */
static bool rpcbind_one(const struct pmap_prog_port *p, int family, bool on)
{
	const char *netid = netid_of(p->proto, family);
	struct netconfig *nc = getnetconfigent(netid);
	if (!nc) {
		log_debug("rpcbind: no netconfig entry for %s", netid);
		return false;
	}
	struct sockaddr_storage ss = {0};
	struct netbuf nb = {.buf = &ss};
	if (family == AF_INET) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		s4->sin_family = AF_INET;
		s4->sin_addr.s_addr = htonl(INADDR_ANY);
		s4->sin_port = htons(p->port);
		nb.len = nb.maxlen = sizeof *s4;
	} else {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
		s6->sin6_family = AF_INET6;
		s6->sin6_addr = in6addr_any;
		s6->sin6_port = htons(p->port);
		nb.len = nb.maxlen = sizeof *s6;
	}
	bool ok = rpcb_unset(p->prog, p->vers, nc);
	if (on)
		ok = rpcb_set(p->prog, p->vers, nc, &nb);
	if (!ok)
		log_debug("rpcbind: %s of %u v%u %s port %u failed", on ? "set" : "unset", p->prog,
			  p->vers, netid, p->port);
	freenetconfigent(nc);
	return ok;
}

bool pmap_rpcbind_set(const struct pmap_prog_port *list, size_t n, bool on)
{
	bool ok = true;
	for (size_t i = 0; i < n; i++) {
		unsigned f = list[i].families ? list[i].families : PMAP_INET;
		if (f & PMAP_INET)
			ok &= rpcbind_one(&list[i], AF_INET, on);
		if (f & PMAP_INET6)
			ok &= rpcbind_one(&list[i], AF_INET6, on);
	}
	return ok;
}
