/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The server's flat counters (stats.c: the counters program's STATS pairs, under the same names)
 * as Prometheus families: nfsd_uc_NAME_total for a counter, nfsd_uc_NAME for a gauge, each with
 * the meaning below. Two groups become one family each: the write-behind sizes (cache_wb_*) a
 * histogram, and the GRANTED callbacks' outcomes (lock_callbacks_ok, _failed) a counter with a
 * result label. A name with no meaning here is rendered without HELP, which the suite's check of
 * the text (tests/integration/check_metrics.py) refuses: add it here and to nfsd-uc-metrics(7). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ops/metrics_int.h"
#include "ops/ops_int.h"
#include "ops/stats.h"

static const struct {
	const char *name, *help;
} meanings[] = {
	{"writes", "NFS WRITE calls that succeeded."},
	{"reads", "NFS READ calls that succeeded."},
	{"commits", "NFS COMMIT calls run."},
	{"bytes_written", "Bytes written by NFS WRITEs that succeeded."},
	{"bytes_read", "Bytes read by NFS READs that succeeded."},
	{"stable_writes_alone", "Stable WRITEs that completed a partial cache block without its "
				"neighbour (each costs a read of the block)."},
	{"listcache_hits", "READDIRPLUS entries of an unchanged directory whose handle the listing "
			   "cache had (no name_to_handle_at)."},
	{"listcache_misses", "READDIRPLUS entries of an unchanged directory the listing cache had "
			     "no handle for (looked up)."},
	{"listcache_filed", "Handles filed in the listing cache."},
	{"drc_hits", "Retransmitted calls answered with the reply the duplicate request cache kept."},
	{"drc_inprogress_drops", "Retransmitted calls dropped because the original still ran."},
	{"drc_misses", "Calls of non-idempotent procedures not found in the duplicate request "
		       "cache (run)."},
	{"drc_entries", "Replies the duplicate request cache holds."},
	{"drc_bytes", "Bytes of replies the duplicate request cache holds."},
	{"gss_contexts", "RPCSEC_GSS contexts held, established or being made."},
	{"gss_contexts_made", "RPCSEC_GSS contexts established."},
	{"gss_contexts_refused", "RPCSEC_GSS context steps refused (bad ticket, no key, clock "
				 "skew, too many contexts): the log says why."},
	{"gss_calls_krb5", "RPCSEC_GSS calls checked with service none (sec=krb5)."},
	{"gss_calls_krb5i", "RPCSEC_GSS calls checked with service integrity (sec=krb5i)."},
	{"gss_calls_krb5p", "RPCSEC_GSS calls checked with service privacy (sec=krb5p)."},
	{"gss_unknown_contexts", "RPCSEC_GSS calls naming no context held (destroyed, expired, or "
				 "from before a restart): answered CREDPROBLEM."},
	{"gss_bad_headers", "RPCSEC_GSS calls whose header checksum did not check (forged or "
			    "damaged)."},
	{"gss_bad_bodies", "RPCSEC_GSS krb5i checksums or krb5p seals that did not check: "
			   "answered GARBAGE_ARGS."},
	{"gss_sequence_drops", "RPCSEC_GSS calls dropped for a sequence number seen before or "
			       "below the window (replays)."},
	{"connections", "Client connections open (NFS, MOUNT, NLM and port 111)."},
	{"connections_evicted", "Idle connections closed to make room for a new one past "
				"connections or connections_per_client."},
	{"connections_refused", "New connections refused past connections or "
				"connections_per_client, none being idle."},
	{"connections_idle_closed", "Connections closed after idle_timeout without a call."},
	{"connections_slow_closed", "Connections closed because a record or a reply took longer "
				    "than record_timeout."},
	{"receive_memory_waits", "Times a connection waited to be read because receive_memory "
				 "was in use."},
	{"receive_memory_share_waits", "Times a connection waited to be read because it held its "
				       "share of receive_memory."},
	{"receive_memory_client_waits", "Times a connection waited to be read because its client's "
					"connections held the client's share of receive_memory."},
	{"receive_windows_revoked", "Receive buffers taken back from connections stalled "
				    "mid-record."},
	{"receive_tokens_passed", "Times a record that went on past receive_memory stalled and "
				  "let the next record of its ring go on instead."},
	{"receive_memory_bytes", "Bytes of receive_memory held by records being received or run."},
	{"metrics_connections_refused", "Connections to this endpoint refused past [metrics] "
					"connections or connections_per_client."},
	{"metrics_connections_timed_out", "Connections to this endpoint closed after [metrics] "
					  "timeout."},
	{"cache_writes", "WRITEs given to the boundary-block cache."},
	{"cache_direct_middles", "WRITE middles (whole blocks) written straight from the "
				 "request's buffer."},
	{"cache_bounced_middles", "WRITE middles copied once into an aligned buffer first."},
	{"cache_append_waits", "WRITE middles past the end of file that waited for the one before "
			       "it to land, to go to disk with the others that waited."},
	{"cache_append_batches", "Writes that took the middles of two WRITEs or more past the end "
				 "of file at once."},
	{"cache_blocks_completed", "Blocks every byte of which came from WRITEs, written whole "
				   "with no read."},
	{"cache_fill_reads", "Blocks completed by reading the rest from disk."},
	{"cache_fill_reads_commit", "Of the fill reads, those for a COMMIT or a stable WRITE."},
	{"cache_fill_reads_bound", "Of the fill reads, those for the memory bound (a partial block "
				   "forced out)."},
	{"cache_fill_zeros", "Blocks completed with zeros past the end of file, no read."},
	{"cache_fill_holes", "Blocks completed with zeros over a hole, no read."},
	{"cache_eof_writes", "Blocks ending a file written short."},
	{"cache_eof_trims", "Blocks written whole past the end of file and trimmed back."},
	{"cache_read_once", "READs that missed and were not kept in the cache."},
	{"cache_lone_writes", "Aligned WRITEs far from anything cached, written straight to disk."},
	{"cache_evictions", "Dirty entries written and freed by the memory bounds."},
	{"cache_io_errors", "Failed writes, reads, syncs and truncates of the cache."},
	{"cache_entries", "Cache entries held, clean ones included."},
	{"cache_entries_peak", "Most cache entries held at once since the start."},
	{"cache_dirty", "Cache entries holding bytes not yet written or not yet synced."},
	{"cache_bytes", "Bytes of block images the cache holds."},
	{"cache_bytes_peak", "Most bytes the cache held at once since the start."},
	{"cache_dirty_bytes", "Bytes the cache holds not yet written."},
	{"cache_clean_bytes", "Bytes the cache holds written or read, kept for READs."},
	{"cache_written_bytes", "Of the clean bytes, those WRITEs gave and nobody has read since."},
	{"cache_written_trimmed", "Written blocks let go to hold them to their share."},
	{"cache_inflight_bytes", "Bytes the cache is writing now."},
	{"cache_ready_blocks", "Dirty blocks complete and not yet on their way (write-behind's "
			       "backlog)."},
	{"cache_adopted_blocks", "Whole blocks taken from WRITE records without a copy."},
	{"cache_copied_blocks", "Whole blocks copied (unaligned payloads, small WRITEs)."},
	{"cache_frames_opened", "Frames opened for copied blocks."},
	{"cache_frames_warm", "Of the frames opened, those given memory the reserve had ready."},
	{"cache_frames_mapped", "Frames' memory mapped afresh, ahead of need or on demand (the "
				"rest was used again)."},
	{"cache_reserve_bytes", "Bytes of frames the reserve holds ready."},
	{"cache_read_hits", "READs served whole from the cache."},
	{"cache_read_misses", "READs that read the disk."},
	{"cache_read_kept_blocks", "Blocks kept clean in the cache after a disk read."},
	{"cache_backpressure_waits", "WRITEs that waited or wrote back for room in the cache."},
	{"cache_writeback_failures", "Write-behind writes and syncs that failed (the data stays "
				     "dirty)."},
	{"cache_writes_refused", "WRITEs refused past the bound after a write of their file "
				 "failed."},
	{"cache_spread_holds", "WRITEs held because their writer was ahead of the file's others."},
	{"cache_syncs_behind", "Syncs write-behind made of files with [cache] sync_behind "
			       "bytes unsynced."},
	{"cache_sync_writes", "COMMITs and stable WRITEs made durable by their one write, with "
			      "no sync of their own."},
	{"mount_list_entries", "Entries of the MOUNT list (DUMP's answer)."},
	{"mount_list_dropped", "MOUNT list entries dropped for room."},
	{"lock_granted", "NLM locks granted, at once or to a waiter."},
	{"lock_denied", "Non-blocking NLM LOCKs denied for a conflicting lock."},
	{"lock_blocked", "NLM LOCKs answered BLOCKED and queued to wait."},
	{"lock_grace_denied", "NLM calls refused during the grace period."},
	{"lock_nolocks", "NLM calls refused with NOLOCKS ([lock] limits, or the file could not be "
			 "opened)."},
	{"lock_cancelled", "Waiting NLM LOCKs cancelled."},
	{"lock_unlocks", "NLM UNLOCKs that released a range."},
	{"lock_callbacks", "NLM GRANTED callbacks to clients begun."},
	{"lock_notifies_sent", "NSM SM_NOTIFY calls sent to the hosts that held locks."},
	{"lock_notifies_received", "NSM SM_NOTIFY calls received (a client restarted)."},
	{"lock_locks", "NLM locks held."},
	{"lock_waiters", "NLM LOCKs waiting for a range."},
	{"lock_hosts", "Client hosts the lock manager knows (by address and caller name)."},
	{"lock_hosts_refused", "New caller names refused past [lock] names_per_client."},
	{"lock_grace_pending", "Hosts that held locks and have not reclaimed them yet (grace "
			       "period)."},
	{"lock_shares", "NLM share reservations held."},
	{"lock_monitored_hosts", "Hosts recorded for NSM (notified at the next start)."},
	{"lock_grace_active", "1 during the grace period after a start, else 0."},
};

