/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nfsd-uc.conf: INI-style configuration, parsed once at start-up and read-only afterwards. */
#ifndef NFSD_UC_CONFIG_H
#define NFSD_UC_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* CACHED (write_mode only, the default): nfsd-uc's own cache with write-behind; DIRECT: the same
 * cache for partial blocks only, each WRITE's middle written before its reply (and, as read_mode,
 * READs through nfsd-uc's cache with O_DIRECT misses); DONTCACHE and BUFFERED: the kernel's page
 * cache. */
enum io_mode { IO_MODE_DIRECT = 0, IO_MODE_DONTCACHE, IO_MODE_BUFFERED, IO_MODE_CACHED };
/* "direct", "dontcache", "buffered" or "cached", as the conf spells it. */
const char *io_mode_name(enum io_mode m);
/* Its WRITEs go through nfsd-uc's cache (write-behind or write-through), not the page cache. */
static inline bool io_mode_uses_cache(enum io_mode m)
{
	return m == IO_MODE_DIRECT || m == IO_MODE_CACHED;
}
enum squash_mode { SQUASH_ROOT = 0, SQUASH_NONE, SQUASH_ALL };
/* [server] rpcbind: who answers port 111 (pmap_decide() in pmap/pmap.h turns it into what to do).
 * NO and YES keep the values of the bool this key was (0 and 1): "no" is still false. */
enum rpcbind_mode {
	RPCBIND_NO = 0,           /* neither: clients need the ports as mount options */
	RPCBIND_YES = 1,          /* register with the host's rpcbind */
	RPCBIND_AUTO = 2,         /* the host's rpcbind when one answers, else our own (default) */
	RPCBIND_OWN = 3,          /* serve port 111 ourselves (PMAP v2, RPCBIND v3 and v4) */
};
/* "no", "yes", "auto" or "own", as the conf spells it. */
const char *rpcbind_mode_name(enum rpcbind_mode m);

/* One entry of an export's "clients =" list, as in exports(5): ADDR[/PREFIX](opts) or *(opts). */
#define CFG_PATTERN_MAX 128
#define CFG_SEC_MAX 5             /* sys, krb5, krb5i, krb5p, none: each at most once */

/* A pseudo-flavor as sec= spells it ("sys", "krb5", "krb5i", "krb5p", "none"); NULL for a
 * number sec= has no name for. */
const char *config_flavor_name(uint32_t flavor);

struct client_rule {
	int family;               /* AF_INET, AF_INET6, or AF_UNSPEC for "*" (any address) and for
				   * a wildcard name (pattern) */
	char pattern[CFG_PATTERN_MAX];   /* "*.example.com": matched against the client's name
					  * (reverse, then forward-confirmed); "" otherwise */
	uint8_t addr[16];         /* network byte order; IPv4 uses the first 4 bytes */
	unsigned prefix;          /* prefix length in bits (32 / 128 for a single host) */
	bool rw;                  /* default ro, as exports(5) */
	enum squash_mode squash;  /* default root_squash */
	uid_t anonuid;            /* default 65534 */
	gid_t anongid;            /* default 65534 */
	bool secure;              /* default secure: source port must be < 1024 */
	bool subtree_check;       /* default no_subtree_check (knfsd's): a handle's file must lie
				   * under the export root, not just on its file system */
	/* sec=: the flavors a call may come with, as pseudo-flavors (RPC_AUTH_SYS, RPC_AUTH_KRB5,
	 * _KRB5I, _KRB5P, RPC_AUTH_NONE), in the order written, which is the order of preference
	 * MNT tells the client; default sys alone, as knfsd. export_flavor_ok() says what a
	 * call's flavor may be. */
	uint32_t sec[CFG_SEC_MAX];
	unsigned nsec;            /* at least 1 */
};

struct export_cfg {
	char *path;               /* absolute, canonical (realpath) */
	uint32_t fsid;            /* "fsid = N" or derived from the path; unique among exports */
	struct client_rule *clients;
	size_t nclients;
	enum io_mode write_mode;  /* default cached */
	enum io_mode read_mode;   /* default direct */
	size_t block;             /* boundary-cache block; 0 = auto */
	unsigned line;            /* line of the [export ...] header, for messages */
	char *dropin;             /* the file of exports_dir it is in; NULL: the main file */
};

#define CFG_LISTEN_MAX 8           /* addresses of [server] listen */

