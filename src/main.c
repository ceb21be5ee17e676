/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nfsd-uc: start-up, signals, shutdown. Everything here runs before the rings start or after they
 * stop, so blocking calls are fine (listed in docs/architecture.md). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <link.h>
#include <malloc.h>
#include <pthread.h>
#include <rpc/pmap_clnt.h>
#include <sched.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "conf/config.h"
#include "svc/connlimit.h"
#include "rpc/drc.h"
#include "fs/fs.h"
#include "lock/nlm.h"
#include "lock/nsm.h"
#include "rpc/rpccb.h"
#include "base/log.h"
#include "ops/metrics_http.h"
#include "mount/mountlist.h"
#include "xdr/nlm_prot.h"
#include "xdr/nsm_prot.h"
#include "pmap/pmap.h"
#include <rpc/rpc.h>
#include "xdr/mount3_prot.h"
#include "xdr/nfs3_prot.h"
#include "nfsd.h"
#include "svc/server.h"
#include "ops/service.h"
#include "svc/worker.h"

/* jemalloc's options, read once before main (MALLOC_CONF in the environment still overrides
 * them; the sanitizer builds, on the C library's allocator, ignore this). Its default keeps freed
 * pages for 10 s: at a gigabyte a second of READ and WRITE buffers that is hundreds of megabytes
 * the cache's bound never sees, which a memory-capped service is OOM-killed for. Here jemalloc's
 * own background thread gives them back within about 100 ms.
 * A readahead buffer (a 1 MiB READ and 8 MiB more, fileio.c) is past jemalloc's default
 * oversize threshold (8 MiB), whose arena purges at once: each was fresh memory the kernel
 * zeroes page by page (clear_page is a fifth of the daemon's profile in a cold read). At 16 MiB
 * they are reused like any other buffer freed in the last 100 ms. The type is jemalloc's. */
const char *malloc_conf = "background_thread:true,dirty_decay_ms:100,muzzy_decay_ms:0,"
			  "oversize_threshold:16777216";

static void usage(FILE *f)
{
	fprintf(f,
		"usage: nfsd-uc -c FILE          serve the exports of FILE (foreground, logs to stderr)\n"
		"       nfsd-uc --check -c FILE  validate FILE: exit 0, or print FILE:LINE: error and exit 2\n"
		"       nfsd-uc --help | --version\n"
		"options: -v, --verbose   debug logging\n");
}

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

/* Port 111: ours (the registry the portmapper's handlers answer from), or the host's rpcbind
 * (registered once the rings serve), or nobody. */
static int portmapper_prepare(struct server *srv, enum pmap_mode *mode)
{
	*mode = pmap_decide(srv->cfg);
	if (*mode != PMAP_OWN)
		return 0;
	struct pmap_prog_port list[SERVICE_PROGS_MAX];
	size_t n = service_programs(srv, true, list);
	srv->pmap = pmap_reg_new(pmap_families(srv->cfg));
	if (!srv->pmap || pmap_reg_add_own_list(srv->pmap, list, n) < 0) {
		log_err("out of memory for the portmapper");
		return -1;
	}
	return 0;
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

static void rpcbind_set(const struct server *srv, enum pmap_mode mode, bool on)
{
	if (mode != PMAP_RPCBIND)
		return;
	if (on && srv->nlm)
		warn_lock_manager_registered();
	struct pmap_prog_port list[SERVICE_PROGS_MAX];
	size_t n = service_programs(srv, false, list);
	if (!pmap_rpcbind_set(list, n, on) && on)
		log_warn("rpcbind refused some registrations: clients may need port options");
	else if (on)
		log_info("registered NFS v3 (port %u), MOUNT v3 (port %u)%s with rpcbind",
			 srv->cfg->port, srv->cfg->mount_port, srv->nlm ? ", NLM and NSM" : "");
}

/* NLM and NSM ([lock] port): the status monitor's state, the callback thread, the lock table. */
static int lock_manager_start(struct server *srv)
{
	const struct config *cfg = srv->cfg;
	if (!cfg->lock_port)
		return 0;
	struct nsm *nsm = nsm_open(cfg->state_dir);
	struct rpccb *cb = nsm ? rpccb_start() : NULL;
	if (nsm && !cb)
		log_err("cannot start the lock manager's callback thread: %s", strerror(errno));
	srv->nlm = cb ? nlm_new(cfg, nsm, cb) : NULL;
	if (srv->nlm)
		return 0;
	if (cb)
		rpccb_stop(cb);
	nsm_close(nsm, false);
	return -1;
}

static int lock_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	unsigned *failed = arg;
	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || ph->p_memsz == 0)
			continue;
		uintptr_t from = (info->dlpi_addr + ph->p_vaddr) & ~(page - 1);
		uintptr_t to = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
		if (mlock((void *)from, to - from) < 0)
			(*failed)++;
	}
	return 0;
}

