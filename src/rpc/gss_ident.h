/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Who a Kerberos principal is on this host: a user principal ("alice@REALM") the local user
 * krb5's auth_to_local rules name (gss_localname: by default, the principal's first component
 * when its realm is the default one), with that user's uid, gid and groups; a machine
 * principal ("nfs/host@REALM", "host/", "root/") is root, which the export's squash rule then
 * treats as it treats root from AUTH_SYS, as knfsd does. Anything else maps to nobody: the
 * export's anonymous user. Looks up the password and group files: off the rings. */
#ifndef NFSD_UC_RPC_GSS_IDENT_H
#define NFSD_UC_RPC_GSS_IDENT_H

#include <gssapi/gssapi.h>
#include <stdbool.h>

#include "rpc/oncrpc.h"

/* The identity of name (principal: its display form) into cred's uid, gid, gids and
 * gss_mapped. */
void gss_ident_map(gss_name_t name, const char *principal, struct rpc_cred *cred);

#endif
