/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libtirpc's own RPCSEC_GSS client (authgss_create_default over clnttcp_create): a second
 * implementation beside rawgss, in a file of its own because libtirpc's headers and rawrpc's
 * do not mix. */
#ifndef NFSD_UC_IT_GSS_TIRPC_H
#define NFSD_UC_IT_GSS_TIRPC_H

#include <stddef.h>
#include <stdint.h>

#include <gssapi/gssapi.h>

/* Over a new connection to 127.0.0.1:port, a context with nfs@localhost made by libtirpc with
 * cred, service privacy; NFS NULL, then GETATTR of fh (its nfsstat3 in *status, the file's type in
 * *type when 0), then the context destroyed. 0, or -1 with err (libtirpc's words). */
int gss_tirpc_getattr(uint16_t port, gss_cred_id_t cred, const uint8_t *fh, uint32_t fh_len,
                      uint32_t *status, uint32_t *type, char *err, size_t errlen);

#endif
