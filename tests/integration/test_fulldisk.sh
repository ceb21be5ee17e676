#!/bin/bash
# A full disk: WRITEs that do not fit get NFS3ERR_NOSPC (not a hang, not a crash), the log says
# so without a line per WRITE, the daemon keeps serving, and once a file is deleted on the server
# the space comes back (the daemon does not hold deleted files open). Twice: with the
# default cache, where the failure shows at COMMIT, and with a cache smaller than what is written,
# where write-behind fails at the cache's bound with the WRITEs still coming (which spun and hung
# the clients once); then the daemon must still stop on SIGTERM.
#
# usage: test_fulldisk.sh NFSD_UC NFS_INTERLEAVE NFSDUC_STAT     (root; exit 77 = skipped)
set -u
EXE=$1 INTERLEAVE=$2 STAT=$3
W="" LOOP="" PID=""
fail() { echo "FAIL: $*" >&2; [ -n "$W" ] && tail -60 "$W/log" >&2; exit 1; }
cleanup() {
	[ -n "$PID" ] && kill -TERM "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
	[ -n "$W" ] && mountpoint -q "$W/mnt" && umount "$W/mnt"
	[ -n "$LOOP" ] && losetup -d "$LOOP"
	[ -n "$W" ] && rm -rf "$W"
}
trap cleanup EXIT
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root for a loop device" >&2; exit 77; }
W=$(mktemp -d /var/tmp/nfsd-uc-full.XXXXXX) || exit 1
truncate -s 32M "$W/img"
LOOP=$(losetup -f --show "$W/img" 2>/dev/null) || { LOOP=""; echo "SKIP: no loop device" >&2; exit 77; }
# not exited (an exited child stays a zombie until waited for: kill -0 still finds it)
running() { local s; s=$(ps -o stat= -p "$1" 2>/dev/null); [ -n "$s" ] && [ "${s#Z}" = "$s" ]; }
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# one round on a fresh file system; $1: the [cache] section's lines
round() {
	# mkfs failed once on the device just unmounted, with the suite running beside other work
	# (why is unknown: its output was thrown away): a few tries, then its own words
	local try
	for try in 1 2 3; do
		mkfs.ext4 -q -F "$LOOP" >"$W/mkfs.log" 2>&1 && break
		[ $try = 3 ] && fail "mkfs.ext4: $(cat "$W/mkfs.log")"
		sleep 1
	done
	mkdir -p "$W/mnt" "$W/state" && mount "$LOOP" "$W/mnt" && mkdir "$W/mnt/export" || fail "mount"
	P=$(port) M=$(port)
	cat > "$W/conf" <<CONF
[server]
listen = 127.0.0.1
port = $P
mount_port = $M
state_dir = $W/state
rpcbind = no
[lock]
port = 0
$1
[export $W/mnt/export]
clients = 127.0.0.1(rw,no_root_squash,insecure)
CONF
	"$EXE" -c "$W/conf" 2>"$W/log" &
	PID=$!
	# up to 60 s: on a busy machine (CI beside other work) a start has taken over 10
	for _ in $(seq 600); do grep -q ready "$W/log" && break; sleep 0.1; done
	grep -q ready "$W/log" || fail "daemon did not start"

	# 64 MiB into a 32 MiB file system, UNSTABLE then FILE_SYNC.
	for sync in unstable file; do
		out=$(timeout 120 "$INTERLEAVE" -r 47008 -t 64M -s $sync --write-only 127.0.0.1 "$P" "$M" "$W/mnt/export" "big-$sync" 2>&1)
		rc=$?
		[ $rc = 3 ] || fail "writing 64 MiB ($sync): exit $rc, want 3 (server error): $out"
		echo "$out" | grep -q NFS3ERR_NOSPC || fail "no NFS3ERR_NOSPC reply ($sync): $out"
		kill -0 "$PID" 2>/dev/null || fail "the daemon died on a full disk"
	done
	lines=$(grep -c "No space left on device" "$W/log")
	[ "$lines" -ge 1 ] || fail "nothing in the log says the disk is full"
	[ "$lines" -le 20 ] || fail "$lines log lines for a full disk: one per WRITE, not rate-limited"

	# Space freed on the server comes back: the daemon lets the deleted files go once the
	# requests the clients left in flight on them end (their WRITEs, refused, may still be
	# running), at the latest at its periodic sweep (10 s), or at once when a WRITE finds
	# the disk full.
	rm -f "$W/mnt/export"/big-*
	for _ in $(seq 150); do
		held=$(ls -l /proc/"$PID"/fd 2>/dev/null | grep -c '(deleted)')
		[ "$held" = 0 ] && break
		sleep 0.1
	done
	[ "$held" = 0 ] || fail "15 s after the rm the daemon still holds $held descriptors of deleted files"
	out=$(timeout 120 "$INTERLEAVE" -r 6000 -t 4M 127.0.0.1 "$P" "$M" "$W/mnt/export" small 2>&1) ||
		fail "after freeing space, a 4 MiB write failed: $out"
	"$STAT" 127.0.0.1 "$P" >/dev/null || fail "counters no longer answer"
	kill -TERM "$PID"
	for _ in $(seq 600); do running "$PID" || break; sleep 0.1; done
	running "$PID" && { kill -KILL "$PID"; fail "the daemon did not stop within 60 s of SIGTERM"; }
	wait "$PID"; rc=$?
	[ $rc = 0 ] || fail "daemon exit status $rc after SIGTERM"
	PID=""
	umount "$W/mnt" || fail "umount"
}

round ""
round "[cache]
size = 8M"
echo "2 passed, 0 failed"
