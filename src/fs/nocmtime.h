/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef NFSDUC_NOCMTIME_H
#define NFSDUC_NOCMTIME_H

#include <stdbool.h>

/* A second O_RDWR descriptor (O_DIRECT if direct) of the regular file open as fd, whose writes
 * leave its mtime and ctime alone (XFS's open by handle: "invisible I/O", meant for backup and
 * HSM tools). dirfd: a directory of the same file system (XFS opens handles only under one).
 * Needs CAP_SYS_ADMIN. The descriptor (close-on-exec), or -errno: -ENOTTY on other file
 * systems. */
int nocmtime_open(int fd, int dirfd, bool direct);

#endif
