/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Integration harness: daemon lifecycle, temporary tree, conf file. See harness.h. */
#include "harness.h"
#include "rawnfs.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A start takes well under a second on an idle machine; CI runs beside other work, where it has
 * taken over 10 s. The wait ends as soon as the daemon says ready. */
#define START_TIMEOUT_MS 60000
#define STOP_TIMEOUT_MS 10000

static const char *const export_names[EXP_COUNT] = {
	[EXP_RW] = "export", [EXP_RO] = "ro", [EXP_ROOTSQ] = "rootsq",
	[EXP_ALLSQ] = "allsq", [EXP_PRIVATE] = "private", [EXP_SUBTREE] = "subtree",
};

const char *it_server_conf_extra;
const char *it_lock_conf_extra;
const char *it_rw_export_extra;
const char *it_rw_clients_extra;

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void it_sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

/* One try: a port bound to 0 on loopback and read back, its socket open in *fd. */
static int bound_port(int *fd_out)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &len) < 0) {
		close(fd);
		return -1;
	}
	*fd_out = fd;
	return ntohs(sa.sin_port);
}

/* A closed socket's port is free again, and the kernel may give it to the next bind(0): the gss
 * test's metrics port once came out equal to one the harness had picked (and closed) for the
 * daemon, which then could not listen on both. So no port is handed out twice in a process.
 * (The harness runs on one thread.) */
int it_free_port(int *keep_fd)
{
	static int given[64];
	static unsigned ngiven;

	for (int tries = 0; tries < 64; tries++) {
		int fd, port = bound_port(&fd);
		bool seen = false;

		if (port < 0)
			return -1;
		for (unsigned i = 0; i < ngiven && i < 64; i++)
			seen |= given[i] == port;
		if (seen) {
			close(fd);
			continue;
		}
		given[ngiven++ % 64] = port;
		*keep_fd = fd;
		return port;
	}
	return -1;
}

static int make_dir(const char *path, mode_t mode)
{
	if (mkdir(path, mode) < 0 && errno != EEXIST) {
		fprintf(stderr, "harness: mkdir %s: %s\n", path, strerror(errno));
		return -1;
	}
	/* chmod because mkdir's mode went through our umask */
	return chmod(path, mode);
}

static int write_conf(const struct itest *t)
{
	FILE *f = fopen(t->conf, "w");

	if (f == NULL) {
		fprintf(stderr, "harness: %s: %s\n", t->conf, strerror(errno));
		return -1;
	}
	const char *extra = it_server_conf_extra ? it_server_conf_extra : "";
	fprintf(f, "# written by the integration harness\n"
	        "[server]\n%sport = %u\nmount_port = %u\n"
	        "threads = 2\n"   /* two rings whatever the machine: tests cross them */
	        "state_dir = %s/state\n%s%s\n"
	        "[cache]\nsize = 64M\n\n"   /* small: tests write past it */
	        "[lock]\nport = %u\n%s\n",
	        strstr(extra, "listen =") ? "" : "listen = 127.0.0.1\n",
	        t->port, t->mount_port, t->dir,
	        strstr(extra, "rpcbind =") ? "" : "rpcbind = no\n", extra, t->lock_port,
	        it_lock_conf_extra ? it_lock_conf_extra : "");
	fprintf(f, "[export %s]\nclients = 127.0.0.1(rw,no_root_squash,insecure) %s\n%s\n",
	        t->exports[EXP_RW], it_rw_clients_extra ? it_rw_clients_extra : "",
	        it_rw_export_extra ? it_rw_export_extra : "");
	fprintf(f, "[export %s]\nclients = 127.0.0.1(ro,no_root_squash,insecure)\n\n", t->exports[EXP_RO]);
	fprintf(f, "[export %s]\nclients = 127.0.0.1(rw,root_squash,insecure)\n\n", t->exports[EXP_ROOTSQ]);
	fprintf(f, "[export %s]\nclients = 127.0.0.1(rw,all_squash,insecure)\n\n", t->exports[EXP_ALLSQ]);
	fprintf(f, "[export %s]\nclients = " IT_PRIVATE_CLIENT "(rw,no_root_squash,insecure)\n\n",
	        t->exports[EXP_PRIVATE]);
	fprintf(f, "[export %s]\nclients = 127.0.0.1(rw,no_root_squash,insecure,subtree_check)\n",
	        t->exports[EXP_SUBTREE]);
	return fclose(f) == 0 ? 0 : -1;
}

