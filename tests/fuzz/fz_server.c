/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The fuzzed server: the daemon as daemon_build() makes it (daemon.c, nfsd-uc's own start-up),
 * the lock manager and our own portmapper's registry included, one ring started by svc_start(),
 * and records run the way server.c's request_main() runs them. In a network namespace of its
 * own, a fake client host answers the lock manager's callbacks (fz_client.c). */
#include "fz_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sodium.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"
#include "conf/config.h"
#include "daemon.h"
#include "fs/cred.h"
#include "fs/exptable.h"
#include "fs/fileio.h"
#include "fs/fs_int.h"
#include "fz_check.h"
#include "fz_client.h"
#include "fz_marks.h"
#include "io/fiber.h"
#include "lock/lk_table.h"
#include "lock/nlm.h"
#include "pmap/pmap.h"
#include "rpc/drc.h"
#include "rpc/oncrpc.h"
#include "rpc/recmark.h"
#include "rpc/rpccb.h"
#include "svc/reply.h"
#include "svc/worker.h"
#include "xdr/mount3_prot.h"
#include "xdr/nfs3_prot.h"
#include "xdr/nlm_prot.h"
#include "xdr/nsm_prot.h"

#include <rpc/pmap_prot.h>

static const char *const obj_name[FZ_NOBJ] = {
	[FZ_OBJ_ROOT] = "", [FZ_OBJ_FILE] = "file", [FZ_OBJ_DIR] = "dir", [FZ_OBJ_LINK] = "link",
	[FZ_OBJ_FIFO] = "fifo", [FZ_OBJ_EMPTY] = "empty", [FZ_OBJ_RDONLY] = "rdonly",
	[FZ_OBJ_DIR_A] = "dir/a",
};

static struct {
	struct config cfg;
	struct daemon d;
	char root[PATH_MAX];              /* the temporary tree: state/, e0/ .. e3/, fuzz.conf */
	bool sandboxed, netns;
	struct rpccb *cb;                 /* the lock manager's callback engine (it owns it) */
	struct sockaddr_storage local;    /* our address the records came to (TCP's getsockname) */
	struct fz_fh fh[FZ_NEXP][FZ_NOBJ];
	struct fz_fh last;                /* last handle a reply of this input handed out */
	bool have_last;
	unsigned inputs, reset_every;
	struct sockaddr_storage peer;
	uint16_t port;
	pthread_mutex_t lock;
	pthread_cond_t cond;
} fz = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};

_Noreturn void fz_die(const char *what)
{
	fprintf(stderr, "fz_server: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* ---- the sandbox ---- */

static bool bind_self(const char *path, unsigned long flags)
{
	return mount(path, path, NULL, MS_BIND, NULL) == 0 &&
	       mount(NULL, path, NULL, MS_REMOUNT | MS_BIND | flags, NULL) == 0;
}

/* A directory libFuzzer may write to: a corpus directory, or the one artifact_prefix names. */
static void keep_writable(const char *arg)
{
	char dir[PATH_MAX];
	const char *p = strncmp(arg, "-artifact_prefix=", 17) == 0 ? arg + 17 : arg;
	if (arg[0] == '-' && p == arg)
		return;
	snprintf(dir, sizeof dir, "%s", p);
	struct stat sb;
	if (stat(dir, &sb) < 0 || !S_ISDIR(sb.st_mode)) {
		char *slash = strrchr(dir, '/');   /* a prefix "dir/crash-": its directory */
		if (!slash)
			return;
		*slash = 0;
	}
	if (realpath(dir, dir) && strcmp(dir, "/") != 0)
		bind_self(dir, 0);
}

/* The fuzzer sends calls as root (no_root_squash) to the cached export, so what a bug could make
 * the server do (follow a symlink out of the export, open a device node it let a client make)
 * must not reach the machine: in a mount namespace of its own, the tree is nodev and nosuid,
 * and / is read-only but for what libFuzzer writes (cwd, $TMPDIR, corpus and artifact
 * directories). Without the privilege for it, every export squashes root instead. */
static bool sandbox(const char *tmpdir, int argc, char **argv)
{
	char cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof cwd) || unshare(CLONE_NEWNS) < 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return false;
	if (strcmp(tmpdir, "/") != 0 && !bind_self(tmpdir, 0))
		return false;
	if (strcmp(cwd, "/") != 0 && !bind_self(cwd, 0))
		return false;
	for (int i = 1; i < argc; i++)
		keep_writable(argv[i]);
	if (!bind_self(fz.root, MS_NODEV | MS_NOSUID))
		return false;
	return mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) == 0;
}

