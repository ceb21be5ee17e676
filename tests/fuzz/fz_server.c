/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The fuzzed server: the daemon as daemon_build() makes it (daemon.c, nfsd-uc's own start-up),
 * the lock manager and our own portmapper's registry included, one ring started by svc_start(),
 * and records run the way server.c's request_main() runs them. In a network namespace of its own, a fake client host answers the
 * lock manager's callbacks (client_main). */
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

#define HELD_MAX 256                      /* GRANTED calls held at once; past it, answered */
#define CONN_MAX 512
#define CONN_RECORD_MAX (256 * 1024)

/* A TCP connection the lock manager made to the client host: bytes received, not yet a whole
 * record. */
struct client_conn {
	int fd;
	uint64_t gen;                     /* tells a connection from an earlier one of that slot */
	uint8_t *buf;
	size_t len, cap;
};

/* Where a call came from, to answer it later. */
struct client_origin {
	int udp;                          /* the UDP socket (0, 1) it came to; -1: TCP */
	struct sockaddr_storage from;
	socklen_t fromlen;
	int conn;                         /* TCP: the connection's slot and generation */
	uint64_t gen;
};

/* A GRANTED callback the client host has not answered. */
struct client_held {
	uint32_t xid;
	struct client_origin o;
	uint8_t cookie[LK_OH_MAX];
	uint32_t cookie_len;
};

/* The client host the lock manager calls back (portmapper, lockd, statd on port 111, UDP and
 * TCP, of both fuzzed clients' addresses), and what it has seen. Its thread owns the sockets
 * and what it holds; others ask it through wake (an eventfd) to answer what it holds. */
struct client_host {
	int udp[2], tcp[2];               /* 127.0.0.1:111, 127.0.0.2:111: answers leave from the
					   * address called (the engine's sockets are connected) */
	int wake;
	struct client_conn conn[CONN_MAX];
	uint64_t next_gen;
	pthread_t thr;
	bool running;
	atomic_bool stop;
	struct client_held held[HELD_MAX];
	size_t nheld;
	atomic_uint_fast64_t held_now;    /* nheld, for other threads */
	atomic_uint_fast64_t releases;    /* times it answered everything it held */
	pthread_mutex_t mu;               /* cookie */
	uint8_t cookie[8];                /* of the last GRANTED received */
	bool have_cookie;
};

static struct {
	struct config cfg;
	struct daemon d;
	char root[PATH_MAX];              /* the temporary tree: state/, e0/ .. e3/, fuzz.conf */
	bool sandboxed, netns;
	struct rpccb *cb;                 /* the lock manager's callback engine (it owns it) */
	struct client_host client;
	struct sockaddr_storage local;    /* our address the records came to (TCP's getsockname) */
	struct fz_fh fh[FZ_NEXP][FZ_NOBJ];
	struct fz_fh last;                /* last handle a reply of this input handed out */
	bool have_last;
	unsigned inputs, reset_every;
	struct sockaddr_storage peer;
	uint16_t port;
	pthread_mutex_t lock;
	pthread_cond_t cond;
} fz = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER,
	.client = {.udp = {-1, -1}, .tcp = {-1, -1}, .wake = -1, .mu = PTHREAD_MUTEX_INITIALIZER}};

static _Noreturn void die(const char *what)
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
		die(name);
	char buf[1024];
	for (size_t off = 0; off < size; off += sizeof buf) {
		size_t n = size - off < sizeof buf ? size - off : sizeof buf;
		for (size_t i = 0; i < n; i++)
			buf[i] = (char)('a' + (off + i) % 26);
		if (write(fd, buf, n) != (ssize_t)n)
			die(name);
	}
	if (fchown(fd, uid, uid) < 0 || fchmod(fd, mode) < 0)
		die(name);
	close(fd);
}

static void make_objects(int dfd)
{
	if (fchown(dfd, 0, 0) < 0 || fchmod(dfd, 0777) < 0)
		die("export root");
	put_file(dfd, "file", 20000, 0666, 0);
	if (mkdirat(dfd, "dir", 0777) < 0 || mkdirat(dfd, "dir/b", 0755) < 0)
		die("dir");
	put_file(dfd, "dir/a", 5000, 0644, 0);
	if (symlinkat("file", dfd, "link") < 0 || mknodat(dfd, "fifo", S_IFIFO | 0666, 0) < 0)
		die("link, fifo");
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
			die("clearing an export");
		make_objects(e->root_fd);
	}
	handles_by_calls();
}