static int make_tree(struct itest *t)
{
	char tmpl[PATH_MAX], path[PATH_MAX + 32], real[PATH_MAX];
	mode_t modes[EXP_COUNT] = { 0755, 0755, 0777, 0777, 0755, 0755 };
	/* NFSD_UC_IT_TMPDIR: another file system for the tree (tests/integration/on_xfs.sh) */
	const char *base = getenv("NFSD_UC_IT_TMPDIR");

	snprintf(tmpl, sizeof(tmpl), "%s/nfsd-uc-it.XXXXXX", base && *base ? base : "/tmp");
	if (mkdtemp(tmpl) == NULL || realpath(tmpl, real) == NULL || strlen(real) >= sizeof(t->dir)) {
		fprintf(stderr, "harness: mkdtemp: %s\n", strerror(errno));
		return -1;
	}
	strcpy(t->dir, real);
	/* 0755: users other than root must be able to walk down to the exports */
	if (chmod(t->dir, 0755) < 0)
		return -1;
	for (int e = 0; e < EXP_COUNT; e++) {
		snprintf(t->exports[e], sizeof(t->exports[e]), "%s/%s", t->dir, export_names[e]);
		if (make_dir(t->exports[e], modes[e]) < 0)
			return -1;
	}
	snprintf(path, sizeof(path), "%s/state", t->dir);
	if (make_dir(path, 0700) < 0)
		return -1;
	snprintf(t->conf, sizeof(t->conf), "%s/nfsd-uc.conf", t->dir);
	snprintf(t->log, sizeof(t->log), "%s/daemon.log", t->dir);
	return 0;
}

static int write_hello(const struct itest *t)
{
	char path[PATH_MAX + 32];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", t->exports[EXP_RO], IT_HELLO_NAME);
	f = fopen(path, "w");
	if (f == NULL)
		return -1;
	fputs(IT_HELLO_TEXT, f);
	return fclose(f) == 0 ? 0 : -1;
}

int it_setup(struct itest *t, const char *exe)
{
	int keep[3] = { -1, -1, -1 }, p, m, l;

	memset(t, 0, sizeof(*t));
	t->exe = exe;
	if (make_tree(t) < 0 || write_hello(t) < 0)
		return -1;
	p = it_free_port(&keep[0]);
	m = it_free_port(&keep[1]);
	l = it_free_port(&keep[2]);
	close(keep[0]);
	close(keep[1]);
	close(keep[2]);
	if (p <= 0 || m <= 0 || l <= 0) {
		fprintf(stderr, "harness: no free port\n");
		return -1;
	}
	t->port = (uint16_t)p;
	t->mount_port = (uint16_t)m;
	t->lock_port = (uint16_t)l;
	return write_conf(t);
}

static void exec_daemon(const struct itest *t, pid_t harness)
{
	int fd = open(t->log, O_WRONLY | O_CREAT | O_APPEND, 0644);

	/* a test program killed (timeout, crash) must not leave its daemon running */
	if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != harness)
		_exit(125);
	if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0 || dup2(fd, STDERR_FILENO) < 0)
		_exit(126);
	close(fd);
	execl(t->exe, t->exe, "-c", t->conf, (char *)NULL);
	fprintf(stderr, "harness: exec %s: %s\n", t->exe, strerror(errno));
	_exit(127);
}

/* Does the log hold the word "ready" past offset from (the log survives restarts)? */
static int log_says_ready(const struct itest *t, long from)
{
	char buf[4096];
	int found = 0;
	FILE *f = fopen(t->log, "r");

	if (f == NULL)
		return 0;
	fseek(f, from, SEEK_SET);
	while (!found && fgets(buf, sizeof(buf), f) != NULL)
		found = strstr(buf, "ready") != NULL;
	fclose(f);
	return found;
}

