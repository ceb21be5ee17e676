#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# krb5.sh - linux-client-krb5: a real Linux kernel NFSv3 client (Debian's kernel under QEMU)
# mounts nfsd-uc with Kerberos, sec=krb5, krb5i and krb5p (RPCSEC_GSS, issue 37). Runs
# tests/linux-client/guest/krb5.sh in the guest.
# What it shares with lock.sh (namespace, tap, server launch, guest run, verdict) is in
# tapguest.sh, sourced.
#
#   krb5.sh NFSD_UC_EXE
#
# As lock.sh, the test makes a network namespace of its own holding a tap device: the server
# (SRV_IP, default 10.232.0.1, named SRV_NAME = server.nfsduc.test) and the guest (GUEST_IP,
# 10.232.0.2, guest.nfsduc.test) are two hosts on a /24 that leads nowhere else; names come from
# /etc/hosts on both sides. On the host side of the namespace runs an MIT KDC of the test's
# own (krb5kdc, realm NFSDUC.TEST, as tests/with_kdc.sh makes one, but listening on port 88 of
# SRV_IP, where the guest reaches it), with the principals nfs/SRV_NAME (the server's keytab),
# host/GUEST_NAME (the guest's /etc/krb5.keytab: rpc.gssd's machine credential, for root's
# calls) and alice (a password). The server runs in the namespace in a mount and UTS namespace
# of its own (hostname SRV_NAME, tmpfs /run, its own /etc/hosts, and /etc/passwd and /etc/group
# that are the host's plus the user alice with uid 4242: what the server maps alice@NFSDUC.TEST
# to; the host's files are not touched), KRB5_CONFIG naming the realm. nfsd-uc gets
# `keytab = ` the server's keytab and two exports: export (sec=krb5:krb5i:krb5p) and exportp
# (sec=krb5p), each with a directory alice (owned by 4242, mode 0755) and pub (mode 1777).
# The guest runs rpc.gssd, keeps a first krb5p mount of exportp to the end (it pins the kernel's
# upcall to gssd's text pipe: see guest/krb5.sh), kinit's alice (uid 4242 there too) and checks:
#   1 kinit       alice gets a ticket from the KDC with her password
#   2 krb5        mount -o vers=3,proto=tcp,mountproto=tcp,nolock,sec=FLAVOR of export;
#   3 krb5i       /proc/mounts shows sec=FLAVOR and mountstats its pseudoflavor; alice writes
#   4 krb5p       MIB MiB (4) with cp and as many with dd oflag=direct, new bytes each; after
#                 drop_caches every file so far (earlier flavors' too) reads back equal
#                 (SHA-256), buffered and with dd iflag=direct; alice's files are uid 4242 on
#                 the server (the principal was mapped to its user); a user with no ticket
#                 (uid 1001) is refused, EACCES, reading a file of mode 0644, listing pub
#                 and creating a file there (listing the export's root fails too: ESTALE,
#                 the client's own mapping of that EACCES, see the guest script)
#   5 krb5p-only  mount -o sec=sys and -o sec=krb5 of exportp are refused, and sec=sys of
#                 export; a mount of exportp with no sec= gets sec=krb5p (MNT's list);
#                 sec=krb5p of exportp mounts and passes the checks of 2-4
# and on the host:
#   6 server      the files' SHA-256 on the exported file system are the guest's, and their
#                 owner 4242; nothing in pub; no error lines in the server's log; the server
#                 stayed up and (nfsd-uc) exits 0 on SIGTERM; nfsd-uc's counters (its
#                 Prometheus endpoint on the namespace's loopback) show calls of each service
#                 (krb5, krb5i, krb5p), no header or body that failed its check
#
# Needs root, /dev/net/tun, iproute2, util-linux, the MIT KDC (krb5-kdc, krb5-admin-server)
# and the VM image of setup.sh with its Kerberos tools (run `setup.sh` once as root). Exit 0
# when every check passed, 1 when one failed, 77 (skip, with the reason) only when this
# machine cannot make the namespace or the tap device or boot the guest (an image without
# rpc.gssd is a guest that cannot be made): never for a server that fails. On a failure the
# guest's console, rpc.gssd's log and the server's log are printed. 1 to 2.5 minutes on two
# busy cores.
#
# Environment (all optional):
#   NFSD_UC_LC_SERVER=ganesha   run the same checks against NFS-Ganesha with krb5 (NFS_KRB5
#                               with PrincipalName nfs@SRV_NAME, KeytabPath, Active_krb5; an
#                               EXPORT with SecType = krb5, krb5i, krb5p and one with krb5p;
#                               rpcbind started beside it); the executable is then NFSD_UC_EXE
#                               if it is ganesha.nfsd, else the installed one. Check 6 has no
#                               counters then
#   NFSD_UC_LC_GANESHA_DEBUG=1  Ganesha's RPCSEC_GSS and IDMAPPER components at FULL_DEBUG
#   NFSD_UC_LC_CONF_EXTRA       lines appended to nfsd-uc's conf
#   NFSD_UC_LC_MIB              MiB per file (4)
#   NFSD_UC_LC_NET              first three octets of the namespace's /24 (10.232.0)
#   NFSD_UC_LC_SMP / NFSD_UC_LC_MEM   guest CPUs (1) and MiB (1024)
#   NFSD_UC_LC_BUDGET           seconds for the whole run (420, under meson's 480)
#   NFSD_UC_LC_KEEP=1           keep the work directory (/tmp/nfsd-uc-k5.*): the KDC's log,
#                               the server's, rpc.gssd's (job/gssd.log) and the guest's dmesg
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=tapguest.sh
. "$HERE/tapguest.sh"   # the namespace, the tap, the server's launch, the guest, the verdict
EXE=${1:-}
tg_init linux-client-krb5 k5 232 KPID   # KPID: the KDC, killed at exit like the server
REALM=NFSDUC.TEST
DOMAIN=nfsduc.test
SRV_NAME=server.$DOMAIN
GUEST_NAME=guest.$DOMAIN
KUSER=alice KUID=4242 KPASS=alice-password NOUID=1001
MIB=${NFSD_UC_LC_MIB:-4}
METRICS=127.0.0.1:9101     # nfsd-uc's Prometheus endpoint, on the namespace's loopback