/* ---- the export trees ---- */

static int rm_entry(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	(void)sb;
	if (ftw->level == 0)
		return 0;
	if (type == FTW_DP && rmdir(path) < 0)
		fprintf(stderr, "fz_server: rmdir %s: %s\n", path, strerror(errno));
	else if (type != FTW_DP && unlink(path) < 0)
		fprintf(stderr, "fz_server: unlink %s: %s\n", path, strerror(errno));
	return 0;
}

static void put_file(int dfd, const char *name, size_t size, mode_t mode, uid_t uid)
{
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	if (fd < 0)
		fz_die(name);
	char buf[1024];
	for (size_t off = 0; off < size; off += sizeof buf) {
		size_t n = size - off < sizeof buf ? size - off : sizeof buf;
		for (size_t i = 0; i < n; i++)
			buf[i] = (char)('a' + (off + i) % 26);
		if (write(fd, buf, n) != (ssize_t)n)
			fz_die(name);
	}
	if (fchown(fd, uid, uid) < 0 || fchmod(fd, mode) < 0)
		fz_die(name);
	close(fd);
}

static void make_objects(int dfd)
{
	if (fchown(dfd, 0, 0) < 0 || fchmod(dfd, 0777) < 0)
		fz_die("export root");
	put_file(dfd, "file", 20000, 0666, 0);
	if (mkdirat(dfd, "dir", 0777) < 0 || mkdirat(dfd, "dir/b", 0755) < 0)
		fz_die("dir");
	put_file(dfd, "dir/a", 5000, 0644, 0);
	if (symlinkat("file", dfd, "link") < 0 || mknodat(dfd, "fifo", S_IFIFO | 0666, 0) < 0)
		fz_die("link, fifo");
	put_file(dfd, "empty", 0, 0644, 1000);
	put_file(dfd, "rdonly", 100, 0444, 1000);
}

static void handles_by_calls(void);
static void end_grace(void);

/* Empty every export, make its objects again and take their (new) handles. The server holds
 * descriptors of the old files: to it they were removed behind its back, as a local rm does. */
static void reset_tree(void)
{
	for (unsigned i = 0; i < FZ_NEXP; i++) {
		const struct export_rt *e = &fz.d.fs->table->exports[i];
		if (nftw(e->cfg->path, rm_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT) < 0)
			fz_die("clearing an export");
		make_objects(e->root_fd);
	}
	handles_by_calls();
}

static void write_conf(const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f)
		fz_die(path);
	/* A small cache and reply cache, so that eviction is reached; threads = 1: one ring. */
	/* The lock manager's limits low enough to be reached within FZ_RESET_EVERY inputs. */
	/* No keytab: every RPCSEC_GSS call is refused (AUTH_BADCRED), whatever the host has. */
	fprintf(f, "[server]\nthreads = 1\nblocking_threads = 2\nstate_dir = state\nrpcbind = own\n"
		   "keytab = /nonexistent/nfsd-uc-fuzz.keytab\n"
		   "reply_cache_entries = 256\nmount_list_entries = 64\n[cache]\nsize = 16M\n"
		   "[lock]\nlocks = 4096\nlocks_per_client = 64\nwaiters = 1024\nwaiters_per_client = 8\n"
		   "[export e0]\nclients = 127.0.0.1(rw,%s)\nwrite_mode = cached\nread_mode = direct\n"
		   "[export e1]\nclients = 127.0.0.1(rw,insecure)\nwrite_mode = direct\nread_mode = direct\n"
		   "[export e2]\nclients = 127.0.0.1(ro,all_squash,anonuid=1000,anongid=1000)\n"
		   "write_mode = dontcache\nread_mode = dontcache\n"
		   "[export e3]\nclients = 127.0.0.2(rw)\nwrite_mode = buffered\nread_mode = buffered\n",
		fz.sandboxed ? "no_root_squash" : "root_squash");
	if (fclose(f) != 0)
		fz_die(path);
}

