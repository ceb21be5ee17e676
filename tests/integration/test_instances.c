/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Two daemons on one host. A second instance with its own ports, state_dir and rpcbind = no
 * serves beside the harness's; one that shares its state_dir stops at once and names the pid
 * that holds it; one whose [lock] port is taken says which key to change, and a stop signal
 * during its wait for the port ends it at once, not after the 10 s retry; one whose metrics
 * port is taken says so with the key. */
#include "harness.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct second {
	char dir[PATH_MAX], conf[PATH_MAX + 16], log[PATH_MAX + 16];
	uint16_t port, mount_port, lock_port;
	pid_t pid;
};

static uint16_t free_port(void)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof sa;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	close(fd);   /* a race with other programs is possible but harmless: the test then fails */
	return ntohs(sa.sin_port);
}

/* Its own tree and ports; state_dir and lock_port as given (NULL / 0: its own). */
static void second_setup_with(const struct itest *t, struct second *s, const char *state_dir,
			      uint16_t lock_port, const char *more)
{
	char export[PATH_MAX + 16], state[PATH_MAX + 16];
	snprintf(s->dir, sizeof s->dir, "%s/second", t->dir);
	mkdir(s->dir, 0755);
	snprintf(export, sizeof export, "%s/export", s->dir);
	mkdir(export, 0755);
	snprintf(state, sizeof state, "%s/state", s->dir);
	snprintf(s->conf, sizeof s->conf, "%s/nfsd-uc.conf", s->dir);
	snprintf(s->log, sizeof s->log, "%s/daemon.log", s->dir);
	s->port = free_port();
	s->mount_port = free_port();
	s->lock_port = lock_port ? lock_port : free_port();
	FILE *f = fopen(s->conf, "w");
	assert_non_null(f);
	fprintf(f, "[server]\nlisten = 127.0.0.1\nport = %u\nmount_port = %u\nthreads = 1\n"
		"rpcbind = no\nstate_dir = %s\n%s[lock]\nport = %u\n"
		"[export %s]\nclients = 127.0.0.1(rw,insecure)\n%s", s->port, s->mount_port,
		state_dir ? state_dir : state, strstr(more, "[cache]") ? "" : "[cache]\nsize = 16M\n",
		s->lock_port, export, more);
	assert_int_equal(fclose(f), 0);
	unlink(s->log);
}

static void second_setup(const struct itest *t, struct second *s, const char *state_dir,
			 uint16_t lock_port)
{
	second_setup_with(t, s, state_dir, lock_port, "");
}

