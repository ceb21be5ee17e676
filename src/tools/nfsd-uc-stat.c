/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nfsd-uc-stat: nfsd-uc's figures as a table, as nfsstat and iostat print theirs.
 *
 *   nfsd-uc-stat [-s HOST] [-p PORT] [INTERVAL [COUNT]]
 *   nfsd-uc-stat [-s HOST] [-p PORT] --prometheus
 *   nfsd-uc-stat [-s HOST] [-p PORT] clients
 *
 * Per procedure: calls, errors, and latency percentiles (from the server's histogram: the upper
 * bound of the bucket that holds the percentile, so "<= N us"), then the cache's and the
 * server's figures. With INTERVAL, again every INTERVAL seconds with what happened in that
 * interval, COUNT times (default: until interrupted). The figures come from the daemon's
 * counters program (procedure METRICS, on the NFS port, loopback clients only): the same
 * Prometheus text its [metrics] HTTP endpoint serves, which --prometheus prints as it is.
 * `clients` lists the client addresses (procedure CLIENTS): mounts, connections, locks, and
 * when each last called. */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "statrpc.h"

#define PROC_METRICS 2u
#define PROC_CLIENTS 3u
#define MAX_PROCS 64   /* NFS 22, MOUNT 6, NLM 24 */
#define MAX_FLAT 256
#define BUCKETS 25                /* 2^0 .. 2^23 us, then +Inf (metrics.h) */
#define EXIT_USAGE 2

const char *statrpc_prog = "nfsd-uc-stat";

struct proc_row {
	char prog[8], name[16];
	uint64_t calls, errors;
	uint64_t bucket[BUCKETS];     /* cumulative, as Prometheus gives them */
};

struct flat {
	char name[64];
	uint64_t value;
};

struct snapshot {
	struct proc_row procs[MAX_PROCS];
	int nprocs;
	struct flat flats[MAX_FLAT];
	int nflats;
};

/* The value of label key in a sample line's {...}, copied into out. */
static bool label(const char *line, const char *key, char *out, size_t outlen)
{
	char pat[32];
	snprintf(pat, sizeof pat, "%s=\"", key);
	const char *p = strstr(line, pat);
	if (!p)
		return false;
	p += strlen(pat);
	const char *q = strchr(p, '"');
	if (!q || (size_t)(q - p) >= outlen)
		return false;
	memcpy(out, p, (size_t)(q - p));
	out[q - p] = '\0';
	return true;
}

static struct proc_row *row(struct snapshot *s, const char *line)
{
	char prog[8], name[16];
	if (!label(line, "program", prog, sizeof prog) || !label(line, "procedure", name, sizeof name))
		return NULL;
	for (int i = 0; i < s->nprocs; i++)
		if (strcmp(s->procs[i].prog, prog) == 0 && strcmp(s->procs[i].name, name) == 0)
			return &s->procs[i];
	if (s->nprocs == MAX_PROCS)
		return NULL;
	struct proc_row *r = &s->procs[s->nprocs++];
	memset(r, 0, sizeof *r);
	strcpy(r->prog, prog);
	strcpy(r->name, name);
	return r;
}

static uint64_t sample_value(const char *line)
{
	const char *sp = strrchr(line, ' ');
	return sp ? strtoull(sp + 1, NULL, 10) : 0;
}