# A Ganesha that is asked for and missing fails the run: only the machine's lacks skip it. The
# KDC's tools are host packages setup.sh installs: missing, they fail it too.
preflight() {
	local t
	tg_server_exe fail_exit rpcbind rpcinfo
	tg_host_ready
	PATH=$PATH:/usr/sbin
	for t in kdb5_util kadmin.local krb5kdc; do
		command -v "$t" >/dev/null ||
			fail_exit "$t is missing: the test's KDC needs krb5-kdc and krb5-admin-server (run $HERE/setup.sh as root)"
	done
	tg_image krb5 "no rpc.gssd/kinit or no rpcsec_gss_krb5 module (host packages nfs-common, krb5-user)"
}

# ---- the KDC: a realm in $W/kdc (as tests/with_kdc.sh), krb5kdc in the namespace on port 88
# of every address there (SRV_IP for the guest, 127.0.0.1 for the server's side)
kdc_up() {
	local K=$W/kdc i out
	mkdir -p "$K"
	# the guest's krb5.conf (the server's side uses the same with its own ccache)
	cat >"$W/krb5.conf" <<EOF
[libdefaults]
	default_realm = $REALM
	dns_lookup_kdc = false
	dns_lookup_realm = false
	rdns = false
	dns_canonicalize_hostname = false
	udp_preference_limit = 1
	default_ccache_name = FILE:/tmp/krb5cc_%{uid}
[realms]
	$REALM = {
		kdc = $SRV_IP:88
	}
[domain_realm]
	.$DOMAIN = $REALM
	$DOMAIN = $REALM
EOF
	cat >"$K/kdc.conf" <<EOF
[kdcdefaults]
	kdc_ports = 88
	kdc_tcp_ports = 88
[realms]
	$REALM = {
		database_name = $K/principal
		key_stash_file = $K/stash
		acl_file = $K/kadm5.acl
		max_life = 2h
	}
[logging]
	kdc = FILE:$K/kdc.log
EOF
	export KRB5_CONFIG=$W/krb5.conf KRB5_KDC_PROFILE=$K/kdc.conf KRB5CCNAME=FILE:$K/ccache
	export KRB5RCACHEDIR=$W   # the acceptors' replay caches: not in /var/tmp
	out=$(kdb5_util create -s -r "$REALM" -P master-password 2>&1) || fail_exit "kdb5_util create: $out"
	local p
	for p in "nfs/$SRV_NAME" "host/$GUEST_NAME"; do
		out=$(kadmin.local -q "addprinc -randkey $p" 2>&1) || fail_exit "kadmin.local addprinc $p: $out"
	done
	out=$(kadmin.local -q "addprinc -pw $KPASS $KUSER" 2>&1) || fail_exit "kadmin.local addprinc $KUSER: $out"
	mkdir -p "$W/job"
	kadmin.local -q "ktadd -k $W/server.keytab nfs/$SRV_NAME" >/dev/null 2>&1
	kadmin.local -q "ktadd -k $W/job/krb5.keytab host/$GUEST_NAME" >/dev/null 2>&1
	[[ -s $W/server.keytab && -s $W/job/krb5.keytab ]] || fail_exit "kadmin.local ktadd made no keytab"
	nsx krb5kdc -n -P "$K/kdc.pid" </dev/null >"$K/krb5kdc.out" 2>&1 &
	KPID=$!
	for ((i = 0; i < 100; i++)); do
		kill -0 "$KPID" 2>/dev/null || break
		nsx bash -c "exec 3<>/dev/tcp/$SRV_IP/88" 2>/dev/null && break
		sleep 0.1
	done
	kill -0 "$KPID" 2>/dev/null || fail_exit "krb5kdc exited: $(cat "$K/krb5kdc.out" "$K/kdc.log" 2>/dev/null | tail -n 5 | tr '\n' ' ')"
	# the KDC answers through SRV_IP (the guest's way): the server's key gets a ticket
	out=$(nsx kinit -k -t "$W/server.keytab" "nfs/$SRV_NAME@$REALM" 2>&1) ||
		fail_exit "the KDC at $SRV_IP:88 gave no ticket for the server's key: $out"
	kdestroy >/dev/null 2>&1
	say "KDC pid $KPID on $SRV_IP:88, realm $REALM; server keytab: $(klist -k "$W/server.keytab" | awk 'NR > 3 {print $2}' | sort -u | tr '\n' ' ')guest keytab: $(klist -k "$W/job/krb5.keytab" | awk 'NR > 3 {print $2}' | sort -u | tr '\n' ' ')"
}