static void write_conf(const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f)
		die(path);
	/* A small cache and reply cache, so that eviction is reached; threads = 1: one ring. */
	/* The lock manager's limits low enough to be reached within FZ_RESET_EVERY inputs. */
	fprintf(f, "[server]\nthreads = 1\nblocking_threads = 2\nstate_dir = state\nrpcbind = own\n"
		   "reply_cache_entries = 256\nmount_list_entries = 64\n[cache]\nsize = 16M\n"
		   "[lock]\nlocks = 4096\nlocks_per_client = 64\nwaiters = 1024\nwaiters_per_client = 8\n"
		   "[export e0]\nclients = 127.0.0.1(rw,%s)\nwrite_mode = cached\nread_mode = direct\n"
		   "[export e1]\nclients = 127.0.0.1(rw,insecure)\nwrite_mode = direct\nread_mode = direct\n"
		   "[export e2]\nclients = 127.0.0.1(ro,all_squash,anonuid=1000,anongid=1000)\n"
		   "write_mode = dontcache\nread_mode = dontcache\n"
		   "[export e3]\nclients = 127.0.0.2(rw)\nwrite_mode = buffered\nread_mode = buffered\n",
		fz.sandboxed ? "no_root_squash" : "root_squash");
	if (fclose(f) != 0)
		die(path);
}

static void make_tree(int argc, char **argv)
{
	const char *tmp = getenv("TMPDIR");
	char tmpdir[PATH_MAX];
	if (!tmp || !*tmp)
		tmp = "/tmp";
	if (!realpath(tmp, tmpdir))
		die(tmp);
	snprintf(fz.root, sizeof fz.root, "%s/nfsd-uc-fuzz.XXXXXX", tmpdir);
	if (!mkdtemp(fz.root))
		die("mkdtemp");
	fz.sandboxed = sandbox(tmpdir, argc, argv);
	if (!fz.sandboxed)
		fprintf(stderr, "fz_server: no mount namespace (%s): root is squashed on every export\n",
			strerror(errno));
	char p[PATH_MAX + 16];
	static const char *const sub[] = {"state", "e0", "e1", "e2", "e3"};
	for (size_t i = 0; i < sizeof sub / sizeof sub[0]; i++) {
		snprintf(p, sizeof p, "%s/%s", fz.root, sub[i]);
		if (mkdir(p, 0777) < 0)
			die(p);
	}
	/* A client host that held locks before this start: the lock manager reads its record,
	 * starts a grace period for it and notifies it (fz_server_init ends the grace period). */
	snprintf(p, sizeof p, "%s/state/nsm", fz.root);
	if (mkdir(p, 0700) < 0)
		die(p);
	snprintf(p, sizeof p, "%s/state/nsm/hosts", fz.root);
	if (mkdir(p, 0700) < 0)
		die(p);
	snprintf(p, sizeof p, "%s/state/nsm/hosts/127.0.0.2", fz.root);
	FILE *rec = fopen(p, "w");
	if (!rec || fputs("fuzzhost2\n127.0.0.1\n", rec) < 0 || fclose(rec) != 0)
		die(p);
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
		die("listen");
	if (port)
		*port = ntohs(a.sin_port);
	return fd;
}

/* A network namespace of its own with only the loopback up (as root): the lock manager's
 * callbacks to the fuzzed client (127.0.0.1, 127.0.0.2) reach the fake client host below and
 * nothing of the machine's. Before any thread or socket exists. */
static bool private_net(void)
{
	if (unshare(CLONE_NEWNET) < 0)
		return false;
	struct ifreq ifr;
	memset(&ifr, 0, sizeof ifr);
	snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		die("loopback of the network namespace");
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
		die("loopback of the network namespace");
	close(fd);
	return true;
}

/* ---- the client host the lock manager calls back ----
 * Sockets on port 111 of each fuzzed client's address, UDP and TCP, play the client's
 * portmapper (GETPORT of NLM or NSM, UDP or TCP: 111 itself, anything else 0), its lockd and its
 * statd. A GRANTED callback is answered as its lock's svid says (fz_marks.h: FZ_GRANTED_*); the
 * _RES calls of _MSG procedures and SM_NOTIFY get an empty SUCCESS. Over TCP a call is a record
 * and so is its answer; the connection stays until the lock manager closes it. */