static void parse_line(struct snapshot *s, const char *line)
{
	static const char req[] = "nfsd_uc_requests_total{", err[] = "nfsd_uc_errors_total{",
			  bkt[] = "nfsd_uc_request_duration_seconds_bucket{",
			  wb_1m[] = "nfsd_uc_cache_writeback_size_bytes_bucket{le=\"1048575\"}";
	struct proc_row *r;
	if (line[0] == '#' || line[0] == '\0')
		return;
	if (strncmp(line, req, sizeof req - 1) == 0 && (r = row(s, line))) {
		r->calls = sample_value(line);
	} else if (strncmp(line, err, sizeof err - 1) == 0 && (r = row(s, line))) {
		r->errors += sample_value(line);
	} else if (strncmp(line, bkt, sizeof bkt - 1) == 0 && (r = row(s, line))) {
		char le[32];
		if (!label(line, "le", le, sizeof le))
			return;
		int b = strcmp(le, "+Inf") == 0 ? BUCKETS - 1 : 0;
		if (b == 0)
			for (double us = strtod(le, NULL) * 1e6; b < BUCKETS - 1 && (double)(1ull << b) < us * 0.999; b++)
				;
		r->bucket[b] = sample_value(line);
	} else if (strncmp(line, wb_1m, sizeof wb_1m - 1) == 0 && s->nflats < MAX_FLAT) {
		/* write-behind's writes below 1M, for the line's ">= 1M" (count minus these) */
		struct flat *f = &s->flats[s->nflats++];
		strcpy(f->name, "cache_writeback_below_1m");
		f->value = sample_value(line);
	} else if (strncmp(line, "nfsd_uc_", 8) == 0 && !strchr(line, '{') &&
		   s->nflats < MAX_FLAT) {
		struct flat *f = &s->flats[s->nflats++];
		const char *sp = strchr(line, ' ');
		size_t n = sp ? (size_t)(sp - line - 8) : 0;
		if (n >= sizeof f->name)
			n = sizeof f->name - 1;
		memcpy(f->name, line + 8, n);
		f->name[n] = '\0';
		f->value = sample_value(line);
	}
}

