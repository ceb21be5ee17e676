/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Write-behind writes a cached WRITE's bytes long after its reply, and a plain write then moves
 * the file's mtime and ctime to that later moment: clients, which saw the times of their own
 * WRITE, would take the file for changed by someone else and drop what they cache of it. The
 * WRITE itself sets the times (write.c); the cache's writes go through this descriptor, which
 * changes neither. Only XFS offers one (its open-by-handle ioctl sets FMODE_NOCMTIME); elsewhere
 * write-behind moves the times as before. */
#include "fs/nocmtime.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xfs/xfs.h>

int nocmtime_open(int fd, int dirfd, bool direct)
{
	xfs_handle_t h;
	__u32 hlen = sizeof h;
	struct xfs_fsop_handlereq req = {.fd = (__u32)fd, .ohandle = &h, .ohandlen = &hlen};
	if (ioctl(fd, XFS_IOC_FD_TO_HANDLE, &req) < 0)
		return -errno;
	/* O_LARGEFILE is added by the kernel on 64-bit: glibc's is 0 there. */
	req = (struct xfs_fsop_handlereq){.oflags = O_RDWR | (direct ? O_DIRECT : 0), .ihandle = &h, .ihandlen = hlen};
	int nfd = ioctl(dirfd, XFS_IOC_OPEN_BY_HANDLE, &req);
	if (nfd < 0)
		return -errno;
	/* A handle names an inode of the file system it is opened under, whichever it came from:
	 * make sure this is the file (dirfd on another mount would give another one). */
	struct stat a, b;
	int err = fstat(fd, &a) < 0 || fstat(nfd, &b) < 0 ? errno : 0;
	if (!err && (a.st_dev != b.st_dev || a.st_ino != b.st_ino))
		err = EXDEV;
	if (!err && fcntl(nfd, F_SETFD, FD_CLOEXEC) < 0)
		err = errno;
	if (err) {
		close(nfd);
		return -err;
	}
	return nfd;
}
