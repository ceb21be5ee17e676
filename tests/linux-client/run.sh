#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# run.sh - the Linux-client suite: a real Linux kernel NFS client (Debian's kernel under QEMU)
# mounts nfsd-uc running on this host and runs tests/linux-client/guest/tests.sh.
#
#   run.sh NFSD_UC_EXE [PHASE...]        phases: xfs ext4 rpcbind (default: all three)
#
#   xfs      XFS on a loop device with 4096-byte sectors; fixed ports; every test group
#   ext4     ext4 on a loop device; fixed ports; every test group
#   rpcbind  the server registers with the host's rpcbind and the guest mounts without port
#            options; skipped when rpcbind is not installed (started here, and stopped, only
#            when it is not already running)
#
# Root is needed (loop devices, mount). The VM image comes from setup.sh (cached; run
# `setup.sh` once as root to install the host packages). Exit 77 (skip) with the reason when
# the machine cannot make loop devices or boot the guest; 0 when every check passed; 1 else.
# On a failure the guest's console and the server's log are printed.
#
# Environment (all optional):
#   NFSD_UC_LC_PORT / NFSD_UC_LC_MOUNT_PORT   fixed ports, 20497 / 20047
#   NFSD_UC_LC_WRITE_MODE   write_mode of the export in every phase (default: cached for xfs
#                           and rpcbind, the daemon's default, and direct for ext4)
#   NFSD_UC_LC_FIO_SIZE     bytes of the sequential buffered fio job (32 MiB; the others 1/4)
#   NFSD_UC_LC_TESTS        test groups for every phase, e.g. "everyday crash"
#   NFSD_UC_LC_EXTRA        a shell file the guest sources first: define t_NAME there and list
#                           NAME in NFSD_UC_LC_TESTS to try something by hand
#   NFSD_UC_LC_SMP / NFSD_UC_LC_MEM   guest CPUs (1) and MiB (2048)
#   NFSD_UC_LC_BUDGET       seconds for the whole run (1140, under meson's 1200)
#   NFSD_UC_LC_KEEP=1       keep the work directory (/tmp/nfsd-uc-lc.*)
#   NFSD_UC_LC_SERVER=ganesha   check the harness itself against NFS-Ganesha (NFSD_UC_EXE is
#                           then ganesha.nfsd; it needs rpcbind, started here if not running)
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../../bench/guest/lib.sh
. "$HERE/../../bench/guest/lib.sh"   # guest_died_early
EXE=${1:-}
shift || true
PHASES=${*:-xfs ext4 rpcbind}
PORT=${NFSD_UC_LC_PORT:-20497}
MPORT=${NFSD_UC_LC_MOUNT_PORT:-20047}
WRITE_MODE=${NFSD_UC_LC_WRITE_MODE:-}
# the daemon's counters (cache_dirty_bytes for killdirty), built beside it
STAT=$(dirname "$EXE")/../bench/nfsduc-stat
FIO_SIZE=${NFSD_UC_LC_FIO_SIZE:-33554432}
SERVER=${NFSD_UC_LC_SERVER:-nfsd-uc}
MEM=${NFSD_UC_LC_MEM:-2048}
SMP=${NFSD_UC_LC_SMP:-1}   # one vCPU: the host has two cores, slirp and the server need one

# meson's timeout is 1200 s: every guest run gets at most what is left of this budget
BUDGET=${NFSD_UC_LC_BUDGET:-1140}
T_START=$(date +%s)
W="" FS_DEV="" DPID="" QPID="" RPCB_PID="" IMG=""
LOOPS=() MOUNTS=() RESULTS=() FAILED=0 BOOTED=0

say() { printf '[linux-client] %s\n' "$*"; }
skip() { say "SKIP: $*"; exit 77; }
elapsed() { echo $(($(date +%s) - T_START)); }

