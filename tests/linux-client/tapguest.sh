# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# tapguest.sh - sourced by lock.sh and krb5.sh: what a Linux-client test needs to run the guest
# on an address of its own. QEMU's user network makes every guest 127.0.0.1 to the host and
# carries nothing from the server to the guest, so such a test makes a network namespace holding
# a tap device: the server (SRV_IP, 10.N.0.1) and the guest (GUEST_IP, 10.N.0.2) are two hosts
# on a /24 that leads nowhere else. The server runs there in a mount and UTS namespace of its own
# (tmpfs /run, files of the test bind-mounted over /etc ones), QEMU on the tap.
#
# The test sets HERE (its directory), EXE (its argument), sources this file and calls tg_init;
# then, in order: tg_server_exe, tg_host_ready, tg_image (its preflight), tg_net_up,
# tg_start_server (after writing $W/server.conf), tg_run_guest (after writing $W/job/env),
# tg_stop_server, tg_server_check and tg_verdict, whose status is the test's.
# Exit codes: 0 pass, 1 fail, 77 skip only when this machine cannot make the namespace, the tap
# device or the guest; never for a server that fails.
#
# Environment (all optional), read here for both tests:
#   NFSD_UC_LC_SERVER=ganesha   run against NFS-Ganesha (the test's conf for it)
#   NFSD_UC_LC_NET              first three octets of the namespace's /24 (10.N.0)
#   NFSD_UC_LC_SMP / NFSD_UC_LC_MEM   guest CPUs (1) and MiB (1024)
#   NFSD_UC_LC_BUDGET           seconds for the whole run (420, under meson's 480)
#   NFSD_UC_LC_KEEP=1           keep the work directory (/tmp/nfsd-uc-TAG.*)

# shellcheck source=../../bench/guest/lib.sh
. "$HERE/../../bench/guest/lib.sh"   # guest_died_early

# tg_init NAME TAG OCTET [PIDVAR...]: the run's names and defaults, and its cleanup. NAME
# prefixes every line ("linux-client-lock"); TAG names the namespace (nfsduc-TAG-PID: every
# process in it was started by this run), its tap (TAGtap0) and the work directory, so that two
# tests never share one; OCTET the default /24 (10.OCTET.0) and the IPv6 address fd00:OCTET::1,
# there only so that getaddrinfo(AI_ADDRCONFIG) answers AF_INET6 (Ganesha's Bind_addr). PIDVARs
# name variables holding the test's own processes (krb5.sh's KDC), killed first at exit, by
# their pid, whether or not the namespace was made.
tg_init() {
	TG_NAME=$1 TG_TAG=$2 PREFIX=${NFSD_UC_LC_NET:-10.$3.0} SRV_IP6=fd00:$3::1
	shift 3
	TG_PIDVARS=("$@")
	local v
	for v in "$@"; do printf -v "$v" '%s' ""; done
	SERVER=${NFSD_UC_LC_SERVER:-nfsd-uc}
	SRV_IP=$PREFIX.1 GUEST_IP=$PREFIX.2
	NS=nfsduc-$TG_TAG-$$ TAP=${TG_TAG}tap0
	MEM=${NFSD_UC_LC_MEM:-1024}
	SMP=${NFSD_UC_LC_SMP:-1}   # one vCPU: the host's other core runs the server
	BUDGET=${NFSD_UC_LC_BUDGET:-420}
	T_START=$(date +%s)
	W="" DPID="" QPID="" IMG="" NS_MADE=0 SRV_DEAD=0
	HOST_FAIL=()
	trap tg_cleanup EXIT
	trap 'exit 130' INT TERM
}

say() { printf '[%s] %s\n' "$TG_NAME" "$*"; }
skip() { say "SKIP: $*"; exit 77; }
fail_exit() { say "FAIL: $*"; exit 1; }
elapsed() { echo $(($(date +%s) - T_START)); }
nsx() { ip netns exec "$NS" "$@"; }

