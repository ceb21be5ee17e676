/* Checks shared by the test programs: attributes against stat(2), wcc_data plausibility. */
#ifndef NFSD_UC_IT_CHECKS_H
#define NFSD_UC_IT_CHECKS_H

#include <sys/stat.h>
#include "client.h"

/* -1, 0, 1 as a is before, equal to, after b */
int nfstime_cmp(nfstime3 a, nfstime3 b);

/* What every fattr3 must look like: a known type, permission bits only, nlink >= 1. */
void check_fattr_sane(const fattr3 *a);
/* The attributes describe what stat(2) says of path (type, mode, nlink, uid, gid, size,
 * mtime); lstat for symlinks. */
void check_fattr_matches_disk(const fattr3 *a, const char *path);
/* before and after present, after's ctime not older than before's, after sane. When old_size is not
 * -1, before.size equals it. */
void check_wcc(const wcc_data *w, long long old_size);
const fattr3 *post_attr(const post_op_attr *p);   /* asserts present */

#endif
