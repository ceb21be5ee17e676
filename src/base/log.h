/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Logging to stderr, one line per event, with a level filter set once at start-up. */
#ifndef NFSD_UC_LOG_H
#define NFSD_UC_LOG_H

#include <syslog.h>   /* LOG_ERR, LOG_WARNING, LOG_NOTICE, LOG_INFO, LOG_DEBUG */

/* Once, first: is stderr the journal (then each line starts with sd-daemon's <priority>)? */
void log_init(void);
void log_set_level(int level);
int log_get_level(void);
void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A message for the person who ran a command (nfsd-uc --check, a start that cannot read its
 * file): no timestamp, each line of text as its own line, but under the journal each with the
 * level's <priority>, so `journalctl -p warning` shows a configuration error. Not filtered by
 * the log level. */
void log_report(int level, const char *text);

/* At most one line a second for one kind of event; the next line says how many were held back. */
struct log_ratelimit {
	_Atomic long long last_sec;
	_Atomic unsigned suppressed;
};
void log_ratelimited(struct log_ratelimit *rl, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A string a client sent, as a log line may show it: in double quotes, at most LOG_QUOTE_MAX of
 * its bytes (then "..." after the closing quote), every byte but printable ASCII written \xHH
 * and '"' and '\\' escaped. A client's bytes then never end a line, forge one, begin one with
 * the journal's "<N>" priority, or fill the 1 KiB line. NULL shows as (none). Returns out. */
#define LOG_QUOTE_MAX 128
#define LOG_QUOTE_SIZE (4 * LOG_QUOTE_MAX + 6)
const char *log_quote(char out[LOG_QUOTE_SIZE], const char *s);

#define log_err(...)   log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...)  log_msg(LOG_WARNING, __VA_ARGS__)
#define log_info(...)  log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) do { if (log_get_level() >= LOG_DEBUG) log_msg(LOG_DEBUG, __VA_ARGS__); } while (0)

#endif
