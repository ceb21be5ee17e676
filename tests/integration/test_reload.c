/* SPDX-License-Identifier: GPL-2.0-or-later */
/* SIGHUP reloads the conf without a restart: a new export can be mounted at once, a removed
 * export's handles answer STALE and its MNT is refused, a changed client list refuses the next
 * request of a client no longer listed, a file that does not load is logged with its FILE:LINE
 * and the old configuration keeps serving (so does an empty one, or one without an export, as an
 * editor's truncate-then-write leaves it), settings that need a restart are logged as ignored,
 * and connections and unstable data survive (a COMMIT after the reload returns the WRITE's
 * verifier, on the same connection). Client lists may name hosts and wildcard names. */
#include "client.h"
#include "rawnfs.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static uint8_t rbuf[1 << 16];
static uint32_t next_xid = 0x4e1d0000;

static char *read_all(const char *path)
{
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	char *buf = calloc(1, 1 << 16);
	assert_non_null(buf);
	size_t n = fread(buf, 1, (1 << 16) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

static void write_all(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static int count(const char *text, const char *what)
{
	int n = 0;
	for (const char *p = text; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

/* SIGHUP, and wait until the log says the reload is over (done or refused). */
static void reload(struct itest *t)
{
	char *log = read_all(t->log);
	int before = count(log, "reloaded ") + count(log, "the configuration in force stays");
	free(log);
	assert_int_equal(kill(t->pid, SIGHUP), 0);
	for (int i = 0; i < 500; i++) {
		it_sleep_ms(10);
		log = read_all(t->log);
		int now = count(log, "reloaded ") + count(log, "the configuration in force stays");
		free(log);
		if (now > before)
			return;
	}
	fail_msg("no end of reload in the log after 5 s");
}

static bool log_has(const struct itest *t, const char *what)
{
	char *log = read_all(t->log);
	bool has = strstr(log, what) != NULL;
	free(log);
	return has;
}

/* Replace the first occurrence of from in the conf by to (from must be there). */
static void conf_replace(const struct itest *t, const char *from, const char *to)
{
	char *c = read_all(t->conf), *p = strstr(c, from);
	assert_non_null(p);
	size_t n = strlen(c) + strlen(to) + 1;
	char *out = malloc(n);
	assert_non_null(out);
	snprintf(out, n, "%.*s%s%s", (int)(p - c), c, to, p + strlen(from));
	write_all(t->conf, out);
	free(out);
	free(c);
}

static int mnt_status(const struct itest *t, const char *path, struct rn_fh *fh)
{
	int fd = raw_connect(t->port, NULL);
	assert_true(fd >= 0);
	int st = rn_mnt(fd, path, fh);
	close(fd);
	return st;
}

static int getattr_status(int fd, const struct rn_fh *fh)
{
	struct xb b;
	struct raw_reply r;
	uint64_t size;
	rn_enc_getattr(&b, next_xid++, fh);
	assert_int_equal(rn_exchange(fd, &b, rbuf, sizeof rbuf, &r), 0);
	return rn_dec_getattr(&r, &size);
}

static void test_added_export_mounts(void **state)
{
	struct itest *t = *state;
	char dir[PATH_MAX + 32], sect[2 * PATH_MAX];
	struct rn_fh root, fh;
	snprintf(dir, sizeof dir, "%s/added", t->dir);
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_not_equal(mnt_status(t, dir, &root), 0);
	snprintf(sect, sizeof sect, "\n[export %s]\nclients = 127.0.0.1(rw,no_root_squash,insecure)\n",
		 dir);
	char *c = read_all(t->conf);
	size_t n = strlen(c) + strlen(sect) + 1;
	char *out = malloc(n);
	assert_non_null(out);
	snprintf(out, n, "%s%s", c, sect);
	write_all(t->conf, out);
	free(out);
	free(c);
	reload(t);
	assert_int_equal(mnt_status(t, dir, &root), 0);
	int fd = raw_connect(t->port, NULL);
	assert_int_equal(rn_create(fd, &root, "made-after-reload", &fh), 0);
	close(fd);
	char path[PATH_MAX + 64];
	snprintf(path, sizeof path, "%s/made-after-reload", dir);
	assert_int_equal(access(path, F_OK), 0);
}

/* The all_squash export goes: a handle of it answers STALE, its MNT is refused. */
static void test_removed_export_is_stale(void **state)
{
	struct itest *t = *state;
	struct rn_fh root;
	assert_int_equal(mnt_status(t, t->exports[EXP_ALLSQ], &root), 0);
	int fd = raw_connect(t->port, NULL);
	assert_int_equal(getattr_status(fd, &root), NFS3_OK);
	char sect[PATH_MAX + 64];
	snprintf(sect, sizeof sect, "[export %s]\nclients = 127.0.0.1(rw,all_squash,insecure)\n",
		 t->exports[EXP_ALLSQ]);
	conf_replace(t, sect, "");
	reload(t);
	assert_int_equal(getattr_status(fd, &root), NFS3ERR_STALE);   /* same connection */
	close(fd);
	assert_int_not_equal(mnt_status(t, t->exports[EXP_ALLSQ], &root), 0);
}

/* The ro export's clients become 127.0.0.2 alone: 127.0.0.1's next request is refused. */
static void test_client_list_applies_to_next_request(void **state)
{
	struct itest *t = *state;
	struct rn_fh root;
	assert_int_equal(mnt_status(t, t->exports[EXP_RO], &root), 0);
	int fd = raw_connect(t->port, NULL);
	assert_int_equal(getattr_status(fd, &root), NFS3_OK);
	char from[PATH_MAX + 64], to[PATH_MAX + 64];
	snprintf(from, sizeof from, "[export %s]\nclients = 127.0.0.1(ro,", t->exports[EXP_RO]);
	snprintf(to, sizeof to, "[export %s]\nclients = 127.0.0.2(ro,", t->exports[EXP_RO]);
	conf_replace(t, from, to);
	reload(t);
	assert_int_equal(getattr_status(fd, &root), NFS3ERR_ACCES);
	close(fd);
	conf_replace(t, to, from);
	reload(t);
	fd = raw_connect(t->port, NULL);
	assert_int_equal(getattr_status(fd, &root), NFS3_OK);
	close(fd);
}

static void test_bad_file_keeps_serving(void **state)
{
	struct itest *t = *state;
	char *good = read_all(t->conf);
	size_t n = strlen(good) + 64;
	char *bad = malloc(n);
	assert_non_null(bad);
	snprintf(bad, n, "%s\n[server]\nprot = 1\n", good);
	write_all(t->conf, bad);
	reload(t);
	char want[PATH_MAX + 64];
	snprintf(want, sizeof want, "%s:", t->conf);
	assert_true(log_has(t, want));
	assert_true(log_has(t, "the configuration in force stays"));
	write_all(t->conf, good);
	free(bad);
	free(good);
	struct rn_fh root;
	assert_int_equal(mnt_status(t, t->exports[EXP_RW], &root), 0);
	it_assert_served(t);
}

/* An editor truncates the file, and a reload comes before it writes it again; or a file holds
 * settings but no export: either is refused and every export goes on being served. */
static void test_file_without_exports_keeps_serving(void **state)
{
	struct itest *t = *state;
	char *good = read_all(t->conf);
	struct rn_fh root;
	static const char *const texts[] = {"", "# being written\n", "[server]\nlog_level = info\n"};
	for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
		char *log = read_all(t->log);
		int refused = count(log, "the configuration in force stays");
		free(log);
		write_all(t->conf, texts[i]);
		reload(t);
		log = read_all(t->log);
		if (count(log, "the configuration in force stays") != refused + 1)
			fail_msg("a reload of \"%s\" was not refused", texts[i]);
		free(log);
		assert_false(log_has(t, "0 export(s)"));
		assert_int_equal(mnt_status(t, t->exports[EXP_RW], &root), 0);
		assert_int_equal(mnt_status(t, t->exports[EXP_RO], &root), 0);
	}
	write_all(t->conf, good);
	free(good);
	it_assert_served(t);
}

/* A WRITE before the reload and its COMMIT after, on one connection: same verifier. A port
 * change in the file is logged as ignored, and the server stays where it is. */
static void test_unstable_data_and_connection_survive(void **state)
{
	struct itest *t = *state;
	int fd = raw_connect(t->port, NULL);
	struct rn_fh root, fh;
	struct xb b;
	struct raw_reply r;
	assert_int_equal(rn_mnt(fd, t->exports[EXP_RW], &root), 0);
	assert_int_equal(rn_create(fd, &root, "across-reload", &fh), 0);
	rn_enc_write(&b, next_xid++, &fh, 0, "unstable bytes", 14, RN_UNSTABLE);
	assert_int_equal(rn_exchange(fd, &b, rbuf, sizeof rbuf, &r), 0);
	uint8_t wverf[8];
	assert_true(r.body_len >= 8);
	memcpy(wverf, r.body + r.body_len - 8, 8);        /* writeverf3 ends WRITE3resok */
	char from[32], to[32];
	snprintf(from, sizeof from, "port = %u\n", t->port);
	snprintf(to, sizeof to, "port = %u\n", t->port == 65000 ? 65001 : 65000);
	conf_replace(t, from, to);
	reload(t);
	assert_true(log_has(t, "port changed: ignored until a restart"));
	conf_replace(t, to, from);
	rn_enc_commit(&b, next_xid++, &fh, 0, 0);
	assert_int_equal(rn_exchange(fd, &b, rbuf, sizeof rbuf, &r), 0);
	assert_int_equal(rn_dec_commit(&r), 0);
	assert_memory_equal(r.body + r.body_len - 8, wverf, 8);
	char got[16] = {0};
	assert_int_equal(rn_read(fd, &fh, 0, got, 14), 0);
	assert_memory_equal(got, "unstable bytes", 14);
	close(fd);
}

/* Export dir, as the conf's last section, with this clients line (replacing it if there). */
static void set_clients(struct itest *t, const char *dir, const char *clients)
{
	char sect[2 * PATH_MAX];
	snprintf(sect, sizeof sect, "\n[export %s]\nclients = %s\n", dir, clients);
	char *c = read_all(t->conf);
	char head[PATH_MAX + 16];
	snprintf(head, sizeof head, "\n[export %s]\n", dir);
	char *p = strstr(c, head);
	if (p)
		*p = '\0';
	size_t n = strlen(c) + strlen(sect) + 1;
	char *out = malloc(n);
	assert_non_null(out);
	snprintf(out, n, "%s%s", c, sect);
	write_all(t->conf, out);
	free(out);
	free(c);
}

/* Client lists name hosts: a host name is resolved at the reload (localhost), and a wildcard
 * name matches the client's confirmed name (127.0.0.1's, as this machine's resolver has it). */
static void test_host_names_and_wildcards(void **state)
{
	struct itest *t = *state;
	char dir[PATH_MAX + 32], name[256], pattern[300];
	struct rn_fh root;
	struct sockaddr_in lo = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	snprintf(dir, sizeof dir, "%s/named", t->dir);
	assert_int_equal(mkdir(dir, 0755), 0);
	set_clients(t, dir, "localhost(rw,no_root_squash,insecure)");
	reload(t);
	assert_int_equal(mnt_status(t, dir, &root), 0);
	set_clients(t, dir, "*.nowhere.invalid(rw,insecure)");
	reload(t);
	assert_int_equal(mnt_status(t, dir, &root), MNT3ERR_ACCES);
	if (getnameinfo((struct sockaddr *)&lo, sizeof lo, name, sizeof name, NULL, 0,
			NI_NAMEREQD) != 0) {
		print_message("127.0.0.1 has no name here: wildcard match not checked\n");
		return;
	}
	snprintf(pattern, sizeof pattern, "%.*s*(rw,insecure)", (int)(strlen(name) - 1), name);
	set_clients(t, dir, pattern);
	reload(t);
	assert_int_equal(mnt_status(t, dir, &root), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_added_export_mounts),
		cmocka_unit_test(test_removed_export_is_stale),
		cmocka_unit_test(test_client_list_applies_to_next_request),
		cmocka_unit_test(test_bad_file_keeps_serving),
		cmocka_unit_test(test_file_without_exports_keeps_serving),
		cmocka_unit_test(test_unstable_data_and_connection_survive),
		cmocka_unit_test(test_host_names_and_wildcards),
	};
	return IT_MAIN("reload", tests);
}
