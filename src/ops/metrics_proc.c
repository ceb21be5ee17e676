/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nfsd_uc_build_info, and the process_* families as Prometheus's client libraries define them
 * (the Go and Python clients' process collector), read from /proc/self at each scrape: nothing
 * is kept between scrapes, so two scrapers at once share nothing. A figure /proc does not give
 * is left out (its family keeps its HELP and TYPE). */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "ops/metrics_int.h"

/* /proc/self/stat's fields that matter here (proc(5): utime 14, stime 15, starttime 22,
 * vsize 23, rss 24), in clock ticks, bytes and pages. */
struct self_stat {
	unsigned long long utime, stime, starttime, vsize;
	long long rss;
};

static bool read_self_stat(struct self_stat *s)
{
	char buf[1024];
	FILE *f = fopen("/proc/self/stat", "re");
	if (!f)
		return false;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* The command name (field 2) may hold spaces and parentheses: fields resume after the
	 * last ')'. This is field 3 onwards. */
	const char *p = strrchr(buf, ')');
	return p && sscanf(p + 1, " %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu %llu %*s %*s "
			   "%*s %*s %*s %*s %llu %llu %lld", &s->utime, &s->stime, &s->starttime,
			   &s->vsize, &s->rss) == 5;
}

/* The boot time, seconds since the epoch (/proc/stat's btime); 0 when unknown. */
static unsigned long long boot_time(void)
{
	FILE *f = fopen("/proc/stat", "re");
	char *line = NULL;
	size_t cap = 0;
	unsigned long long t = 0;
	if (!f)
		return 0;
	while (getline(&line, &cap, f) > 0)
		if (sscanf(line, "btime %llu", &t) == 1)
			break;
	free(line);
	fclose(f);
	return t;
}

/* Descriptors open now; -1 when unknown. As the client libraries, the directory's own counts. */
static long open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	long n = 0;
	if (!d)
		return -1;
	for (struct dirent *de; (de = readdir(d));)
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

static void render_build_info(FILE *f)
{
	met_family(f, "nfsd_uc_build_info", "gauge",
		   "Always 1; its label version is the running nfsd-uc's version.");
	fputs("nfsd_uc_build_info{version=\"", f);
	met_label_value(f, NFSD_UC_VERSION);
	fputs("\"} 1\n", f);
}

static void render_stat(FILE *f)
{
	struct self_stat s;
	bool ok = read_self_stat(&s);
	double tick = (double)sysconf(_SC_CLK_TCK);
	unsigned long long btime = boot_time();
	met_family(f, "process_cpu_seconds_total", "counter",
		   "Total user and system CPU time spent in seconds.");
	if (ok)
		fprintf(f, "process_cpu_seconds_total %.2f\n", (double)(s.utime + s.stime) / tick);
	met_family(f, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.");
	if (ok)
		fprintf(f, "process_virtual_memory_bytes %llu\n", s.vsize);
	met_family(f, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.");
	if (ok)
		fprintf(f, "process_resident_memory_bytes %lld\n", s.rss * sysconf(_SC_PAGESIZE));
	met_family(f, "process_start_time_seconds", "gauge",
		   "Start time of the process since unix epoch in seconds.");
	if (ok && btime)
		fprintf(f, "process_start_time_seconds %.2f\n",
			(double)btime + (double)s.starttime / tick);
}

void metrics_render_process(FILE *f)
{
	render_build_info(f);
	render_stat(f);
	long fds = open_fds();
	struct rlimit rl;
	met_family(f, "process_open_fds", "gauge", "Number of open file descriptors.");
	if (fds >= 0)
		fprintf(f, "process_open_fds %ld\n", fds);
	met_family(f, "process_max_fds", "gauge", "Maximum number of open file descriptors.");
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
		fprintf(f, "process_max_fds %llu\n", (unsigned long long)rl.rlim_cur);
}
