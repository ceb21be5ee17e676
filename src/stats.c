/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A private RPC program that reports the server's counters, for tests, benchmarks and monitoring:
 * program 0x20004e55 version 1, procedure 1 (STATS) takes no arguments and returns
 * uint32 n, then n x { string name<64>; unsigned hyper value }. Only loopback clients are
 * answered: the numbers say how busy each export is. */
#include <arpa/inet.h>
#include <string.h>

#include "bcache.h"
#include "connlimit.h"
#include "drc.h"
#include "dispatch.h"
#include "stats.h"

#define STATS_MAX 96

struct stat_pair {
	const char *name;
	uint64_t value;
};

struct stats_res {
	uint32_t n;
	struct stat_pair v[STATS_MAX];
};

static bool_t xdr_stats_res(XDR *x, struct stats_res *r)
{
	if (!xdr_u_int(x, &r->n))
		return FALSE;
	for (uint32_t i = 0; i < r->n; i++) {
		char *name = (char *)r->v[i].name;
		if (!xdr_string(x, &name, 64) || !xdr_u_int64_t(x, &r->v[i].value))
			return FALSE;
	}
	return TRUE;
}

static bool is_loopback(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)ss)->sin_addr.s_addr) >> 24) == 127;
	if (ss->ss_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)ss)->sin6_addr;
		return IN6_IS_ADDR_LOOPBACK(a) ||
		       (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
	}
	return false;
}

static void add(struct stats_res *r, const char *name, uint64_t v)
{
	if (r->n < STATS_MAX)
		r->v[r->n++] = (struct stat_pair){name, v};
}

static void stats_null(struct nfs_req *rq, void *argp, void *resp)
{
	(void)rq, (void)argp, (void)resp;
}

static void stats_get(struct nfs_req *rq, void *argp, void *resp)
{
	(void)argp;
	struct stats_res *r = resp;
	if (!is_loopback(&rq->peer))
		return;     /* an empty list */
	const struct server *srv = rq->w->srv;
	const struct server_counters *c = &srv->ctr;
	add(r, "writes", atomic_load(&c->writes));
	add(r, "reads", atomic_load(&c->reads));
	add(r, "commits", atomic_load(&c->commits));
	add(r, "bytes_written", atomic_load(&c->bytes_written));
	add(r, "bytes_read", atomic_load(&c->bytes_read));
	if (srv->drc) {
		struct drc_stats d;
		drc_get_stats(srv->drc, &d);
		add(r, "drc_hits", d.hits);
		add(r, "drc_inprogress_drops", d.inprog_drops);
		add(r, "drc_misses", d.misses);
		add(r, "drc_entries", d.entries);
		add(r, "drc_bytes", d.bytes);
	}
	if (srv->limits) {
		struct climit_stats l;
		climits_get_stats(srv->limits, &l);
		add(r, "connections", l.connections);
		add(r, "connections_evicted", l.evicted);
		add(r, "connections_refused", l.refused);
		add(r, "connections_idle_closed", l.idle_closed);
		add(r, "connections_slow_closed", l.slow_closed);
		add(r, "receive_memory_waits", l.mem_waits);
		add(r, "receive_memory_bytes", l.mem_bytes);
	}
	if (srv->cache) {
		struct bcache_stats b;
		bcache_get_stats(srv->cache, &b);
		add(r, "cache_writes", b.writes);
		add(r, "cache_direct_middles", b.direct_middles);
		add(r, "cache_bounced_middles", b.bounced_middles);
		add(r, "cache_blocks_completed", b.completed);
		add(r, "cache_fill_reads", b.fill_reads);
		add(r, "cache_fill_zeros", b.fill_zeros);
		add(r, "cache_evictions", b.forced);
		add(r, "cache_io_errors", b.io_errors);
		add(r, "cache_entries", b.entries);
		add(r, "cache_entries_peak", b.entries_peak);
		add(r, "cache_dirty", b.dirty);
		add(r, "cache_bytes", b.bytes);
		add(r, "cache_bytes_peak", b.bytes_peak);
		add(r, "cache_dirty_bytes", b.dirty_bytes);
		add(r, "cache_clean_bytes", b.clean_bytes);
		add(r, "cache_inflight_bytes", b.inflight_bytes);
		add(r, "cache_adopted_blocks", b.adopted);
		add(r, "cache_copied_blocks", b.copied);
		add(r, "cache_read_hits", b.read_hits);
		add(r, "cache_read_misses", b.read_misses);
		add(r, "cache_read_kept_blocks", b.read_cached);
		add(r, "cache_backpressure_waits", b.bp_waits);
		add(r, "cache_writeback_failures", b.wb_failures);
		add(r, "cache_wb_writes", b.wb_writes);
		add(r, "cache_wb_bytes", b.wb_bytes);
		/* write-behind I/O sizes: cache_wb_lt_8k .. cache_wb_lt_1m, cache_wb_ge_1m */
		static const char *const hist[BCACHE_WB_HIST] = {
			"cache_wb_lt_8k", "cache_wb_lt_16k", "cache_wb_lt_32k", "cache_wb_lt_64k",
			"cache_wb_lt_128k", "cache_wb_lt_256k", "cache_wb_lt_512k", "cache_wb_lt_1m",
			"cache_wb_ge_1m",
		};
		for (unsigned i = 0; i < BCACHE_WB_HIST; i++)
			add(r, hist[i], b.wb_hist[i]);
	}

}

static const struct proc_desc stats_procs[] = {
	[0] = {"STATS_NULL", XDRPROC(xdr_void), NULL, XDRPROC(xdr_void), 0, 0, stats_null},
	[1] = {"STATS", XDRPROC(xdr_void), NULL, XDRPROC(xdr_stats_res), 0, sizeof(struct stats_res), stats_get},
};

const struct prog_desc stats_program = {STATS_PROGRAM, STATS_V1, stats_procs,
					sizeof stats_procs / sizeof stats_procs[0]};