static const char *meaning_of(const char *name)
{
	for (size_t i = 0; i < sizeof meanings / sizeof meanings[0]; i++)
		if (strcmp(meanings[i].name, name) == 0)
			return meanings[i].help;
	return NULL;
}

/* Every pair stats_collect() gives, kept for one rendering: families are grouped from them. */
#define FLAT_MAX 256
struct flat_pair {
	const char *name;             /* stats.c's literals */
	uint64_t value;
	bool gauge;
};
struct flat {
	struct flat_pair v[FLAT_MAX];
	size_t n;
};

static void keep(void *ctx, const char *name, uint64_t value, bool gauge)
{
	struct flat *fl = ctx;
	if (fl->n < FLAT_MAX)
		fl->v[fl->n++] = (struct flat_pair){name, value, gauge};
}

static bool find(const struct flat *fl, const char *name, uint64_t *value)
{
	for (size_t i = 0; i < fl->n; i++)
		if (strcmp(fl->v[i].name, name) == 0) {
			*value = fl->v[i].value;
			return true;
		}
	return false;
}

/* cache_wb_lt_8k .. cache_wb_lt_1m count sizes below 8 KiB << i, cache_wb_ge_1m the rest:
 * bucket i holds sizes up to (8 KiB << i) - 1, which is its le. */
