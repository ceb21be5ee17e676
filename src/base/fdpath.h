/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A descriptor's /proc/self/fd link, for the calls that take a path where the daemon holds a
 * descriptor: reopening an O_PATH handle with other flags, linkat, utimensat on a file the
 * descriptor is not open for writing, readlink to see where the file now is. The link reopens the
 * file itself, whatever it is called now, and does not follow a symbolic link a client put in
 * the path since. */
#ifndef NFSD_UC_BASE_FDPATH_H
#define NFSD_UC_BASE_FDPATH_H

#include <stdio.h>

struct fd_path {
	char s[sizeof "/proc/self/fd/" + 11];   /* an int's digits and sign */
};

static inline const char *fd_path(struct fd_path *p, int fd)
{
	snprintf(p->s, sizeof p->s, "/proc/self/fd/%d", fd);
	return p->s;
}

#endif