/* Keep the code of the daemon and of its libraries in memory. A code path not run yet (the
 * first COMMIT, say) would otherwise be paged in from the root disk on first use after memory
 * pressure or a cache drop, stalling a request behind device reads that are not its file's.
 * The segments, not mlockall(): that would also pin every heap page and thread stack. */
static void lock_code(void)
{
	unsigned failed = 0;
	dl_iterate_phdr(lock_object, &failed);
	if (failed)
		log_info("%u code segment(s) could not be locked in memory (%s): they may be paged "
			 "in from disk when first used", failed, strerror(errno));
}

/* Request and reply buffers of up to max_record come and go at every large WRITE and READ. When
 * the daemon runs on glibc's malloc (sanitizer builds, or built without jemalloc), by default it
 * serves them with fresh mmaps, or trims them off the heap when freed, so each one
 * is faulted in and zeroed again: a third of the server's CPU on 1 MiB WRITEs. Keep them in the
 * heap for reuse; memory beyond what is in use goes back only past 64 MiB of free top. */
static void tune_malloc(size_t max_record)
{
	size_t big = max_record + (2u << 20);
	if (!mallopt(M_MMAP_THRESHOLD, (int)big) || !mallopt(M_TRIM_THRESHOLD, 64 << 20))
		log_info("malloc tuning refused: large buffers will be faulted in at each use");
}

/* Everything that must exist before a client is served; nothing is running when it fails. */
static int prepare(struct server *srv)
{
	const struct config *cfg = srv->cfg;
	if (sodium_init() < 0)
		return -1;
	lock_code();
	tune_malloc(cfg->max_record);
	struct fs_params fp = {.cfg = srv->cfg, .rings = ring_count(cfg), .ops = &workers_fs_ops};
	if (fs_new(&fp, &srv->fs) < 0)
		return -1;
	srv->place_align = fs_place_align(srv->fs);
	if (climits_create(cfg, &srv->limits) < 0)
		return -1;
	if (!(srv->mounts = mount_list_new(cfg->mount_list_entries))) {
		log_err("cannot create the MOUNT list");
		return -1;
	}
	if (cfg->reply_cache_entries && drc_create(cfg->reply_cache_entries, cfg->reply_cache_size,
						   &srv->drc) < 0) {
		log_err("cannot create the duplicate request cache");
		return -1;
	}
	return lock_manager_start(srv);
}

static uint64_t monotonic_usec(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Until SIGTERM or SIGINT; each SIGHUP meanwhile reloads the file (exptable.h). */
static void serve_until_stopped(struct server *srv, const char *file, bool verbose)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	for (;;) {
		int sig = 0;
		sigwait(&set, &sig);
		if (sig != SIGHUP) {
			log_info("signal %d: finishing requests in flight", sig);
			return;
		}
		log_info("SIGHUP: reloading %s", file);
		sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%llu\nSTATUS=reloading %s",
			   (unsigned long long)monotonic_usec(), file);
		fs_reload(srv->fs, file, verbose);
		sd_notifyf(0, "READY=1\nSTATUS=serving %zu export(s)", fs_nexports(srv->fs));
		if (fs_stop_pending(srv->fs)) {
			log_info("stop signal during the reload: finishing requests in flight");
			return;
		}
	}
}

