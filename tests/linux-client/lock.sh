#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# lock.sh - linux-client-lock: a real Linux kernel NFSv3 client (Debian's kernel under QEMU)
# mounts nfsd-uc WITH locking (NLM + NSM) and checks that locks work, including the server's
# GRANTED callback to the client. Runs tests/linux-client/guest/lock.sh in the guest.
# What it shares with krb5.sh (namespace, tap, server launch, guest run, verdict) is in
# tapguest.sh, sourced.
#
#   lock.sh NFSD_UC_EXE
#
# QEMU's user network makes every guest look like 127.0.0.1 to the host and carries nothing
# from the server to the guest, so this test makes its own network namespace holding a tap
# device: the server (SRV_IP, default 10.231.0.1) and the guest (GUEST_IP, 10.231.0.2) are two
# hosts on a /24 that leads nowhere else. The server runs in that namespace in a private mount
# namespace with its own tmpfs /run (no host rpcbind socket is seen there) and its own
# /etc/hosts naming the guest. nfsd-uc is started with `listen = SRV_IP` and `rpcbind = own`:
# it answers the portmapper on port 111 itself (nothing else listens there) and serves NLM and
# NSM. The guest runs rpcbind and rpc.statd, mounts the export twice (-o vers=3,proto=tcp, the
# second with nosharecache), a third time with -o vers=3 only for check 6, and checks:
#   1 rpcinfo    rpcinfo -p SERVER lists 100003, 100005, 100021 (v4/tcp) and 100024
#   2 fcntl      F_SETLK on mount A; F_GETLK and F_SETLK of another process on mount B see the
#                conflict; after the unlock both succeed
#   3 flock      flock(LOCK_EX) on A (a whole-file NLM lock); LOCK_EX|LOCK_NB on B fails with
#                EWOULDBLOCK while it is held, succeeds after
#   4 blocklock  B's F_SETLKW blocks (BLOCKED at the server) while A holds; A unlocks; B must
#                get the lock within 1000 ms of the unlock (CLOCK_MONOTONIC of the guest);
#                3 rounds
#   6 plainmount mount C with `-o vers=3` only (NFS and MOUNT ports from our portmapper, MOUNT
#                perhaps over UDP); an fcntl lock on C is seen by B (EAGAIN) and released
#   7 reclaim    P holds an F_SETLK lock on A; the guest asks the host (JOB/ctl/N-ACTION.req,
#                answered in .ack) to restart the server with the same conf and state_dir:
#                SIGTERM, then SIGKILL (NFSD_UC_LC_RECLAIM); the host waits for the server's
#                log to show the SM_NOTIFY answered ("notified of the restart") and P's
#                reclaim GRANTED ("LOCK (reclaim) ... GRANTED", log_level = debug) within the
#                grace period ([lock] grace_period = NFSD_UC_LC_GRACE, 15); then B's F_SETLK
#                gets EAGAIN while P still holds, and succeeds after P's unlock
# and on the host:
#   5 server-log the server's log has no error lines; the server stayed up and (nfsd-uc)
#                exits with status 0 on SIGTERM (each time: the restarts of check 7 too)
#
# Needs root, /dev/net/tun, iproute2, util-linux and the VM image of setup.sh with its lock
# tools (run `setup.sh` once as root). Exit 0 when every check passed, 1 when one failed, 77
# (skip, with the reason) only when this machine cannot make the namespace or the tap device or
# boot the guest: never for a server that fails. On a failure the guest's console, the
# server's log and QEMU's messages are printed. About 20 s on two cores (about two minutes
# when the server does not answer NLM: every lock call in the guest is bounded).
# Check 7 is nfsd-uc's own (its state_dir/nsm and SM_NOTIFY at start): not run against Ganesha.
#
# Environment (all optional):
#   NFSD_UC_LC_SERVER=ganesha   check the harness against NFS-Ganesha (rpcbind, rpc.statd and
#                               ganesha.nfsd with NLM in the namespace); the executable is then
#                               NFSD_UC_EXE if it is ganesha.nfsd, else the installed one
#   NFSD_UC_LC_GANESHA_DEBUG=1   Ganesha's NLM component at FULL_DEBUG (its GRANTED callbacks)
#   NFSD_UC_LC_RPCBIND      rpcbind value of nfsd-uc's conf (own). With "yes" an rpcbind is
#                           started in the server's namespace for it to register with
#   NFSD_UC_LC_CONF_EXTRA   lines appended to nfsd-uc's conf (e.g. a [lock] section)
#   NFSD_UC_LC_ROUNDS       blocked-lock hand-offs in check 4 (3; 1 against Ganesha)
#   NFSD_UC_LC_RECLAIM      how the server goes down in the rounds of check 7: "restart"
#                           (SIGTERM) and/or "kill9" (SIGKILL) ("restart kill9"; "" skips it)
#   NFSD_UC_LC_GRACE        [lock] grace_period of nfsd-uc's conf (15)
#   NFSD_UC_LC_NET          first three octets of the namespace's /24 (10.231.0)
#   NFSD_UC_LC_SMP / NFSD_UC_LC_MEM   guest CPUs (1) and MiB (1024)
#   NFSD_UC_LC_BUDGET       seconds for the whole run (420, under meson's 480)
#   NFSD_UC_LC_KEEP=1       keep the work directory (/tmp/nfsd-uc-lk.*)
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=tapguest.sh
. "$HERE/tapguest.sh"   # the namespace, the tap, the server's launch, the guest, the verdict
EXE=${1:-}
tg_init linux-client-lock lk 231
RPCB=${NFSD_UC_LC_RPCBIND:-own}
# Blocked-lock hand-offs of check 4. Ganesha 4.3 gets one: its single State_Async thread, having
# failed to match the client's GRANTED_RES to the GRANTED_MSG it sent, waits seconds for it and
# sends the next round's GRANTED_MSG about a second late.
ROUNDS=${NFSD_UC_LC_ROUNDS:-$([[ $SERVER == ganesha ]] && echo 1 || echo 3)}
# Check 7: server restarts while the guest holds a lock (nfsd-uc only), and its grace period
RECLAIM=${NFSD_UC_LC_RECLAIM-restart kill9}
[[ $SERVER == ganesha ]] && RECLAIM=""
GRACE=${NFSD_UC_LC_GRACE:-15}