static size_t put_res(uint8_t *out, size_t cap, uint32_t xid, enum rpc_accept st, xdrproc_t enc,
		      void *res)
{
	size_t n = rpc_encode_accepted(out, xid, st);
	if (!enc)
		return n;
	XDR x;
	xdrmem_create(&x, (char *)out + n, (u_int)(cap - n), XDR_ENCODE);
	bool ok = enc(&x, res);
	n += xdr_getpos(&x);
	xdr_destroy(&x);
	return ok ? n : 0;
}

static bool decode_args(const struct rpc_call *c, xdrproc_t dec, void *obj)
{
	XDR x;
	xdrmem_create(&x, (char *)c->args, (u_int)c->args_len, XDR_DECODE);
	bool ok = dec(&x, obj);
	xdr_destroy(&x);
	return ok;
}

static size_t granted_reply(uint32_t xid, const netobj *cookie, nlm4_stats st, uint8_t *out,
			    size_t cap)
{
	nlm4_res r = {.cookie = *cookie, .stat.stat = st};
	return put_res(out, cap, xid, ACCEPT_SUCCESS, (xdrproc_t)xdr_nlm4_res, &r);
}

/* Keep the call unanswered: true, or false when it cannot be kept (then answer it now). A
 * retransmission of one held already stays held. */
static bool hold(struct client_host *ch, uint32_t xid, const struct client_origin *o,
		 const netobj *cookie)
{
	for (size_t i = 0; i < ch->nheld; i++)
		if (ch->held[i].xid == xid && ch->held[i].o.udp == o->udp &&
		    (o->udp >= 0 || ch->held[i].o.gen == o->gen))
			return true;
	if (ch->nheld == HELD_MAX || cookie->n_len > LK_OH_MAX)
		return false;
	struct client_held *h = &ch->held[ch->nheld++];
	h->xid = xid;
	h->o = *o;
	h->cookie_len = cookie->n_len;
	if (cookie->n_len)
		memcpy(h->cookie, cookie->n_bytes, cookie->n_len);
	atomic_store(&ch->held_now, ch->nheld);
	return true;
}

static size_t granted_answer(struct client_host *ch, const struct rpc_call *c,
			     const struct client_origin *o, uint8_t *out, size_t cap)
{
	nlm4_testargs a4;
	nlm_testargs a1;
	memset(&a4, 0, sizeof a4);
	memset(&a1, 0, sizeof a1);
	bool v4 = c->vers == NLM4_VERS;
	bool ok = v4 ? decode_args(c, (xdrproc_t)xdr_nlm4_testargs, &a4)
		     : decode_args(c, (xdrproc_t)xdr_nlm_testargs, &a1);
	netobj cookie = v4 ? a4.cookie : a1.cookie;
	int32_t svid = v4 ? a4.alock.svid : a1.alock.svid;
	size_t n = 0;
	if (!ok) {
		n = put_res(out, cap, c->xid, ACCEPT_GARBAGE_ARGS, NULL, NULL);
		goto out;
	}
	pthread_mutex_lock(&ch->mu);
	ch->have_cookie = cookie.n_len == sizeof ch->cookie;
	if (ch->have_cookie)
		memcpy(ch->cookie, cookie.n_bytes, sizeof ch->cookie);
	pthread_mutex_unlock(&ch->mu);
	switch ((uint32_t)svid % 4) {
	case FZ_GRANTED_SILENT:
		if (hold(ch, c->xid, o, &cookie))
			break;
		/* fall through: as many held as it may */
	case FZ_GRANTED_TAKE:
		n = granted_reply(c->xid, &cookie, NLM4_GRANTED, out, cap);
		break;
	case FZ_GRANTED_REFUSE:
		n = granted_reply(c->xid, &cookie, NLM4_DENIED, out, cap);
		break;
	default:
		n = put_res(out, cap, c->xid, ACCEPT_GARBAGE_ARGS, NULL, NULL);
		break;
	}
out:
	xdr_free(v4 ? (xdrproc_t)xdr_nlm4_testargs : (xdrproc_t)xdr_nlm_testargs,
		 v4 ? (char *)&a4 : (char *)&a1);
	return n;
}

