/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A private RPC program that reports the server's counters, for tests, benchmarks and monitoring:
 * program 0x20004e55 version 1. Procedure 1 (STATS) takes no arguments and returns uint32 n,
 * then n x { string name<64>; unsigned hyper value }; procedure 2 (METRICS) returns
 * opaque<8M>: the Prometheus text of metrics.h (nfsd-uc-stat reads it); procedure 3 (CLIENTS)
 * the client list of clients.h. Only loopback clients are answered: the numbers say how busy
 * each export is, and who its clients are. */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "cache/bcache.h"
#include "conf/config.h"
#include "lock/nlm.h"
#include "mount/mount.h"
#include "mount/mountlist.h"
#include "nfs3/nfs3.h"
#include "ops/clients.h"
#include "ops/metrics.h"
#include "ops/ops_int.h"
#include "ops/stats.h"
#include "svc/dispatch.h"
#include "svc/svc.h"

#define STATS_MAX 128
#define METRICS_MAX (8u << 20)

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

bool ops_loopback(const struct sockaddr_storage *ss)
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

/* Counters and gauges, to a sink: the STATS procedure's pairs, the METRICS text. */
static void C(const struct stats_sink *k, const char *name, uint64_t v)
{
	k->emit(k->ctx, name, v, false);
}

static void G(const struct stats_sink *k, const char *name, uint64_t v)
{
	k->emit(k->ctx, name, v, true);
}

/* The NFS program's requests, and the stable WRITEs that filled a block alone. */
static void collect_requests(const struct ops *o, const struct stats_sink *k)
{
	const struct nfs3_stats *c = o->src.nfs3;
	if (c) {
		C(k, "writes", atomic_load(&c->writes));
		C(k, "reads", atomic_load(&c->reads));
		C(k, "commits", atomic_load(&c->commits));
		C(k, "bytes_written", atomic_load(&c->bytes_written));
		C(k, "bytes_read", atomic_load(&c->bytes_read));
	}
	if (o->src.fs) {
		struct fs_list_stats ls;
		C(k, "stable_writes_alone", fs_stable_alone(o->src.fs));
		fs_list_stats(o->src.fs, &ls);
		C(k, "listcache_hits", ls.hits);
		C(k, "listcache_misses", ls.misses);
		C(k, "listcache_filed", ls.filed);
	}
}

/* The duplicate request cache, the connections and receive memory. */
static void collect_svc(const struct ops *o, const struct stats_sink *k)
{
	struct svc_stats st;
	if (!o->src.svc)
		return;
	svc_get_stats(o->src.svc, &st);
	if (st.has_drc) {
		C(k, "drc_hits", st.drc.hits);
		C(k, "drc_inprogress_drops", st.drc.inprog_drops);
		C(k, "drc_misses", st.drc.misses);
		G(k, "drc_entries", st.drc.entries);
		G(k, "drc_bytes", st.drc.bytes);
	}
	if (st.has_gss) {
		G(k, "gss_contexts", st.gss.contexts);
		C(k, "gss_contexts_made", st.gss.made);
		C(k, "gss_contexts_refused", st.gss.refused);
		C(k, "gss_calls_krb5", st.gss.calls[0]);
		C(k, "gss_calls_krb5i", st.gss.calls[1]);
		C(k, "gss_calls_krb5p", st.gss.calls[2]);
		C(k, "gss_unknown_contexts", st.gss.unknown_ctx);
		C(k, "gss_bad_headers", st.gss.bad_headers);
		C(k, "gss_bad_bodies", st.gss.bad_bodies);
		C(k, "gss_sequence_drops", st.gss.seq_drops);
	}
	const struct climit_stats *l = &st.limits;
	G(k, "connections", l->connections);
	C(k, "connections_evicted", l->evicted);
	C(k, "connections_refused", l->refused);
	C(k, "connections_idle_closed", l->idle_closed);
	C(k, "connections_slow_closed", l->slow_closed);
	C(k, "receive_memory_waits", l->mem_waits);
	C(k, "receive_memory_share_waits", l->share_waits);
	C(k, "receive_windows_revoked", l->windows_revoked);
	C(k, "receive_tokens_passed", l->tokens_passed);
	C(k, "receive_memory_client_waits", l->client_waits);
	G(k, "receive_memory_bytes", l->mem_bytes);
}