int it_open_fds(pid_t pid)
{
	char dir[64];
	int n = 0;
	snprintf(dir, sizeof dir, "/proc/%d/fd", (int)pid);
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	for (struct dirent *de; (de = readdir(d));)
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

long it_log_size(const struct itest *t)
{
	struct stat st;
	return stat(t->log, &st) == 0 ? (long)st.st_size : 0;
}

char *it_log_find(const struct itest *t, long from, const char *what)
{
	FILE *f = fopen(t->log, "r");
	char *line = NULL;
	size_t cap = 0;

	if (f == NULL)
		return NULL;
	if (fseek(f, from, SEEK_SET) == 0)
		while (getline(&line, &cap, f) >= 0)
			if (strstr(line, what) != NULL) {
				fclose(f);
				return line;
			}
	free(line);
	fclose(f);
	return NULL;
}

int it_start(struct itest *t)
{
	long from = it_log_size(t);
	long long deadline = now_ms() + START_TIMEOUT_MS;
	pid_t harness = getpid();

	t->pid = fork();
	if (t->pid < 0) {
		t->pid = 0;
		return -1;
	}
	if (t->pid == 0)
		exec_daemon(t, harness);
	while (now_ms() < deadline) {
		if (!it_alive(t))
			return -1;
		/* Only the log: after a crash the dead daemon's sockets may accept for a moment. */
		if (log_says_ready(t, from))
			return 0;
		it_sleep_ms(20);
	}
	fprintf(stderr, "harness: daemon not ready after %d ms\n", START_TIMEOUT_MS);
	it_stop(t);
	return -1;
}

int it_alive(struct itest *t)
{
	int status;

	if (t->pid <= 0)
		return 0;
	if (waitpid(t->pid, &status, WNOHANG) != t->pid)
		return 1;
	if (WIFEXITED(status))
		fprintf(stderr, "harness: daemon exited with status %d\n", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		fprintf(stderr, "harness: daemon killed by signal %d\n", WTERMSIG(status));
	t->pid = 0;
	return 0;
}

static int wait_exit(pid_t pid, int timeout_ms, int *status)
{
	long long deadline = now_ms() + timeout_ms;

	while (now_ms() < deadline) {
		pid_t r = waitpid(pid, status, WNOHANG);
		if (r == pid)
			return 0;
		if (r < 0 && errno != EINTR)
			return -1;
		it_sleep_ms(10);
	}
	return -1;
}

int it_stop(struct itest *t)
{
	int status = 0;
	pid_t pid = t->pid;

	if (pid <= 0)
		return -1;
	t->pid = 0;
	kill(pid, SIGTERM);
	if (wait_exit(pid, STOP_TIMEOUT_MS, &status) < 0) {
		fprintf(stderr, "harness: daemon ignored SIGTERM for %d ms, killing it\n", STOP_TIMEOUT_MS);
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		return -1;
	}
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

int it_kill(struct itest *t)
{
	pid_t pid = t->pid;

	if (pid <= 0)
		return -1;
	t->pid = 0;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return 0;
}

void it_log_tail(const struct itest *t, int lines)
{
	char cmd[PATH_MAX + 64];

	fprintf(stderr, "---- last %d lines of %s ----\n", lines, t->log);
	fflush(stderr);
	snprintf(cmd, sizeof(cmd), "tail -n %d '%s' >&2", lines, t->log);
	if (system(cmd) != 0)
		fprintf(stderr, "(no log)\n");
	fprintf(stderr, "---- end of daemon log ----\n");
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st; (void)flag; (void)ftw;
	remove(path);   /* best effort: keep going */
	return 0;
}

void it_cleanup(struct itest *t)
{
	if (t->dir[0] == '\0')
		return;
	if (getenv("NFSD_UC_IT_KEEP") != NULL) {
		fprintf(stderr, "harness: keeping %s\n", t->dir);
		return;
	}
	nftw(t->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

void it_path(const struct itest *t, enum it_export e, const char *rel, char *out, size_t outlen)
{
	int n = snprintf(out, outlen, "%s/%s", t->exports[e], rel);
	assert_true(n > 0 && (size_t)n < outlen);
}

void it_write_file(const struct itest *t, enum it_export e, const char *rel,
                   const void *data, size_t len, mode_t mode)
{
	char path[PATH_MAX + 256];
	int fd;

	it_path(t, e, rel, path, sizeof(path));
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

static int run_with_state(struct itest *t, const char *group, const struct CMUnitTest *tests,
                     size_t n)
{
	struct CMUnitTest *mine = calloc(n, sizeof(*mine));
	int failed;

	if (mine == NULL)
		return 1;
	/* every test gets the harness as its state */
	for (size_t i = 0; i < n; i++) {
		mine[i] = tests[i];
		mine[i].initial_state = t;
	}
	failed = _cmocka_run_group_tests(group, mine, n, NULL, NULL);
	free(mine);
	return failed;
}

int it_main(const char *group, const struct CMUnitTest *tests, size_t ntests,
            int argc, char **argv)
{
	struct itest t;
	const char *exe = argc > 1 ? argv[1] : getenv("NFSD_UC_EXE");
	int failed, status;

	signal(SIGPIPE, SIG_IGN);   /* raw-socket tests write to connections the daemon drops */
	if (exe == NULL) {
		fprintf(stderr, "usage: %s NFSD_UC_BINARY (or set NFSD_UC_EXE)\n", argv[0]);
		return 2;
	}
	if (it_setup(&t, exe) < 0 || it_start(&t) < 0) {
		fprintf(stderr, "harness: the daemon did not start\n");
		it_log_tail(&t, 40);
		it_cleanup(&t);
		return 1;
	}
	failed = run_with_state(&t, group, tests, ntests);
	status = it_stop(&t);
	if (status != 0) {
		fprintf(stderr, "harness: daemon exit status after SIGTERM: %d (want 0)\n", status);
		failed++;
	}
	if (failed)
		it_log_tail(&t, 60);
	it_cleanup(&t);
	return failed ? 1 : 0;
}

uint64_t rn_counter_must(uint16_t port, const char *name)
{
	uint64_t v = rn_counter(port, name);
	if (v == UINT64_MAX)
		fail_msg("the daemon has no counter %s", name);
	return v;
}
