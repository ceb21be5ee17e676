/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Export access rules at run time: read-only over the parsed config, so any worker may call
 * these without locks. */
#include "conf/export.h"

#include "base/sockaddr.h"

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

const struct client_rule *export_match_named(const struct export_cfg *exp,
					     const struct sockaddr *peer, export_name_fn name,
					     void *ctx)
{
	uint8_t addr[16];
	const char *peer_name = NULL;
	bool asked = false;
	if (!exp || !peer)
		return NULL;
	int family = sa_addr(peer, addr);
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

bool export_flavor_ok(const struct client_rule *r, const struct rpc_cred *c)
{
	uint32_t f = rpc_cred_pseudoflavor(c);
	bool sys = false;
	for (unsigned i = 0; i < r->nsec; i++) {
		if (r->sec[i] == f)
			return true;
		sys = sys || r->sec[i] == RPC_AUTH_SYS;
	}
	/* knfsd with no sec= takes AUTH_NULL as it takes AUTH_UNIX; here sec=sys does too, so that
	 * the default shown back (sec=sys) means what it does when left out. Nothing is given
	 * away: an AUTH_NONE call is the anonymous user, whom any AUTH_SYS caller may claim to be. */
	return f == RPC_AUTH_NONE && sys;
}

void export_squash(const struct client_rule *rule, struct rpc_cred *cred)
{
	/* A GSS principal mapped to a local user is as much a user as AUTH_SYS's claim (more:
	 * it is proved); anything else carries no identity we can trust: treat it as AUTH_NONE. */
	bool user = cred->flavor == RPC_AUTH_SYS || (cred->flavor == RPC_AUTH_GSS && cred->gss_mapped);
	if (!user || rule->squash == SQUASH_ALL) {
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