/* Fetch the text (and print it as it is, with raw). 0 or an exit status. */
static int fetch(const char *host, const char *port, bool raw, struct snapshot *s)
{
	int fd = statrpc_connect(host, port);
	if (fd < 0)
		return STATRPC_EXIT_PROTO;
	uint8_t *reply;
	struct statrpc_cur c;
	int rc = statrpc_call(fd, PROC_METRICS, &reply, &c);
	close(fd);
	if (rc)
		return rc;
	uint32_t len;
	const uint8_t *text;
	if (!statrpc_u32(&c, &len) || !statrpc_opaque(&c, len, &text)) {
		fprintf(stderr, "nfsd-uc-stat: garbled METRICS result\n");
		free(reply);
		return STATRPC_EXIT_PROTO;
	}
	if (len == 0)
		fprintf(stderr, "nfsd-uc-stat: no figures (the server answers loopback clients only)\n");
	if (raw)
		fwrite(text, 1, len, stdout);
	memset(s, 0, sizeof *s);
	char *copy = strndup((const char *)text, len);
	free(reply);
	if (!copy)
		return STATRPC_EXIT_PROTO;
	for (char *save, *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		parse_line(s, line);
	free(copy);
	return 0;
}

static uint64_t flat(const struct snapshot *s, const char *name)
{
	for (int i = 0; i < s->nflats; i++)
		if (strcmp(s->flats[i].name, name) == 0)
			return s->flats[i].value;
	return 0;
}

static bool has_flat(const struct snapshot *s, const char *name)
{
	for (int i = 0; i < s->nflats; i++)
		if (strcmp(s->flats[i].name, name) == 0)
			return true;
	return false;
}

/* Calls per second: a decimal below 10, so that a call in 2 s shows as 0.5, not 0. */
static const char *rate_str(uint64_t calls, double secs, char *buf, size_t n)
{
	double r = (double)calls / secs;
	if (r >= 10)
		snprintf(buf, n, "%.0f", r);
	else if (r >= 0.1)
		snprintf(buf, n, "%.1f", r);
	else if (r >= 0.01)
		snprintf(buf, n, "%.2f", r);
	else
		snprintf(buf, n, "<0.01");
	return buf;
}

/* The upper bound (us) of the bucket holding quantile q of a (non-cumulative delta) row. */
static const char *percentile(const uint64_t *cum, uint64_t count, double q, char *buf, size_t n)
{
	if (count == 0)
		return "-";
	uint64_t want = (uint64_t)(q * (double)count + 0.999999);
	for (int b = 0; b < BUCKETS; b++)
		if (cum[b] >= want) {
			if (b == BUCKETS - 1)
				return ">8s";
			snprintf(buf, n, "%llu", 1ull << b);
			return buf;
		}
	return "-";
}

static const char *human(uint64_t v, char *buf, size_t n)
{
	const char *unit = "KMGT";
	double d = (double)v;
	int u = -1;
	while (d >= 1024 && u < 3) {
		d /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, n, "%llu", (unsigned long long)v);
	else
		snprintf(buf, n, "%.1f%c", d, unit[u]);
	return buf;
}

/* The lock manager: what it holds now (locks, blocked waiters, shares, client hosts and those
 * NSM monitors, the grace period), and what it granted and refused in the interval. */
static void print_lock(const struct snapshot *now, const struct snapshot *prev)
{
	if (!has_flat(now, "lock_locks")) {
		printf("lock   off (no [lock] port)\n");
		return;
	}
#define D(name) (flat(now, name) - (prev ? flat(prev, name) : 0))
	char grace[64] = "off";
	if (flat(now, "lock_grace_active"))
		snprintf(grace, sizeof grace, "on (hosts yet to reclaim: %llu)",
			 (unsigned long long)flat(now, "lock_grace_pending"));
	printf("lock   locks %llu  blocked %llu  shares %llu  hosts %llu (monitored %llu)  "
	       "grace %s  granted %llu denied %llu\n",
	       (unsigned long long)flat(now, "lock_locks"),
	       (unsigned long long)flat(now, "lock_waiters"),
	       (unsigned long long)flat(now, "lock_shares"),
	       (unsigned long long)flat(now, "lock_hosts"),
	       (unsigned long long)flat(now, "lock_monitored_hosts"), grace,
	       (unsigned long long)D("lock_granted_total"),
	       (unsigned long long)D("lock_denied_total"));
#undef D
}

/* What happened between prev (NULL: since start) and now, over secs seconds (0: no rate). */
static void print_report(const struct snapshot *now, const struct snapshot *prev, double secs)
{
	char b1[24], b2[24], b3[24], b4[24];
	printf("%-6s %-12s %10s %9s %8s %9s %9s %9s\n", "prog", "procedure", "calls",
	       secs > 0 ? "calls/s" : "", "errors", "p50 us", "p90 us", "p99 us");
	for (int i = 0; i < now->nprocs; i++) {
		const struct proc_row *r = &now->procs[i], *p = prev ? &prev->procs[i] : NULL;
		uint64_t calls = r->calls - (p ? p->calls : 0);
		if (calls == 0)
			continue;
		uint64_t cum[BUCKETS];
		for (int b = 0; b < BUCKETS; b++)
			cum[b] = r->bucket[b] - (p ? p->bucket[b] : 0);
		char rate[24] = "";
		if (secs > 0)
			rate_str(calls, secs, rate, sizeof rate);
		printf("%-6s %-12s %10llu %9s %8llu %9s %9s %9s\n", r->prog, r->name,
		       (unsigned long long)calls, rate,
		       (unsigned long long)(r->errors - (p ? p->errors : 0)),
		       percentile(cum, cum[BUCKETS - 1], 0.50, b1, sizeof b1),
		       percentile(cum, cum[BUCKETS - 1], 0.90, b2, sizeof b2),
		       percentile(cum, cum[BUCKETS - 1], 0.99, b3, sizeof b3));
	}
#define D(name) (flat(now, name) - (prev ? flat(prev, name) : 0))
	printf("cache  held %s (dirty %s, clean %s, in flight %s)  READ hits %llu misses %llu\n",
	       human(flat(now, "cache_bytes"), b1, sizeof b1),
	       human(flat(now, "cache_dirty_bytes"), b2, sizeof b2),
	       human(flat(now, "cache_clean_bytes"), b3, sizeof b3),
	       human(flat(now, "cache_inflight_bytes"), b4, sizeof b4),
	       (unsigned long long)D("cache_read_hits_total"),
	       (unsigned long long)D("cache_read_misses_total"));
	printf("       write-behind %llu writes, %s (>= 1M: %llu); blocks completed %llu, "
	       "by a device read %llu; waits at the bound %llu; writers held ahead %llu; "
	       "syncs behind %llu\n",
	       (unsigned long long)D("cache_writeback_size_bytes_count"),
	       human(D("cache_writeback_size_bytes_sum"), b1, sizeof b1),
	       (unsigned long long)(D("cache_writeback_size_bytes_count") -
				    D("cache_writeback_below_1m")),
	       (unsigned long long)D("cache_blocks_completed_total"),
	       (unsigned long long)D("cache_fill_reads_total"),
	       (unsigned long long)D("cache_backpressure_waits_total"),
	       (unsigned long long)D("cache_spread_holds_total"),
	       (unsigned long long)D("cache_syncs_behind_total"));
	printf("server connections %llu  bytes written %s read %s  retransmissions answered %llu, "
	       "dropped %llu\n", (unsigned long long)flat(now, "connections"),
	       human(D("bytes_written_total"), b1, sizeof b1),
	       human(D("bytes_read_total"), b2, sizeof b2),
	       (unsigned long long)D("drc_hits_total"),
	       (unsigned long long)D("drc_inprogress_drops_total"));
	if (has_flat(now, "gss_contexts"))
		printf("gss    contexts %llu (made %llu, refused %llu)  calls krb5 %llu krb5i %llu "
		       "krb5p %llu  unknown context %llu, bad header %llu, bad body %llu, "
		       "replays dropped %llu\n", (unsigned long long)flat(now, "gss_contexts"),
		       (unsigned long long)D("gss_contexts_made_total"),
		       (unsigned long long)D("gss_contexts_refused_total"),
		       (unsigned long long)D("gss_calls_krb5_total"),
		       (unsigned long long)D("gss_calls_krb5i_total"),
		       (unsigned long long)D("gss_calls_krb5p_total"),
		       (unsigned long long)D("gss_unknown_contexts_total"),
		       (unsigned long long)D("gss_bad_headers_total"),
		       (unsigned long long)D("gss_bad_bodies_total"),
		       (unsigned long long)D("gss_sequence_drops_total"));
#undef D
	print_lock(now, prev);
}

/* ---- clients ---- */

struct client {
	char addr[64];
	uint32_t mounts, conns, locks, waiting;
	uint64_t idle_ms;             /* UINT64_MAX: no call remembered */
	int family;                   /* for the order: IPv4, then IPv6, then anything else */
	uint8_t key[16];
};

static int client_cmp(const void *a, const void *b)
{
	const struct client *x = a, *y = b;
	if (x->family != y->family)
		return x->family < y->family ? -1 : 1;
	int c = x->family ? memcmp(x->key, y->key, 16) : 0;
	return c ? c : strcmp(x->addr, y->addr);
}

/* One row of the CLIENTS result (src/ops/clients.h). */
static bool read_client(struct statrpc_cur *c, struct client *cl)
{
	uint32_t len;
	const uint8_t *a;
	if (!statrpc_u32(c, &len) || len >= sizeof cl->addr || !statrpc_opaque(c, len, &a) ||
	    !statrpc_u32(c, &cl->mounts) || !statrpc_u32(c, &cl->conns) ||
	    !statrpc_u32(c, &cl->locks) || !statrpc_u32(c, &cl->waiting) ||
	    !statrpc_u64(c, &cl->idle_ms))
		return false;
	memcpy(cl->addr, a, len);
	cl->addr[len] = '\0';
	memset(cl->key, 0, sizeof cl->key);
	cl->family = inet_pton(AF_INET, cl->addr, cl->key) == 1 ? 1
		   : inet_pton(AF_INET6, cl->addr, cl->key) == 1 ? 2 : 3;
	return true;
}

static const char *ago(uint64_t ms, char *buf, size_t n)
{
	if (ms == UINT64_MAX)
		return "-";
	if (ms < 10000)
		snprintf(buf, n, "%.1fs ago", (double)ms / 1000);
	else if (ms < 120000)
		snprintf(buf, n, "%llus ago", (unsigned long long)(ms / 1000));
	else if (ms < 7200000)
		snprintf(buf, n, "%llum ago", (unsigned long long)(ms / 60000));
	else
		snprintf(buf, n, "%lluh ago", (unsigned long long)(ms / 3600000));
	return buf;
}

static void print_clients(struct client *cl, uint32_t n, uint64_t seen_dropped,
			  uint64_t not_listed)
{
	char b[32];
	qsort(cl, n, sizeof *cl, client_cmp);
	printf("%-39s %6s %6s %6s %7s  %s\n", "address", "mounts", "conns", "locks", "blocked",
	       "last seen");
	for (uint32_t i = 0; i < n; i++)
		printf("%-39s %6u %6u %6u %7u  %s\n", cl[i].addr, cl[i].mounts, cl[i].conns,
		       cl[i].locks, cl[i].waiting, ago(cl[i].idle_ms, b, sizeof b));
	printf("%u client%s", n, n == 1 ? "" : "s");
	if (not_listed)
		printf(", and more not listed (%llu entries past the server's bound)",
		       (unsigned long long)not_listed);
	if (seen_dropped)
		printf("; %llu addresses' last calls forgotten for room",
		       (unsigned long long)seen_dropped);
	putchar('\n');
}

/* The CLIENTS result: seen_dropped, not_listed, then the rows. 0 or an exit status. */
static int parse_clients(struct statrpc_cur *c)
{
	uint64_t seen_dropped, not_listed;
	uint32_t n;
	if (!statrpc_u64(c, &seen_dropped) || !statrpc_u64(c, &not_listed) ||
	    !statrpc_u32(c, &n) || n > (uint32_t)((c->end - c->p) / 28))
		goto garbled;
	struct client *cl = calloc(n ? n : 1, sizeof *cl);
	if (!cl)
		return STATRPC_EXIT_PROTO;
	for (uint32_t i = 0; i < n; i++)
		if (!read_client(c, &cl[i])) {
			free(cl);
			goto garbled;
		}
	/* The caller itself is connected: none at all means the server would not say. */
	if (n == 0)
		fprintf(stderr, "nfsd-uc-stat: no clients listed (the server answers loopback "
			"clients only)\n");
	print_clients(cl, n, seen_dropped, not_listed);
	free(cl);
	return 0;
garbled:
	fprintf(stderr, "nfsd-uc-stat: garbled CLIENTS result\n");
	return STATRPC_EXIT_PROTO;
}

static int clients(const char *host, const char *port)
{
	int fd = statrpc_connect(host, port);
	if (fd < 0)
		return STATRPC_EXIT_PROTO;
	uint8_t *reply;
	struct statrpc_cur c;
	int rc = statrpc_call(fd, PROC_CLIENTS, &reply, &c);
	close(fd);
	if (rc)
		return rc;
	rc = parse_clients(&c);
	free(reply);
	return rc;
}

/* ---- the command line ---- */

static int usage(FILE *f, int rc)
{
	fputs("usage: nfsd-uc-stat [-s HOST] [-p PORT] [INTERVAL [COUNT]]\n"
	      "       nfsd-uc-stat [-s HOST] [-p PORT] --prometheus\n"
	      "       nfsd-uc-stat [-s HOST] [-p PORT] clients\n"
	      "  nfsd-uc's per-procedure calls, errors and latency, its cache and lock figures;\n"
	      "  with INTERVAL (seconds), every INTERVAL seconds what happened since the last\n"
	      "  report, COUNT times.\n"
	      "  clients  one line per client address: mounts, connections, locks, last call\n"
	      "  -s HOST  the server (default 127.0.0.1: it answers loopback clients only)\n"
	      "  -p PORT  its NFS port (default 2049)\n"
	      "  --prometheus  print the Prometheus text as the server gives it\n"
	      "  -h, --help    this text\n", f);
	return rc;
}

struct cmdline {
	const char *host, *port;
	bool raw, clients;
	double interval;              /* 0: one report */
	long count;                   /* -1: until interrupted */
};

/* A whole number of seconds or a decimal, >= 0: "x" or "2s" is a mistake, not 0. */
static bool parse_interval(const char *s, double *out)
{
	char *end;
	errno = 0;
	*out = strtod(s, &end);
	return end != s && *end == '\0' && errno == 0 && *out >= 0 && *out < 1e6;
}

static bool parse_count(const char *s, long *out)
{
	char *end;
	errno = 0;
	*out = strtol(s, &end, 10);
	return end != s && *end == '\0' && errno == 0 && *out >= 1;
}

static bool bad(const char *what, const char *word)
{
	fprintf(stderr, "nfsd-uc-stat: %s: %s\n", word, what);
	return false;
}

/* The positional words: "clients", or INTERVAL [COUNT]; false (said) when they are not. */
static bool parse_words(struct cmdline *cl, char **w, int n)
{
	if (n >= 1 && strcmp(w[0], "clients") == 0) {
		cl->clients = true;
		if (n > 1)
			return bad("clients takes no argument", w[1]);
		return !cl->raw || bad("not with --prometheus", w[0]);
	}
	if (n >= 1 && !parse_interval(w[0], &cl->interval))
		return bad("neither a command (clients) nor an INTERVAL in seconds", w[0]);
	if (n >= 2 && !parse_count(w[1], &cl->count))
		return bad("not a COUNT (a whole number, 1 or more)", w[1]);
	if (n > 2)
		return bad("one word too many", w[2]);
	return !(cl->raw && n > 0) || bad("no INTERVAL with --prometheus", w[0]);
}

/* Options anywhere on the line. -1: go on; else the exit status. */
static int parse_cmdline(int argc, char **argv, struct cmdline *cl)
{
	char *words[3];
	int nwords = 0;
	*cl = (struct cmdline){.host = "127.0.0.1", .port = "2049", .count = -1};
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (a[0] != '-' || a[1] == '\0') {
			if (nwords == 3)
				return usage(stderr, EXIT_USAGE);
			words[nwords++] = argv[i];
		} else if (strcmp(a, "-s") == 0 && i + 1 < argc) {
			cl->host = argv[++i];
		} else if (strcmp(a, "-p") == 0 && i + 1 < argc) {
			cl->port = argv[++i];
		} else if (strcmp(a, "--prometheus") == 0) {
			cl->raw = true;
		} else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			return usage(stdout, 0);
		} else {
			fprintf(stderr, "nfsd-uc-stat: unknown option %s\n", a);
			return usage(stderr, EXIT_USAGE);
		}
	}
	if (!parse_words(cl, words, nwords))
		return usage(stderr, EXIT_USAGE);
	return -1;
}

int main(int argc, char **argv)
{
	struct cmdline cl;
	int rc = parse_cmdline(argc, argv, &cl);
	if (rc >= 0)
		return rc;
	if (cl.clients)
		return clients(cl.host, cl.port);
	static struct snapshot a, b;
	struct snapshot *now = &a, *prev = &b;
	rc = fetch(cl.host, cl.port, cl.raw, now);
	if (rc || cl.raw)
		return rc;
	printf("nfsd-uc %s:%s, since it started\n", cl.host, cl.port);
	print_report(now, NULL, 0);
	fflush(stdout);      /* a reader of a pipe sees the first report before the next */
	for (long n = 1; cl.interval > 0 && (cl.count < 0 || n < cl.count); n++) {
		struct snapshot *t = prev;
		prev = now;
		now = t;
		struct timespec ts = {(time_t)cl.interval,
				      (long)((cl.interval - (double)(time_t)cl.interval) * 1e9)};
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
		if ((rc = fetch(cl.host, cl.port, false, now)))
			return rc;
		printf("\nlast %g s\n", cl.interval);
		print_report(now, prev, cl.interval);
		fflush(stdout);
	}
	return 0;
}
