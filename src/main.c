/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nfsd-uc: the command line, the process's setup (signals, memory), and the daemon (daemon.c)
 * built, run until a stop signal, reloaded on SIGHUP, stopped. Everything here runs before the
 * rings start or after they stop, or on the main thread beside them, so blocking calls are fine
 * (listed in docs/architecture.md). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <link.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "conf/config.h"
#include "daemon.h"
#include "fs/fs.h"

/* jemalloc's options, read once before main (MALLOC_CONF in the environment still overrides
 * them; the sanitizer builds, on the C library's allocator, ignore this). Its default keeps freed
 * pages for 10 s: at a gigabyte a second of READ and WRITE buffers that is hundreds of megabytes
 * the cache's bound never sees, which a memory-capped service is OOM-killed for. Here jemalloc's
 * own background thread gives them back within about 100 ms.
 * A readahead buffer (a 1 MiB READ and 8 MiB more, fs/read.c) is past jemalloc's default
 * oversize threshold (8 MiB), whose arena purges at once: each was fresh memory the kernel
 * zeroes page by page (clear_page is a fifth of the daemon's profile in a cold read). At 16 MiB
 * they are reused like any other buffer freed in the last 100 ms. The type is jemalloc's. */
const char *malloc_conf = "background_thread:true,dirty_decay_ms:100,muzzy_decay_ms:0,"
			  "oversize_threshold:16777216";

static void usage(FILE *f)
{
	fprintf(f,
		"usage: nfsd-uc -c FILE          serve the exports of FILE (foreground, logs to stderr)\n"
		"       nfsd-uc --check -c FILE  validate FILE against this host: exit 0, or print\n"
		"                                every FILE:LINE: error and exit 2\n"
		"       nfsd-uc --check --reload -c FILE\n"
		"                                the same, and fail where a reload would refuse FILE\n"
		"       nfsd-uc --dump-config -c FILE\n"
		"                                print the configuration in force, defaults included\n"
		"       nfsd-uc --help | --version\n"
		"options: -v, --verbose   debug logging\n");
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

/* One daemon per state_dir. Two would share more than the file-handle key: the lock manager's
 * record of the clients it monitors and its state number, so each would tell the other's
 * clients that the server rebooted. flock, the kernel's: a daemon that died holds it no more.
 * The descriptor (to keep while serving), or -1 with a line that says who holds it. */
static int claim_state_dir(const char *dir)
{
	char path[PATH_MAX], pid[32] = "";
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		log_err("state_dir %s: %s", dir, strerror(errno));
		return -1;
	}
	snprintf(path, sizeof path, "%s/nfsd-uc.pid", dir);
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		log_err("%s: %s", path, strerror(errno));
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		ssize_t n = errno == EWOULDBLOCK ? pread(fd, pid, sizeof pid - 1, 0) : -1;
		pid[n > 0 ? n : 0] = '\0';
		pid[strcspn(pid, "\n")] = '\0';
		log_err("state_dir %s is in use by another nfsd-uc%s%s%s: each instance needs its own "
			"state_dir (and its own ports)", dir, *pid ? " (pid " : "", pid, *pid ? ")" : "");
		close(fd);
		return -1;
	}
	int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, (size_t)n, 0) != n)
		log_warn("%s: cannot write the pid: %s", path, strerror(errno));
	return fd;
}

/* The daemon, built: every layer of it, nothing running yet. */
static int prepare(struct daemon *d, struct config *cfg)
{
	if (sodium_init() < 0)
		return -1;
	lock_code();
	tune_malloc(cfg->max_record);
	return daemon_build(d, cfg, NULL);
}

static uint64_t monotonic_usec(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Until SIGTERM or SIGINT; each SIGHUP meanwhile reloads the file (fs/exptable.h). */
static void serve_until_stopped(struct fs *fs, const char *file, bool verbose)
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
		fs_reload(fs, file, verbose);
		sd_notifyf(0, "READY=1\nSTATUS=serving %zu export(s)", fs_nexports(fs));
		if (fs_stop_pending(fs)) {
			log_info("stop signal during the reload: finishing requests in flight");
			return;
		}
	}
}

