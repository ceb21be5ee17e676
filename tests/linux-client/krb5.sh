#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# krb5.sh - linux-client-krb5: a real Linux kernel NFSv3 client (Debian's kernel under QEMU)
# mounts nfsd-uc with Kerberos, sec=krb5, krb5i and krb5p (RPCSEC_GSS, issue 37). Runs
# tests/linux-client/guest/krb5.sh in the guest.
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
EXE=${1:-}
SERVER=${NFSD_UC_LC_SERVER:-nfsd-uc}
PREFIX=${NFSD_UC_LC_NET:-10.232.0}
SRV_IP=$PREFIX.1
GUEST_IP=$PREFIX.2
SRV_IP6=fd00:232::1   # only so that getaddrinfo(AI_ADDRCONFIG) answers AF_INET6 (Ganesha's Bind_addr)
REALM=NFSDUC.TEST
DOMAIN=nfsduc.test
SRV_NAME=server.$DOMAIN
GUEST_NAME=guest.$DOMAIN
KUSER=alice KUID=4242 KPASS=alice-password NOUID=1001
MIB=${NFSD_UC_LC_MIB:-4}
NS=nfsduc-k5-$$       # this run's own namespace: every process in it was started here
TAP=k5tap0
MEM=${NFSD_UC_LC_MEM:-1024}
SMP=${NFSD_UC_LC_SMP:-1}   # one vCPU: the host's other core runs the server
BUDGET=${NFSD_UC_LC_BUDGET:-420}
METRICS=127.0.0.1:9101     # nfsd-uc's Prometheus endpoint, on the namespace's loopback
T_START=$(date +%s)
W="" DPID="" QPID="" KPID="" IMG="" NS_MADE=0
HOST_FAIL=()

say() { printf '[linux-client-krb5] %s\n' "$*"; }
skip() { say "SKIP: $*"; exit 77; }
fail_exit() { say "FAIL: $*"; exit 1; }
elapsed() { echo $(($(date +%s) - T_START)); }
nsx() { ip netns exec "$NS" "$@"; }

