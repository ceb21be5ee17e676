#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Run PROGRAM beside a Kerberos KDC of its own (MIT's, from Debian's krb5-kdc): a realm in a
# temporary directory, the KDC on a free loopback port, a keytab for nfs/localhost and a user
# alice with a password. PROGRAM finds them in the environment: KRB5_CONFIG, NFSDUC_KEYTAB,
# NFSDUC_USER, NFSDUC_PASSWORD. Nothing outside the directory is touched (no ticket cache).
# usage: with_kdc.sh PROGRAM [ARGS...]   (tests/unit/rpc's gss-ctx, tests/integration's gss)
set -eu
for tool in kdb5_util kadmin.local krb5kdc; do
	command -v "$tool" >/dev/null || [ -x "/usr/sbin/$tool" ] ||
		{ echo "with_kdc: $tool missing (krb5-kdc, krb5-admin-server)" >&2; exit 1; }
done
PATH=$PATH:/usr/sbin
D=$(mktemp -d /tmp/nfsd-uc-kdc.XXXXXX)
KPID=
trap '[ -n "$KPID" ] && kill "$KPID" 2>/dev/null; rm -rf "$D"' EXIT
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
REALM=NFSDUC.TEST
cat > "$D/krb5.conf" <<CONF
[libdefaults]
	default_realm = $REALM
	dns_lookup_kdc = false
	dns_lookup_realm = false
	rdns = false
	default_ccache_name = FILE:$D/ccache
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
		acl_file = $D/kadm5.acl
	}
[logging]
	kdc = FILE:$D/kdc.log
CONF
export KRB5_CONFIG="$D/krb5.conf" KRB5_KDC_PROFILE="$D/kdc.conf" KRB5CCNAME="FILE:$D/ccache"
kdb5_util create -s -r "$REALM" -P master-password >/dev/null
kadmin.local -q "addprinc -randkey nfs/localhost" >/dev/null 2>&1
kadmin.local -q "ktadd -k $D/nfs.keytab nfs/localhost" >/dev/null 2>&1
kadmin.local -q "addprinc -pw alice-password alice" >/dev/null 2>&1
krb5kdc -n -P "$D/kdc.pid" >/dev/null 2>&1 &
KPID=$!
# ready when it answers: an AS request for alice that gets a ticket
for _ in $(seq 100); do
	python3 -c "import socket,sys; s=socket.socket(); s.settimeout(0.2); s.connect(('127.0.0.1',$PORT))" \
		2>/dev/null && break
	sleep 0.1
done
export NFSDUC_KEYTAB="$D/nfs.keytab" NFSDUC_USER=alice NFSDUC_PASSWORD=alice-password
"$@"
