/* Conveniences over NFS3()/NC_CALL() for what most tests do on the way to what they check. */
#include "client.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int nc_mnt(struct nfsclient *m, const char *path, struct fh *root)
{
	mountres3 res;

	if (NC_CALL(m, rpc_mount3_mnt_async, (char *)path, zdr_mountres3, &res) < 0)
		return -1;
	if (res.fhs_status == MNT3_OK && root != NULL) {
		fhandle3 *h = &res.mountres3_u.mountinfo.fhandle;
		assert_true(h->fhandle3_len <= NFS3_FHSIZE);
		root->len = h->fhandle3_len;
		memcpy(root->data, h->fhandle3_val, root->len);
	}
	return (int)res.fhs_status;
}

int nc_getattr(struct nfsclient *c, struct fh *f, fattr3 *attr)
{
	GETATTR3args a = { .object = fh3(f) };
	GETATTR3res r;

	if (NFS3(c, getattr, GETATTR, &a, &r) < 0)
		return -1;
	if (r.status == NFS3_OK && attr != NULL)
		*attr = r.GETATTR3res_u.resok.obj_attributes;
	return (int)r.status;
}

int nc_lookup(struct nfsclient *c, struct fh *dir, const char *name, struct fh *out, fattr3 *attr)
{
	LOOKUP3args a = { .what = { .dir = fh3(dir), .name = (char *)name } };
	LOOKUP3res r;

	if (NFS3(c, lookup, LOOKUP, &a, &r) < 0)
		return -1;
	if (r.status != NFS3_OK)
		return (int)r.status;
	if (out != NULL)
		fh_copy(out, &r.LOOKUP3res_u.resok.object);
	if (attr != NULL) {
		assert_true(r.LOOKUP3res_u.resok.obj_attributes.attributes_follow);
		*attr = r.LOOKUP3res_u.resok.obj_attributes.post_op_attr_u.attributes;
	}
	return NFS3_OK;
}

static sattr3 mode_only(uint32_t mode)
{
	sattr3 s;
	memset(&s, 0, sizeof(s));
	s.mode.set_it = 1;
	s.mode.set_mode3_u.mode = mode;
	return s;
}

/* A handle the reply did not carry is looked up by name, as clients do. */
static int handle_or_lookup(struct nfsclient *c, struct fh *dir, const char *name,
                            const post_op_fh3 *obj, struct fh *out)
{
	if (out == NULL)
		return NFS3_OK;
	if (obj->handle_follows) {
		fh_copy(out, &obj->post_op_fh3_u.handle);
		return NFS3_OK;
	}
	return nc_lookup(c, dir, name, out, NULL);
}

int nc_create(struct nfsclient *c, struct fh *dir, const char *name, uint32_t mode, struct fh *out)
{
	CREATE3args a;
	CREATE3res r;

	memset(&a, 0, sizeof(a));
	a.where.dir = fh3(dir);
	a.where.name = (char *)name;
	a.how.mode = UNCHECKED;
	a.how.createhow3_u.obj_attributes = mode_only(mode);
	if (NFS3(c, create, CREATE, &a, &r) < 0)
		return -1;
	if (r.status != NFS3_OK)
		return (int)r.status;
	return handle_or_lookup(c, dir, name, &r.CREATE3res_u.resok.obj, out);
}

int nc_mkdir(struct nfsclient *c, struct fh *dir, const char *name, uint32_t mode, struct fh *out)
{
	MKDIR3args a = { .where = { .dir = fh3(dir), .name = (char *)name },
	                 .attributes = mode_only(mode) };
	MKDIR3res r;

	if (NFS3(c, mkdir, MKDIR, &a, &r) < 0)
		return -1;
	if (r.status != NFS3_OK)
		return (int)r.status;
	return handle_or_lookup(c, dir, name, &r.MKDIR3res_u.resok.obj, out);
}

int nc_remove(struct nfsclient *c, struct fh *dir, const char *name)
{
	REMOVE3args a = { .object = { .dir = fh3(dir), .name = (char *)name } };
	REMOVE3res r;

	if (NFS3(c, remove, REMOVE, &a, &r) < 0)
		return -1;
	return (int)r.status;
}

int nc_write(struct nfsclient *c, struct fh *f, uint64_t off, const void *data, uint32_t len,
             stable_how how, WRITE3resok *ok)
{
	WRITE3args a = { .file = fh3(f), .offset = off, .count = len, .stable = how,
	                 .data = { .data_len = len, .data_val = (char *)data } };
	WRITE3res r;

	if (NFS3(c, write, WRITE, &a, &r) < 0)
		return -1;
	if (r.status == NFS3_OK && ok != NULL)
		*ok = r.WRITE3res_u.resok;
	return (int)r.status;
}