static int serve(struct config *cfg, const char *file, bool verbose)
{
	struct server srv = {.cfg = cfg};
	unsigned nw = ring_count(cfg);
	int rc = 1;
	enum pmap_mode pmode = PMAP_NONE;
	if (prepare(&srv) < 0 || portmapper_prepare(&srv, &pmode) < 0 || server_listen(&srv) < 0)
		goto out;
	struct metrics_http *mh = NULL;
	if (workers_start(&srv, nw) == 0 && metrics_http_start(&srv, &mh) < 0) {
		workers_stop(&srv);
		goto out;
	}
	if (srv.workers) {
		rpcbind_set(&srv, pmode, true);
		if (srv.nlm)
			nlm_notify_restart(srv.nlm);   /* the clients that held locks reclaim them now */
		log_info("ready: NFS v3 on %s:%u, MOUNT v3 on port %u, %zu export(s), %u ring(s)",
			 cfg->listen, cfg->port, cfg->mount_port, cfg->nexports, nw);
		/* systemd's Type=notify: both ports serve now (a no-op without NOTIFY_SOCKET). */
		sd_notifyf(0, "READY=1\nSTATUS=serving %zu export(s) on %s:%u", cfg->nexports,
			   cfg->listen, cfg->port);
		serve_until_stopped(&srv, file, verbose);
		sd_notify(0, "STOPPING=1\nSTATUS=finishing the requests in flight");
		rc = 0;
		rpcbind_set(&srv, pmode, false);
		metrics_http_stop(mh);   /* it reads the rings' counters */
		/* Replies owed are sent before the rings stop; closing their handle caches writes
		 * every block still cached; then make it durable. */
		workers_stop(&srv);
	}
	if (srv.fs && fs_sync_exports(srv.fs) < 0)
		rc = 1;
out:
	nlm_free(srv.nlm, true);   /* after the rings: no call of theirs uses it any more */
	server_unlisten(&srv);
	pmap_reg_free(srv.pmap);
	drc_destroy(srv.drc);
	climits_destroy(srv.limits);
	fs_free(srv.fs);
	mount_list_free(srv.mounts);
	if (rc == 0)
		log_info("stopped");
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"config", required_argument, NULL, 'c'}, {"check", no_argument, NULL, 'C'},
		{"help", no_argument, NULL, 'h'},         {"version", no_argument, NULL, 'V'},
		{"verbose", no_argument, NULL, 'v'},      {0, 0, 0, 0}};
	const char *file = NULL;
	bool check = false, verbose = false;
	int o;
	log_init();
	while ((o = getopt_long(argc, argv, "c:hVv", opts, NULL)) != -1) {
		switch (o) {
		case 'c': file = optarg; break;
		case 'C': check = true; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("nfsd-uc %s\n", NFSD_UC_VERSION); return 0;
		case 'v': verbose = true; break;
		default: usage(stderr); return 2;
		}
	}
	if (!file || optind != argc) {
		usage(stderr);
		return 2;
	}
	struct config cfg;
	char err[1024];
	if (config_load(file, &cfg, err, sizeof err) < 0) {
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	if (check) {
		/* Loads, but a reload would refuse it: say so, without failing an installed conf
		 * that exports nothing yet. */
		if (!cfg.nexports)
			fprintf(stderr, "%s: no [export] section: nothing is served, and a reload "
				"(SIGHUP) refuses such a file\n", file);
		config_free(&cfg);
		return 0;
	}
	log_set_level(verbose ? LOG_DEBUG : cfg.log_level);
	/* Signals are taken by sigwait in the main thread; rings and pool threads inherit the mask. */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* Modes come from the client, already filtered by its umask: ours must not filter again. */
	umask(0);
	int rc = serve(&cfg, file, verbose);
	config_free(&cfg);
	return rc;
}