# ---- the server under test, inside the namespace
write_conf() {
	if [[ $SERVER == ganesha ]]; then
		cat >"$W/idmapd.conf" <<EOF
[General]
Domain = $DOMAIN
Local-Realms = $REALM
[Mapping]
Nobody-User = nobody
Nobody-Group = nogroup
[Translation]
Method = nsswitch
EOF
		cat >"$W/server.conf" <<EOF
NFS_CORE_PARAM { Protocols = 3; Bind_addr = $SRV_IP; NFS_Port = 2049; MNT_Port = 20048;
  Enable_NLM = false; Enable_RQUOTA = false; Enable_UDP = false; }
NFSv4 { Graceless = true; RecoveryRoot = "$W/ganesha-recov"; IdmapConf = "$W/idmapd.conf"; }
NFS_KRB5 { PrincipalName = "nfs@$SRV_NAME"; KeytabPath = "$W/server.keytab";
  CCacheDir = "$W/ganesha-ccache"; Active_krb5 = true; }
EXPORT { Export_Id = 1; Path = $W/export; Pseudo = $W/export; Protocols = 3; Transports = TCP;
  Access_Type = RW; Squash = Root_Squash; SecType = krb5, krb5i, krb5p; FSAL { Name = VFS; } }
EXPORT { Export_Id = 2; Path = $W/exportp; Pseudo = $W/exportp; Protocols = 3; Transports = TCP;
  Access_Type = RW; Squash = Root_Squash; SecType = krb5p; FSAL { Name = VFS; } }
LOG { Default_Log_Level = EVENT; ${NFSD_UC_LC_GANESHA_DEBUG:+COMPONENTS { RPCSEC_GSS = FULL_DEBUG; IDMAPPER = FULL_DEBUG; DISPATCH = DEBUG; \}} }
EOF
		return
	fi
	tg_conf_head
	cat >>"$W/server.conf" <<EOF
rpcbind = own
keytab = $W/server.keytab

[metrics]
listen = $METRICS

[export $W/export]
clients = $PREFIX.0/24(rw,sec=krb5:krb5i:krb5p)

[export $W/exportp]
clients = $PREFIX.0/24(rw,sec=krb5p)
EOF
	[[ -n ${NFSD_UC_LC_CONF_EXTRA:-} ]] && printf '\n%s\n' "$NFSD_UC_LC_CONF_EXTRA" >>"$W/server.conf"
}