static void make_tree(int argc, char **argv)
{
	const char *tmp = getenv("TMPDIR");
	char tmpdir[PATH_MAX];
	if (!tmp || !*tmp)
		tmp = "/tmp";
	if (!realpath(tmp, tmpdir))
		fz_die(tmp);
	snprintf(fz.root, sizeof fz.root, "%s/nfsd-uc-fuzz.XXXXXX", tmpdir);
	if (!mkdtemp(fz.root))
		fz_die("mkdtemp");
	fz.sandboxed = sandbox(tmpdir, argc, argv);
	if (!fz.sandboxed)
		fprintf(stderr, "fz_server: no mount namespace (%s): root is squashed on every export\n",
			strerror(errno));
	char p[PATH_MAX + 16];
	static const char *const sub[] = {"state", "e0", "e1", "e2", "e3"};
	for (size_t i = 0; i < sizeof sub / sizeof sub[0]; i++) {
		snprintf(p, sizeof p, "%s/%s", fz.root, sub[i]);
		if (mkdir(p, 0777) < 0)
			fz_die(p);
	}
	/* A client host that held locks before this start: the lock manager reads its record,
	 * starts a grace period for it and notifies it (fz_server_init ends the grace period). */
	snprintf(p, sizeof p, "%s/state/nsm", fz.root);
	if (mkdir(p, 0700) < 0)
		fz_die(p);
	snprintf(p, sizeof p, "%s/state/nsm/hosts", fz.root);
	if (mkdir(p, 0700) < 0)
		fz_die(p);
	snprintf(p, sizeof p, "%s/state/nsm/hosts/127.0.0.2", fz.root);
	FILE *rec = fopen(p, "w");
	if (!rec || fputs("fuzzhost2\n127.0.0.1\n", rec) < 0 || fclose(rec) != 0)
		fz_die(p);
	snprintf(p, sizeof p, "%s/fuzz.conf", fz.root);
	write_conf(p);
	char err[1024];
	if (config_load(p, &fz.cfg, err, sizeof err) < 0) {
		fprintf(stderr, "fz_server: %s\n", err);
		exit(1);
	}
}

static void remove_tree(void)
{
	if (fz.root[0]) {
		nftw(fz.root, rm_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
		if (fz.sandboxed)
			umount2(fz.root, MNT_DETACH);   /* the nodev bind mount on it */
		rmdir(fz.root);
	}
}

/* ---- start-up (main.c: prepare, serve) ---- */

/* Ring 0 accepts on it (NFS and MOUNT alike): a port of its own, so nothing outside is touched. */
static int listen_any(uint16_t *port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t alen = sizeof a;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 128) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &alen) < 0)
		fz_die("listen");
	if (port)
		*port = ntohs(a.sin_port);
	return fd;
}

/* A network namespace of its own with only the loopback up (as root): the lock manager's
 * callbacks to the fuzzed client (127.0.0.1, 127.0.0.2) reach the fake client host
 * (fz_client.c) and nothing of the machine's. Before any thread or socket exists. */
static bool private_net(void)
{
	if (unshare(CLONE_NEWNET) < 0)
		return false;
	struct ifreq ifr;
	memset(&ifr, 0, sizeof ifr);
	snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		fz_die("loopback of the network namespace");
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
		fz_die("loopback of the network namespace");
	close(fd);
	return true;
}

/* At exit, as serve() ends: the lock manager (its engine cancels what is in flight), the
 * registry, the client host. The rings stay: no call runs between inputs. */
static void stop_side_programs(void)
{
	nlm_free(fz.d.nlm, true);
	fz.d.nlm = NULL;
	fz.cb = NULL;
	pmap_reg_free(fz.d.pmap);
	fz.d.pmap = NULL;
	fz_client_stop();
}

/* The daemon as daemon_build() makes it (the same code as nfsd-uc's), with a fixed handle key
 * (handles are the same in every run of the same tree) and small handle caches; then, rather
 * than the configured ports, one TCP port of any number, and one ring. */
static void start_server(void)
{
	if (sodium_init() < 0)
		fz_die("sodium_init");
	/* The fake client host answers the lock manager from its start on. */
	if (fz.netns)
		fz_client_start();
	const struct daemon_opts opts = {.fh_key = (const uint8_t *)"nfsd-uc fuzz key",
					 .fh_cache_max = 256};
	if (daemon_build(&fz.d, &fz.cfg, &opts) < 0)
		fz_die("daemon_build");
	if (!fz.d.nlm || fz.d.pmap_mode != PMAP_OWN)
		fz_die("the lock manager and rpcbind = own");
	fz.cb = fz.d.cb;
	struct svc *svc = fz.d.svc;
	svc->listen_fd[0] = listen_any(&fz.port);
	svc->nlisten_fds = 1;
	if (svc_start(svc, 1) < 0)
		fz_die("svc_start");
}