/* The answer to one call (a datagram, or a TCP record) from o; 0: none (now). */
static size_t client_answer(struct client_host *ch, const uint8_t *in, size_t len,
			    const struct client_origin *o, uint8_t *out, size_t cap)
{
	struct rpc_call c;
	if (rpc_decode_call(in, len, &c) != RPC_OK)
		return 0;
	if (c.prog == PMAPPROG && c.vers == PMAPVERS && c.proc == PMAPPROC_GETPORT) {
		struct pmap pm;
		memset(&pm, 0, sizeof pm);
		if (!decode_args(&c, (xdrproc_t)xdr_pmap, &pm))
			return put_res(out, cap, c.xid, ACCEPT_GARBAGE_ARGS, NULL, NULL);
		u_int port = (pm.pm_prog == NLM_PROG || pm.pm_prog == SM_PROG) &&
			     (pm.pm_prot == IPPROTO_UDP || pm.pm_prot == IPPROTO_TCP) ? PMAP_PORT : 0;
		return put_res(out, cap, c.xid, ACCEPT_SUCCESS, (xdrproc_t)xdr_u_int, &port);
	}
	if (c.prog == NLM_PROG && c.proc == NLMPROC_GRANTED)
		return granted_answer(ch, &c, o, out, cap);
	if (c.prog == NLM_PROG || c.prog == SM_PROG)
		return put_res(out, cap, c.xid, ACCEPT_SUCCESS, NULL, NULL);
	return put_res(out, cap, c.xid, ACCEPT_PROG_UNAVAIL, NULL, NULL);
}

/* Send an answer (out[4..4 + n): room for a record mark before it) to where o's call came from. */
static void client_send(struct client_host *ch, const struct client_origin *o, uint8_t *out,
			size_t n)
{
	if (o->udp >= 0) {
		if (sendto(ch->udp[o->udp], out + 4, n, 0, (const struct sockaddr *)&o->from,
			   o->fromlen) < 0) {
			/* the engine retransmits */
		}
		return;
	}
	struct client_conn *c = &ch->conn[o->conn];
	if (c->fd < 0 || c->gen != o->gen)
		return;                   /* the lock manager gave up on it */
	recmark_put(out, (uint32_t)n);
	if (send(c->fd, out, n + 4, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)(n + 4)) {
		/* a full or closed connection: the engine calls again or gives up */
	}
}

/* Answer everything held: the client takes every lock it was granted. */
static void client_release(struct client_host *ch)
{
	uint8_t out[4 + 2048];
	for (size_t i = 0; i < ch->nheld; i++) {
		struct client_held *h = &ch->held[i];
		netobj cookie = {h->cookie_len, (char *)h->cookie};
		size_t n = granted_reply(h->xid, &cookie, NLM4_GRANTED, out + 4, sizeof out - 4);
		if (n)
			client_send(ch, &h->o, out, n);
	}
	ch->nheld = 0;
	atomic_store(&ch->held_now, 0);
	atomic_fetch_add(&ch->releases, 1);
}

static void conn_close(struct client_conn *c)
{
	close(c->fd);
	free(c->buf);
	*c = (struct client_conn){.fd = -1};
}

static void conn_accept(struct client_host *ch, int lfd)
{
	int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		return;
	for (int i = 0; i < CONN_MAX; i++)
		if (ch->conn[i].fd < 0) {
			ch->conn[i] = (struct client_conn){.fd = fd, .gen = ++ch->next_gen};
			return;
		}
	close(fd);   /* the engine connects again */
}

/* The whole records at the head of connection i's buffer, answered; false when the connection
 * is done. */
static bool conn_serve(struct client_host *ch, int i, uint8_t *rec, uint8_t *out, size_t cap)
{
	struct client_conn *c = &ch->conn[i];
	struct client_origin o = {.udp = -1, .conn = i, .gen = c->gen};
	for (;;) {
		size_t at = 0, n = 0;
		bool last = false;
		while (!last) {
			if (c->len - at < 4)
				return true;
			uint32_t m = recmark_get(c->buf + at);
			size_t fl = recmark_len(m);
			if (fl > CONN_RECORD_MAX - n)
				return false;
			if (c->len - at - 4 < fl)
				return true;
			memcpy(rec + n, c->buf + at + 4, fl);
			n += fl;
			at += 4 + fl;
			last = recmark_is_last(m);
		}
		memmove(c->buf, c->buf + at, c->len - at);
		c->len -= at;
		size_t r = client_answer(ch, rec, n, &o, out + 4, cap - 4);
		if (r)
			client_send(ch, &o, out, r);
	}
}