# The server's namespace: hostname SRV_NAME, its own /etc/hosts naming both sides and
# /etc/passwd and /etc/group that are the host's plus alice (what alice@REALM maps to); Ganesha
# gets an rpcbind beside it (it registers there). Both exports hold alice's directory and pub.
start_server() {
	local e f binds=""
	mkdir -p "$W/state" "$W/ganesha-recov" "$W/ganesha-ccache" "$W/etc"
	for e in export exportp; do
		mkdir -p "$W/$e/$KUSER" "$W/$e/pub"
		chown "$KUID:$KUID" "$W/$e/$KUSER"
		chmod 755 "$W/$e" "$W/$e/$KUSER"
		chmod 1777 "$W/$e/pub"
	done
	printf '127.0.0.1 localhost\n::1 localhost\n%s %s %s\n%s %s %s\n' "$SRV_IP" "$SRV_NAME" "${SRV_NAME%%.*}" \
		"$GUEST_IP" "$GUEST_NAME" "${GUEST_NAME%%.*}" >"$W/etc/hosts"
	{ grep -v "^$KUSER:" /etc/passwd; echo "$KUSER:x:$KUID:$KUID:krb5 test user:/nonexistent:/usr/sbin/nologin"; } >"$W/etc/passwd"
	{ grep -v "^$KUSER:" /etc/group; echo "$KUSER:x:$KUID:"; } >"$W/etc/group"
	chmod 644 "$W/etc/passwd" "$W/etc/group" "$W/etc/hosts"
	for f in hosts passwd group; do binds+=" etc/$f=/etc/$f"; done
	write_conf
	[[ $SERVER == ganesha ]] && SRV_RB=1
	tg_start_server "$SRV_NAME" "$binds" "100003/3/tcp 100005/3/tcp" "$KUSER"
}

# the guest's job: krb5.sh, the realm's krb5.conf, the host/ keytab kdc_up put there, and env
write_job() {
	local j=$W/job
	cp "$W/krb5.conf" "$j/krb5.conf"
	chmod 644 "$j/krb5.keytab"   # the 9p share's copy; the guest keeps its own at 0600
	cat >"$j/env" <<EOF
SERVER_IP=$SRV_IP
SERVER_NAME=$SRV_NAME
GUEST_IP=$GUEST_IP
GUEST_NAME=$GUEST_NAME
NETBITS=24
REALM=$REALM
EXPORT=$W/export
EXPORTP=$W/exportp
KUSER=$KUSER
KUID=$KUID
KPASS=$KPASS
NOUID=$NOUID
MIB=$MIB
OPTMO=120
EOF
}

