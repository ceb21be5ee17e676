/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The status monitor's files (nsm.h). A record is a small text file, written to a temporary
 * name, synced and renamed, then the directory synced: a crash leaves the old record or the
 * new one, never half of one. */
#include "lock/nsm.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/sockaddr.h"
#include "base/log.h"

struct nsm {
	atomic_ulong seq;               /* temporary names (sync_write) */
	int dirfd;                      /* state_dir/nsm */
	int hostsfd;                    /* state_dir/nsm/hosts */
	int32_t state;
	struct nsm_rec *recs;
	size_t nrecs;
};

/* seq makes the temporary name this writer's own: two first LOCKs of one host record it at
 * the same time, and each must rename its own file. */
static int sync_write(int dirfd, const char *name, const char *text, unsigned long seq)
{
	char tmp[NAME_MAX + 1];
	snprintf(tmp, sizeof tmp, ".%s.%lu.tmp", name, seq);
	int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	size_t len = strlen(text);
	int rc = write(fd, text, len) == (ssize_t)len && fsync(fd) == 0 ? 0 : errno ? -errno : -EIO;
	close(fd);
	if (rc == 0 && renameat(dirfd, tmp, dirfd, name) < 0)
		rc = -errno;
	if (rc == 0 && fsync(dirfd) < 0)
		rc = -errno;
	if (rc < 0)
		unlinkat(dirfd, tmp, 0);
	return rc;
}

/* A record's file name: the host's address; false for what is not an Internet address. */
static bool addr_key(const struct sockaddr_storage *ss, char key[INET6_ADDRSTRLEN])
{
	return (ss->ss_family == AF_INET || ss->ss_family == AF_INET6) && sa_str(ss, key);
}

static int read_state(struct nsm *s)
{
	char buf[32] = "";
	int fd = openat(s->dirfd, "state", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = read(fd, buf, sizeof buf - 1);
		buf[n > 0 ? n : 0] = '\0';
		close(fd);
	} else if (errno != ENOENT) {
		return -errno;
	}
	long long v = strtoll(buf, NULL, 10);
	/* Next odd number: a clean stop left it even (+1), a crash odd (+2). */
	v = v < 0 || v > INT32_MAX - 2 ? 1 : v % 2 ? v + 2 : v + 1;
	s->state = (int32_t)v;
	snprintf(buf, sizeof buf, "%d\n", s->state);
	return sync_write(s->dirfd, "state", buf, atomic_fetch_add(&s->seq, 1));
}

/* "name\nlocal\n" */
static bool read_rec(struct nsm *s, const char *file, struct nsm_rec *r)
{
	char buf[600] = "";
	int fd = openat(s->hostsfd, file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n < 0 || !sa_parse(file, 0, &r->addr))
		return false;
	buf[n] = '\0';
	char *nl = strchr(buf, '\n');
	char *local = nl ? nl + 1 : "";
	if (nl)
		*nl = '\0';
	snprintf(r->name, sizeof r->name, "%s", buf);
	char *nl2 = strchr(local, '\n');
	if (nl2)
		*nl2 = '\0';
	if (!sa_parse(local, 0, &r->local))
		r->local.ss_family = AF_UNSPEC;
	return true;
}

static void read_recs(struct nsm *s)
{
	int fd = dup(s->hostsfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		struct nsm_rec r = {0}, *grown;
		if (!read_rec(s, e->d_name, &r)) {
			log_warn("nsm: ignoring the unreadable record hosts/%s", e->d_name);
			continue;
		}
		grown = realloc(s->recs, (s->nrecs + 1) * sizeof *grown);
		if (!grown)
			break;
		s->recs = grown;
		s->recs[s->nrecs++] = r;
	}
	closedir(d);
}

static int open_dir(int at, const char *name)
{
	if (mkdirat(at, name, 0700) < 0 && errno != EEXIST)
		return -errno;
	int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

struct nsm *nsm_open(const char *state_dir)
{
	struct nsm *s = calloc(1, sizeof *s);
	if (s)
		s->dirfd = s->hostsfd = -1;
	int top = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc = top < 0 ? -errno : 0;
	if (!s || rc < 0)
		goto fail;
	s->dirfd = open_dir(top, "nsm");
	rc = s->dirfd;
	if (rc < 0)
		goto fail;
	s->hostsfd = open_dir(s->dirfd, "hosts");
	rc = s->hostsfd;
	if (rc < 0 || (rc = read_state(s)) < 0)
		goto fail;
	read_recs(s);
	close(top);
	return s;
fail:
	log_err("nsm: cannot set up %s/nsm: %s", state_dir, strerror(s ? -rc : ENOMEM));
	if (top >= 0)
		close(top);
	if (s) {
		if (s->dirfd >= 0)
			close(s->dirfd);
		if (s->hostsfd >= 0)
			close(s->hostsfd);
	}
	free(s);
	return NULL;
}

void nsm_close(struct nsm *s, bool clean)
{
	if (!s)
		return;
	if (clean) {
		char buf[32];
		snprintf(buf, sizeof buf, "%d\n", s->state + 1);
		int rc = sync_write(s->dirfd, "state", buf, atomic_fetch_add(&s->seq, 1));
		if (rc < 0)
			log_warn("nsm: cannot write the state number: %s", strerror(-rc));
	}
	close(s->hostsfd);
	close(s->dirfd);
	free(s->recs);
	free(s);
}

int32_t nsm_state(const struct nsm *s)
{
	return s->state;
}

size_t nsm_records(const struct nsm *s, const struct nsm_rec **out)
{
	*out = s->recs;
	return s->nrecs;
}

int nsm_write(struct nsm *s, const struct sockaddr_storage *addr,
	      const struct sockaddr_storage *local, const char *name)
{
	char key[INET6_ADDRSTRLEN], loc[INET6_ADDRSTRLEN] = "", text[600];
	if (!addr_key(addr, key))
		return -EAFNOSUPPORT;
	if (!addr_key(local, loc))
		loc[0] = '\0';
	/* A caller_name is the client's word: keep it to one printable line. */
	char clean[256];
	size_t n = 0;
	for (const char *p = name; *p && n < sizeof clean - 1; p++)
		clean[n++] = (*p >= 0x20 && *p < 0x7f) ? *p : '?';
	clean[n] = '\0';
	snprintf(text, sizeof text, "%s\n%s\n", clean, loc);
	return sync_write(s->hostsfd, key, text, atomic_fetch_add(&s->seq, 1));
}

void nsm_remove(struct nsm *s, const struct sockaddr_storage *addr)
{
	char key[INET6_ADDRSTRLEN];
	if (addr_key(addr, key) && unlinkat(s->hostsfd, key, 0) < 0 && errno != ENOENT)
		log_warn("nsm: cannot remove hosts/%s: %s", key, strerror(errno));
}