void fz_server_init(int *argc, char ***argv)
{
	if (fz.d.svc && svc_running(fz.d.svc))
		return;
	/* As main(): client modes are already filtered by the client's umask. Writes to a
	 * connection the server closed must not kill the harness. */
	umask(0);
	signal(SIGPIPE, SIG_IGN);
	const char *lvl = getenv("FZ_LOG");
	log_set_level(lvl && *lvl ? LOG_DEBUG : LOG_CRIT);
	const char *trace = getenv("FZ_TRACE");
	fz_trace = trace && *trace;
	const char *every = getenv("FZ_RESET_EVERY");
	fz.reset_every = every && *every ? (unsigned)strtoul(every, NULL, 10) : 64;
	if (!fz.reset_every)
		fz.reset_every = 1;
	fz.netns = private_net();
	if (!fz.netns)
		fprintf(stderr, "fz_server: no network namespace (%s): the lock manager's callbacks "
			"go to this host's port 111, and time out if nobody answers\n", strerror(errno));
	make_tree(argc ? *argc : 0, argv ? *argv : NULL);
	atexit(remove_tree);
	/* The server's threads (ring, pool) inherit a mask that keeps libFuzzer's signals (the
	 * -timeout alarm, SIGINT) on the fuzzing thread, as the daemon keeps its own on main(). */
	sigset_t set, old;
	sigemptyset(&set);
	sigaddset(&set, SIGALRM), sigaddset(&set, SIGINT), sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGUSR1), sigaddset(&set, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	start_server();
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	atexit(stop_side_programs);
	struct sockaddr_in *pa = (struct sockaddr_in *)&fz.peer;
	pa->sin_family = AF_INET;
	pa->sin_port = htons(700);    /* privileged: "secure" rules let it in */
	pa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	struct sockaddr_in *la = (struct sockaddr_in *)&fz.local;
	la->sin_family = AF_INET;
	la->sin_port = htons(fz.port);
	la->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	/* As serve(): the hosts that held locks are notified. */
	nlm_notify_restart(fz.d.nlm);
	end_grace();
}

struct daemon *fz_daemon(void)
{
	return &fz.d;
}

uint16_t fz_server_port(void)
{
	return fz.port;
}

size_t fz_server_max_record(void)
{
	return fz.cfg.max_record;
}

void fz_server_dump(void)
{
	struct climit_stats l;
	struct drc_stats d = {0};
	climits_get_stats(fz.d.svc->limits, &l);
	if (fz.d.svc->drc)
		drc_get_stats(fz.d.svc->drc, &d);
	/* read racily from another thread: a diagnostic, printed once before aborting */
	fprintf(stderr, "fz_server: connections %llu, record memory %llu bytes (waits %llu), ring "
		"inflight %u, connections waiting for memory %u; reply cache %llu entries\n",
		(unsigned long long)l.connections, (unsigned long long)l.mem_bytes,
		(unsigned long long)l.mem_waits, fz.d.svc->workers[0].inflight,
		fz.d.svc->workers[0].nmem_wait, (unsigned long long)d.entries);
}

/* ---- placeholders ---- */

