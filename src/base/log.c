/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "base/log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* Atomic so that a reload or a test may change it while workers log. */
static atomic_int log_level = LOG_INFO;
/* stderr is the journal's stream: lines carry sd-daemon's <N> priority, and no timestamp. */
static atomic_bool to_journal;

void log_init(void)
{
	/* systemd sets JOURNAL_STREAM=DEV:INO to the stream it connected stderr to; a stderr
	 * redirected elsewhere since (a shell in between) keeps the plain format. */
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat sb;
	if (js && sscanf(js, "%llu:%llu", &dev, &ino) == 2 && fstat(2, &sb) == 0 &&
	    (unsigned long long)sb.st_dev == dev && (unsigned long long)sb.st_ino == ino)
		atomic_store(&to_journal, true);
}

void log_set_level(int level) { atomic_store(&log_level, level); }
int log_get_level(void) { return atomic_load(&log_level); }

static void log_line(int level, const char *prefix, const char *fmt, va_list ap);

const char *log_quote(char out[LOG_QUOTE_SIZE], const char *s)
{
	static const char hex[] = "0123456789abcdef";
	if (!s) {
		strcpy(out, "(none)");
		return out;
	}
	char *o = out;
	*o++ = '"';
	size_t i = 0;
	for (; s[i] && i < LOG_QUOTE_MAX; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\') {
			*o++ = '\\';
			*o++ = (char)c;
		} else if (c >= 0x20 && c < 0x7f) {
			*o++ = (char)c;
		} else {
			*o++ = '\\';
			*o++ = 'x';
			*o++ = hex[c >> 4];
			*o++ = hex[c & 15];
		}
	}
	*o++ = '"';
	if (s[i])
		o = stpcpy(o, "...");
	*o = '\0';
	return out;
}

void log_msg(int level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log_line(level, "", fmt, ap);
	va_end(ap);
}

void log_report(int level, const char *text)
{
	bool journal = atomic_load(&to_journal);
	while (*text) {
		size_t n = strcspn(text, "\n");
		if (journal)
			fprintf(stderr, "<%d>%.*s\n", level & 7, (int)n, text);
		else
			fprintf(stderr, "%.*s\n", (int)n, text);
		text += n + (text[n] == '\n');
	}
}

void log_ratelimited(struct log_ratelimit *rl, int level, const char *fmt, ...)
{
	if (level > log_get_level())
		return;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	long long last = atomic_load(&rl->last_sec);
	if (last == ts.tv_sec || !atomic_compare_exchange_strong(&rl->last_sec, &last, ts.tv_sec)) {
		atomic_fetch_add(&rl->suppressed, 1);
		return;
	}
	char prefix[64] = "";
	unsigned n = atomic_exchange(&rl->suppressed, 0);
	if (n)
		snprintf(prefix, sizeof prefix, "(%u similar lines held back) ", n);
	va_list ap;
	va_start(ap, fmt);
	log_line(level, prefix, fmt, ap);
	va_end(ap);
}

static void log_line(int level, const char *prefix, const char *fmt, va_list ap)
{
	static const char *const names[] = {"emerg", "alert", "crit", "error", "warning",
					    "notice", "info", "debug"};
	if (level > log_get_level())
		return;
	char line[1024];
	if (atomic_load(&to_journal)) {
		int n = snprintf(line, sizeof line, "<%d>%s", level & 7, prefix);
		vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
		fprintf(stderr, "%s\n", line);
		return;
	}
	struct timespec ts;
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	int n = (int)strftime(line, sizeof line, "%Y-%m-%dT%H:%M:%S", &tm);
	n += snprintf(line + n, sizeof line - (size_t)n, ".%03ldZ nfsd-uc %s: %s", ts.tv_nsec / 1000000,
		      names[level & 7], prefix);
	vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
	/* One fputs per line: stdio locks the stream, so lines from workers never interleave. */
	fprintf(stderr, "%s\n", line);
}