static int serve(struct config *cfg, const char *file, bool verbose)
{
	struct daemon d = {0};
	int rc = 1;
	int state_fd = claim_state_dir(cfg->state_dir);
	if (state_fd >= 0 && prepare(&d, cfg) == 0 && daemon_start(&d) == 0) {
		log_info("ready: NFS v3 on %s:%u, MOUNT v3 on port %u, %zu export(s), %u ring(s)",
			 cfg->listen, cfg->port, cfg->mount_port, cfg->nexports, d.rings);
		/* systemd's Type=notify: both ports serve now (a no-op without NOTIFY_SOCKET). */
		sd_notifyf(0, "READY=1\nSTATUS=serving %zu export(s) on %s:%u", cfg->nexports,
			   cfg->listen, cfg->port);
		serve_until_stopped(d.fs, file, verbose);
		sd_notify(0, "STOPPING=1\nSTATUS=finishing the requests in flight");
		rc = daemon_stop(&d) < 0 ? 1 : 0;
	}
	daemon_free(&d);
	if (state_fd >= 0)
		close(state_fd);
	if (rc == 0)
		log_info("stopped");
	return rc;
}

enum action { SERVE, CHECK, CHECK_RELOAD, DUMP };

/* Exit status 2 (the unit's RestartPreventExitStatus): the file is wrong, and starting again
 * without an edit would fail the same way. */
static int load(const char *file, enum action a, struct config *cfg)
{
	char err[8192];
	int bad = config_load(file, cfg, err, sizeof err) < 0;
	if (!bad)
		bad = config_check_host(cfg, file, a == SERVE ? CFG_CHECK_STATE_DIR : CFG_CHECK_ALL,
					err, sizeof err) > 0;
	if (!bad && a == SERVE && config_check_host(cfg, file, CFG_CHECK_MEMORY, err, sizeof err))
		log_report(LOG_WARNING, err);   /* a small machine on the defaults still starts */
	if (!bad && a == CHECK_RELOAD && !cfg->nexports) {
		snprintf(err, sizeof err, "%s: no [export] section: a reload (SIGHUP) refuses such a "
			 "file", file);
		bad = 1;
	}
	if (bad) {
		log_report(LOG_ERR, err);
		config_free(cfg);
		return -1;
	}
	/* Loads, but a reload would refuse it: say so, without failing an installed conf that
	 * exports nothing yet. */
	if (a == CHECK && !cfg->nexports) {
		snprintf(err, sizeof err, "%s: no [export] section: nothing is served, and a reload "
			 "(SIGHUP) refuses such a file", file);
		log_report(LOG_WARNING, err);
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"config", required_argument, NULL, 'c'}, {"check", no_argument, NULL, 'C'},
		{"reload", no_argument, NULL, 'R'},       {"dump-config", no_argument, NULL, 'D'},
		{"help", no_argument, NULL, 'h'},         {"version", no_argument, NULL, 'V'},
		{"verbose", no_argument, NULL, 'v'},      {0, 0, 0, 0}};
	const char *file = NULL;
	bool check = false, reload = false, dump = false, verbose = false;
	int o;
	log_init();
	while ((o = getopt_long(argc, argv, "c:hVv", opts, NULL)) != -1) {
		switch (o) {
		case 'c': file = optarg; break;
		case 'C': check = true; break;
		case 'R': reload = true; break;
		case 'D': dump = true; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("nfsd-uc %s\n", NFSD_UC_VERSION); return 0;
		case 'v': verbose = true; break;
		default: usage(stderr); return 2;
		}
	}
	if (!file || optind != argc || (reload && !check) || (dump && check)) {
		usage(stderr);
		return 2;
	}
	enum action a = dump ? DUMP : check ? (reload ? CHECK_RELOAD : CHECK) : SERVE;
	struct config cfg;
	if (load(file, a, &cfg) < 0)
		return 2;
	if (a != SERVE) {
		if (a == DUMP)
			config_dump(&cfg, stdout);
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
