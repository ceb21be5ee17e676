/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Export access rules at run time: read-only over the parsed config, so any worker may call
 * these without locks. */
#include "conf/export.h"

#include <fnmatch.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>

static bool prefix_equal(const uint8_t *a, const uint8_t *b, unsigned bits)
{
	unsigned bytes = bits / 8, rest = bits % 8;
	if (memcmp(a, b, bytes) != 0)
		return false;
	if (rest == 0)
		return true;
	uint8_t mask = (uint8_t)(0xff << (8 - rest));
	return ((a[bytes] ^ b[bytes]) & mask) == 0;
}

/* The peer's family and address bytes. A dual-stack socket shows an IPv4 client as
 * ::ffff:a.b.c.d; it is the same client the IPv4 rules were written for. The config parser
 * turns ::ffff:0:0/96-style rules into IPv4 the same way. */
static int peer_addr(const struct sockaddr *peer, uint8_t out[16])
{
	if (peer->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)peer;
		memcpy(out, &in->sin_addr, 4);
		return AF_INET;
	}
	if (peer->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)peer;
		if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
			memcpy(out, in6->sin6_addr.s6_addr + 12, 4);
			return AF_INET;
		}
		memcpy(out, &in6->sin6_addr, 16);
		return AF_INET6;
	}
	return AF_UNSPEC;
}

bool export_same_host(const struct sockaddr *a, const struct sockaddr *b)
{
	uint8_t x[16], y[16];
	int fa = peer_addr(a, x);
	/* An IPv4 client is the same client as its ::ffff: form on a dual-stack socket. */
	return fa != AF_UNSPEC && fa == peer_addr(b, y) && memcmp(x, y, fa == AF_INET ? 4 : 16) == 0;
}

socklen_t export_addr_parse(const char *s, uint16_t port, struct sockaddr_storage *ss)
{
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
	memset(ss, 0, sizeof *ss);
	if (inet_pton(AF_INET, s, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		return sizeof *s4;
	}
	if (inet_pton(AF_INET6, s, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		return sizeof *s6;
	}
	return 0;
}

const char *export_addr_str(const struct sockaddr_storage *ss, char out[INET6_ADDRSTRLEN])
{
	uint8_t a[16];
	int f = peer_addr((const struct sockaddr *)ss, a);
	if (f == AF_UNSPEC || !inet_ntop(f, a, out, INET6_ADDRSTRLEN))
		snprintf(out, INET6_ADDRSTRLEN, "?");
	return out;
}

const struct client_rule *export_match_named(const struct export_cfg *exp,
					     const struct sockaddr *peer, export_name_fn name,
					     void *ctx)
{
	uint8_t addr[16];
	const char *peer_name = NULL;
	bool asked = false;
	if (!exp || !peer)
		return NULL;
	int family = peer_addr(peer, addr);
	/* Not an Internet peer: not a host any rule, even "*", was written for. */
	if (family == AF_UNSPEC)
		return NULL;
	for (size_t i = 0; i < exp->nclients; i++) {
		const struct client_rule *r = &exp->clients[i];
		if (r->pattern[0]) {
			if (!asked && name) {
				peer_name = name(ctx);   /* once, and only if a rule needs it */
				asked = true;
			}
			if (peer_name && *peer_name && fnmatch(r->pattern, peer_name, FNM_CASEFOLD) == 0)
				return r;
			continue;
		}
		if (r->family == AF_UNSPEC)
			return r;
		if (r->family == family && prefix_equal(r->addr, addr, r->prefix))
			return r;
	}
	return NULL;
}

const struct client_rule *export_match(const struct export_cfg *exp, const struct sockaddr *peer)
{
	return export_match_named(exp, peer, NULL, NULL);
}

void export_squash(const struct client_rule *rule, struct rpc_cred *cred)
{
	/* Anything but AUTH_SYS carries no identity we can trust: treat it as AUTH_NONE. */
	if (cred->flavor != RPC_AUTH_SYS || rule->squash == SQUASH_ALL) {
		cred->uid = rule->anonuid;
		cred->gid = rule->anongid;
		cred->ngids = 0;
		return;
	}
	if (rule->squash != SQUASH_ROOT)
		return;
	if (cred->uid == 0)
		cred->uid = rule->anonuid;
	if (cred->gid == 0)
		cred->gid = rule->anongid;
	/* As knfsd: root among the supplementary groups would otherwise still open root's files. */
	for (uint32_t i = 0; i < cred->ngids && i < RPC_MAX_GIDS; i++) {
		if (cred->gids[i] == 0)
			cred->gids[i] = rule->anongid;
	}
}

/* Length of PATH without trailing slashes ("/" stays "/"): a client may mount "/srv/x/". */
static size_t trimmed_len(const char *path)
{
	size_t n = strlen(path);
	while (n > 1 && path[n - 1] == '/')
		n--;
	return n;
}

const struct export_cfg *export_by_path(const struct config *cfg, const char *path)
{
	if (!cfg || !path)
		return NULL;
	size_t n = trimmed_len(path);
	for (size_t i = 0; i < cfg->nexports; i++) {
		const char *p = cfg->exports[i].path;
		if (strlen(p) == n && memcmp(p, path, n) == 0)
			return &cfg->exports[i];
	}
	return NULL;
}

const struct export_cfg *export_by_fsid(const struct config *cfg, uint32_t fsid)
{
	if (!cfg)
		return NULL;
	for (size_t i = 0; i < cfg->nexports; i++) {
		if (cfg->exports[i].fsid == fsid)
			return &cfg->exports[i];
	}
	return NULL;
}
