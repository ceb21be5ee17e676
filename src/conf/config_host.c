/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A loaded configuration held against the host it is to run on: what the parser cannot know
 * from the file alone, and what would otherwise fail only at start (or, for the cache, at the
 * first large load, by the OOM killer; for the keytab, at a client's first krb5 mount). Run by
 * --check, and in part at start (config.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <libgen.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf/config.h"
#include "rpc/oncrpc.h"

struct report {
	const char *file;
	char *err;
	size_t errlen;
	int n;
};

__attribute__((format(printf, 3, 4)))
static void problem(struct report *r, unsigned line, const char *fmt, ...)
{
	r->n++;
	if (!r->errlen)
		return;
	size_t used = strlen(r->err);
	if (used && used + 1 < r->errlen)
		r->err[used++] = '\n';
	char *o = r->err + used;
	size_t room = r->errlen - used;
	int n = line ? snprintf(o, room, "%s:%u: ", r->file, line) : snprintf(o, room, "%s: ", r->file);
	if (n < 0 || (size_t)n >= room)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(o + n, room - (size_t)n, fmt, ap);
	va_end(ap);
}

/* The daemon makes state_dir itself (one level, mode 0700), not the directories above it. */
static void check_state_dir(struct report *r, const struct config *c)
{
	struct stat st;
	if (stat(c->state_dir, &st) == 0) {
		if (!S_ISDIR(st.st_mode))
			problem(r, c->line.state_dir, "state_dir %s is not a directory", c->state_dir);
		return;
	}
	if (errno != ENOENT) {
		problem(r, c->line.state_dir, "state_dir %s: %s", c->state_dir, strerror(errno));
		return;
	}
	char *copy = strdup(c->state_dir);
	if (!copy)
		return;
	const char *parent = dirname(copy);
	if (stat(parent, &st) < 0 || !S_ISDIR(st.st_mode))
		problem(r, c->line.state_dir, "state_dir %s cannot be made: its parent %s %s",
			c->state_dir, parent, errno == ENOENT ? "does not exist" : "is not a directory");
	free(copy);
}

/* Binding port 0 asks the kernel only whether the address is this host's. */
static int address_here(const char *a)
{
	struct sockaddr_storage ss = {0};
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
	socklen_t len;
	if (inet_pton(AF_INET, a, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		len = sizeof *s4;
	} else if (inet_pton(AF_INET6, a, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		len = sizeof *s6;
	} else {
		return -EINVAL;
	}
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	int rc = bind(fd, (struct sockaddr *)&ss, len) < 0 ? -errno : 0;
	close(fd);
	return rc;
}

static void check_listen(struct report *r, const struct config *c)
{
	for (size_t i = 0; i < c->nlisten; i++) {
		int rc = address_here(c->listen_addr[i]);
		if (rc == -EADDRNOTAVAIL)
			problem(r, c->line.listen, "listen: %s is not an address of this host",
				c->listen_addr[i]);
		else if (rc == -EAFNOSUPPORT)
			problem(r, c->line.listen, "listen: %s: this host has no IPv6",
				c->listen_addr[i]);
	}
}

/* The cache and the memory for records in flight are what the daemon holds at full load. */
static void check_memory_fits(struct report *r, const struct config *c)
{
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	if (pages <= 0 || page <= 0)
		return;
	unsigned long long host = (unsigned long long)pages * (unsigned long long)page;
	unsigned long long want = (unsigned long long)c->cache_size + c->receive_memory;
	if (want > host)
		problem(r, c->line.cache_size, "[cache] size (%llu MiB) and [server] receive_memory "
			"(%llu MiB) together are more than this host's memory (%llu MiB)",
			(unsigned long long)c->cache_size >> 20,
			(unsigned long long)c->receive_memory >> 20, host >> 20);
}

/* Without the keytab no RPCSEC_GSS context can be made, so a krb5 mount fails at the client
 * with little to say why; with no rule that allows krb5, a missing keytab is what every host
 * without Kerberos has. Existence only: --check may run as a user who cannot read it. */
static void check_keytab(struct report *r, const struct config *c)
{
	const struct export_cfg *e = NULL;
	uint32_t flavor = config_first_krb5(c, &e);
	if (!flavor)
		return;
	struct stat st;
	if (stat(c->keytab, &st) < 0)
		problem(r, c->line.keytab, "keytab %s: %s (export %s allows sec=%s)", c->keytab,
			strerror(errno), e->path, config_flavor_name(flavor));
	else if (!S_ISREG(st.st_mode))
		problem(r, c->line.keytab, "keytab %s is not a regular file (export %s allows sec=%s)",
			c->keytab, e->path, config_flavor_name(flavor));
}

int config_check_host(const struct config *cfg, const char *file, unsigned checks, char *err,
		      size_t errlen)
{
	struct report r = {.file = file, .err = err, .errlen = errlen};
	if (checks & CFG_CHECK_STATE_DIR)
		check_state_dir(&r, cfg);
	if (checks & CFG_CHECK_LISTEN)
		check_listen(&r, cfg);
	if (checks & CFG_CHECK_MEMORY)
		check_memory_fits(&r, cfg);
	if (checks & CFG_CHECK_KEYTAB)
		check_keytab(&r, cfg);
	return r.n;
}