int nc_read(struct nfsclient *c, struct fh *f, uint64_t off, uint32_t count, void *buf,
            uint32_t *got, int *eof)
{
	READ3args a = { .file = fh3(f), .offset = off, .count = count };
	READ3res r;
	READ3resok *ok = &r.READ3res_u.resok;

	if (NFS3(c, read, READ, &a, &r) < 0)
		return -1;
	if (r.status != NFS3_OK)
		return (int)r.status;
	/* the reply's count and its opaque length must agree and fit what was asked */
	assert_int_equal(ok->count, ok->data.data_len);
	assert_true(ok->count <= count);
	memcpy(buf, ok->data.data_val, ok->count);
	if (got != NULL)
		*got = ok->count;
	if (eof != NULL)
		*eof = (int)ok->eof;
	return NFS3_OK;
}

int nc_commit(struct nfsclient *c, struct fh *f, uint64_t off, uint32_t count, char verf[8])
{
	COMMIT3args a = { .file = fh3(f), .offset = off, .count = count };
	COMMIT3res r;

	if (NFS3(c, commit, COMMIT, &a, &r) < 0)
		return -1;
	if (r.status == NFS3_OK && verf != NULL)
		memcpy(verf, r.COMMIT3res_u.resok.verf, NFS3_WRITEVERFSIZE);
	return (int)r.status;
}

int nc_setattr_mode(struct nfsclient *c, struct fh *f, uint32_t mode)
{
	SETATTR3args a;
	SETATTR3res r;

	memset(&a, 0, sizeof(a));
	a.object = fh3(f);
	a.new_attributes = mode_only(mode);
	if (NFS3(c, setattr, SETATTR, &a, &r) < 0)
		return -1;
	return (int)r.status;
}

struct nfsclient *it_client(struct itest *t, enum it_export e, int uid, int gid, struct fh *root)
{
	struct nfsclient *m = nc_connect(t->mount_port, MOUNT_PROGRAM, MOUNT_V3, 0, 0, 0, NULL);
	struct nfsclient *c;

	assert_non_null(m);
	NFS_EXPECT(m, MNT3_OK, nc_mnt(m, t->exports[e], root));
	nc_close(m);
	c = nc_connect(t->port, NFS_PROGRAM, NFS_V3, uid, gid, 0, NULL);
	assert_non_null(c);
	return c;
}

void it_workdir(struct nfsclient *c, struct fh *root, const char *name, struct fh *dir)
{
	NFS_OK(c, nc_mkdir(c, root, name, 0777, dir));
	NFS_OK(c, nc_setattr_mode(c, dir, 0777));
}

/* Through libnfs's high-level API, as an application would: mount by URL (ports given, no
 * rpcbind), write a file, read it back, stat it. */
void it_assert_served(struct itest *t)
{
	char url[PATH_MAX + 96], path[64], back[32];
	struct nfs_context *nfs = nfs_init_context();
	struct nfs_url *u;
	struct nfsfh *f;
	struct nfs_stat_64 st;
	static const char text[] = "still served\n";

	assert_true(it_alive(t));
	assert_non_null(nfs);
	snprintf(url, sizeof(url), "nfs://127.0.0.1%s?nfsport=%u&mountport=%u",
	         t->exports[EXP_RW], t->port, t->mount_port);
	u = nfs_parse_url_dir(nfs, url);
	assert_non_null(u);
	if (nfs_mount(nfs, u->server, u->path) != 0)
		fail_msg("nfs_mount %s: %s", url, nfs_get_error(nfs));
	snprintf(path, sizeof(path), "/served-%ld", (long)random());
	if (nfs_creat(nfs, path, 0644, &f) != 0)
		fail_msg("nfs_creat %s: %s", path, nfs_get_error(nfs));
	assert_int_equal(nfs_pwrite(nfs, f, 0, sizeof(text), text), (int)sizeof(text));
	assert_int_equal(nfs_pread(nfs, f, 0, sizeof(back), back), (int)sizeof(text));
	assert_memory_equal(back, text, sizeof(text));
	assert_int_equal(nfs_close(nfs, f), 0);
	assert_int_equal(nfs_stat64(nfs, path, &st), 0);
	assert_int_equal(st.nfs_size, sizeof(text));
	assert_int_equal(nfs_unlink(nfs, path), 0);
	nfs_destroy_url(u);
	nfs_destroy_context(nfs);
}
