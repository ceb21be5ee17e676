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

/* At most one line a second for one kind of event; the next line says how many were held back. */
struct log_ratelimit {
	_Atomic long long last_sec;
	_Atomic unsigned suppressed;
};
void log_ratelimited(struct log_ratelimit *rl, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define log_err(...)   log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...)  log_msg(LOG_WARNING, __VA_ARGS__)
#define log_info(...)  log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) do { if (log_get_level() >= LOG_DEBUG) log_msg(LOG_DEBUG, __VA_ARGS__); } while (0)

#endif