preflight() {
	tg_server_exe skip rpcbind rpc.statd rpcinfo
	if [[ $SERVER != ganesha && $RPCB == yes ]]; then
		command -v rpcbind >/dev/null || skip "NFSD_UC_LC_RPCBIND=yes needs rpcbind"
	fi
	tg_host_ready
	tg_image lock "no rpcbind/rpc.statd (host packages rpcbind, nfs-common)"
}

# ---- the server under test, inside the namespace
write_conf() {
	if [[ $SERVER == ganesha ]]; then
		cat >"$W/server.conf" <<EOF
NFS_CORE_PARAM { Protocols = 3; Bind_addr = $SRV_IP; NFS_Port = 2049; MNT_Port = 20048;
  NLM_Port = 32803; Enable_NLM = true; Enable_RQUOTA = false; Enable_UDP = true; }
NFSv4 { Graceless = true; RecoveryRoot = "$W/ganesha-recov"; }
NFS_KRB5 { Active_krb5 = false; }
EXPORT { Export_Id = 1; Path = $W/export; Pseudo = $W/export; Protocols = 3;
  Transports = TCP, UDP; Access_Type = RW; Squash = No_Root_Squash; SecType = sys;
  FSAL { Name = VFS; } }
LOG { Default_Log_Level = EVENT; ${NFSD_UC_LC_GANESHA_DEBUG:+COMPONENTS { NLM = FULL_DEBUG; \}} }
EOF
		return
	fi
	tg_conf_head
	cat >>"$W/server.conf" <<EOF
rpcbind = $RPCB
log_level = debug

[export $W/export]
clients = $PREFIX.0/24(rw,no_root_squash)
EOF
	# check 7 reads the reclaims from the debug lines; its grace period goes into [lock], the
	# one of NFSD_UC_LC_CONF_EXTRA when it has that section (and no grace_period of its own)
	local extra=${NFSD_UC_LC_CONF_EXTRA:-}
	if ! grep -q '^[[:space:]]*\[lock\]' <<<"$extra"; then
		printf '\n[lock]\ngrace_period = %s\n' "$GRACE" >>"$W/server.conf"
	elif ! grep -q '^[[:space:]]*grace_period[[:space:]]*=' <<<"$extra"; then
		extra=$(awk -v g="$GRACE" '{print} /^[[:space:]]*\[lock\]/ {print "grace_period = " g}' <<<"$extra")
	else
		GRACE=$(sed -n 's/^[[:space:]]*grace_period[[:space:]]*=[[:space:]]*\([0-9]*\).*/\1/p' <<<"$extra" | tail -n 1)
	fi
	[[ -n $extra ]] && printf '\n%s\n' "$extra" >>"$W/server.conf"
}

