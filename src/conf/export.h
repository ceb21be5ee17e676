/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Exports at run time: which client may use which export, and how its credentials are squashed. */
#ifndef NFSD_UC_EXPORT_H
#define NFSD_UC_EXPORT_H

#include <netinet/in.h>
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

/* Apply root_squash / all_squash to an AUTH_SYS or AUTH_NONE credential in place.
 * AUTH_NONE always maps to anonuid/anongid. */
void export_squash(const struct client_rule *rule, struct rpc_cred *cred);

/* The export whose path is PATH exactly (MOUNT's dirpath), or NULL. */
const struct export_cfg *export_by_path(const struct config *cfg, const char *path);
/* The export with this fsid, or NULL. */
const struct export_cfg *export_by_fsid(const struct config *cfg, uint32_t fsid);

#endif
