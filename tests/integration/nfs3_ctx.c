/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the NFSv3 procedure tests (test_nfs3.c, test_nfs3_dirs.c: the it-nfs3 program) share: a
 * directory of its own under the rw export for each test, with a client and the directory's
 * handle, and reads and writes of its files on disk behind the daemon's back. */
#include "nfs3_ctx.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

void ctx_open(void **state, const char *name, struct ctx *x)
{
	x->t = *state;
	x->c = it_client(x->t, EXP_RW, 0, 0, &x->root);
	it_workdir(x->c, &x->root, name, &x->dir);
	it_path(x->t, EXP_RW, name, x->path, sizeof(x->path));
}

/* On-disk path of name inside the test's directory. */
const char *disk(const struct ctx *x, const char *name)
{
	static char p[PATH_MAX + 256];
	snprintf(p, sizeof(p), "%s/%s", x->path, name);
	return p;
}

void put_file(const struct ctx *x, const char *name, const void *data, size_t len)
{
	int fd = open(disk(x, name), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
}

void disk_expect(const struct ctx *x, const char *name, off_t off, const void *want,
                        size_t len)
{
	static uint8_t buf[16384];
	int fd = open(disk(x, name), O_RDONLY);

	assert_true(fd >= 0);
	assert_true(len <= sizeof(buf));
	assert_int_equal(pread(fd, buf, len, off), (ssize_t)len);
	assert_memory_equal(buf, want, len);
	close(fd);
}