cleanup() {
	local m l
	[[ -n $QPID ]] && kill -KILL "$QPID" 2>/dev/null
	[[ -n $DPID ]] && kill -KILL "$DPID" 2>/dev/null
	[[ -n $RPCB_PID ]] && kill -TERM "$RPCB_PID" 2>/dev/null
	wait 2>/dev/null
	for m in "${MOUNTS[@]}"; do mountpoint -q "$m" && umount "$m"; done
	for l in "${LOOPS[@]}"; do losetup -d "$l" 2>/dev/null; done
	if [[ -n $W && ${NFSD_UC_LC_KEEP:-0} != 1 ]]; then rm -rf "$W"; elif [[ -n $W ]]; then say "kept $W"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

preflight() {
	[[ -n $EXE && -x $EXE ]] || { say "usage: $0 NFSD_UC_EXE [xfs|ext4|rpcbind...] (got '$EXE')"; exit 2; }
	[[ $(id -u) == 0 ]] || skip "needs root for loop devices and mounts"
	command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 is not installed: run $HERE/setup.sh as root"
	local t
	for t in losetup mkfs.xfs mkfs.ext4 mountpoint ss sha256sum; do
		command -v "$t" >/dev/null || skip "$t is not installed: run $HERE/setup.sh as root"
	done
	IMG=$("$HERE/setup.sh" --no-install --print | tail -n 1)
	[[ -n $IMG && -f $IMG/ok ]] || skip "the VM image could not be prepared (messages above): run $HERE/setup.sh as root"
	W=$(mktemp -d /tmp/nfsd-uc-lc.XXXXXX)
	truncate -s 64M "$W/probe.img"
	local l
	l=$(losetup -f --show "$W/probe.img" 2>&1) || skip "cannot create a loop device: $l"
	losetup -d "$l"
	rm -f "$W/probe.img"
	for t in "$PORT" "$MPORT"; do
		if ss -Htln "sport = :$t" | grep -q .; then
			say "FAIL: port $t is already in use (NFSD_UC_LC_PORT / NFSD_UC_LC_MOUNT_PORT choose others)"
			exit 1
		fi
	done
}

# ---- the server under test
write_conf() {  # $1=conf $2=export dir $3=state dir $4=rpcbind yes|no
	if [[ $SERVER == ganesha ]]; then
		cat >"$1" <<EOF
NFS_CORE_PARAM { Protocols = 3; Bind_addr = 127.0.0.1; NFS_Port = $PORT; MNT_Port = $MPORT;
  Enable_NLM = false; Enable_RQUOTA = false; Enable_UDP = false; }
NFSv4 { Graceless = true; RecoveryRoot = "$3"; }
EXPORT { Export_Id = 1; Path = $2; Pseudo = $2; Protocols = 3; Transports = TCP;
  Access_Type = RW; Squash = No_Root_Squash; SecType = sys; FSAL { Name = VFS; } }
LOG { Default_Log_Level = EVENT; }
EOF
		return
	fi
	cat >"$1" <<EOF
[server]
listen = 127.0.0.1
port = $PORT
mount_port = $MPORT
state_dir = $3
rpcbind = $4

# Every phase mounts with nolock (locks are lock.sh's): no lock manager, so that a daemon
# already on this host (the README's first command starts one) keeps its lock port 32803.
[lock]
port = 0

[export $2]
clients = 127.0.0.1(rw,no_root_squash,insecure)
write_mode = $WRITE_MODE
EOF
}

start_daemon() {  # $1=conf $2=log; sets DPID
	local off i
	off=$(stat -c %s "$2" 2>/dev/null || echo 0)
	echo "---- start $(date +%T)" >>"$2"
	if [[ $SERVER == ganesha ]]; then
		"$EXE" -F -f "$1" -L "$2" -N NIV_EVENT -p "$W/ganesha.pid" </dev/null >>"$2" 2>&1 &
	else
		"$EXE" -c "$1" </dev/null >>"$2" 2>&1 &
	fi
	DPID=$!
	for ((i = 0; i < 300; i++)); do
		if ! kill -0 "$DPID" 2>/dev/null; then
			wait "$DPID"
			say "server exited with status $? at start-up"
			DPID=""
			return 1
		fi
		if [[ $SERVER == ganesha ]]; then
			ss -Htln "sport = :$PORT" | grep -q . && ss -Htln "sport = :$MPORT" | grep -q . && return 0
		else
			tail -c +$((off + 1)) "$2" | grep -q ready && return 0
		fi
		sleep 0.1
	done
	say "server did not say 'ready' within 30 s"
	return 1
}

stop_daemon() {  # SIGTERM; 0 when it exits with status 0 within 20 s
	local i st
	[[ -n $DPID ]] || return 1
	kill -TERM "$DPID" 2>/dev/null
	for ((i = 0; i < 200; i++)); do kill -0 "$DPID" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$DPID" 2>/dev/null; then
		say "server still running 20 s after SIGTERM: killed"
		kill -KILL "$DPID"
	fi
	wait "$DPID"
	st=$?
	DPID=""
	[[ $st == 0 ]] || { say "server exited with status $st after SIGTERM (want 0)"; return 1; }
}

# The server's bytes of dirty cached data, or - when it does not say.
dirty_bytes() {
	[[ -x $STAT ]] && "$STAT" 127.0.0.1 "$PORT" cache_dirty_bytes 2>/dev/null || echo -
}

# Wait (up to 60 s) until the server holds at least $1 dirty bytes, or stops gaining; prints the
# most it held.
await_dirty() {
	local want=$1 most=0 d i
	for ((i = 0; i < 1200; i++)); do
		d=$(dirty_bytes)
		[[ $d == - ]] && { echo -; return; }
		((d > most)) && most=$d
		((d >= want)) && break
		sleep 0.05
	done
	echo "$most"
}

crash_daemon() {
	kill -KILL "$DPID" 2>/dev/null
	wait "$DPID" 2>/dev/null
	DPID=""
}

# ---- one guest run; the host answers the guest's requests in JOB/ctl while it runs
serve_requests() {  # $1=job $2=conf $3=log
	local req base act msg
	for req in "$1"/ctl/*.req; do
		[[ -e $req ]] || continue
		base=${req%.req}
		[[ -e $base.ack || -e $base.done ]] && continue
		act=${base##*-}
		msg=ok
		case $act in
		kill9)
			say "guest asks: SIGKILL the server and restart it ($(elapsed) s)"
			crash_daemon
			start_daemon "$2" "$3" || msg="restart after SIGKILL failed (see the server log)"
			;;
		killdirty)
			# the guest is sending a burst of UNSTABLE WRITEs: kill once the server's cache
			# holds at least 32 MiB of them dirty (not yet on disk)
			local held
			held=$(await_dirty $((32 << 20)))
			say "guest asks: SIGKILL the server once its cache holds dirty data ($held bytes dirty) ($(elapsed) s)"
			echo "$held" >"$base.dirty"
			crash_daemon
			;;
		kill)
			say "guest asks: SIGKILL the server ($(elapsed) s)"
			crash_daemon
			;;
		start)
			say "guest asks: start the server ($(elapsed) s)"
			[[ -z $DPID ]] || msg="server already running"
			[[ -n $DPID ]] || start_daemon "$2" "$3" || msg="start failed (see the server log)"
			;;
		restart)
			say "guest asks: stop the server (SIGTERM) and restart it ($(elapsed) s)"
			stop_daemon || msg="server did not stop cleanly"
			[[ -n $DPID ]] && crash_daemon
			start_daemon "$2" "$3" || msg="restart failed (see the server log)"
			;;
		*) msg="unknown request $act" ;;
		esac
		[[ $msg == ok ]] || say "$msg"
		echo "$msg" >"$base.ack.tmp" && mv "$base.ack.tmp" "$base.ack"
		: >"$base.done"
	done
}

# A kernel that dies before the guest's init runs is booted once more (guest_died_early).
run_guest() {  # $1=job $2=conf $3=log $4=timeout seconds; guest exit status in $1/rc
	local j=$1 t0 dead=0
	t0=$(date +%s)
	boot_guest "$@" || dead=1
	if ((BOOTED == 0 && dead == 0)) && guest_died_early "$j" "$t0" "$4"; then
		boot_guest "$1" "$2" "$3" $(($4 - ($(date +%s) - t0))) || dead=1
	fi
	say "guest ran $(($(date +%s) - t0)) s"
	return $dead
}

boot_guest() {  # run_guest's arguments: one boot; 1 if the server died meanwhile
	local j=$1 t0 dead=0
	t0=$(date +%s)
	qemu-system-x86_64 -accel tcg -cpu max -m "$MEM" -smp "$SMP" -machine q35 -nodefaults -no-reboot \
		-display none -monitor none -serial "file:$j/console.log" \
		-kernel "$IMG/vmlinux" -initrd "$IMG/initrd.img" \
		-append "console=ttyS0 quiet loglevel=4 panic=-1 rdinit=/init" \
		-netdev "user,id=n0,ipv6=off,net=10.0.2.0/24,host=10.0.2.2" \
		-device virtio-net-pci,netdev=n0,romfile= \
		-fsdev "local,id=fs0,path=$j,security_model=none" -device virtio-9p-pci,fsdev=fs0,mount_tag=hostjob \
		</dev/null >"$j/qemu.log" 2>&1 &
	QPID=$!
	while kill -0 "$QPID" 2>/dev/null; do
		serve_requests "$j" "$2" "$3"
		if [[ -n $DPID ]] && ! kill -0 "$DPID" 2>/dev/null && ((dead == 0)); then
			wait "$DPID"
			say "FAIL: the server exited on its own (status $?) during the guest run"
			DPID="" dead=1
		fi
		if (($(date +%s) - t0 > $4)); then
			say "FAIL: guest still running after $4 s: stopped"
			kill -KILL "$QPID"
			break
		fi
		sleep 0.1
	done
	wait "$QPID" 2>/dev/null
	QPID=""
	grep -q 'GUEST up' "$j/console.log" 2>/dev/null && BOOTED=1
	return $dead
}

show_console() { sed 's/^/  guest| /' "$1/console.log" 2>/dev/null; }
show_daemon_log() { say "server log ($1):"; tail -n 300 "$1" | sed 's/^/  server| /'; }

# ---- phases
make_fs() {  # $1=name $2=xfs|ext4; sets FS_DEV (not in a subshell: LOOPS and MOUNTS are kept)
	local img=$W/$1.img dir=$W/$1 l
	truncate -s 4G "$img"
	if [[ $2 == xfs ]]; then
		l=$(losetup --sector-size 4096 -f --show "$img") || return 1
		LOOPS+=("$l")
		mkfs.xfs -q -f "$l" || return 1
	else
		l=$(losetup -f --show "$img") || return 1
		LOOPS+=("$l")
		mkfs.ext4 -q -F "$l" || return 1
	fi
	mkdir -p "$dir"
	mount "$l" "$dir" || return 1
	MOUNTS+=("$dir")
	FS_DEV=$l
}

release_fs() {  # $1=name
	local dir=$W/$1 i
	mountpoint -q "$dir" && umount "$dir"
	for i in "${!LOOPS[@]}"; do
		if [[ $(losetup -nO BACK-FILE "${LOOPS[$i]}" 2>/dev/null) == "$W/$1.img" ]]; then
			losetup -d "${LOOPS[$i]}"
			unset 'LOOPS[i]'
		fi
	done
	rm -f "$W/$1.img"
}

rpcbind_up() { rpcinfo -p 127.0.0.1 >/dev/null 2>&1; }

# make sure rpcbind runs, starting it (and stopping it at exit) only when it does not;
# 1 = it is not installed (reason printed), 2 = it does not answer
ensure_rpcbind() {
	local i
	command -v rpcinfo >/dev/null || { say "rpcinfo is not installed"; return 1; }
	if ! rpcbind_up; then
		command -v rpcbind >/dev/null || { say "rpcbind is not installed"; return 1; }
		mkdir -p /run/rpcbind
		rpcbind -f </dev/null >"$W/rpcbind.log" 2>&1 &
		RPCB_PID=$!
		for ((i = 0; i < 50; i++)); do rpcbind_up && break; sleep 0.1; done
		rpcbind_up || { say "FAIL: rpcbind started here does not answer"; return 2; }
		say "started rpcbind (pid $RPCB_PID); stopped at the end"
	fi
}

# rpcbind phase only; 1 = the phase cannot run here (reason printed)
prepare_rpcbind() {
	ensure_rpcbind || return
	if rpcinfo -p 127.0.0.1 | awk '$1 == 100003 || $1 == 100005' | grep -q .; then
		say "rpcbind already has an NFS or MOUNT server registered: rpcbind phase skipped"
		rpcinfo -p 127.0.0.1 | sed 's/^/  rpcbind| /'
		return 1
	fi
}

registered() {  # $1=program $2=port: registered for version 3 over TCP at that port
	rpcinfo -p 127.0.0.1 | awk -v p="$1" -v port="$2" '$1 == p && $2 == 3 && $3 == "tcp" && $4 == port' | grep -q .
}

phase() {  # $1=name
	local name=$1 fs tests mopts rpcb=no timeout rc ok=1 host_msgs=() wmode
	local mopts_fixed="vers=3,proto=tcp,port=$PORT,mountport=$MPORT,mountproto=tcp,nolock"
	case $name in
	xfs) fs=xfs tests="everyday misaligned fio crash restart" mopts=$mopts_fixed timeout=600
		wmode=cached ;;
	ext4) fs=ext4 tests="everyday misaligned fio crash restart" mopts=$mopts_fixed timeout=600
		wmode=direct ;;
	rpcbind) fs=ext4 tests="smoke restart" mopts="vers=3,proto=tcp,nolock" rpcb=yes timeout=180
		wmode=cached ;;
	*) say "unknown phase $name"; return 1 ;;
	esac
	tests=${NFSD_UC_LC_TESTS:-$tests}
	WRITE_MODE=${NFSD_UC_LC_WRITE_MODE:-$wmode}
	[[ $SERVER == ganesha ]] && mopts+=",noacl"   # its NFSACL answers SETACL with errors
	say "=== phase $name: $fs, write_mode $WRITE_MODE, mount -o $mopts, tests: $tests ($(elapsed) s)"
	if [[ $rpcb == yes ]]; then
		prepare_rpcbind
		rc=$?
		((rc == 1)) && { RESULTS+=("$name: skipped"); return 0; }
		((rc == 0)) || { RESULTS+=("$name: FAILED (rpcbind)"); return 1; }
	fi
	local exp=$W/$name j=$W/$name.job conf=$W/$name.conf log=$W/$name.server.log
	make_fs "$name" "$fs" || { say "FAIL: could not make the $fs file system"; release_fs "$name"; return 1; }
	say "$fs on $FS_DEV ($(blockdev --getss "$FS_DEV")-byte sectors) at $exp"
	mkdir -p "$W/$name.state" "$j/ctl"
	write_conf "$conf" "$exp" "$W/$name.state" "$rpcb"
	cp "$HERE/guest/tests.sh" "$j/main.sh"
	[[ -n ${NFSD_UC_LC_EXTRA:-} ]] && cp "$NFSD_UC_LC_EXTRA" "$j/extra.sh"
	printf 'PHASE=%s\nEXPORT=%s\nMOPTS=%s\nTESTS="%s"\nFIO_SIZE=%s\nSEED=%s\nWMODE=%s\n' \
		"$name" "$exp" "$mopts" "$tests" "$FIO_SIZE" "$RANDOM" "$WRITE_MODE" >"$j/env"
	if ! start_daemon "$conf" "$log"; then
		show_daemon_log "$log"
		release_fs "$name"
		RESULTS+=("$name: FAILED (server did not start)")
		return 1
	fi
	if [[ $rpcb == yes ]]; then
		registered 100003 "$PORT" || host_msgs+=("NFS v3/tcp not registered with rpcbind at port $PORT")
		registered 100005 "$MPORT" || host_msgs+=("MOUNT v3/tcp not registered with rpcbind at port $MPORT")
	fi
	((timeout > BUDGET - $(elapsed) - 20)) && timeout=$((BUDGET - $(elapsed) - 20))
	if ((timeout < 30)); then
		say "FAIL: no time left for phase $name (budget $BUDGET s, NFSD_UC_LC_BUDGET)"
		stop_daemon
		release_fs "$name"
		RESULTS+=("$name: FAILED (out of time)")
		return 1
	fi
	run_guest "$j" "$conf" "$log" "$timeout" || ok=0
	if ((BOOTED == 0)); then
		say "the guest did not boot; console and QEMU messages:"
		show_console "$j"
		sed 's/^/  qemu| /' "$j/qemu.log"
		stop_daemon
		skip "QEMU cannot boot the Debian kernel on this machine"
	fi
	show_console "$j"
	[[ $(cat "$j/rc" 2>/dev/null) == 0 ]] || { ok=0; say "guest suite failed (rc $(cat "$j/rc" 2>/dev/null || echo none))"; }
	if [[ -n $DPID ]]; then
		stop_daemon || { ok=0; host_msgs+=("clean stop (SIGTERM -> exit 0) failed"); }
	else
		ok=0
	fi
	if [[ $rpcb == yes ]] && { rpcinfo -p 127.0.0.1 | awk '$1 == 100003 || $1 == 100005' | grep -q .; }; then
		host_msgs+=("still registered with rpcbind after a clean stop: $(rpcinfo -p 127.0.0.1 | awk '$1 == 100003 || $1 == 100005' | xargs)")
	fi
	# the files the guest kept, checked on the exported file system itself
	if [[ -s $j/sums ]]; then
		if (cd "$exp" && sha256sum --quiet -c "$j/sums") >"$W/$name.sums.out" 2>&1; then
			say "host: $(wc -l <"$j/sums") files on the exported $fs match what the guest wrote"
		else
			host_msgs+=("files on the exported $fs differ from what the guest wrote: $(tr "\n" " " <"$W/$name.sums.out")")
		fi
	fi
	local m
	for m in "${host_msgs[@]}"; do say "FAIL (host): $m"; ok=0; done
	if ((ok == 0)); then
		show_daemon_log "$log"
		say "QEMU messages: $(tr "\n" " " <"$j/qemu.log")"
		RESULTS+=("$name: FAILED")
	else
		RESULTS+=("$name: passed")
	fi
	release_fs "$name"
	say "=== phase $name done ($(elapsed) s)"
	((ok == 1))
}

main() {
	preflight
	# NFS-Ganesha will not start without rpcbind
	[[ $SERVER == ganesha ]] && { ensure_rpcbind || exit 1; }
	say "server $EXE ($SERVER), image $IMG, kernel $(cat "$IMG/kver"), ports $PORT/$MPORT, write_mode ${WRITE_MODE:-per phase}"
	local p
	for p in $PHASES; do phase "$p" || FAILED=1; done
	say "summary after $(elapsed) s:"
	for p in "${RESULTS[@]}"; do say "  $p"; done
	return $FAILED
}

main
