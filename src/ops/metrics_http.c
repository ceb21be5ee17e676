/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The Prometheus endpoint: GET /metrics on [metrics] listen, served by libmicrohttpd's own thread
 * (never a ring's: a slow scraper or a stuck connection costs the rings nothing), the text
 * rendered by metrics_render().
 *
 * libmicrohttpd waits with epoll (or poll; MHD_USE_AUTO picks): with select() every connection
 * whose descriptor is 1024 or more was reset, and a daemon with many clients holds thousands of
 * descriptors. What its own options do not bound is bounded here, on its thread (the accept
 * policy and the connection notifications all run there, so the list below needs no lock):
 * connections in all and per client address ([metrics] connections, connections_per_client),
 * refused in the accept policy, and how long one may take (timeout): its idle timeout alone let a
 * client that sends a header byte now and then (slowloris) keep its connection for ever. A
 * connection's clock starts when it is accepted and again when a request of it ends; one past
 * its time is shut down when a new connection comes (the only moment its slot matters) or a
 * request is served. Each kind of refusal logs at most a line a second. */
#include "ops/metrics_http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "conf/config.h"
#include "base/sockaddr.h"
#include "base/log.h"
#include "ops/metrics.h"
#include "ops/ops_int.h"

/* One connection of the endpoint: libmicrohttpd's thread only. */
struct scrape_conn {
	struct scrape_conn *next, *prev;
	int fd;
	struct sockaddr_storage addr;
	uint64_t since_ns;        /* accepted, or its last request ended */
	bool reaped;              /* shut down past its time; freed when libmicrohttpd closes it */
};

struct metrics_http {
	struct MHD_Daemon *d;
	struct ops *o;
	struct scrape_conn *conns;
	struct log_ratelimit refuse_log, reap_log, mhd_log;
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static const char *addr_str(const struct sockaddr *sa, char out[INET6_ADDRSTRLEN])
{
	strcpy(out, "?");
	if (sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, out, INET6_ADDRSTRLEN);
	else if (sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, out, INET6_ADDRSTRLEN);
	return out;
}

/* Shut down the connections past their time (libmicrohttpd sees the end and closes them). */
static void reap(struct metrics_http *h)
{
	const struct config *cfg = h->o->src.cfg;
	uint64_t now = now_ns(), limit = (uint64_t)cfg->metrics_timeout * 1000000000u;
	char a[INET6_ADDRSTRLEN];
	for (struct scrape_conn *c = h->conns; c; c = c->next) {
		if (c->reaped || now - c->since_ns < limit)
			continue;
		c->reaped = true;
		shutdown(c->fd, SHUT_RDWR);
		atomic_fetch_add(&h->o->mhttp.timed_out, 1);
		log_ratelimited(&h->reap_log, LOG_WARNING,
				"metrics endpoint: a connection from %s took longer than timeout = %u s; "
				"closed", addr_str((struct sockaddr *)&c->addr, a), cfg->metrics_timeout);
	}
}

static enum MHD_Result on_accept(void *cls, const struct sockaddr *addr, socklen_t addrlen)
{
	struct metrics_http *h = cls;
	const struct config *cfg = h->o->src.cfg;
	(void)addrlen;
	reap(h);
	unsigned all = 0, mine = 0;
	for (struct scrape_conn *c = h->conns; c; c = c->next) {
		all += !c->reaped;
		mine += !c->reaped && sa_same_host((struct sockaddr *)&c->addr, addr);
	}
	bool over_client = mine >= cfg->metrics_connections_per_client;
	if (!over_client && all < cfg->metrics_connections)
		return MHD_YES;
	char a[INET6_ADDRSTRLEN];
	atomic_fetch_add(&h->o->mhttp.refused, 1);
	log_ratelimited(&h->refuse_log, LOG_WARNING,
			"metrics endpoint: %s = %u reached: refusing a connection from %s",
			over_client ? "connections_per_client" : "connections",
			over_client ? cfg->metrics_connections_per_client : cfg->metrics_connections,
			addr_str(addr, a));
	return MHD_NO;
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **ctx,
			  enum MHD_ConnectionNotificationCode what)
{
	struct metrics_http *h = cls;
	struct scrape_conn *c = *ctx;
	if (what == MHD_CONNECTION_NOTIFY_CLOSED) {
		if (!c)
			return;
		if (c->prev) c->prev->next = c->next; else h->conns = c->next;
		if (c->next) c->next->prev = c->prev;
		free(c);
		*ctx = NULL;
		return;
	}
	const union MHD_ConnectionInfo *fd = MHD_get_connection_info(conn,
								      MHD_CONNECTION_INFO_CONNECTION_FD);
	const union MHD_ConnectionInfo *ad = MHD_get_connection_info(conn,
								      MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	c = fd && ad ? calloc(1, sizeof *c) : NULL;
	if (!c) {
		if (fd)
			shutdown(fd->connect_fd, SHUT_RDWR);   /* not counted: not kept */
		return;
	}
	c->fd = fd->connect_fd;
	memcpy(&c->addr, ad->client_addr, ad->client_addr->sa_family == AF_INET6
					      ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in));
	c->since_ns = now_ns();
	c->next = h->conns;
	if (h->conns)
		h->conns->prev = c;
	h->conns = c;
	*ctx = c;
}

/* A request ended: a kept-alive connection's next one gets its own time. */
static void on_completed(void *cls, struct MHD_Connection *conn, void **req,
			 enum MHD_RequestTerminationCode toe)
{
	(void)cls, (void)req, (void)toe;
	const union MHD_ConnectionInfo *i = MHD_get_connection_info(conn,
								     MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct scrape_conn *c = i ? i->socket_context : NULL;
	if (c)
		c->since_ns = now_ns();
}

static enum MHD_Result plain(struct MHD_Connection *c, unsigned status, const char *text)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text), (void *)text,
								 MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", "text/plain; charset=utf-8");
	enum MHD_Result rc = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return rc;
}

static enum MHD_Result answer(struct ops *o, struct MHD_Connection *c, const char *url,
			      const char *method, size_t upload_len)
{
	if (upload_len)
		return plain(c, MHD_HTTP_BAD_REQUEST, "no body expected\n");
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
		return plain(c, MHD_HTTP_METHOD_NOT_ALLOWED, "GET /metrics\n");
	if (strcmp(url, "/metrics") != 0)
		return plain(c, MHD_HTTP_NOT_FOUND, "nfsd-uc serves /metrics\n");
	char *text;
	size_t len;
	if (metrics_render(o, &text, &len) < 0)
		return plain(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	struct MHD_Response *r = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(text);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", "text/plain; version=0.0.4; charset=utf-8");
	enum MHD_Result rc = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return rc;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_len, void **state)
{
	struct metrics_http *h = cls;
	(void)version, (void)upload, (void)state;
	reap(h);
	return answer(h->o, c, url, method, *upload_len);
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct metrics_http *h = cls;
	char line[512];
	vsnprintf(line, sizeof line, fmt, ap);
	line[strcspn(line, "\n")] = '\0';
	log_ratelimited(&h->mhd_log, LOG_WARNING, "metrics endpoint: %s", line);
}

static const char *poller(struct MHD_Daemon *d)
{
	const union MHD_DaemonInfo *i = MHD_get_daemon_info(d, MHD_DAEMON_INFO_FLAGS);
	if (!i)
		return "?";
	return (i->flags & MHD_USE_EPOLL) ? "epoll" : (i->flags & MHD_USE_POLL) ? "poll" : "select";
}

/* The listening socket is ours, not libmicrohttpd's: a busy port then says which address and
 * key ("Failed to bind to port 0" was its own line for it, the port it had been given being 0
 * beside MHD_OPTION_SOCK_ADDR). A descriptor, or -errno. */
static int metrics_socket(const struct sockaddr_storage *ss)
{
	socklen_t len = ss->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6)
						   : sizeof(struct sockaddr_in);
	int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(fd, (const struct sockaddr *)ss, len) < 0 || listen(fd, 64) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

int metrics_http_start(struct ops *o, struct metrics_http **out)
{
	const struct config *cfg = o->src.cfg;
	*out = NULL;
	if (!cfg->metrics_listen)
		return 0;
	struct sockaddr_storage ss;
	if (config_parse_hostport(cfg->metrics_listen, &ss) < 0)
		return -1;
	int fd = metrics_socket(&ss);
	if (fd < 0) {
		log_err("metrics: cannot listen on %s ([metrics] listen): %s", cfg->metrics_listen,
			strerror(-fd));
		return -1;
	}
	struct metrics_http *h = calloc(1, sizeof *h);
	if (!h) {
		close(fd);
		return -1;
	}
	h->o = o;
	unsigned flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG;
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	/* Its own bound only as a backstop: the accept policy holds ours, and connections shut
	 * down for their time still count for it until it has closed them. */
	h->d = MHD_start_daemon(flags, 0, on_accept, h, on_request, h,
				MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, h,
				MHD_OPTION_LISTEN_SOCKET, fd,
				MHD_OPTION_CONNECTION_LIMIT, 2 * cfg->metrics_connections,
				MHD_OPTION_CONNECTION_TIMEOUT, cfg->metrics_timeout,
				MHD_OPTION_NOTIFY_CONNECTION, on_connection, h,
				MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
				MHD_OPTION_END);
	if (!h->d) {
		log_err("metrics: cannot serve on %s", cfg->metrics_listen);
		close(fd);
		free(h);
		return -1;
	}
	log_info("metrics: Prometheus text on http://%s/metrics (%s)", cfg->metrics_listen,
		 poller(h->d));
	*out = h;
	return 0;
}

void metrics_http_stop(struct metrics_http *h)
{
	if (!h)
		return;
	MHD_stop_daemon(h->d);   /* closes every connection: their nodes are freed then */
	free(h);
}
