/* The daemon stopped with SIGTERM (exit 0, even with a client connected), or killed, and started
 * again on the same conf: file handles from before still work, and the write verifier changed so that
 * clients know to resend what they had not committed. */
#include "checks.h"

#include <stdio.h>
#include <string.h>

static const char text[] = "written before the restart\n";

struct before {
	struct fh root, dir, file;
	fattr3 attr;
	char verf[8];
};

static void make_state(struct itest *t, struct before *b, struct nfsclient **keep,
                       const char *dirname)
{
	struct nfsclient *c = it_client(t, EXP_RW, 0, 0, &b->root);
	WRITE3resok ok;

	it_workdir(c, &b->root, dirname, &b->dir);
	NFS_OK(c, nc_create(c, &b->dir, "file", 0644, &b->file));
	NFS_OK(c, nc_write(c, &b->file, 0, text, sizeof(text), UNSTABLE, &ok));
	memcpy(b->verf, ok.verf, 8);
	NFS_OK(c, nc_commit(c, &b->file, 0, 0, NULL));
	NFS_OK(c, nc_getattr(c, &b->file, &b->attr));
	*keep = c;   /* left connected across the stop */
}

static void restart(struct itest *t)
{
	int status = it_stop(t);

	if (status != 0)
		fail_msg("daemon exit status after SIGTERM: %d, want 0", status);
	if (it_start(t) != 0)
		fail_msg("daemon did not start again on the same conf (ports %u, %u)", t->port,
		         t->mount_port);
}

static void check_after(struct itest *t, struct before *b)
{
	struct fh root, file;
	struct nfsclient *c = it_client(t, EXP_RW, 0, 0, &root);
	fattr3 a;
	char buf[64];
	uint32_t got;
	WRITE3resok ok;

	assert_true(fh_equal(&root, &b->root));          /* MNT hands out the same handle */
	NFS_OK(c, nc_getattr(c, &b->file, &a));
	assert_true(a.fileid == b->attr.fileid);
	assert_true(a.size == b->attr.size);
	NFS_OK(c, nc_read(c, &b->file, 0, sizeof(buf), buf, &got, NULL));
	assert_int_equal(got, b->attr.size);
	assert_memory_equal(buf, text, sizeof(text));
	NFS_OK(c, nc_lookup(c, &b->dir, "file", &file, &a));
	assert_true(a.fileid == b->attr.fileid);
	NFS_OK(c, nc_create(c, &b->dir, "after", 0644, NULL));   /* the old dir handle works */
	NFS_OK(c, nc_write(c, &b->file, b->attr.size, "more", 4, UNSTABLE, &ok));
	if (memcmp(ok.verf, b->verf, 8) == 0)
		fail_msg("WRITE verifier unchanged across a restart: clients would not resend "
		         "uncommitted data");
	memcpy(b->verf, ok.verf, 8);
	NFS_OK(c, nc_commit(c, &b->file, 0, 0, NULL));
	NFS_OK(c, nc_getattr(c, &b->file, &b->attr));
	nc_close(c);
}

static void test_handles_survive_restart(void **state)
{
	struct itest *t = *state;
	struct before b;
	struct nfsclient *idle;

	make_state(t, &b, &idle, "restart");
	restart(t);
	check_after(t, &b);
	nc_close(idle);
	restart(t);                                       /* and once more */
	check_after(t, &b);
}

/* A supervisor restarts a crashed daemon at once, while clients still hold connections and
 * the kernel may still be tearing down the dead process's rings and sockets. */
static void test_restart_at_once_after_sigkill(void **state)
{
	struct itest *t = *state;
	struct before b;
	struct nfsclient *idle[8];
	struct fh root;
	char name[32];

	for (int round = 0; round < 5; round++) {
		snprintf(name, sizeof name, "killed-%d", round);
		make_state(t, &b, &idle[0], name);
		for (int i = 1; i < 8; i++)
			idle[i] = it_client(t, EXP_RW, 0, 0, &root);
		it_kill(t);
		if (it_start(t) != 0)
			fail_msg("round %d: daemon did not start again right after SIGKILL", round);
		check_after(t, &b);
		for (int i = 0; i < 8; i++)
			nc_close(idle[i]);
	}
}

static void test_served_after_restart(void **state)
{
	it_assert_served(*state);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_handles_survive_restart),
		cmocka_unit_test(test_restart_at_once_after_sigkill),
		cmocka_unit_test(test_served_after_restart),
	};
	return IT_MAIN("integration-restart", tests);
}
