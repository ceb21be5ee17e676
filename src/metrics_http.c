/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The Prometheus endpoint: GET /metrics on [metrics] listen, served by libmicrohttpd's own thread
 * (never a ring's: a slow scraper or a stuck connection costs the rings nothing), one connection
 * at a time per scrape, the text rendered by metrics_render(). */
#include "metrics_http.h"

#include <microhttpd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "config.h"
#include "log.h"
#include "metrics.h"
#include "nfsd.h"

#define MAX_SCRAPERS 16
#define SCRAPE_TIMEOUT_S 10

struct metrics_http {
	struct MHD_Daemon *d;
	struct server *srv;
};

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

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_len, void **state)
{
	struct metrics_http *h = cls;
	(void)version, (void)upload, (void)state;
	if (*upload_len)
		return plain(c, MHD_HTTP_BAD_REQUEST, "no body expected\n");
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
		return plain(c, MHD_HTTP_METHOD_NOT_ALLOWED, "GET /metrics\n");
	if (strcmp(url, "/metrics") != 0)
		return plain(c, MHD_HTTP_NOT_FOUND, "nfsd-uc serves /metrics\n");
	char *text;
	size_t len;
	if (metrics_render(h->srv, &text, &len) < 0)
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

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	char line[512];
	(void)cls;
	vsnprintf(line, sizeof line, fmt, ap);
	line[strcspn(line, "\n")] = '\0';
	log_warn("metrics endpoint: %s", line);
}

int metrics_http_start(struct server *srv, struct metrics_http **out)
{
	*out = NULL;
	if (!srv->cfg->metrics_listen)
		return 0;
	struct sockaddr_storage ss;
	if (config_parse_hostport(srv->cfg->metrics_listen, &ss) < 0)
		return -1;
	struct metrics_http *h = calloc(1, sizeof *h);
	if (!h)
		return -1;
	h->srv = srv;
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	h->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, h,
				MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, NULL,
				MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned)MAX_SCRAPERS,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)SCRAPE_TIMEOUT_S,
				MHD_OPTION_END);
	if (!h->d) {
		log_err("metrics: cannot listen on %s", srv->cfg->metrics_listen);
		free(h);
		return -1;
	}
	log_info("metrics: Prometheus text on http://%s/metrics", srv->cfg->metrics_listen);
	*out = h;
	return 0;
}

void metrics_http_stop(struct metrics_http *h)
{
	if (!h)
		return;
	MHD_stop_daemon(h->d);
	free(h);
}