/* The cache: what it holds, fills, writes and answers. */
static void collect_cache(const struct ops *o, const struct stats_sink *k)
{
	struct bcache_stats b;
	if (!o->src.fs)
		return;
	bcache_get_stats(fs_cache(o->src.fs), &b);
	C(k, "cache_writes", b.writes);
	C(k, "cache_direct_middles", b.direct_middles);
	C(k, "cache_bounced_middles", b.bounced_middles);
	C(k, "cache_append_waits", b.train_waits);
	C(k, "cache_append_batches", b.train_writes);
	C(k, "cache_blocks_completed", b.completed);
	C(k, "cache_fill_reads", b.fill_reads);
	C(k, "cache_fill_reads_commit", b.fill_reads_commit);
	C(k, "cache_fill_reads_bound", b.fill_reads_bound);
	C(k, "cache_fill_zeros", b.fill_zeros);
	C(k, "cache_fill_holes", b.fill_holes);
	C(k, "cache_eof_writes", b.eof_writes);
	C(k, "cache_eof_trims", b.eof_trims);
	C(k, "cache_read_once", b.read_once);
	C(k, "cache_lone_writes", b.lone_writes);
	C(k, "cache_evictions", b.forced);
	C(k, "cache_io_errors", b.io_errors);
	G(k, "cache_entries", b.entries);
	G(k, "cache_entries_peak", b.entries_peak);
	G(k, "cache_dirty", b.dirty);
	G(k, "cache_bytes", b.bytes);
	G(k, "cache_bytes_peak", b.bytes_peak);
	G(k, "cache_dirty_bytes", b.dirty_bytes);
	G(k, "cache_clean_bytes", b.clean_bytes);
	G(k, "cache_written_bytes", b.written_bytes);
	C(k, "cache_written_trimmed", b.written_trimmed);
	G(k, "cache_inflight_bytes", b.inflight_bytes);
	G(k, "cache_ready_blocks", b.ready);
	C(k, "cache_adopted_blocks", b.adopted);
	C(k, "cache_copied_blocks", b.copied);
	C(k, "cache_frames_opened", b.frames);
	C(k, "cache_frames_warm", b.frames_warm);
	C(k, "cache_frames_mapped", b.frames_mapped);
	G(k, "cache_reserve_bytes", b.reserve_bytes);
	C(k, "cache_read_hits", b.read_hits);
	C(k, "cache_read_misses", b.read_misses);
	C(k, "cache_read_kept_blocks", b.read_cached);
	C(k, "cache_backpressure_waits", b.bp_waits);
	C(k, "cache_writeback_failures", b.wb_failures);
	C(k, "cache_writes_refused", b.wb_refused);
	C(k, "cache_spread_holds", b.spread_holds);
	C(k, "cache_syncs_behind", b.syncs_behind);
	C(k, "cache_sync_writes", b.sync_writes);
	C(k, "cache_wb_writes", b.wb_writes);
	C(k, "cache_wb_bytes", b.wb_bytes);
	/* write-behind I/O sizes: cache_wb_lt_8k .. cache_wb_lt_1m, cache_wb_ge_1m */
	static const char *const hist[BCACHE_WB_HIST] = {
		"cache_wb_lt_8k", "cache_wb_lt_16k", "cache_wb_lt_32k", "cache_wb_lt_64k",
		"cache_wb_lt_128k", "cache_wb_lt_256k", "cache_wb_lt_512k", "cache_wb_lt_1m",
		"cache_wb_ge_1m",
	};
	for (unsigned i = 0; i < BCACHE_WB_HIST; i++)
		C(k, hist[i], b.wb_hist[i]);
}

