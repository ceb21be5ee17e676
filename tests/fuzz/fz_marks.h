/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Placeholders that seed records carry instead of file handles and export paths. Handles are
 * MACed under the server's key and name inodes of a temporary tree made at start, so no file can
 * hold a valid one; the dispatch and connection harnesses replace each placeholder with the real
 * thing before the record reaches the server (fz_subst), which lets the fuzzer get past
 * BADHANDLE. Shared by the harnesses and the corpus generator (mkcorpus.c).
 *
 * All are XDR variable-length items at a 4-byte aligned offset of the record:
 *   handle: opaque<> of exactly 8 bytes: FE 'F' 'Z' 'H' export object 00 00
 *   path:   string<> of at least 5 bytes: FE 'F' 'Z' 'P' export, then a suffix ("" or "/dir")
 *   cookie: opaque<> of exactly 8 bytes: FE 'F' 'Z' 'C' 00 00 00 00
 * A handle placeholder becomes the handle of that object of that export (FZ_OBJ_LAST: the last
 * handle a reply of the same input returned, else the export's root); a path placeholder becomes
 * the export's path followed by the suffix; a cookie placeholder becomes the cookie of the last
 * GRANTED callback the lock manager sent the fuzzed client (zeros when none since the last tree
 * reset), so that an NLM GRANTED_RES can answer it. */
#ifndef NFSD_UC_FZ_MARKS_H
#define NFSD_UC_FZ_MARKS_H

#define FZ_MARK0 0xfe
#define FZ_MARK_FH 'H'
#define FZ_MARK_PATH 'P'
#define FZ_MARK_FH_LEN 8
#define FZ_MARK_COOKIE 'C'
#define FZ_MARK_COOKIE_LEN 8

/* How the fuzzed client host (fz_server.c) answers a GRANTED callback: by the blocked lock's
 * svid modulo 4. */
enum {
	FZ_GRANTED_TAKE = 0,     /* NLM4_GRANTED: it takes the lock */
	FZ_GRANTED_REFUSE = 1,   /* NLM4_DENIED: it no longer wants it (the server releases it) */
	FZ_GRANTED_GARBAGE = 2,  /* GARBAGE_ARGS: a failed callback (the lock stays granted) */
	FZ_GRANTED_SILENT = 3,   /* no answer until the next tree reset (then it takes the lock):
				  * the waiter stays granting for a GRANTED_RES (cookie
				  * placeholder), a CANCEL or a new LOCK of it */
};

/* Exports of the fuzzed server (fz_server.c): modes and client rules differ. */
enum {
	FZ_EXP_CACHED = 0,   /* write_mode cached, rw; root not squashed when sandboxed */
	FZ_EXP_DIRECT,       /* write_mode direct, rw, root_squash, insecure (any client port) */
	FZ_EXP_RO,           /* dontcache, ro, all_squash to uid 1000 */
	FZ_EXP_FOREIGN,      /* buffered, only 127.0.0.2 may use it: every call is ACCES */
	FZ_NEXP
};

/* The objects every export holds, remade when the tree is reset. */
enum {
	FZ_OBJ_ROOT = 0,
	FZ_OBJ_FILE,         /* "file": 20000 bytes */
	FZ_OBJ_DIR,          /* "dir", holding a, b */
	FZ_OBJ_LINK,         /* "link" -> file */
	FZ_OBJ_FIFO,         /* "fifo" */
	FZ_OBJ_EMPTY,        /* "empty": 0 bytes, owned by 1000 */
	FZ_OBJ_RDONLY,       /* "rdonly": mode 0444, owned by 1000 */
	FZ_OBJ_DIR_A,        /* "dir/a": 5000 bytes */
	FZ_NOBJ,
	FZ_OBJ_LAST = 0xff
};

#endif
