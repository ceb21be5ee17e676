/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Exports at run time: which client may use which export, and how its credentials are squashed. */
#ifndef NFSD_UC_EXPORT_H
#define NFSD_UC_EXPORT_H

#include <netinet/in.h>
#include <stdbool.h>
#include <sys/socket.h>
#include "conf/config.h"
#include "rpc/oncrpc.h"

/* The first rule of exp that matches the peer address (IPv4-mapped IPv6 is matched as IPv4),
 * or NULL when the client may not use the export. Port checks (secure) are the caller's. */
const struct client_rule *export_match(const struct export_cfg *exp, const struct sockaddr *peer);
/* The same, where wildcard-name rules (*.example.com) match the peer's name, which name(ctx)
 * gives ("" or NULL: it has none), asked at most once and only when such a rule is reached. */
typedef const char *(*export_name_fn)(void *ctx);
const struct client_rule *export_match_named(const struct export_cfg *exp,
					     const struct sockaddr *peer, export_name_fn name,
					     void *ctx);

/* Apply root_squash / all_squash to a credential in place: AUTH_SYS and a mapped RPCSEC_GSS
 * principal (machine principals are uid 0, so root_squash applies to them) alike; AUTH_NONE
 * and an unmapped principal are always anonuid/anongid with no groups. */
void export_squash(const struct client_rule *rule, struct rpc_cred *cred);

/* Whether the rule's sec= lets in a call made with c's flavor: its exact pseudo-flavor is
 * listed (krb5p allows krb5p calls only), or it is AUTH_NONE and sys is listed. */
bool export_flavor_ok(const struct client_rule *r, const struct rpc_cred *c);

/* The export whose path is PATH exactly (MOUNT's dirpath), or NULL. */
const struct export_cfg *export_by_path(const struct config *cfg, const char *path);
/* The export with this fsid, or NULL. */
const struct export_cfg *export_by_fsid(const struct config *cfg, uint32_t fsid);

#endif