# The server's namespace: its own /etc/hosts naming the guest and /var/lib/nfs (where the
# Ganesha mode's rpc.statd keeps its records); Ganesha and NFSD_UC_LC_RPCBIND=yes get an
# rpcbind beside it, Ganesha an rpc.statd too (it monitors clients through it)
start_server() {
	local binds=hosts=/etc/hosts
	mkdir -p "$W/export" "$W/state" "$W/varlibnfs/sm" "$W/varlibnfs/sm.bak" "$W/ganesha-recov"
	printf '127.0.0.1 localhost\n::1 localhost\n%s nfsduc-lk-server server\n%s guest\n' "$SRV_IP" "$GUEST_IP" >"$W/hosts"
	[[ -d /var/lib/nfs ]] && binds+=" varlibnfs=/var/lib/nfs"
	write_conf
	if [[ $SERVER == ganesha ]]; then
		SRV_RB=1 SRV_SD=1
	elif [[ $RPCB == yes ]]; then
		SRV_RB=1
	fi
	tg_start_server nfsduc-lk-server "$binds" "100003/3/tcp 100005/3/tcp 100021/4/tcp"
}

# ---- check 7: the guest asks (JOB/ctl/N-ACTION.req) the host to take the server down and start
# it again with the same conf and state_dir; the host answers in N-ACTION.ack ("ok" or what
# went wrong) after the server's log has shown the restart's SM_NOTIFY answered and a reclaim
# granted (or GRACE + 5 s have passed), with what it saw in N-ACTION.info; "DOWN ..." when no
# server runs any more (the guest then stops check 7: every NFS call would hang)
ts_ms() { [[ -n $1 ]] && date -d "$1" +%s%3N 2>/dev/null; }   # a log line's time stamp, in ms
first_line() { grep -m 1 -E "$1" <<<"$2"; }
# the locks the host's kernel has on the export's files (the server takes each NLM lock as an
# OFD lock of its own too): lines of /proc/locks, "MAJ:MIN:INODE" with MAJ and MIN in hex
export_locks() {
	local ids
	ids=$(find "$W/export" -type f -printf '%D %i\n' 2>/dev/null | while read -r d i; do
		printf '%02x:%02x:%s\n' $((d >> 8 & 0xfff)) $(((d & 0xff) | (d >> 12 & 0xfff00))) "$i"; done)
	[[ -n $ids ]] || { echo 0; return; }
	awk 'NR == FNR {want[$1]; next} ($6 in want) || ($7 in want) {n++} END {print n + 0}' <(echo "$ids") /proc/locks
}
restart_server() {  # $1=restart|kill9 $2=the request's base name; sets MSG
	local how=$1 info=$2.info log=$W/server.log i st off new sig=TERM
	local l_ready l_grace l_notify l_recl l_over t0 t_ready t_grace t_notify t_recl t_over bad=()
	MSG=ok
	[[ -n $DPID ]] || { MSG="DOWN the server is not running"; return; }
	[[ $how == kill9 ]] && sig=KILL
	local k_before k_down k_after
	k_before=$(export_locks)
	if ! tg_signal_server "$sig"; then
		bad+=("the server still ran 20 s after SIGTERM: killed")
		HOST_FAIL+=("check 7: the server still ran 20 s after SIGTERM")
	fi
	st=$SRV_ST
	say "check 7: server stopped with SIG$sig: exit status $st ($(elapsed) s)"
	if [[ $how == restart && $st != 0 ]]; then
		bad+=("exit status $st after SIGTERM (want 0)")
		HOST_FAIL+=("check 7: the server exited with status $st after SIGTERM (want 0)")
	fi
	k_down=$(export_locks)
	((k_down == 0)) || bad+=("$k_down lock(s) on the export's files in /proc/locks with the server down")
	off=$(stat -c %s "$log")
	t0=$(date +%s%3N)
	# NFSD_UC_LC_RPCBIND=yes: the first start's rpcbind still runs in the namespace (port 111
	# on loopback: the server registers there); a second one could not bind
	local SRV_RB=""
	tg_launch "$off"
	st=$?
	if ((st == 1)); then
		MSG="DOWN the server exited with status $LAUNCH_ST when started again"
		HOST_FAIL+=("check 7: ${MSG#DOWN }")
		tail -c +$((off + 1)) "$log" | tail -n 20 >"$info"
		return
	elif ((st == 2)); then
		MSG="DOWN the server was not ready within 60 s when started again"
		HOST_FAIL+=("check 7: ${MSG#DOWN }")
		return
	fi
	say "check 7: server started again, pid $DPID, ready in $(($(date +%s%3N) - t0)) ms; waiting up to $((GRACE + 5)) s for the SM_NOTIFY and the reclaim"
	for ((i = 0; i < (GRACE + 5) * 10; i++)); do
		new=$(tail -c +$((off + 1)) "$log")
		grep -q 'notified of the restart' <<<"$new" && grep -qE 'LOCK \(reclaim\) from .*: GRANTED' <<<"$new" && break
		sleep 0.1
	done
	new=$(tail -c +$((off + 1)) "$log")
	l_ready=$(first_line 'nfsd-uc info: ready' "$new")
	l_grace=$(first_line 'lock: grace period of' "$new")
	l_notify=$(first_line 'notified of the restart|SM_NOTIFY to' "$new")
	l_recl=$(first_line 'LOCK \(reclaim\) from .*: GRANTED' "$new")
	l_over=$(first_line 'grace period over' "$new")
	t_ready=$(ts_ms "${l_ready%% *}")
	t_grace=$(ts_ms "${l_grace%% *}")
	t_notify=$(ts_ms "${l_notify%% *}")
	t_recl=$(ts_ms "${l_recl%% *}")
	t_over=$(ts_ms "${l_over%% *}")
	[[ -n $t_grace ]] || t_grace=$t_ready
	{
		echo "server log after the restart:"
		grep -E 'nfsd-uc (info: ready|[a-z]+: lock: )|nfsd-uc (emerg|alert|crit|error|warning): ' <<<"$new" | head -n 12
	} >"$info"
	[[ -n $l_grace ]] || bad+=("no 'grace period of $GRACE s for 1 client(s)' line: the server did not load the guest's record")
	case $l_notify in
	*'notified of the restart'*) ;;
	'') bad+=("the server's log shows no SM_NOTIFY answered in $((GRACE + 5)) s") ;;
	*) bad+=("SM_NOTIFY: ${l_notify#* nfsd-uc }") ;;
	esac
	if [[ -z $l_recl ]]; then
		bad+=("no reclaim GRANTED in the server's log within $((GRACE + 5)) s")
	elif [[ -n $t_recl && -n $t_grace ]]; then
		((t_recl - t_grace < GRACE * 1000)) || bad+=("the reclaim came $((t_recl - t_grace)) ms after the grace period began (grace_period $GRACE s)")
		[[ -z $t_over ]] || ((t_over >= t_recl)) || bad+=("the grace period ended before the reclaim")
	fi
	k_after=$(export_locks)
	((k_after > 0)) || bad+=("no lock on the export's files in /proc/locks after the reclaim")
	local nums
	nums="host's /proc/locks on the export: $k_before before the stop, $k_down down, $k_after after; SM_NOTIFY answered $([[ -n $t_notify ]] && echo "$((t_notify - t_ready)) ms" || echo never) after ready, reclaim granted $([[ -n $t_recl ]] && echo "$((t_recl - t_grace)) ms" || echo never) after the grace period began ($GRACE s)"
	say "check 7 (server): $nums"
	local why
	why=$(printf '%s; ' "${bad[@]}")
	((${#bad[@]} == 0)) && MSG="ok $nums" || MSG="FAIL ${why%; } | $nums"
}

serve_requests() {  # $1=job
	local req base act
	for req in "$1"/ctl/*.req; do
		[[ -e $req ]] || continue
		base=${req%.req}
		[[ -e $base.ack ]] && continue
		act=${base##*-}
		case $act in
		restart | kill9)
			say "guest asks: $act the server (check 7, $(elapsed) s)"
			restart_server "$act" "$base"
			;;
		*) MSG="FAIL unknown request $act" ;;
		esac
		echo "$MSG" >"$base.ack.tmp" && mv "$base.ack.tmp" "$base.ack"
	done
}

# ---- the guest: lock.sh with its settings; check 5 is the host's
main() {
	preflight
	tg_net_up "" ""   # no host names to show
	start_server
	mkdir -p "$W/job/ctl"
	printf 'SERVER=%s\nGUEST_IP=%s\nNETBITS=24\nEXPORT=%s\nHOLD_TMO=%s\nROUNDS=%s\nRECLAIM="%s"\nGRACE=%s\n' \
		"$SRV_IP" "$GUEST_IP" "$W/export" 120 "$ROUNDS" "$RECLAIM" "$GRACE" >"$W/job/env"
	tg_run_guest lock.sh 300 serve_requests
	tg_stop_server
	# not counted against Ganesha: its start-up complaints about this sandbox (no D-Bus, no
	# Kerberos keytab)
	tg_server_check "5 server-log" ' :DBUS :|krb5|keytab'
	local wants=("1 rpcinfo" "2 fcntl" "3 flock" "4 blocklock" "5 server-log" "6 plainmount") note=""
	[[ -n $RECLAIM ]] && wants+=("7 reclaim")
	[[ -n $RECLAIM ]] || note="7 reclaim not run ($([[ $SERVER == ganesha ]] && echo "nfsd-uc's own: not against Ganesha" || echo "NFSD_UC_LC_RECLAIM is empty"))"
	tg_verdict "" "$note" "${wants[@]}"
}

main