static const char *const wb_buckets[] = {
	"cache_wb_lt_8k", "cache_wb_lt_16k", "cache_wb_lt_32k", "cache_wb_lt_64k",
	"cache_wb_lt_128k", "cache_wb_lt_256k", "cache_wb_lt_512k", "cache_wb_lt_1m",
	"cache_wb_ge_1m",
};
#define WB_N (sizeof wb_buckets / sizeof wb_buckets[0])

static bool is_wb(const char *name)
{
	return strncmp(name, "cache_wb_", 9) == 0;
}

static void render_wb_histogram(const struct flat *fl, FILE *f)
{
	static const char fam[] = "nfsd_uc_cache_writeback_size_bytes";
	uint64_t cum = 0, v, bytes = 0;
	met_family(f, fam, "histogram", "Sizes of the cache's writes of dirty runs to the file "
		   "systems (write-behind, COMMIT, the memory bound).");
	for (size_t i = 0; i < WB_N; i++) {
		cum += find(fl, wb_buckets[i], &v) ? v : 0;
		if (i + 1 < WB_N)
			fprintf(f, "%s_bucket{le=\"%llu\"} %llu\n", fam,
				(unsigned long long)(8192ull << i) - 1, (unsigned long long)cum);
	}
	fprintf(f, "%s_bucket{le=\"+Inf\"} %llu\n", fam, (unsigned long long)cum);
	find(fl, "cache_wb_bytes", &bytes);
	fprintf(f, "%s_sum %llu\n%s_count %llu\n", fam, (unsigned long long)bytes, fam,
		(unsigned long long)cum);
}

static bool is_callback_result(const char *name)
{
	return strcmp(name, "lock_callbacks_ok") == 0 || strcmp(name, "lock_callbacks_failed") == 0;
}

static void render_callback_results(const struct flat *fl, FILE *f)
{
	static const char fam[] = "nfsd_uc_lock_callback_results_total";
	uint64_t ok = 0, failed = 0;
	find(fl, "lock_callbacks_ok", &ok);
	find(fl, "lock_callbacks_failed", &failed);
	met_family(f, fam, "counter", "NLM GRANTED callbacks ended, by result: ok (the client "
		   "answered) or failed (not sent, or no good answer).");
	fprintf(f, "%s{result=\"ok\"} %llu\n%s{result=\"failed\"} %llu\n", fam,
		(unsigned long long)ok, fam, (unsigned long long)failed);
}

static void render_one(FILE *f, const char *name, uint64_t value, bool gauge)
{
	const char *suffix = gauge ? "" : "_total", *help = meaning_of(name);
	if (help)
		fprintf(f, "# HELP nfsd_uc_%s%s %s\n", name, suffix, help);
	fprintf(f, "# TYPE nfsd_uc_%s%s %s\nnfsd_uc_%s%s %llu\n", name, suffix,
		gauge ? "gauge" : "counter", name, suffix, (unsigned long long)value);
}

int metrics_render_flat(struct ops *o, FILE *f)
{
	struct flat *fl = calloc(1, sizeof *fl);
	bool wb_done = false, cb_done = false;
	if (!fl)
		return -ENOMEM;
	stats_collect(o, &(struct stats_sink){keep, fl});
	/* In stats_collect()'s order; a group where its first member comes. */
	for (size_t i = 0; i < fl->n; i++) {
		const char *name = fl->v[i].name;
		if (is_wb(name)) {
			if (!wb_done)
				render_wb_histogram(fl, f);
			wb_done = true;
		} else if (is_callback_result(name)) {
			if (!cb_done)
				render_callback_results(fl, f);
			cb_done = true;
		} else {
			render_one(f, name, fl->v[i].value, fl->v[i].gauge);
		}
	}
	free(fl);
	return 0;
}