static bool conn_readable(struct client_host *ch, int i, uint8_t *rec, uint8_t *out, size_t cap)
{
	struct client_conn *c = &ch->conn[i];
	if (c->cap - c->len < 65536) {
		size_t want = c->cap ? 2 * c->cap : 65536;
		if (want > 2 * CONN_RECORD_MAX)
			return false;
		uint8_t *b = realloc(c->buf, want);
		if (!b)
			return false;
		c->buf = b;
		c->cap = want;
	}
	ssize_t n = recv(c->fd, c->buf + c->len, c->cap - c->len, MSG_DONTWAIT);
	if (n <= 0)
		return n < 0 && (errno == EAGAIN || errno == EINTR);
	c->len += (size_t)n;
	return conn_serve(ch, i, rec, out, cap);
}

static void *client_main(void *arg)
{
	struct client_host *ch = arg;
	static uint8_t in[CONN_RECORD_MAX];
	static struct pollfd p[5 + CONN_MAX];
	uint8_t out[4 + 1024];
	while (!atomic_load(&ch->stop)) {
		int np = 0;
		for (int i = 0; i < 2; i++) {
			p[np++] = (struct pollfd){.fd = ch->udp[i], .events = POLLIN};
			p[np++] = (struct pollfd){.fd = ch->tcp[i], .events = POLLIN};
		}
		p[np++] = (struct pollfd){.fd = ch->wake, .events = POLLIN};
		for (int i = 0; i < CONN_MAX; i++)
			p[np++] = (struct pollfd){.fd = ch->conn[i].fd, .events = POLLIN};   /* -1: ignored */
		if (poll(p, (nfds_t)np, 50) <= 0)
			continue;
		for (int i = 0; i < 2; i++) {
			if (p[2 * i + 1].revents)
				conn_accept(ch, ch->tcp[i]);
			if (!p[2 * i].revents)
				continue;
			struct client_origin o = {.udp = i, .fromlen = sizeof o.from, .conn = -1};
			ssize_t n = recvfrom(ch->udp[i], in, sizeof in, MSG_DONTWAIT,
					     (struct sockaddr *)&o.from, &o.fromlen);
			if (n <= 0)
				continue;
			size_t m = client_answer(ch, in, (size_t)n, &o, out + 4, sizeof out - 4);
			if (m)
				client_send(ch, &o, out, m);
		}
		if (p[4].revents) {
			uint64_t v;
			if (read(ch->wake, &v, sizeof v) == (ssize_t)sizeof v)
				client_release(ch);
		}
		for (int i = 0; i < CONN_MAX; i++)
			if (ch->conn[i].fd >= 0 && p[5 + i].revents &&
			    !conn_readable(ch, i, in, out, sizeof out))
				conn_close(&ch->conn[i]);
	}
	return NULL;
}

static int client_socket(int type, int i)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(PMAP_PORT),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK + (unsigned)i)};
	int one = 1, fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
	    bind(fd, (struct sockaddr *)&a, sizeof a) < 0 ||
	    (type == SOCK_STREAM && listen(fd, 64) < 0))
		die("the client host's port 111");
	return fd;
}

static void client_start(void)
{
	struct client_host *ch = &fz.client;
	for (int i = 0; i < 2; i++) {
		ch->udp[i] = client_socket(SOCK_DGRAM, i);
		ch->tcp[i] = client_socket(SOCK_STREAM, i);
	}
	for (int i = 0; i < CONN_MAX; i++)
		ch->conn[i].fd = -1;
	ch->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (ch->wake < 0)
		die("eventfd");
	if (pthread_create(&ch->thr, NULL, client_main, ch) != 0)
		die("the client host's thread");
	ch->running = true;
}

static void client_stop(void)
{
	struct client_host *ch = &fz.client;
	if (!ch->running)
		return;
	atomic_store(&ch->stop, true);
	pthread_join(ch->thr, NULL);
	for (int i = 0; i < 2; i++) {
		close(ch->udp[i]);
		close(ch->tcp[i]);
	}
	for (int i = 0; i < CONN_MAX; i++)
		if (ch->conn[i].fd >= 0)
			conn_close(&ch->conn[i]);
	close(ch->wake);
	ch->running = false;
}

