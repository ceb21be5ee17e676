/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The listening sockets: the TCP ports each listen address serves (NFS, MOUNT, NLM/NSM, the
 * portmapper), bound at start by the main thread, and the UDP ones (dgram.c reads them). */
#include "svc/server.h"

#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "svc/dgram.h"
#include "base/sockaddr.h"
#include "base/log.h"
#include "rpc/uaddr.h"

int server_bind(const char *addr, uint16_t port, int type, bool v6only)
{
	struct sockaddr_storage ss;
	socklen_t len = sa_parse(addr, port, &ss);
	if (!len)
		return -EINVAL;
	int fd = socket(ss.ss_family, type | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	int one = 1;
	/* SO_REUSEADDR only: with SO_REUSEPORT a second daemon started on the same port would
	 * silently share its connections instead of failing. */
	if ((type & 0xf) == SOCK_STREAM)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (ss.ss_family == AF_INET6 && v6only)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
	if (bind(fd, (struct sockaddr *)&ss, len) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

static int listen_on(const char *addr, uint16_t port, bool v6only)
{
	int fd = server_bind(addr, port, SOCK_STREAM, v6only);
	if (fd >= 0 && listen(fd, SOMAXCONN) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

/* A daemon killed with SIGKILL leaves its listening sockets to the kernel's deferred io_uring
 * teardown, which can outlive the process by a fraction of a second; a supervisor that restarts
 * at once would otherwise fail.  Another live server on the port still fails, after the wait. */
#define LISTEN_RETRY_MS 10000

/* The key that sets a port: what the administrator of a second server on the host must change. */
static const char *port_key(const struct config *cfg, uint16_t port)
{
	if (port == cfg->port)
		return "[server] port";
	if (port == cfg->mount_port)
		return "[server] mount_port";
	if (port == cfg->lock_port)
		return "[lock] port; 0 serves no locks";
	return "[server] rpcbind";
}

/* A pause in the wait for a port, cut short by a stop signal (blocked on this thread as on
 * every other; main takes them with sigwait once serving): `systemctl stop` of a daemon that
 * cannot start must not wait out the retry. True when one came. */
static bool stop_signal_within(long ms)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = ms % 1000 * 1000000L};
	return sigtimedwait(&set, NULL, &ts) > 0;
}

static int listen_retrying(const struct config *cfg, const char *addr, uint16_t port,
			   bool v6only)
{
	int fd = listen_on(addr, port, v6only);
	for (int waited = 0; fd == -EADDRINUSE && waited < LISTEN_RETRY_MS; waited += 100) {
		if (waited == 0)
			log_warn("%s port %u (%s) is in use; retrying for up to %d s (another server "
				 "on this host needs its own port)", addr, port, port_key(cfg, port),
				 LISTEN_RETRY_MS / 1000);
		if (stop_signal_within(100)) {
			log_info("stop signal while waiting for port %u: not starting", port);
			return -EINTR;
		}
		fd = listen_on(addr, port, v6only);
	}
	return fd;
}

/* The TCP ports served on each listen address (tcp) or the UDP ones (!tcp), duplicates once:
 * NFS (TCP only), MOUNT, the lock manager's NLM and NSM when it runs, the portmapper when we are
 * it. n of them in ports. */
static size_t served_ports(const struct svc *srv, bool tcp, uint16_t ports[4])
{
	const struct config *cfg = srv->cfg;
	uint16_t want[4] = {tcp ? cfg->port : 0, cfg->mount_port, srv->serve_lock ? cfg->lock_port : 0,
			    srv->serve_pmap ? PMAP_PORT : 0};
	size_t n = 0;
	for (size_t i = 0; i < 4; i++) {
		bool dup = !want[i];
		for (size_t j = 0; j < n && !dup; j++)
			dup = ports[j] == want[i];
		if (!dup)
			ports[n++] = want[i];
	}
	return n;
}

/* The portmapper's port taken by something else is not fatal unless rpcbind = own: clients can
 * still be given the ports. */
static bool port_optional(const struct svc *srv, uint16_t port)
{
	return port == PMAP_PORT && srv->cfg->rpcbind != RPCBIND_OWN;
}

static int open_port(struct svc *srv, const char *addr, uint16_t port, bool tcp, bool v6only)
{
	int fd = tcp ? listen_retrying(srv->cfg, addr, port, v6only) : dgram_open(addr, port, v6only);
	if (fd >= 0) {
		if (tcp)
			srv->listen_fd[srv->nlisten_fds++] = fd;
		else
			srv->udp_fd[srv->nudp_fds++] = fd;
		return 0;
	}
	if (port_optional(srv, port)) {
		log_warn("listen on %s %s port %u: %s: not serving the portmapper there", addr,
			 tcp ? "TCP" : "UDP", port, strerror(-fd));
		return 0;
	}
	if (fd != -EINTR)
		log_err("listen on %s %s port %u (%s): %s", addr, tcp ? "TCP" : "UDP", port,
			port_key(srv->cfg, port), strerror(-fd));
	return -1;
}

/* Whether the listen addresses reach 127.0.0.1 already (a wildcard, or a loopback address). */
static bool reaches_loopback(const struct config *cfg)
{
	for (size_t a = 0; a < cfg->nlisten; a++) {
		const char *s = cfg->listen_addr[a];
		if (strcmp(s, "0.0.0.0") == 0 || strncmp(s, "127.", 4) == 0 ||
		    (strcmp(s, "::") == 0 && cfg->nlisten == 1))
			return true;
	}
	return false;
}

int svc_listen(struct svc *srv, bool lock, bool pmap)
{
	const struct config *cfg = srv->cfg;
	srv->nlisten_fds = srv->nudp_fds = 0;
	srv->serve_lock = lock;
	srv->serve_pmap = pmap;
	/* With several addresses, "::" means IPv6 alone: 0.0.0.0 beside it is the IPv4 side. */
	bool v6only = cfg->nlisten > 1;
	for (int tcp = 1; tcp >= 0; tcp--) {
		uint16_t ports[4];
		size_t n = served_ports(srv, tcp, ports);
		for (size_t a = 0; a < cfg->nlisten; a++)
			for (size_t i = 0; i < n; i++)
				if (open_port(srv, cfg->listen_addr[a], ports[i], tcp, v6only) < 0) {
					svc_unlisten(srv);
					return -1;
				}
		/* Local services (a host's own lockd, say) register with the portmapper over
		 * loopback, whatever addresses clients use. */
		if (pmap && !reaches_loopback(cfg))
			open_port(srv, "127.0.0.1", PMAP_PORT, tcp, v6only);
	}
	return 0;
}

void svc_unlisten(struct svc *srv)
{
	for (size_t i = 0; i < srv->nlisten_fds; i++)
		close(srv->listen_fd[i]);
	for (size_t i = 0; i < srv->nudp_fds; i++)
		close(srv->udp_fd[i]);
	srv->nlisten_fds = srv->nudp_fds = 0;
}
