/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "ops/service.h"

#include <netinet/in.h>

#include "conf/config.h"
#include "xdr/mount3_prot.h"
#include "xdr/nfs3_prot.h"
#include "xdr/nlm_prot.h"
#include "xdr/nsm_prot.h"

size_t service_programs(const struct config *cfg, bool lock, bool pmap_own,
			struct pmap_prog_port *out)
{
	unsigned fam = pmap_families(cfg);
	size_t n = 0;
	out[n++] = (struct pmap_prog_port){NFS_PROGRAM, NFS_V3, IPPROTO_TCP, cfg->port, fam};
	for (int p = 0; p < 2; p++) {
		int proto = p ? IPPROTO_UDP : IPPROTO_TCP;
		out[n++] = (struct pmap_prog_port){MOUNT_PROGRAM, MOUNT_V3, proto, cfg->mount_port, fam};
		if (lock) {
			static const uint32_t nlm_vers[] = {NLM_VERS, NLM_VERSX, NLM4_VERS};
			for (size_t v = 0; v < 3; v++)
				out[n++] = (struct pmap_prog_port){NLM_PROG, nlm_vers[v], proto,
								   cfg->lock_port, fam};
			out[n++] = (struct pmap_prog_port){SM_PROG, SM_VERS, proto, cfg->lock_port, fam};
		}
		for (uint32_t v = 2; pmap_own && v <= 4; v++)
			out[n++] = (struct pmap_prog_port){PMAP_PROG, v, proto, PMAP_PORT, fam};
	}
	return n;
}
