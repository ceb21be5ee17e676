#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Run PROGRAM beside a Kerberos KDC of its own (MIT's, from Debian's krb5-kdc): a realm in a
# temporary directory, the KDC on a free loopback port, a keytab for nfs/localhost and a user
# alice with a password (no user of this host). Two more principals, for who a principal is on
# the server: one named as a local user of this host that is neither root nor nobody (daemon,
# uid 1 on every Debian; else bin or sys), with a password, and the machine principal
# host/localhost with a keytab of its own (a client's). PROGRAM finds them in the environment:
# KRB5_CONFIG, NFSDUC_KEYTAB, NFSDUC_USER, NFSDUC_PASSWORD, NFSDUC_LOCAL_USER,
# NFSDUC_LOCAL_PASSWORD, NFSDUC_MACHINE, NFSDUC_CLIENT_KEYTAB. Nothing outside the directory is
# touched (no ticket cache).
# NFSDUC_KDC_ENCTYPES, when set (a space-separated list, "aes256-cts-hmac-sha384-192"), is all the
# realm knows: the principals' keys, the tickets' and the GSS contexts' (what tests/unit/rpc's
# gss-krb5-mit checks RFC 8009's enctypes with); unset, MIT's defaults (aes256-cts-hmac-sha1-96).
# usage: with_kdc.sh PROGRAM [ARGS...]   (tests/unit/rpc's gss-ctx, tests/integration's gss)
set -eu
for tool in kdb5_util kadmin.local krb5kdc; do
	command -v "$tool" >/dev/null || [ -x "/usr/sbin/$tool" ] ||
		{ echo "with_kdc: $tool missing (krb5-kdc, krb5-admin-server)" >&2; exit 1; }
done
PATH=$PATH:/usr/sbin
LOCAL_USER=
for u in daemon bin sys; do
	if getent passwd "$u" >/dev/null; then
		LOCAL_USER=$u
		break
	fi
done
[ -n "$LOCAL_USER" ] || { echo "with_kdc: no local user daemon, bin or sys" >&2; exit 1; }
D=$(mktemp -d /tmp/nfsd-uc-kdc.XXXXXX)
KPID=
trap '[ -n "$KPID" ] && kill "$KPID" 2>/dev/null; rm -rf "$D"' EXIT
trap 'exit 143' TERM INT HUP     # a test's timeout: the EXIT trap still stops the KDC and cleans up
REALM=NFSDUC.TEST
# The enctypes' lines of krb5.conf and kdc.conf (each begins a line of its own), or nothing.
LIBDEFAULTS_ENCTYPES=
REALM_ENCTYPES=
if [ -n "${NFSDUC_KDC_ENCTYPES:-}" ]; then
	E=$NFSDUC_KDC_ENCTYPES
	LIBDEFAULTS_ENCTYPES="
	permitted_enctypes = $E
	default_tkt_enctypes = $E
	default_tgs_enctypes = $E"
	REALM_ENCTYPES="
		master_key_type = ${E%% *}
		supported_enctypes = $E"
fi
# The realm's files for a KDC on port $1 (the database's tools read kdc.conf too).
write_conf() {
	PORT=$1
	cat > "$D/krb5.conf" <<CONF
[libdefaults]
	default_realm = $REALM
	dns_lookup_kdc = false
	dns_lookup_realm = false
	rdns = false
	default_ccache_name = FILE:$D/ccache$LIBDEFAULTS_ENCTYPES
[realms]
	$REALM = {
		kdc = 127.0.0.1:$PORT
	}
[domain_realm]
	localhost = $REALM
CONF
	cat > "$D/kdc.conf" <<CONF
[kdcdefaults]
	kdc_ports = $PORT
	kdc_tcp_ports = $PORT
[realms]
	$REALM = {
		database_name = $D/principal
		key_stash_file = $D/stash
		acl_file = $D/kadm5.acl$REALM_ENCTYPES
	}
[logging]
	kdc = FILE:$D/kdc.log
CONF
}
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
write_conf "$(free_port)"
export KRB5_CONFIG="$D/krb5.conf" KRB5_KDC_PROFILE="$D/kdc.conf" KRB5CCNAME="FILE:$D/ccache"
kdb5_util create -s -r "$REALM" -P master-password >/dev/null
kadmin.local -q "addprinc -randkey nfs/localhost" >/dev/null 2>&1
kadmin.local -q "ktadd -k $D/nfs.keytab nfs/localhost" >/dev/null 2>&1
kadmin.local -q "addprinc -pw alice-password alice" >/dev/null 2>&1
kadmin.local -q "addprinc -pw local-password $LOCAL_USER" >/dev/null 2>&1
kadmin.local -q "addprinc -randkey host/localhost" >/dev/null 2>&1
kadmin.local -q "ktadd -k $D/host.keytab host/localhost" >/dev/null 2>&1
# The KDC on a port that was free a moment ago. On a busy machine another program may take it
# first (outgoing connections' local ports come from the same range); the KDC then cannot bind,
# logs "Address already in use" and exits: try another port. Ready when its log says it is
# serving ("commencing operation").
ready=
for _ in 1 2 3 4 5; do
	: > "$D/kdc.log"
	krb5kdc -n -P "$D/kdc.pid" >/dev/null 2>&1 &
	KPID=$!
	for _ in $(seq 300); do
		grep -q "commencing operation" "$D/kdc.log" 2>/dev/null && { ready=1; break; }
		kill -0 "$KPID" 2>/dev/null || break
		sleep 0.1
	done
	[ -n "$ready" ] && break
	kill "$KPID" 2>/dev/null || true
	wait "$KPID" 2>/dev/null || true
	KPID=
	echo "with_kdc: the KDC did not start on port $PORT: $(tail -n 1 "$D/kdc.log"); another port" >&2
	write_conf "$(free_port)"
done
[ -n "$ready" ] || { echo "with_kdc: no KDC after 5 ports (see above)" >&2; exit 1; }
export NFSDUC_KEYTAB="$D/nfs.keytab" NFSDUC_USER=alice NFSDUC_PASSWORD=alice-password
export NFSDUC_LOCAL_USER="$LOCAL_USER" NFSDUC_LOCAL_PASSWORD=local-password
export NFSDUC_MACHINE=host/localhost NFSDUC_CLIENT_KEYTAB="$D/host.keytab"
"$@"
