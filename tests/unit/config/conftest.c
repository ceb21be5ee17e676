/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "conftest.h"

#include <stdarg.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <ftw.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int scratch_new(struct scratch *s)
{
	const char *tmp = getenv("TMPDIR");
	char templ[PATH_MAX];
	snprintf(templ, sizeof templ, "%s/nfsduc-conf-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(templ) || !realpath(templ, s->dir))
		return -1;
	snprintf(s->conf, sizeof s->conf, "%s/nfsd-uc.conf", s->dir);
	char sub[PATH_MAX + 16];
	snprintf(sub, sizeof sub, "%s/data", s->dir);
	if (mkdir(sub, 0755) < 0)
		return -1;
	snprintf(sub, sizeof sub, "%s/data2", s->dir);
	if (mkdir(sub, 0755) < 0)
		return -1;
	snprintf(sub, sizeof sub, "%s/data3", s->dir);
	if (mkdir(sub, 0755) < 0)
		return -1;
	return scratch_write(s, "file", "not a directory\n");
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

void scratch_delete(struct scratch *s)
{
	if (s->dir[0])
		nftw(s->dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

int scratch_write(const struct scratch *s, const char *rel, const char *text)
{
	char path[PATH_MAX + 64];
	snprintf(path, sizeof path, "%s/%s", s->dir, rel);
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	int rc = fputs(text, f) < 0 ? -1 : 0;
	return fclose(f) < 0 ? -1 : rc;
}

int scratch_load(const struct scratch *s, const char *text, struct config *cfg, char *err,
		 size_t errlen)
{
	if (scratch_write(s, "nfsd-uc.conf", text) < 0)
		return -2;
	return config_load(s->conf, cfg, err, errlen);
}

size_t heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();
	return mi.uordblks + mi.hblkhd;
}

void heap_gauge_init(char **argv)
{
	static const char off[] = "glibc.malloc.tcache_count=0";
	const char *cur = getenv("GLIBC_TUNABLES");
	if (cur && strstr(cur, off))
		return;
	char val[1024];
	snprintf(val, sizeof val, "%s%s%s", cur ? cur : "", cur ? ":" : "", off);
	setenv("GLIBC_TUNABLES", val, 1);
	execv("/proc/self/exe", argv);
	/* Not fatal: the heap comparisons will say so if the cache blurs them. */
}

/* ---- loads checked (the config tests) ---- */

/* TEMPLATE with every "{D}" replaced by the scratch directory. */
void expand(const struct scratch *s, const char *templ, char *out, size_t len)
{
	size_t n = 0;
	while (*templ && n + 1 < len) {
		if (strncmp(templ, "{D}", 3) == 0) {
			n += (size_t)snprintf(out + n, len - n, "%s", s->dir);
			templ += 3;
		} else {
			out[n++] = *templ++;
		}
	}
	out[n < len ? n : len - 1] = '\0';
}

struct config load_ok(const struct scratch *s, const char *text)
{
	struct config cfg;
	char err[512] = "";
	int rc = scratch_load(s, text, &cfg, err, sizeof err);
	if (rc != 0)
		print_error("unexpected error: %s\n", err);
	assert_int_equal(rc, 0);
	return cfg;
}

/* TEXT must fail with exactly "CONF:" WANT ({D} = scratch dir), leave *cfg empty, and give
 * back every byte it took. The first load warms up libc (stdio, locale) so the second can be
 * measured exactly. */
void expect_error(const struct scratch *s, const char *text, const char *want)
{
	char err[8192], tail[2048], full[sizeof s->conf + sizeof tail + 1];
	struct config cfg;
	expand(s, want, tail, sizeof tail);
	snprintf(full, sizeof full, "%s:%s", s->conf, tail);

	assert_int_equal(scratch_load(s, text, &cfg, err, sizeof err), -1);
	size_t before = heap_in_use();
	memset(&cfg, 0xa5, sizeof cfg);
	assert_int_equal(config_load(s->conf, &cfg, err, sizeof err), -1);
	assert_int_equal(heap_in_use(), before);

	if (strcmp(err, full) != 0)
		print_error("conf:\n%s\n", text);
	assert_string_equal(err, full);
	assert_null(cfg.listen);
	assert_null(cfg.state_dir);
	assert_null(cfg.exports);
	assert_int_equal(cfg.nexports, 0);
	config_free(&cfg);   /* harmless on a failed load */
}

char *dump_of(const struct config *cfg)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	assert_non_null(f);
	config_dump(cfg, f);
	assert_int_equal(fclose(f), 0);
	return text;
}