/* The lock manager's calls, callbacks and what it holds. */
static void collect_lock(const struct ops *o, const struct stats_sink *k)
{
	struct nlm_counters n;
	if (!o->src.nlm)
		return;
	nlm_counters(o->src.nlm, &n);
	C(k, "lock_granted", n.granted);
	C(k, "lock_denied", n.denied);
	C(k, "lock_blocked", n.blocked);
	C(k, "lock_grace_denied", n.grace_denied);
	C(k, "lock_nolocks", n.nolocks);
	C(k, "lock_cancelled", n.cancelled);
	C(k, "lock_unlocks", n.unlocked);
	C(k, "lock_callbacks", n.callbacks);
	C(k, "lock_callbacks_ok", n.callback_ok);
	C(k, "lock_callbacks_failed", n.callback_failed);
	C(k, "lock_notifies_sent", n.notifies_sent);
	C(k, "lock_notifies_received", n.notifies_received);
	G(k, "lock_locks", n.locks);
	G(k, "lock_waiters", n.waiters);
	G(k, "lock_hosts", n.hosts);
	C(k, "lock_hosts_refused", n.hosts_refused);
	G(k, "lock_grace_pending", n.grace_pending);
	G(k, "lock_shares", n.shares);
	G(k, "lock_monitored_hosts", n.monitored);
	G(k, "lock_grace_active", n.grace_active);
}

void stats_collect(struct ops *o, const struct stats_sink *k)
{
	collect_requests(o, k);
	collect_svc(o, k);
	if (o->src.cfg->metrics_listen) {
		C(k, "metrics_connections_refused", atomic_load(&o->mhttp.refused));
		C(k, "metrics_connections_timed_out", atomic_load(&o->mhttp.timed_out));
	}
	collect_cache(o, k);
	if (o->src.mount) {
		struct mount_list_stats m;
		mount_list_stats(o->src.mount->list, &m);
		G(k, "mount_list_entries", m.entries);
		C(k, "mount_list_dropped", m.dropped);
	}
	collect_lock(o, k);
}

static void add_pair(void *ctx, const char *name, uint64_t v, bool gauge)
{
	struct stats_res *r = ctx;
	(void)gauge;
	if (r->n < STATS_MAX)
		r->v[r->n++] = (struct stat_pair){name, v};
}

static void stats_null(struct svc_call *rq, void *argp, void *resp)
{
	(void)rq, (void)argp, (void)resp;
}

static void stats_get(struct svc_call *rq, void *argp, void *resp)
{
	(void)argp;
	if (!ops_loopback(&rq->peer))
		return;     /* an empty list */
	stats_collect(rq->prog, &(struct stats_sink){add_pair, resp});
}

/* METRICS: the Prometheus text (metrics.h), as one opaque, for nfsd-uc-stat. */
struct metrics_res {
	char *text;
	size_t len;
};

static bool_t xdr_metrics_res(XDR *x, struct metrics_res *r)
{
	u_int n = (u_int)r->len;
	return xdr_bytes(x, &r->text, &n, METRICS_MAX);
}

static void metrics_get(struct svc_call *rq, void *argp, void *resp)
{
	(void)argp;
	struct metrics_res *r = resp;
	char *text;
	size_t len;
	if (!ops_loopback(&rq->peer) || metrics_render(rq->prog, &text, &len) < 0)
		return;     /* empty */
	r->text = arena_alloc(&rq->arena, len);
	if (r->text) {
		memcpy(r->text, text, len);
		r->len = len;
		rq->reply_hint = len + 64;
	}
	free(text);
}

static const struct proc_desc stats_procs[] = {
	[0] = {"STATS_NULL", XDRPROC(xdr_void), NULL, XDRPROC(xdr_void), 0, 0, stats_null, false},
	[1] = {"STATS", XDRPROC(xdr_void), NULL, XDRPROC(xdr_stats_res), 0, sizeof(struct stats_res), stats_get, false},
	[2] = {"METRICS", XDRPROC(xdr_void), NULL, XDRPROC(xdr_metrics_res), 0,
	       sizeof(struct metrics_res), metrics_get, false},
	[3] = {"CLIENTS", XDRPROC(xdr_void), NULL, XDRPROC(xdr_clients_res), 0,
	       sizeof(struct clients_res), clients_get, false},
};

const struct prog_desc stats_program = {STATS_PROGRAM, STATS_V1, stats_procs,
					sizeof stats_procs / sizeof stats_procs[0], true, NULL};