# ---- check 6's parts
check_files() {  # the guest's files on the exported file system: content and owner
	local p want got own n=0 bad=()
	while read -r p want; do
		[[ -n $p ]] || continue
		n=$((n + 1))
		got=$(sha256sum "$W/$p" 2>/dev/null | cut -d' ' -f1)
		[[ $got == "$want" ]] || bad+=("$p: ${got:-missing} != $want")
		own=$(stat -c %u:%g "$W/$p" 2>/dev/null)
		[[ $own == "$KUID:$KUID" ]] || bad+=("$p owned by ${own:-?} (want $KUID:$KUID)")
	done <"$W/job/sums"
	((n > 0)) || bad+=("the guest wrote no file")
	local pub
	pub=$(find "$W/export/pub" "$W/exportp/pub" -mindepth 1 -printf '%P ' 2>/dev/null)
	[[ -z $pub ]] || bad+=("files made by the user without a ticket: $pub")
	FILES_NUMS="$n file(s) on the export equal to what the guest wrote, owner $KUID:$KUID"
	HOST_FAIL+=("${bad[@]}")
}

GSS_NUMS=""
check_counters() {  # nfsd-uc's RPCSEC_GSS counters, before it stops
	[[ $SERVER == ganesha ]] && { GSS_NUMS="(Ganesha: no counters)"; return; }
	local m v k
	m=$(nsx curl -s --max-time 10 "http://$METRICS/metrics" 2>&1) ||
		{ HOST_FAIL+=("no metrics from http://$METRICS/metrics: $m"); return; }
	val() { awk -v k="$1" '$1 ~ ("(^|_)" k "$") {s += $2} END {print s + 0}' <<<"$m"; }
	for k in krb5 krb5i krb5p; do
		v=$(val "gss_calls_${k}_total")
		((v > 0)) || HOST_FAIL+=("the server counted no $k call (gss_calls_${k}_total $v)")
	done
	for k in gss_bad_headers_total gss_bad_bodies_total; do
		v=$(val "$k")
		((v == 0)) || HOST_FAIL+=("$k $v (want 0)")
	done
	GSS_NUMS="calls krb5 $(val gss_calls_krb5_total) krb5i $(val gss_calls_krb5i_total) krb5p $(val gss_calls_krb5p_total); contexts made $(val gss_contexts_made_total), refused $(val gss_contexts_refused_total); unknown contexts $(val gss_unknown_contexts_total), bad headers $(val gss_bad_headers_total), bad bodies $(val gss_bad_bodies_total), sequence drops $(val gss_sequence_drops_total)"
	say "server's RPCSEC_GSS counters: $GSS_NUMS"
}

show_logs() {  # on a failure, besides the server's: rpc.gssd's in the guest and the KDC's
	say "rpc.gssd in the guest ($W/job/gssd.log, last 60 lines):"
	tail -n 60 "$W/job/gssd.log" 2>/dev/null | sed 's/^/  gssd| /'
	say "KDC log (last 20 lines):"
	tail -n 20 "$W/kdc/kdc.log" 2>/dev/null | sed 's/^/  kdc| /'
}

main() {
	preflight
	tg_net_up "$SRV_NAME" "$GUEST_NAME"
	kdc_up
	start_server
	write_job
	tg_run_guest krb5.sh 360
	[[ -n $DPID ]] && check_counters
	tg_stop_server
	kill -TERM "$KPID" 2>/dev/null
	wait "$KPID" 2>/dev/null
	KPID=""
	FILES_NUMS=""
	check_files
	# not counted against Ganesha: no D-Bus in this sandbox, and the machine credential of its
	# NFSv4 callback channel, looked up at start for the host name "localhost" (Ganesha 4.3's
	# nfs_host_name there), which NFSv3 never uses
	tg_server_check "6 server" ' :DBUS :| :NFS CB :CRIT :ERROR: gssd_refresh_krb5_machine_credential: no usable keytab entry found in keytab .* for connection with host localhost' \
		"$FILES_NUMS" "$GSS_NUMS"
	tg_verdict show_logs "" "1 kinit" "2 krb5" "3 krb5i" "4 krb5p" "5 krb5p-only" "6 server"
}

main
