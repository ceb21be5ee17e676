/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The name of a request's client, for wildcard client rules (*.example.com): its address looked
 * up in reverse, then forward to confirm it (a PTR record alone is the client's to choose), on
 * threads of its own (srv->resolver: DNS can be slow, and that pool is only for this); kept,
 * found or not, per ring for a minute. Asked only when a request reaches a wildcard rule. */
#ifndef NFSD_UC_PEERNAME_H
#define NFSD_UC_PEERNAME_H

struct nfs_req;

/* The confirmed name ("" when there is none), in the request's arena. For export_match_named. */
const char *peer_confirmed_name(void *nfs_req);

#endif