cleanup() {
	local p
	[[ -n $QPID ]] && kill -KILL "$QPID" 2>/dev/null
	[[ -n $DPID ]] && kill -KILL "$DPID" 2>/dev/null
	[[ -n $KPID ]] && kill -KILL "$KPID" 2>/dev/null
	if ((NS_MADE)); then
		# rpcbind of the Ganesha mode, anything left: all started by this run
		for p in $(ip netns pids "$NS" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
		wait 2>/dev/null
		ip netns del "$NS" 2>/dev/null
	fi
	wait 2>/dev/null
	if [[ -n $W && ${NFSD_UC_LC_KEEP:-0} != 1 ]]; then rm -rf "$W"; elif [[ -n $W ]]; then say "kept $W"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

preflight() {
	local t
	if [[ $SERVER == ganesha ]]; then
		[[ $(basename "${EXE:-x}") == ganesha.nfsd ]] || EXE=$(command -v ganesha.nfsd || true)
		[[ -n $EXE && -x $EXE ]] || fail_exit "NFSD_UC_LC_SERVER=ganesha: ganesha.nfsd is not installed (nfs-ganesha, nfs-ganesha-vfs)"
		ls /usr/lib/*/ganesha/libfsalvfs.so >/dev/null 2>&1 || fail_exit "NFSD_UC_LC_SERVER=ganesha: nfs-ganesha-vfs is not installed"
		for t in rpcbind rpcinfo; do command -v "$t" >/dev/null || fail_exit "NFSD_UC_LC_SERVER=ganesha: $t is not installed"; done
	else
		[[ -n $EXE && -x $EXE ]] || { say "usage: $0 NFSD_UC_EXE (got '$EXE')"; exit 2; }
	fi
	[[ $(id -u) == 0 ]] || skip "needs root for the network namespace and the tap device"
	for t in qemu-system-x86_64 ip unshare; do
		command -v "$t" >/dev/null || skip "$t is not installed: run $HERE/setup.sh as root"
	done
	[[ -c /dev/net/tun ]] || skip "/dev/net/tun is missing: no tap device possible"
	PATH=$PATH:/usr/sbin
	for t in kdb5_util kadmin.local krb5kdc; do
		command -v "$t" >/dev/null ||
			fail_exit "$t is missing: the test's KDC needs krb5-kdc and krb5-admin-server (run $HERE/setup.sh as root)"
	done
	IMG=$("$HERE/setup.sh" --no-install --print | tail -n 1)
	[[ -n $IMG && -f $IMG/ok ]] || skip "the VM image could not be prepared (messages above): run $HERE/setup.sh as root"
	grep -qw krb5 "$IMG/features" 2>/dev/null ||
		skip "the VM image has no rpc.gssd/kinit or no rpcsec_gss_krb5 module (host packages nfs-common, krb5-user): run $HERE/setup.sh as root"
	W=$(mktemp -d /tmp/nfsd-uc-k5.XXXXXX)
	chmod 755 "$W"
}

net_up() {
	local out
	out=$(ip netns add "$NS" 2>&1) || skip "cannot create a network namespace: $out"
	NS_MADE=1
	nsx ip link set lo up || skip "cannot bring up lo in the namespace"
	out=$(nsx ip tuntap add dev "$TAP" mode tap 2>&1) || skip "cannot create a tap device: $out"
	if ! { nsx ip addr add "$SRV_IP/24" dev "$TAP" && nsx ip -6 addr add "$SRV_IP6/64" dev "$TAP" nodad &&
		nsx ip link set "$TAP" up; }; then
		skip "cannot configure the tap device"
	fi
	say "namespace $NS: $TAP $SRV_IP/24 ($SRV_NAME), guest $GUEST_IP ($GUEST_NAME)"
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
	cat >"$W/server.conf" <<EOF
[server]
listen = $SRV_IP
port = 2049
mount_port = 20048
state_dir = $W/state
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

# Runs in the namespace, in a mount and UTS namespace of its own: hostname SRV_NAME, tmpfs /run,
# /etc/hosts, /etc/passwd and /etc/group of its own; K5_RPCBIND starts rpcbind first; then
# execs the server.
# shellcheck disable=SC2016
SRV_WRAP='
hostname "$K5_NAME"
mount -t tmpfs -o mode=755 tmpfs /run || exit 97
mkdir -p /run/rpcbind /run/lock
chown _rpc /run/rpcbind 2>/dev/null
for f in hosts passwd group; do mount --bind "$K5_DIR/etc/$f" /etc/$f || exit 97; done
echo "=== server namespace: $(hostname), $(ip -4 -br addr | tr "\n" " "), $(getent passwd "$K5_USER")"
if [ -n "$K5_RPCBIND" ]; then
	rpcbind -f >"$K5_DIR/rpcbind.log" 2>&1 &
	for i in $(seq 50); do [ -S /run/rpcbind.sock ] && break; sleep 0.1; done
	[ -S /run/rpcbind.sock ] || { echo "=== rpcbind did not start"; exit 98; }
fi
echo "=== exec $*"
exec "$@"'

registered() {  # the programs the server's portmapper lists, "prog/vers/proto ..."
	nsx rpcinfo -p "$SRV_IP" 2>/dev/null | awk 'NR > 1 {print $1 "/" $2 "/" $3}' | sort -u | tr '\n' ' '
}

start_server() {
	local log=$W/server.log i st rb=""
	mkdir -p "$W/state" "$W/ganesha-recov" "$W/ganesha-ccache" "$W/etc"
	local e
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
	write_conf
	local cmd=("$EXE" -c "$W/server.conf")
	if [[ $SERVER == ganesha ]]; then
		rb=1   # Ganesha registers with rpcbind
		cmd=("$EXE" -F -f "$W/server.conf" -L "$log" -N NIV_EVENT -p "$W/ganesha.pid")
	fi
	say "server: ${cmd[*]} (in $NS, hostname $SRV_NAME${rb:+; rpcbind started beside it})"
	sed 's/^/  conf| /' "$W/server.conf"
	K5_DIR=$W K5_NAME=$SRV_NAME K5_USER=$KUSER K5_RPCBIND=$rb \
		ip netns exec "$NS" unshare --uts bash -c "$SRV_WRAP" srv "${cmd[@]}" </dev/null >>"$log" 2>&1 &
	DPID=$!
	for ((i = 0; i < 600; i++)); do
		if ! kill -0 "$DPID" 2>/dev/null; then
			wait "$DPID"
			st=$?
			DPID=""
			((st == 97)) && ! grep -q '^=== exec' "$log" && skip "cannot make the server's private mount namespace: $(tail -n 3 "$log" | tr '\n' ' ')"
			say "FAIL: the server exited with status $st at start-up; its log:"
			sed 's/^/  server| /' "$log"
			exit 1
		fi
		if [[ $SERVER == ganesha ]]; then
			[[ $(registered) == *100003/3/tcp*100005/3/tcp* ]] && break
		else
			grep -q 'nfsd-uc info: ready' "$log" && break
		fi
		sleep 0.1
	done
	((i < 600)) || { say "FAIL: the server was not ready within 60 s; its log:"; sed 's/^/  server| /' "$log"; exit 1; }
	say "server pid $DPID ready after $(elapsed) s"
}

stop_server() {  # SIGTERM; records what went wrong in HOST_FAIL
	local i st
	[[ -n $DPID ]] || return
	kill -TERM "$DPID" 2>/dev/null
	for ((i = 0; i < 200; i++)); do kill -0 "$DPID" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$DPID" 2>/dev/null; then
		HOST_FAIL+=("the server still ran 20 s after SIGTERM: killed")
		kill -KILL "$DPID"
	fi
	wait "$DPID"
	st=$?
	DPID=""
	say "server stopped (SIGTERM): exit status $st"
	if [[ $SERVER != ganesha && $st != 0 ]]; then HOST_FAIL+=("the server exited with status $st after SIGTERM (want 0)"); fi
}

# ---- the guest
run_guest() {  # $1=timeout seconds
	local j=$W/job t0
	mkdir -p "$j"
	cp "$HERE/guest/krb5.sh" "$j/main.sh"
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
	t0=$(date +%s)
	ip netns exec "$NS" qemu-system-x86_64 -accel tcg -cpu max -m "$MEM" -smp "$SMP" -machine q35 \
		-nodefaults -no-reboot -display none -monitor none -serial "file:$j/console.log" \
		-kernel "$IMG/vmlinux" -initrd "$IMG/initrd.img" \
		-append "console=ttyS0 quiet loglevel=4 panic=-1 rdinit=/init" \
		-netdev "tap,id=n0,ifname=$TAP,script=no,downscript=no" \
		-device virtio-net-pci,netdev=n0,romfile=,mac=52:54:00:e7:00:02 \
		-fsdev "local,id=fs0,path=$j,security_model=none" -device virtio-9p-pci,fsdev=fs0,mount_tag=hostjob \
		</dev/null >"$j/qemu.log" 2>&1 &
	QPID=$!
	while kill -0 "$QPID" 2>/dev/null; do
		if [[ -n $DPID ]] && ! kill -0 "$DPID" 2>/dev/null; then
			wait "$DPID"
			HOST_FAIL+=("the server exited on its own (status $?) during the guest run")
			DPID=""
		fi
		if (($(date +%s) - t0 > $1)); then
			HOST_FAIL+=("the guest still ran after $1 s: stopped")
			kill -KILL "$QPID"
			break
		fi
		sleep 0.2
	done
	wait "$QPID" 2>/dev/null
	QPID=""
	say "guest ran $(($(date +%s) - t0)) s"
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

log_errors() {
	if [[ $SERVER == ganesha ]]; then
		# not counted: no D-Bus in this sandbox, and the machine credential of its NFSv4
		# callback channel, looked up at start for the host name "localhost" (Ganesha 4.3's
		# nfs_host_name there), which NFSv3 never uses
		grep -E ' :(FATAL|MAJ|CRIT) :' "$W/server.log" |
			grep -vE ' :DBUS :| :NFS CB :CRIT :ERROR: gssd_refresh_krb5_machine_credential: no usable keytab entry found in keytab .* for connection with host localhost'
	else
		grep -E ' nfsd-uc (emerg|alert|crit|error): ' "$W/server.log"
	fi
}

main() {
	preflight
	net_up
	say "server $SERVER ($EXE), image $IMG, kernel $(cat "$IMG/kver")"
	kdc_up
	start_server
	local tmo=$((BUDGET - $(elapsed) - 30))
	((tmo > 360)) && tmo=360
	((tmo >= 60)) || fail_exit "no time left for the guest (budget $BUDGET s, NFSD_UC_LC_BUDGET)"
	run_guest "$tmo"
	local j=$W/job
	if ! grep -q 'GUEST up' "$j/console.log" 2>/dev/null; then
		say "the guest did not boot; console and QEMU messages:"
		sed 's/^/  guest| /' "$j/console.log" 2>/dev/null
		sed 's/^/  qemu| /' "$j/qemu.log"
		skip "QEMU cannot boot the Debian kernel on this machine"
	fi
	[[ -n $DPID ]] && check_counters
	stop_server
	kill -TERM "$KPID" 2>/dev/null
	wait "$KPID" 2>/dev/null
	KPID=""
	FILES_NUMS=""
	check_files
	local n=0 errs
	errs=$(log_errors)
	if [[ -n $errs ]]; then
		n=$(printf '%s\n' "$errs" | wc -l)
		HOST_FAIL+=("the server's log has $n error line(s): $(printf '%s\n' "$errs" | head -n 3 | tr '\n' '|')")
	fi
	local c6
	c6="$FILES_NUMS; error lines $n, warnings $(grep -cE ' nfsd-uc warning: | :WARN :' "$W/server.log"); $GSS_NUMS"
	local fails=()
	local f
	for f in "${HOST_FAIL[@]}"; do [[ -n $f ]] && fails+=("$f"); done
	if ((${#fails[@]})); then
		echo "6 server FAIL $(IFS=';'; echo "${fails[*]}") | $c6" >>"$j/results"
	else
		echo "6 server PASS $c6; the server stayed up and stopped cleanly" >>"$j/results"
	fi
	local ok=1 want r
	for want in "1 kinit" "2 krb5" "3 krb5i" "4 krb5p" "5 krb5p-only" "6 server"; do
		grep -q "^$want PASS" "$j/results" 2>/dev/null || ok=0
		grep -q "^$want " "$j/results" 2>/dev/null || echo "$want FAIL (not run; guest rc $(cat "$j/rc" 2>/dev/null || echo none))" >>"$j/results"
	done
	[[ $(cat "$j/rc" 2>/dev/null) == 0 ]] || ok=0
	sed 's/^/  guest| /' "$j/console.log"
	if ((ok == 0)); then
		say "rpc.gssd in the guest ($j/gssd.log, last 60 lines):"
		tail -n 60 "$j/gssd.log" 2>/dev/null | sed 's/^/  gssd| /'
		say "server log ($W/server.log, last 200 lines):"
		tail -n 200 "$W/server.log" | sed 's/^/  server| /'
		say "KDC log (last 20 lines):"
		tail -n 20 "$W/kdc/kdc.log" 2>/dev/null | sed 's/^/  kdc| /'
		[[ -s $W/rpcbind.log ]] && tail -n 20 "$W/rpcbind.log" | sed 's/^/  rpcbind| /'
		say "QEMU messages: $(tr '\n' ' ' <"$j/qemu.log")"
	fi
	say "results ($SERVER, $(elapsed) s):"
	while read -r r; do say "  $r"; done < <(sort -n "$j/results")
	if ((ok)); then say "PASS"; return 0; fi
	say "FAIL"
	return 1
}

main
