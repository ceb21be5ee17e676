/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nfsd-uc-stat: nfsd-uc's figures as a table, as nfsstat and iostat print theirs.
 *
 *   nfsd-uc-stat [-s HOST] [-p PORT] [INTERVAL [COUNT]]
 *   nfsd-uc-stat [-s HOST] [-p PORT] --prometheus
 *
 * Per procedure: calls, errors, and latency percentiles (from the server's histogram: the upper
 * bound of the bucket that holds the percentile, so "<= N us"), then the cache's and the
 * server's figures. With INTERVAL, again every INTERVAL seconds with what happened in that
 * interval, COUNT times (default: until interrupted). The figures come from the daemon's
 * counters program (procedure METRICS, on the NFS port, loopback clients only): the same
 * Prometheus text its [metrics] HTTP endpoint serves, which --prometheus prints as it is. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "statrpc.h"

#define PROC_METRICS 2u
#define MAX_PROCS 32
#define MAX_FLAT 128
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
			  bkt[] = "nfsd_uc_request_duration_seconds_bucket{";
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
			snprintf(rate, sizeof rate, "%.0f", (double)calls / secs);
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
	       "by a device read %llu; waits at the bound %llu; writers held ahead %llu\n",
	       (unsigned long long)D("cache_wb_writes_total"),
	       human(D("cache_wb_bytes_total"), b1, sizeof b1),
	       (unsigned long long)D("cache_wb_ge_1m_total"),
	       (unsigned long long)D("cache_blocks_completed_total"),
	       (unsigned long long)D("cache_fill_reads_total"),
	       (unsigned long long)D("cache_backpressure_waits_total"),
	       (unsigned long long)D("cache_spread_holds_total"));
	printf("server connections %llu  bytes written %s read %s  retransmissions answered %llu, "
	       "dropped %llu\n", (unsigned long long)flat(now, "connections"),
	       human(D("bytes_written_total"), b1, sizeof b1),
	       human(D("bytes_read_total"), b2, sizeof b2),
	       (unsigned long long)D("drc_hits_total"),
	       (unsigned long long)D("drc_inprogress_drops_total"));
#undef D
}

static int usage(FILE *f, int rc)
{
	fputs("usage: nfsd-uc-stat [-s HOST] [-p PORT] [INTERVAL [COUNT]]\n"
	      "       nfsd-uc-stat [-s HOST] [-p PORT] --prometheus\n"
	      "  nfsd-uc's per-procedure calls, errors and latency, and its cache figures;\n"
	      "  with INTERVAL, every INTERVAL seconds what happened since the last report.\n"
	      "  -s HOST  the server (default 127.0.0.1: it answers loopback clients only)\n"
	      "  -p PORT  its NFS port (default 2049)\n"
	      "  --prometheus  print the Prometheus text as the server gives it\n", f);
	return rc;
}

int main(int argc, char **argv)
{
	const char *host = "127.0.0.1", *port = "2049";
	bool raw = false;
	int i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "-s") == 0 && i + 1 < argc)
			host = argv[++i];
		else if (strcmp(argv[i], "-p") == 0 && i + 1 < argc)
			port = argv[++i];
		else if (strcmp(argv[i], "--prometheus") == 0)
			raw = true;
		else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			return usage(stdout, 0);
		else
			return usage(stderr, EXIT_USAGE);
	}
	double interval = i < argc ? strtod(argv[i++], NULL) : 0;
	long count = i < argc ? strtol(argv[i++], NULL, 10) : -1;
	if (i < argc || interval < 0 || (raw && interval > 0))
		return usage(stderr, EXIT_USAGE);
	static struct snapshot a, b;
	struct snapshot *now = &a, *prev = &b;
	int rc = fetch(host, port, raw, now);
	if (rc || raw)
		return rc;
	printf("nfsd-uc %s:%s, since it started\n", host, port);
	print_report(now, NULL, 0);
	for (long n = 1; interval > 0 && (count < 0 || n < count); n++) {
		struct snapshot *t = prev;
		prev = now;
		now = t;
		usleep((useconds_t)(interval * 1e6));
		if ((rc = fetch(host, port, false, now)))
			return rc;
		printf("\nlast %g s\n", interval);
		print_report(now, prev, interval);
		fflush(stdout);
	}
	return 0;
}