size_t fz_subst_cap(size_t len)
{
	/* Each placeholder takes at least 12 bytes and gives at most 4 + PATH_MAX + its suffix. */
	return len + (len / 12 + 1) * (4 + PATH_MAX + 4);
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint8_t *put_opaque(uint8_t *o, const void *p, size_t n)
{
	o[0] = (uint8_t)(n >> 24), o[1] = (uint8_t)(n >> 16), o[2] = (uint8_t)(n >> 8), o[3] = (uint8_t)n;
	memcpy(o + 4, p, n);
	o += 4 + n;
	for (; n % 4; n++)
		*o++ = 0;
	return o;
}

/* The placeholder at p (len bytes left, 4-byte aligned in the record), if it is one: written
 * to *o, and how many input bytes it took. */
static size_t subst_one(const uint8_t *p, size_t len, uint8_t **o)
{
	if (len < 12 || p[4] != FZ_MARK0 || p[5] != 'F' || p[6] != 'Z' || p[8] >= FZ_NEXP)
		return 0;
	uint32_t n = be32(p);
	size_t took = 4 + (((size_t)n + 3) & ~(size_t)3);
	if (n < 5 || took > len)
		return 0;
	unsigned exp = p[8];
	if (p[7] == FZ_MARK_COOKIE && n == FZ_MARK_COOKIE_LEN) {
		uint8_t c[8] = {0};
		fz_client_cookie(c);
		*o = put_opaque(*o, c, sizeof c);
		return took;
	}
	if (p[7] == FZ_MARK_FH && n == FZ_MARK_FH_LEN) {
		const struct fz_fh *f = &fz.fh[exp][p[9] < FZ_NOBJ ? p[9] : 0];
		if (p[9] == FZ_OBJ_LAST && fz.have_last)
			*o = put_opaque(*o, fz.last.data, fz.last.len);
		else
			*o = put_opaque(*o, f->data, f->len);
		return took;
	}
	if (p[7] == FZ_MARK_PATH && n <= PATH_MAX) {
		char path[2 * PATH_MAX];
		int k = snprintf(path, sizeof path, "%s%.*s", fz.cfg.exports[exp].path, (int)(n - 5),
				 (const char *)p + 9);
		*o = put_opaque(*o, path, (size_t)k);
		return took;
	}
	return 0;
}

size_t fz_subst(const uint8_t *in, size_t len, uint8_t *out)
{
	uint8_t *o = out;
	size_t i = 0;
	while (i < len) {
		size_t took = i % 4 == 0 ? subst_one(in + i, len - i, &o) : 0;
		if (took) {
			i += took;
			continue;
		}
		*o++ = in[i++];
	}
	return (size_t)(o - out);
}

/* ---- one record on the ring ---- */

struct job {
	struct fiber_msg msg;
	struct worker *w;
	const struct sockaddr_storage *peer;
	int proto;                    /* what the record came over (IPPROTO_TCP, IPPROTO_UDP) */
	const uint8_t *orig;          /* the record as the harness has it, for the check */
	const uint8_t *rec;           /* the server's copy, placed as server.c places records */
	size_t len;
	struct record_mem rm;
	struct cred_saved creds;
	struct fz_fh fh;              /* the handle the reply handed out, if got */
	bool got, done;
};

static uint64_t drc_hits(void)
{
	struct drc_stats st = {0};
	if (fz.d.svc->drc)
		drc_get_stats(fz.d.svc->drc, &st);
	return st.hits;
}

/* The reply as the socket would carry it: header, payload (one buffer or iovecs), padding. */
static uint8_t *flatten(const struct reply *r, size_t *len)
{
	size_t n = r->hdr_len + r->payload_len + r->pad;
	uint8_t *b = malloc(n ? n : 1), *p = b;
	FZ_CHECK(b, "out of memory");
	memcpy(p, r->hdr, r->hdr_len);
	p += r->hdr_len;
	if (r->payload_iov) {
		size_t got = 0;
		for (int i = 0; i < r->payload_iovcnt; i++) {
			FZ_CHECK(got + r->payload_iov[i].iov_len <= r->payload_len, "payload iovecs too long");
			memcpy(p + got, r->payload_iov[i].iov_base, r->payload_iov[i].iov_len);
			got += r->payload_iov[i].iov_len;
		}
		FZ_CHECK(got == r->payload_len, "payload iovecs hold %zu of %zu bytes", got, r->payload_len);
	} else if (r->payload_len) {
		memcpy(p, r->payload, r->payload_len);
	}
	memset(p + r->payload_len, 0, r->pad);
	*len = n;
	return b;
}

static void check(struct job *j, struct reply *reply, bool replayed)
{
	size_t n = 0;
	uint8_t *flat = reply ? flatten(reply, &n) : NULL;
	j->got = fz_check_reply(j->orig, j->len, j->proto, flat, n, replayed, &j->fh);
	free(flat);
}

static void signal_done(bool *flag)
{
	pthread_mutex_lock(&fz.lock);
	*flag = true;
	pthread_cond_broadcast(&fz.cond);
	pthread_mutex_unlock(&fz.lock);
}

static void wait_done(const bool *flag)
{
	pthread_mutex_lock(&fz.lock);
	while (!*flag)
		pthread_cond_wait(&fz.cond, &fz.lock);
	pthread_mutex_unlock(&fz.lock);
}

/* server.c's request_main(), with the check in place of the send. */
static void job_main(void *arg)
{
	struct job *j = arg;
	struct worker *w = j->w;
	struct reply *reply = NULL;
	uint64_t hits = drc_hits();
	fiber_set_hooks(fiber_self(), cred_save, cred_restore, &j->creds);
	worker_running(w, true);
	dispatch_record(w, j->peer, &fz.local, j->proto, &j->rm, j->rec, j->len, &reply);
	worker_running(w, false);
	fiber_set_hooks(fiber_self(), NULL, NULL, NULL);
	record_mem_release(&j->rm);
	check(j, reply, drc_hits() != hits);
	reply_free(reply);     /* on the ring, as server.c frees a sent reply */
	signal_done(&j->done);
}

static void on_job(struct fiber_msg *m)
{
	struct job *j = (struct job *)m;
	if (fiber_spawn(j->w->sched, job_main, j) < 0)
		FZ_FAIL("fiber_spawn");
}

/* server.c's place_record(): a WRITE's payload lands at an address congruent to its file offset
 * modulo place_align, as the cache's O_DIRECT writes of the record memory expect. */
static uint8_t *place(const uint8_t *rec, size_t len, void **mem)
{
	size_t shift = 0;
	struct dispatch_peek pk;
	dispatch_peek(fz.d.svc->gss, rec, len, &pk);
	if (pk.write)
		shift = (size_t)((pk.file_off - pk.payload_idx) & (fz.d.svc->place_align - 1));
	if (posix_memalign(mem, fz.d.svc->place_align, shift + len + 1) != 0)
		FZ_FAIL("out of memory");
	memcpy((uint8_t *)*mem + shift, rec, len);
	return (uint8_t *)*mem + shift;
}

/* One record from peer over proto, on the ring; true and *fh when the reply hands out a handle. */
static bool run_record(const uint8_t *rec, size_t len, const struct sockaddr_storage *peer,
		       int proto, struct fz_fh *fh)
{
	struct worker *w = &fz.d.svc->workers[0];
	struct job j = {.msg = {.fn = on_job}, .w = w, .peer = peer, .proto = proto, .orig = rec,
			.len = len, .creds = {.ch = w->fs}};
	j.rec = place(rec, len, &j.rm.mem);
	fiber_sched_post(w->sched, &j.msg);
	wait_done(&j.done);
	fz_client_settle(fz.cb);
	if (j.got)
		*fh = j.fh;
	return j.got;
}

void fz_dispatch(const uint8_t *rec, size_t len, bool udp)
{
	struct fz_fh fh;
	if (run_record(rec, len, &fz.peer, udp ? IPPROTO_UDP : IPPROTO_TCP, &fh)) {
		fz.last = fh;
		fz.have_last = true;
	}
}

/* ---- the objects' handles, as a client gets them: MNT, then LOOKUP ---- */

static uint8_t *put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
	return p + 4;
}