/* Until every callback in flight has been answered and its answer taken by the lock manager,
 * but those the client host holds (at most 100 ms: a lost datagram waits for its
 * retransmission): after each record, so the next one finds the GRANTED callbacks its
 * predecessors caused settled (or held, their cookie known). */
static void settle_callbacks(void)
{
	if (!fz.client.running || !fz.cb)
		return;
	for (int i = 0; i < 2000; i++) {
		struct rpccb_counters c;
		rpccb_counters(fz.cb, &c);
		uint64_t ended = c.ok + c.timeouts + c.errors + c.cancelled;
		if (c.started <= ended + atomic_load(&fz.client.held_now))
			return;
		usleep(50);
	}
	if (fz_trace)
		fprintf(stderr, "fz: callbacks still in flight after 100 ms\n");
}

/* The client host answers what it held (so no call waits out its 30 s), and the lock manager
 * takes the answers. */
static void release_held(void)
{
	struct client_host *ch = &fz.client;
	if (!ch->running)
		return;
	uint64_t before = atomic_load(&ch->releases), one = 1;
	if (write(ch->wake, &one, sizeof one) != (ssize_t)sizeof one)
		die("eventfd");
	while (atomic_load(&ch->releases) == before)
		usleep(50);
	settle_callbacks();
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
	client_stop();
}

/* The daemon as daemon_build() makes it (the same code as nfsd-uc's), with a fixed handle key
 * (handles are the same in every run of the same tree) and small handle caches; then, rather
 * than the configured ports, one TCP port of any number, and one ring. */
static void start_server(void)
{
	if (sodium_init() < 0)
		die("sodium_init");
	/* The fake client host answers the lock manager from its start on. */
	if (fz.netns)
		client_start();
	const struct daemon_opts opts = {.fh_key = (const uint8_t *)"nfsd-uc fuzz key",
					 .fh_cache_max = 256};
	if (daemon_build(&fz.d, &fz.cfg, &opts) < 0)
		die("daemon_build");
	if (!fz.d.nlm || fz.d.pmap_mode != PMAP_OWN)
		die("the lock manager and rpcbind = own");
	fz.cb = fz.d.cb;
	struct svc *svc = fz.d.svc;
	svc->listen_fd[0] = listen_any(&fz.port);
	svc->nlisten_fds = 1;
	if (svc_start(svc, 1) < 0)
		die("svc_start");
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
		pthread_mutex_lock(&fz.client.mu);
		if (fz.client.have_cookie)
			memcpy(c, fz.client.cookie, sizeof c);
		pthread_mutex_unlock(&fz.client.mu);
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
	dispatch_peek(rec, len, &pk);
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
	settle_callbacks();
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
	settle_callbacks();
	if (fz_trace && fz.cb) {
		struct rpccb_counters c;
		rpccb_counters(fz.cb, &c);
		fprintf(stderr, "fz: callbacks: %llu started, %llu ok, %llu timed out, %llu failed; "
			"%llu held by the client host\n", (unsigned long long)c.started,
			(unsigned long long)c.ok, (unsigned long long)c.timeouts,
			(unsigned long long)c.errors, (unsigned long long)atomic_load(&fz.client.held_now));
	}
}

/* What the fuzzed clients hold goes with the tree they held it in (as if both restarted): the
 * lock manager would otherwise keep descriptors of every removed file they locked, up to their
 * limits. And the portmapper forgets what they registered. */
static void reset_side_programs(void)
{
	release_held();
	struct sockaddr_storage other = other_host();
	nlm_host_rebooted(fz.d.nlm, NULL, &fz.peer, true);
	nlm_host_rebooted(fz.d.nlm, NULL, &other, true);
	pmap_reg_drop_set(fz.d.pmap);
	pthread_mutex_lock(&fz.client.mu);
	fz.client.have_cookie = false;
	pthread_mutex_unlock(&fz.client.mu);
}

void fz_input_begin(void)
{
	fz.have_last = false;
	if (fz.inputs++ % fz.reset_every == 0) {
		reset_side_programs();
		reset_tree();
	}
}