# At exit, whatever way: only what this run started is killed (its QEMU, its server, its PIDVARs,
# every process left in its own namespace: rpcbind, rpc.statd), then the namespace and the work
# directory go.
tg_cleanup() {
	local p v
	[[ -n $QPID ]] && kill -KILL "$QPID" 2>/dev/null
	[[ -n $DPID ]] && kill -KILL "$DPID" 2>/dev/null
	for v in "${TG_PIDVARS[@]}"; do [[ -n ${!v} ]] && kill -KILL "${!v}" 2>/dev/null; done
	if ((NS_MADE)); then
		for p in $(ip netns pids "$NS" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
		wait 2>/dev/null
		ip netns del "$NS" 2>/dev/null
	fi
	wait 2>/dev/null
	if [[ -n $W && ${NFSD_UC_LC_KEEP:-0} != 1 ]]; then rm -rf "$W"; elif [[ -n $W ]]; then say "kept $W"; fi
}

# ---- preflight: a missing server is the test's choice of verdict, a machine that cannot make
# the namespace, the tap or the guest a skip

# tg_server_exe ON_MISSING TOOL...: the executable under test. NFSD_UC_LC_SERVER=ganesha takes
# EXE if it is ganesha.nfsd, else the installed one, and needs its VFS FSAL and the TOOLs run
# beside it; ON_MISSING (skip or fail_exit) is what their absence means to the test. nfsd-uc
# must be the argument: without it the test was called wrongly (exit 2).
tg_server_exe() {
	local no=$1 t
	shift
	if [[ $SERVER != ganesha ]]; then
		[[ -n $EXE && -x $EXE ]] || { say "usage: $0 NFSD_UC_EXE (got '$EXE')"; exit 2; }
		return 0
	fi
	[[ $(basename "${EXE:-x}") == ganesha.nfsd ]] || EXE=$(command -v ganesha.nfsd || true)
	[[ -n $EXE && -x $EXE ]] || "$no" "NFSD_UC_LC_SERVER=ganesha: ganesha.nfsd is not installed (nfs-ganesha, nfs-ganesha-vfs)"
	ls /usr/lib/*/ganesha/libfsalvfs.so >/dev/null 2>&1 || "$no" "NFSD_UC_LC_SERVER=ganesha: nfs-ganesha-vfs is not installed"
	for t in "$@"; do command -v "$t" >/dev/null || "$no" "NFSD_UC_LC_SERVER=ganesha: $t is not installed"; done
}

# tg_host_ready: root, QEMU, iproute2, unshare and /dev/net/tun, without which no namespace,
# tap or guest can be made (skip)
tg_host_ready() {
	local t
	[[ $(id -u) == 0 ]] || skip "needs root for the network namespace and the tap device"
	for t in qemu-system-x86_64 ip unshare; do
		command -v "$t" >/dev/null || skip "$t is not installed: run $HERE/setup.sh as root"
	done
	[[ -c /dev/net/tun ]] || skip "/dev/net/tun is missing: no tap device possible"
}

# tg_image FEATURE WHAT: the VM image of setup.sh (IMG), which must list FEATURE in its features
# file (the guest tools of this test; WHAT says which, and their host packages), then the work
# directory W, readable by the server's and QEMU's 9p share
tg_image() {
	IMG=$("$HERE/setup.sh" --no-install --print | tail -n 1)
	[[ -n $IMG && -f $IMG/ok ]] || skip "the VM image could not be prepared (messages above): run $HERE/setup.sh as root"
	grep -qw "$1" "$IMG/features" 2>/dev/null || skip "the VM image has $2: run $HERE/setup.sh as root"
	W=$(mktemp -d "/tmp/nfsd-uc-$TG_TAG.XXXXXX")
	chmod 755 "$W"
}

# tg_net_up [SRV_LABEL GUEST_LABEL]: the namespace with lo and the tap (SRV_IP/24 and SRV_IP6
# on it); the labels (host names) only go into the line that says so
tg_net_up() {
	local out
	out=$(ip netns add "$NS" 2>&1) || skip "cannot create a network namespace: $out"
	NS_MADE=1
	nsx ip link set lo up || skip "cannot bring up lo in the namespace"
	out=$(nsx ip tuntap add dev "$TAP" mode tap 2>&1) || skip "cannot create a tap device: $out"
	if ! { nsx ip addr add "$SRV_IP/24" dev "$TAP" && nsx ip -6 addr add "$SRV_IP6/64" dev "$TAP" nodad &&
		nsx ip link set "$TAP" up; }; then
		skip "cannot configure the tap device"
	fi
	say "namespace $NS: $TAP $SRV_IP/24${1:+ ($1)}, guest $GUEST_IP${2:+ ($2)}"
	say "server $SERVER ($EXE), image $IMG, kernel $(cat "$IMG/kver")"
}

# ---- the server under test, inside the namespace

# tg_conf_head: the [server] lines nfsd-uc's conf starts with in these tests: the tap's
# address and the standard ports (the guest's mount options name none, or the test's own), and
# its state_dir in the work directory; the test appends the rest
tg_conf_head() {
	printf '[server]\nlisten = %s\nport = 2049\nmount_port = 20048\nstate_dir = %s\n' "$SRV_IP" "$W/state" >"$W/server.conf"
}

# Runs in the namespace, in a mount and UTS namespace of its own: hostname TG_HOST, tmpfs /run
# (no host rpcbind socket is seen), each "SRC=DST" of TG_BINDS ($TG_DIR/SRC over DST: the host's
# files are not touched); TG_RPCBIND / TG_STATD start those first; then execs the server.
# 97: what this machine could not make, before any server ran (the test skips).
# shellcheck disable=SC2016
TG_WRAP='
hostname "$TG_HOST"
mount -t tmpfs -o mode=755 tmpfs /run || exit 97
mkdir -p /run/rpcbind /run/lock
chown _rpc /run/rpcbind 2>/dev/null
for b in $TG_BINDS; do mount --bind "$TG_DIR/${b%%=*}" "${b#*=}" || exit 97; done
echo "=== server namespace: $(hostname), $(ip -4 -br addr | tr "\n" " ")${TG_USER:+, $(getent passwd "$TG_USER")}"
if [ -n "$TG_RPCBIND" ]; then
	rpcbind -f >"$TG_DIR/rpcbind.log" 2>&1 &
	for i in $(seq 50); do [ -S /run/rpcbind.sock ] && break; sleep 0.1; done
	[ -S /run/rpcbind.sock ] || { echo "=== rpcbind did not start"; exit 98; }
fi
if [ -n "$TG_STATD" ]; then
	rpc.statd -F -d --no-notify >"$TG_DIR/statd.log" 2>&1 &
	for i in $(seq 50); do rpcinfo -T tcp 127.0.0.1 100024 1 >/dev/null 2>&1 && break; sleep 0.2; done
	rpcinfo -T tcp 127.0.0.1 100024 1 >/dev/null 2>&1 || { echo "=== rpc.statd did not register"; exit 98; }
fi
echo "=== exec $*"
exec "$@"'

registered() {  # the programs the server's portmapper lists, "prog/vers/proto ..."
	nsx rpcinfo -p "$SRV_IP" 2>/dev/null | awk 'NR > 1 {print $1 "/" $2 "/" $3}' | sort -u | tr '\n' ' '
}

# tg_start_server HOSTNAME BINDS GANESHA_PROGS [USER]: start the server of $W/server.conf in the
# namespace (TG_WRAP with that hostname, BINDS and, when the test set them, SRV_RB / SRV_SD: an
# rpcbind / rpc.statd beside it) and wait until it is ready: nfsd-uc says so in its log,
# Ganesha's readiness is its GANESHA_PROGS ("prog/vers/proto ...") at the portmapper. USER's
# passwd line is shown from inside. A server that does not start fails the test.
SRV_CMD=() SRV_RB="" SRV_SD="" LAUNCH_ST=""
tg_start_server() {
	local log=$W/server.log st
	SRV_HOST=$1 SRV_BINDS=$2 SRV_READY=$3 SRV_USER=${4:-}
	SRV_CMD=("$EXE" -c "$W/server.conf")
	[[ $SERVER == ganesha ]] && SRV_CMD=("$EXE" -F -f "$W/server.conf" -L "$log" -N NIV_EVENT -p "$W/ganesha.pid")
	say "server: ${SRV_CMD[*]} (in $NS, hostname $SRV_HOST${SRV_RB:+; rpcbind }${SRV_SD:+rpc.statd }${SRV_RB:+started beside it})"
	sed 's/^/  conf| /' "$W/server.conf"
	tg_launch 0
	st=$?
	if ((st == 1)); then
		((LAUNCH_ST == 97)) && ! grep -q '^=== exec' "$log" && skip "cannot make the server's private mount namespace: $(tail -n 3 "$log" | tr '\n' ' ')"
		say "FAIL: the server exited with status $LAUNCH_ST at start-up; its log:"
		sed 's/^/  server| /' "$log"
		tg_aux_logs
		exit 1
	fi
	((st == 0)) || { say "FAIL: the server was not ready within 60 s; its log:"; sed 's/^/  server| /' "$log"; exit 1; }
	say "server pid $DPID ready after $(elapsed) s; its portmapper lists: $(registered)"
}

# tg_launch OFFSET: start SRV_CMD as tg_start_server set it (again, for a restart: its log is
# appended to server.log) and wait until it is ready, from the log after byte OFFSET: 0; 1 when
# it exited (status in LAUNCH_ST); 2 when it was not ready within 60 s (it is left running)
tg_launch() {
	local log=$W/server.log i p ready
	TG_DIR=$W TG_HOST=$SRV_HOST TG_BINDS=$SRV_BINDS TG_USER=$SRV_USER TG_RPCBIND=$SRV_RB TG_STATD=$SRV_SD \
		ip netns exec "$NS" unshare --uts bash -c "$TG_WRAP" srv "${SRV_CMD[@]}" </dev/null >>"$log" 2>&1 &
	DPID=$!
	for ((i = 0; i < 600; i++)); do
		if ! kill -0 "$DPID" 2>/dev/null; then
			wait "$DPID"
			LAUNCH_ST=$? DPID=""
			return 1
		fi
		if [[ $SERVER == ganesha ]]; then
			ready=$(registered)
			for p in $SRV_READY; do [[ $ready == *"$p"* ]] || ready=""; done
			[[ -n $ready ]] && return 0
		else
			tail -c +$((${1:-0} + 1)) "$log" | grep -q 'nfsd-uc info: ready' && return 0
		fi
		sleep 0.1
	done
	return 2
}

# tg_signal_server SIG: send SIG to the server and reap it, with SIGKILL when it still runs
# 20 s later; its exit status in SRV_ST. Returns 1 when it had to be killed: whose failure that
# is, and how to say it, is the caller's
tg_signal_server() {
	local i late=0
	kill -"$1" "$DPID" 2>/dev/null
	for ((i = 0; i < 200; i++)); do kill -0 "$DPID" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$DPID" 2>/dev/null; then
		late=1
		kill -KILL "$DPID"
	fi
	wait "$DPID"
	SRV_ST=$? DPID=""
	return $late
}

# tg_stop_server: the final SIGTERM. nfsd-uc must exit 0 by itself (HOST_FAIL otherwise);
# Ganesha's status is only shown
tg_stop_server() {
	[[ -n $DPID ]] || return 0
	tg_signal_server TERM || HOST_FAIL+=("the server still ran 20 s after SIGTERM: killed")
	say "server stopped (SIGTERM): exit status $SRV_ST"
	[[ $SERVER == ganesha || $SRV_ST == 0 ]] || HOST_FAIL+=("the server exited with status $SRV_ST after SIGTERM (want 0)")
}

tg_aux_logs() {  # rpcbind's and rpc.statd's logs of the server's namespace, when they said anything
	local f
	for f in "$W"/rpcbind.log "$W"/statd.log; do
		[[ -s $f ]] && { say "$(basename "$f") of the server namespace:"; tail -n 40 "$f" | sed 's/^/  srv-aux| /'; }
	done
	return 0
}

# ---- the guest

# tg_run_guest SCRIPT CAP [POLL]: boot the guest on the tap with guest/SCRIPT as its job (the
# test has written $W/job/env), for at most CAP s or what the budget leaves; POLL JOBDIR is
# called every 0.2 s while it runs (the guest's requests to the host). A guest that does not
# boot is this machine's failing (skip); everything else is left to the results.
tg_run_guest() {
	local j=$W/job t0 tmo=$((BUDGET - $(elapsed) - 30))
	((tmo > $2)) && tmo=$2
	((tmo >= 60)) || fail_exit "no time left for the guest (budget $BUDGET s, NFSD_UC_LC_BUDGET)"
	mkdir -p "$j"
	cp "$HERE/guest/$1" "$j/main.sh"
	t0=$(date +%s)
	tg_qemu "$j"
	tg_watch_guest "$tmo" "$t0" "${3:-}"
	if ((SRV_DEAD == 0)) && guest_died_early "$j" "$t0" "$tmo"; then
		tg_qemu "$j"
		tg_watch_guest "$tmo" "$t0" "${3:-}"
	fi
	say "guest ran $(($(date +%s) - t0)) s"
	if ! grep -q 'GUEST up' "$j/console.log" 2>/dev/null; then
		say "the guest did not boot; console and QEMU messages:"
		sed 's/^/  guest| /' "$j/console.log" 2>/dev/null
		sed 's/^/  qemu| /' "$j/qemu.log"
		skip "QEMU cannot boot the Debian kernel on this machine"
	fi
}

# tg_qemu JOBDIR: QEMU (TCG) in the namespace on the tap, the job directory shared over 9p
tg_qemu() {
	ip netns exec "$NS" qemu-system-x86_64 -accel tcg -cpu max -m "$MEM" -smp "$SMP" -machine q35 \
		-nodefaults -no-reboot -display none -monitor none -serial "file:$1/console.log" \
		-kernel "$IMG/vmlinux" -initrd "$IMG/initrd.img" \
		-append "console=ttyS0 quiet loglevel=4 panic=-1 rdinit=/init" \
		-netdev "tap,id=n0,ifname=$TAP,script=no,downscript=no" \
		-device virtio-net-pci,netdev=n0,romfile=,mac=52:54:00:e7:00:02 \
		-fsdev "local,id=fs0,path=$1,security_model=none" -device virtio-9p-pci,fsdev=fs0,mount_tag=hostjob \
		</dev/null >"$1/qemu.log" 2>&1 &
	QPID=$!
}

# tg_watch_guest TMO T0 POLL: until QEMU ends: POLL, note a server that exits on its own (once:
# a later restart's server is the poller's to judge), stop a guest still running TMO s after T0
tg_watch_guest() {
	while kill -0 "$QPID" 2>/dev/null; do
		[[ -n $3 ]] && "$3" "$W/job"
		if [[ -n $DPID ]] && ! kill -0 "$DPID" 2>/dev/null && ((SRV_DEAD == 0)); then
			wait "$DPID"
			HOST_FAIL+=("the server exited on its own (status $?) during the guest run")
			DPID="" SRV_DEAD=1
		fi
		if (($(date +%s) - $2 > $1)); then
			HOST_FAIL+=("the guest still ran after $1 s: stopped")
			kill -KILL "$QPID"
			break
		fi
		sleep 0.2
	done
	wait "$QPID" 2>/dev/null
	QPID=""
}

# ---- the verdict

# tg_server_check LABEL IGNORE BEFORE AFTER: the host's own check, a line of the job's results
# like the guest's: PASS when nothing went into HOST_FAIL and the server's log has no error
# line (for Ganesha: FATAL/MAJ/CRIT but those matching the regex IGNORE, its complaints about
# this sandbox). BEFORE and AFTER are the test's own numbers around the log's
tg_server_check() {
	local n=0 errs fails=() f nums
	errs=$(tg_log_errors "$2")
	if [[ -n $errs ]]; then
		n=$(printf '%s\n' "$errs" | wc -l)
		HOST_FAIL+=("the server's log has $n error line(s): $(printf '%s\n' "$errs" | head -n 3 | tr '\n' '|')")
	fi
	nums="${3:+$3; }error lines $n, warnings $(grep -cE ' nfsd-uc warning: | :WARN :' "$W/server.log")${4:+; $4}"
	for f in "${HOST_FAIL[@]}"; do [[ -n $f ]] && fails+=("$f"); done
	if ((${#fails[@]})); then
		echo "$1 FAIL $(IFS=';'; echo "${fails[*]}") | $nums" >>"$W/job/results"
	else
		echo "$1 PASS $nums; the server stayed up and stopped cleanly" >>"$W/job/results"
	fi
}

tg_log_errors() {  # IGNORE: the error lines of the server's log
	if [[ $SERVER == ganesha ]]; then
		grep -E ' :(FATAL|MAJ|CRIT) :' "$W/server.log" | grep -vE "$1"
	else
		grep -E ' nfsd-uc (emerg|alert|crit|error): ' "$W/server.log"
	fi
}

# tg_verdict LOGS NOTE WANT...: PASS (0) when every WANT ("N name") has a PASS line in the
# results and the guest's job exited 0, FAIL (1) otherwise, with the logs a failure needs (the
# server's, rpcbind's/rpc.statd's, QEMU's, and what the test's function LOGS adds); a WANT with
# no line at all gets a FAIL line. NOTE, when not empty, follows the results
tg_verdict() {
	local logs=$1 note=$2 j=$W/job ok=1 want r
	shift 2
	for want in "$@"; do
		grep -q "^$want PASS" "$j/results" 2>/dev/null || ok=0
		grep -q "^$want " "$j/results" 2>/dev/null || echo "$want FAIL (not run; guest rc $(cat "$j/rc" 2>/dev/null || echo none))" >>"$j/results"
	done
	[[ $(cat "$j/rc" 2>/dev/null) == 0 ]] || ok=0
	sed 's/^/  guest| /' "$j/console.log"
	if ((ok == 0)); then
		[[ -n $logs ]] && "$logs"
		say "server log ($W/server.log, last 300 lines):"
		tail -n 300 "$W/server.log" | sed 's/^/  server| /'
		tg_aux_logs
		say "QEMU messages: $(tr '\n' ' ' <"$j/qemu.log")"
	fi
	say "results ($SERVER, $(elapsed) s):"
	while read -r r; do say "  $r"; done < <(sort -n "$j/results")
	[[ -z $note ]] || say "  $note"
	if ((ok)); then say "PASS"; return 0; fi
	say "FAIL"
	return 1
}
