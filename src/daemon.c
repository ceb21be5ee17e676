/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The daemon's layers, built bottom up and let go top down; all on the main thread, before the
 * rings start or after they stop, so blocking calls are fine (listed in docs/architecture.md). */
#include "daemon.h"

#include <errno.h>
#include <rpc/pmap_clnt.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "conf/config.h"
#include "fs/fs.h"
#include "lock/nlm.h"
#include "lock/nsm.h"
#include "mount/mount.h"
#include "ops/metrics_http.h"
#include "ops/ops.h"
#include "ops/service.h"
#include "rpc/rpccb.h"
#include "svc/svc.h"
#include "xdr/nlm_prot.h"
#include "xdr/nsm_prot.h"

/* `threads = 0` (the default): one ring per CPU this process may run on. */
static unsigned ring_count(const struct config *cfg)
{
	if (cfg->threads)
		return cfg->threads;
	cpu_set_t set;
	int n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
	if (n <= 0)
		n = (int)sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (unsigned)n : 1;
}

/* NLM and NSM ([lock] port): the status monitor's state, the callback thread, the lock table. */
static int lock_manager_start(struct daemon *d)
{
	const struct config *cfg = d->cfg;
	if (!cfg->lock_port)
		return 0;
	struct nsm *nsm = nsm_open(cfg->state_dir);
	struct rpccb *cb = nsm ? rpccb_start() : NULL;
	if (nsm && !cb)
		log_err("cannot start the lock manager's callback thread: %s", strerror(errno));
	d->nlm = cb ? nlm_new(cfg, nsm, cb) : NULL;
	if (d->nlm) {
		d->cb = cb;
		return 0;
	}
	if (cb)
		rpccb_stop(cb);
	nsm_close(nsm, false);
	return -1;
}

/* Port 111: ours (the registry the portmapper's handlers answer from), or the host's rpcbind
 * (registered once the rings serve), or nobody. */
static int portmapper_prepare(struct daemon *d)
{
	d->pmap_mode = pmap_decide(d->cfg);
	if (d->pmap_mode != PMAP_OWN)
		return 0;
	struct pmap_prog_port list[SERVICE_PROGS_MAX];
	size_t n = service_programs(d->cfg, d->nlm != NULL, true, list);
	d->pmap = pmap_reg_new(pmap_families(d->cfg));
	if (!d->pmap || pmap_reg_add_own_list(d->pmap, list, n) < 0) {
		log_err("out of memory for the portmapper");
		return -1;
	}
	return 0;
}

/* What the dispatcher serves, each program with its state; a program's versions side by side. */
static int register_programs(struct daemon *d)
{
	int rc = dispatch_add(d->svc, &nfs3_program, &d->nfs3);
	rc |= dispatch_add(d->svc, &mount3_program, d->mount);
	rc |= ops_attach(d->ops);
	if (d->nlm) {
		rc |= dispatch_add(d->svc, &nlm1_program, d->nlm);
		rc |= dispatch_add(d->svc, &nlm3_program, d->nlm);
		rc |= dispatch_add(d->svc, &nlm4_program, d->nlm);
		rc |= dispatch_add(d->svc, &nsm1_program, d->nlm);
	}
	if (d->pmap) {
		rc |= dispatch_add(d->svc, &pmap2_program, d->pmap);
		rc |= dispatch_add(d->svc, &rpcb3_program, d->pmap);
		rc |= dispatch_add(d->svc, &rpcb4_program, d->pmap);
	}
	if (rc)
		log_err("too many programs for the dispatcher");
	return rc ? -1 : 0;
}

int daemon_build(struct daemon *d, struct config *cfg, const struct daemon_opts *o)
{
	*d = (struct daemon){.cfg = cfg, .rings = ring_count(cfg)};
	struct fs_params fp = {.cfg = cfg, .rings = d->rings, .ops = &workers_fs_ops,
			       .fh_key = o ? o->fh_key : NULL,
			       .fh_cache_max = o ? o->fh_cache_max : 0};
	if (fs_new(&fp, &d->fs) < 0)
		return -1;
	struct svc_params sp = {.cfg = cfg, .fs = d->fs};
	if (svc_new(&sp, &d->svc) < 0 || !(d->mount = mount_state_new(cfg->mount_list_entries)) ||
	    lock_manager_start(d) < 0 || portmapper_prepare(d) < 0)
		return -1;
	struct ops_sources src = {.cfg = cfg, .fs = d->fs, .svc = d->svc, .nfs3 = &d->nfs3,
				  .mount = d->mount, .nlm = d->nlm};
	if (ops_new(&src, d->rings, &d->ops) < 0)
		return -1;
	return register_programs(d);
}

/* The host's rpcbind has one program per (program, version, transport): registering ours
 * replaces a kernel lockd's or rpc.statd's, and this host's own NFS mounts lose their locking. */
static void warn_lock_manager_registered(void)
{
	struct sockaddr_in lo = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	if (pmap_getport(&lo, NLM_PROG, NLM4_VERS, IPPROTO_UDP) ||
	    pmap_getport(&lo, SM_PROG, SM_VERS, IPPROTO_UDP))
		log_warn("rpcbind already lists a lock manager or status monitor (the kernel's lockd, "
			 "rpc.statd, or an nfsd-uc that did not stop cleanly): ours replace them there, "
			 "so NFS mounts made by this host itself lose their locking");
}

static void rpcbind_set(const struct daemon *d, bool on)
{
	if (d->pmap_mode != PMAP_RPCBIND)
		return;
	if (on && d->nlm)
		warn_lock_manager_registered();
	struct pmap_prog_port list[SERVICE_PROGS_MAX];
	size_t n = service_programs(d->cfg, d->nlm != NULL, false, list);
	if (!pmap_rpcbind_set(list, n, on) && on)
		log_warn("rpcbind refused some registrations: clients may need port options");
	else if (on)
		log_info("registered NFS v3 (port %u), MOUNT v3 (port %u)%s with rpcbind",
			 d->cfg->port, d->cfg->mount_port, d->nlm ? ", NLM and NSM" : "");
}

int daemon_start(struct daemon *d)
{
	if (svc_listen(d->svc, d->nlm != NULL, d->pmap != NULL) < 0 ||
	    svc_start(d->svc, d->rings) < 0)
		return -1;
	if (metrics_http_start(d->ops, &d->mh) < 0) {
		svc_stop(d->svc);
		return -1;
	}
	rpcbind_set(d, true);
	if (d->nlm)
		nlm_notify_restart(d->nlm);   /* the clients that held locks reclaim them now */
	return 0;
}

int daemon_stop(struct daemon *d)
{
	rpcbind_set(d, false);
	metrics_http_stop(d->mh);   /* it reads the rings' counters */
	d->mh = NULL;
	/* Replies owed are sent before the rings stop; closing their handle caches writes every
	 * block still cached; then make it durable. */
	svc_stop(d->svc);
	return fs_sync_exports(d->fs);
}

void daemon_free(struct daemon *d)
{
	nlm_free(d->nlm, true);   /* after the rings: no call of theirs uses it any more */
	d->nlm = NULL;
	if (d->svc)
		svc_unlisten(d->svc);
	pmap_reg_free(d->pmap);
	ops_free(d->ops);
	svc_free(d->svc);
	fs_free(d->fs);
	mount_state_free(d->mount);
	*d = (struct daemon){0};
}