/* A set-up call as root (AUTH_SYS) from peer with args encoded by enc: whether its reply
 * handed out a handle (*out). */
static bool setup_call(uint32_t prog, uint32_t vers, uint32_t proc, xdrproc_t enc, void *args,
		       const struct sockaddr_storage *peer, struct fz_fh *out)
{
	static uint32_t xid = 0xf0000000u;
	uint8_t rec[1024], *p = rec;
	p = put32(put32(put32(put32(put32(put32(p, xid++), 0), 2), prog), vers), proc);
	p = put32(put32(put32(put32(put32(put32(put32(p, 1), 20), 0), 0), 0), 0), 0);
	p = put32(put32(p, 0), 0);
	XDR x;
	xdrmem_create(&x, (char *)p, (u_int)(sizeof rec - (size_t)(p - rec)), XDR_ENCODE);
	if (!enc(&x, args))
		FZ_FAIL("encoding a set-up call");
	size_t len = (size_t)(p - rec) + xdr_getpos(&x);
	xdr_destroy(&x);
	return run_record(rec, len, peer, IPPROTO_TCP, out);
}

/* The second client host, 127.0.0.2: the only one the foreign export lets in, and the one
 * whose record (make_tree) holds the lock manager in its grace period. */
static struct sockaddr_storage other_host(void)
{
	struct sockaddr_storage peer = fz.peer;
	((struct sockaddr_in *)&peer)->sin_addr.s_addr = htonl(INADDR_LOOPBACK + 1);
	return peer;
}

static void call(uint32_t prog, uint32_t proc, xdrproc_t enc, void *args, unsigned exp,
		 struct fz_fh *out)
{
	struct sockaddr_storage peer = exp == FZ_EXP_FOREIGN ? other_host() : fz.peer;
	if (!setup_call(prog, 3, proc, enc, args, &peer, out))
		FZ_FAIL("export %u: set-up call %u/%u handed out no handle", exp, prog, proc);
}