static void second_start(const struct itest *t, struct second *s)
{
	s->pid = fork();
	assert_true(s->pid >= 0);
	if (s->pid == 0) {
		int fd = open(s->log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
			_exit(127);
		execl(t->exe, "nfsd-uc", "-c", s->conf, (char *)NULL);
		_exit(127);
	}
}

static bool log_has(const struct second *s, const char *what)
{
	char buf[16384];
	FILE *f = fopen(s->log, "r");
	if (!f)
		return false;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	return strstr(buf, what) != NULL;
}

static bool wait_log(const struct second *s, const char *what, int ms)
{
	for (int waited = 0; waited < ms; waited += 20) {
		if (log_has(s, what))
			return true;
		it_sleep_ms(20);
	}
	return log_has(s, what);
}

/* Its exit status within ms (-1: still running then), reaped. */
static int wait_exit(struct second *s, int ms)
{
	int status;
	for (int waited = 0; waited <= ms; waited += 10) {
		if (waitpid(s->pid, &status, WNOHANG) == s->pid) {
			s->pid = 0;
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		}
		it_sleep_ms(10);
	}
	return -1;
}

static void second_kill(struct second *s)
{
	if (s->pid > 0) {
		kill(s->pid, SIGKILL);
		waitpid(s->pid, NULL, 0);
		s->pid = 0;
	}
}

static bool port_answers(uint16_t port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	bool ok = fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0;
	if (fd >= 0)
		close(fd);
	return ok;
}

static void test_second_instance_serves(void **state)
{
	struct itest *t = *state;
	struct second s;
	second_setup(t, &s, NULL, 0);
	second_start(t, &s);
	if (!wait_log(&s, "ready", 60000)) {
		second_kill(&s);
		fail_msg("a second instance with its own ports and state_dir did not start");
	}
	assert_true(port_answers(s.port));
	assert_true(port_answers(s.lock_port));
	assert_true(port_answers(t->port));   /* the first still serves */
	kill(s.pid, SIGTERM);
	assert_int_equal(wait_exit(&s, 60000), 0);
}

static void test_shared_state_dir_refused(void **state)
{
	struct itest *t = *state;
	struct second s;
	char dir[PATH_MAX + 16], want[128];
	snprintf(dir, sizeof dir, "%s/state", t->dir);   /* the harness's daemon's */
	second_setup(t, &s, dir, 0);
	second_start(t, &s);
	int rc = wait_exit(&s, 60000);
	second_kill(&s);
	snprintf(want, sizeof want, "is in use by another nfsd-uc (pid %ld)", (long)t->pid);
	if (rc <= 0 || !log_has(&s, want))
		fail_msg("a second instance on the first's state_dir: exit %d, log without \"%s\"",
			 rc, want);
	assert_true(port_answers(t->port));
}

static void test_taken_lock_port_named_and_stoppable(void **state)
{
	struct itest *t = *state;
	struct second s;
	char want[128];
	second_setup(t, &s, NULL, t->lock_port);
	second_start(t, &s);
	snprintf(want, sizeof want, "port %u ([lock] port; 0 serves no locks) is in use",
		 t->lock_port);
	bool named = wait_log(&s, want, 60000);
	kill(s.pid, SIGTERM);
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	int rc = wait_exit(&s, 5000);
	clock_gettime(CLOCK_MONOTONIC, &b);
	second_kill(&s);
	if (!named)
		fail_msg("the log does not say \"%s\"", want);
	double waited = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	if (rc < 0 || waited > 5.0)   /* the retry it cuts short is 10 s */
		fail_msg("SIGTERM while it waited for the port: exit %d after %.1f s", rc, waited);
	assert_true(port_answers(t->lock_port));   /* the first's lock manager is untouched */
}

/* A metrics port someone else has: the line names the address and the key, not libmicrohttpd's
 * "Failed to bind to port 0". */
static void test_taken_metrics_port_named(void **state)
{
	struct itest *t = *state;
	struct second s;
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof sa;
	int busy = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(busy >= 0);
	assert_int_equal(bind(busy, (struct sockaddr *)&sa, sizeof sa), 0);
	assert_int_equal(listen(busy, 1), 0);
	assert_int_equal(getsockname(busy, (struct sockaddr *)&sa, &len), 0);
	char more[64], want[160];
	snprintf(more, sizeof more, "[metrics]\nlisten = 127.0.0.1:%u\n", ntohs(sa.sin_port));
	second_setup_with(t, &s, NULL, 0, more);
	second_start(t, &s);
	int rc = wait_exit(&s, 60000);
	second_kill(&s);
	close(busy);
	snprintf(want, sizeof want, "metrics: cannot listen on 127.0.0.1:%u ([metrics] listen): "
		 "Address already in use", ntohs(sa.sin_port));
	if (rc <= 0 || !log_has(&s, want) || log_has(&s, "Failed to bind"))
		fail_msg("a taken metrics port: exit %d, log without \"%s\"", rc, want);
}

/* A cache bigger than the host's memory is --check's error, but a start only warns: a small
 * machine on the defaults (1G of cache, 512M of receive memory) must still serve. */
static void test_oversized_cache_starts_with_a_warning(void **state)
{
	struct itest *t = *state;
	struct second s;
	second_setup_with(t, &s, NULL, 0, "[cache]\nsize = 1000G\n");
	second_start(t, &s);
	bool ready = wait_log(&s, "ready", 60000);
	bool warned = log_has(&s, "together are more than this host's memory");
	if (s.pid > 0)
		kill(s.pid, SIGTERM);
	int rc = wait_exit(&s, 60000);
	second_kill(&s);
	if (!ready || !warned || rc != 0)
		fail_msg("a start with a 1000G cache: ready %d, warned %d, exit %d", ready, warned, rc);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_second_instance_serves),
		cmocka_unit_test(test_shared_state_dir_refused),
		cmocka_unit_test(test_taken_lock_port_named_and_stoppable),
		cmocka_unit_test(test_taken_metrics_port_named),
		cmocka_unit_test(test_oversized_cache_starts_with_a_warning),
	};
	return IT_MAIN("integration-instances", tests);
}