struct config {
	char *listen;             /* the addresses to bind, as written, default 127.0.0.1 */
	char listen_addr[CFG_LISTEN_MAX][46];   /* each of them (INET6_ADDRSTRLEN) */
	size_t nlisten;
	uint16_t port;            /* NFS, default 2049 */
	uint16_t mount_port;      /* MOUNT, default 20048 */
	unsigned threads;         /* rings, one thread each; default 0: one per online CPU */
	unsigned requests_per_connection;  /* requests of one connection in flight, default 256 */
	unsigned requests_per_ring;        /* requests of one ring in flight, default 1024 */
	unsigned blocking_threads;         /* the pool for calls io_uring has no op for, default 4 */
	size_t max_record;        /* largest RPC record accepted, default 1 MiB + 64 KiB */
	unsigned max_connections;            /* "connections": open at once, default 4096 */
	unsigned max_connections_per_client; /* from one client address, default 1024 */
	size_t receive_memory;    /* records being received or run, all rings, default 512M */
	/* one connection's share of it; set 0: a quarter of it, at least two max_record */
	size_t receive_memory_per_connection;
	size_t receive_memory_per_client;
	unsigned idle_timeout;    /* seconds a connection may stay silent, default 360; 0 never */
	unsigned record_timeout;  /* seconds a begun record may take to arrive, default 30 */
	unsigned reply_cache_entries;   /* duplicate request cache bound, default 16384; 0 off */
	unsigned mount_list_entries;    /* MOUNT's list for DUMP, one per client and export; 4096 */
	size_t reply_cache_size;        /* and its bytes, default 16M */
	char *state_dir;          /* persistent state (file-handle key), default /var/lib/nfsd-uc */
	/* [export] sections in files of their own (*.conf, read in name order), as
	 * /etc/exports.d; default nfsd-uc.d beside the file, which may be missing */
	char *exports_dir;
	enum rpcbind_mode rpcbind;   /* rpcbind = auto | yes | no | own, default auto */
	int log_level;            /* syslog level: LOG_ERR .. LOG_DEBUG, default LOG_INFO */
	size_t cache_size;        /* [cache] size, default 1G */
	size_t cache_file_size;   /* [cache] file_size, default 0: half of size */
	unsigned cache_writeback_depth;   /* [cache] writeback_depth, all rings, default 16 */
	size_t cache_sync_behind; /* [cache] sync_behind, default 0: off */
	char *metrics_listen;     /* [metrics] listen = ADDR:PORT; NULL: no HTTP endpoint */
	unsigned metrics_connections;              /* [metrics] connections, default 16 */
	unsigned metrics_connections_per_client;   /* [metrics] from one address, default 4 */
	unsigned metrics_timeout; /* [metrics] timeout: seconds a connection may take, default 10 */
	uint16_t lock_port;       /* [lock] port of NLM and NSM, TCP and UDP, default 32803; 0: none */
	unsigned grace_period;    /* [lock] seconds of reclaim-only after a restart, default 90 */
	unsigned max_locks, max_locks_per_client;       /* [lock] locks, default 1M and 64K */
	unsigned max_waiters, max_waiters_per_client;   /* [lock] blocked LOCKs, default 16K, 1K */
	unsigned max_names_per_client;  /* [lock] names_per_client: hosts of one address, 64 */
	/* RPCSEC_GSS: the acceptor's keys (nfs/HOST@REALM), default /etc/krb5.keytab; contexts
	 * held at once in all (default 8192) and per client address (default 256); the sequence
	 * window told to clients, 1..1024, default 128. */
	char *keytab;
	unsigned gss_contexts, gss_contexts_per_client, gss_window;
	bool gss_refuse_unmapped;     /* gss_unmapped = refuse: no context for a principal with no
				       * local user (default anonymous: it is the anonymous user) */
	bool gss_crypto_gssapi;       /* gss_crypto = gssapi: MIT's GSS-API makes and checks every
				       * token (default openssl: rpc/gss_krb5.h, for the AES enctypes) */
	struct export_cfg *exports;
	size_t nexports;
	/* where set; 0: the default */
	struct { unsigned listen, state_dir, exports_dir, cache_size, keytab; } line;
};

/* The first krb5 flavor (krb5, krb5i, krb5p) some client rule of c allows, and its export in
 * *export (may be NULL); 0 when none does: then no keytab is needed. */
uint32_t config_first_krb5(const struct config *c, const struct export_cfg **export);

/* Parse FILE into *cfg. Relative paths (export paths, state_dir) are resolved against the
 * directory holding FILE. Export paths must exist and be directories. A file without a single
 * section (empty, or comments only) is refused; one without an export loads (a start with it
 * serves nothing yet), but a reload refuses it (exptable.h).
 * Returns 0, or -1 with err set to "FILE:LINE: what is wrong" (no trailing newline). On
 * failure *cfg holds nothing that needs freeing. */
int config_load(const char *file, struct config *cfg, char *err, size_t errlen);
void config_free(struct config *cfg);

/* What the file asks of this host that the parser does not see, each check a flag: a state_dir
 * that can be made (its parent exists), listen addresses this host has, a cache that fits in
 * the host's memory, a keytab that exists when some client rule allows a krb5 flavor. --check
 * makes all four; a start makes the first (the bind finds the second, and the third is a
 * warning there: a small machine may run with the defaults). Returns the number of problems,
 * each a "FILE:LINE: ..." line added to err (which config_load's may already hold). */
enum { CFG_CHECK_STATE_DIR = 1, CFG_CHECK_LISTEN = 2, CFG_CHECK_MEMORY = 4,
       CFG_CHECK_KEYTAB = 8, CFG_CHECK_ALL = 15 };
int config_check_host(const struct config *cfg, const char *file, unsigned checks, char *err,
		      size_t errlen);

/* The configuration in force, defaults included, as a file that loads to the same (but with
 * host names resolved to their addresses). */
#include <stdio.h>
void config_dump(const struct config *cfg, FILE *f);

/* "127.0.0.1:9101", "[::1]:9101" -> *ss. 0, or -1 when it is not ADDRESS:PORT. */
struct sockaddr_storage;
int config_parse_hostport(const char *val, struct sockaddr_storage *ss);

/* "64M", "16K", "1G", "4096" -> bytes; -1 on junk or overflow. */
long long config_parse_size(const char *s);

#endif