/* The recorded host restarted too (its SM_NOTIFY): nothing is left to reclaim, the grace period
 * is over, and every input finds the same lock manager. */
static void end_grace(void)
{
	struct sockaddr_storage peer = other_host();
	stat_chge a = {.mon_name = "fuzzhost2", .state = 3};
	struct fz_fh none;
	setup_call(SM_PROG, SM_VERS, SM_NOTIFY, (xdrproc_t)xdr_stat_chge, &a, &peer, &none);
}

static void handles_by_calls(void)
{
	for (unsigned i = 0; i < FZ_NEXP; i++) {
		struct fz_fh *h = fz.fh[i];
		char *path = fz.cfg.exports[i].path;
		call(MOUNT_PROGRAM, MOUNTPROC3_MNT, (xdrproc_t)xdr_dirpath, &path, i, &h[FZ_OBJ_ROOT]);
		for (unsigned k = FZ_OBJ_ROOT + 1; k < FZ_NOBJ; k++) {
			bool sub = k == FZ_OBJ_DIR_A;
			const struct fz_fh *dir = &h[sub ? FZ_OBJ_DIR : FZ_OBJ_ROOT];
			LOOKUP3args a = {{{{dir->len, (char *)dir->data}}, (char *)obj_name[k] + (sub ? 4 : 0)}};
			call(NFS_PROGRAM, NFSPROC3_LOOKUP, (xdrproc_t)xdr_LOOKUP3args, &a, i, &h[k]);
		}
	}
}

/* ---- inputs ---- */

struct quiesce {
	struct fiber_msg msg;
	struct fiber_timer timer;
	struct worker *w;
	unsigned tries;
	bool done;
};

static void quiesce_look(struct quiesce *q);

static void on_quiesce_timer(struct fiber_timer *t)
{
	quiesce_look((struct quiesce *)((char *)t - offsetof(struct quiesce, timer)));
}

static void on_quiesce_msg(struct fiber_msg *m)
{
	quiesce_look((struct quiesce *)m);
}

/* On the ring, between fibers: done when none is left; else look again at the loop's next turn,
 * or after a millisecond once that has not been enough (I/O in flight). */
static void quiesce_look(struct quiesce *q)
{
	if (fiber_sched_live(q->w->sched) == 0) {
		signal_done(&q->done);
		return;
	}
	if (++q->tries < 64) {
		fiber_sched_post(q->w->sched, &q->msg);
		return;
	}
	q->timer.fire = on_quiesce_timer;
	fiber_timer_arm(&q->timer, fiber_now_ns() + 1000 * 1000);
}

void fz_input_end(void)
{
	struct worker *w = &fz.d.svc->workers[0];
	struct quiesce q = {.msg = {.fn = on_quiesce_msg}, .w = w};
	fiber_sched_post(w->sched, &q.msg);
	wait_done(&q.done);
	/* The ring is idle: what its calls made the lock manager send has been answered. */
	fz_client_settle(fz.cb);
	if (fz_trace && fz.cb) {
		struct rpccb_counters c;
		rpccb_counters(fz.cb, &c);
		fprintf(stderr, "fz: callbacks: %llu started, %llu ok, %llu timed out, %llu failed; "
			"%llu held by the client host\n", (unsigned long long)c.started,
			(unsigned long long)c.ok, (unsigned long long)c.timeouts,
			(unsigned long long)c.errors, (unsigned long long)fz_client_held());
	}
}

/* What the fuzzed clients hold goes with the tree they held it in (as if both restarted): the
 * lock manager would otherwise keep descriptors of every removed file they locked, up to their
 * limits. And the portmapper forgets what they registered. */
static void reset_side_programs(void)
{
	fz_client_release(fz.cb);
	struct sockaddr_storage other = other_host();
	nlm_host_rebooted(fz.d.nlm, NULL, &fz.peer, true);
	nlm_host_rebooted(fz.d.nlm, NULL, &other, true);
	pmap_reg_drop_set(fz.d.pmap);
	fz_client_forget_cookie();
}

void fz_input_begin(void)
{
	fz.have_last = false;
	if (fz.inputs++ % fz.reset_every == 0) {
		reset_side_programs();
		reset_tree();
	}
}

