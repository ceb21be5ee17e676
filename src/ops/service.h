/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the daemon serves, as the portmapper (ours, or the host's rpcbind) lists it. */
#ifndef NFSD_UC_OPS_SERVICE_H
#define NFSD_UC_OPS_SERVICE_H

#include <stdbool.h>
#include <stddef.h>

#include "pmap/pmap.h"

#define SERVICE_PROGS_MAX 20

struct config;

/* NFS over TCP; MOUNT, NLM (versions 1, 3 and 4, as knfsd's lockd, when the lock manager runs:
 * lock) and NSM over TCP and UDP; the portmapper itself when it is ours (pmap_own). n entries in
 * out, which has room for SERVICE_PROGS_MAX. */
size_t service_programs(const struct config *cfg, bool lock, bool pmap_own,
			struct pmap_prog_port *out);

#endif
