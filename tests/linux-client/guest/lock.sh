# SPDX-License-Identifier: GPL-2.0-or-later
# lock.sh - the checks of the linux-client-lock test, run inside the guest (busybox sh) as
# /host/main.sh (copied into every job: editing it needs no image rebuild).
#
# /host/env sets SERVER (the server's address), GUEST_IP, NETBITS, EXPORT (the exported path),
# HOLD_TMO (seconds a holder waits for its SIGUSR1), ROUNDS (hand-offs of check 4), RECLAIM (the
# rounds of check 7: restart = SIGTERM, kill9 = SIGKILL; empty: not run), GRACE (the server's
# grace period); OPTMO (20) bounds every other lock call, so that a server without NLM fails
# fast. The guest sits on a tap device in the test's network namespace, so the server can
# call it back: its own rpcbind and rpc.statd run, the kernel's lockd registers with rpcbind.
# Mounts A and B use vers=3,proto=tcp only (B adds nosharecache), mount C of check 6 vers=3
# only: no nolock, no port options, so mount.nfs and lockd ask the server's portmapper for
# every port.
#
# Checks (each prints "CHECK n NAME: PASS|FAIL numbers" and appends "n NAME PASS|FAIL ..." to
# /host/results): 1 rpcinfo, 2 fcntl, 3 flock, 4 blocklock, 6 plainmount, 7 reclaim (5 is the
# host's). Check 7 asks the host to restart the server: it writes /host/ctl/N-ACTION.req and
# waits for N-ACTION.ack. Exit status: the number of failures.
. /host/env
export PATH
A=/mnt/a
B=/mnt/b
NFAIL=0
HOLD_TMO=${HOLD_TMO:-120}
OPTMO=${OPTMO:-20}
GRACE=${GRACE:-15}
C=/mnt/c

say() { echo "[lock] $*"; }
result() {  # N NAME PASS|FAIL TEXT
	echo "$1 $2 $3 $4" >>/host/results
	say "CHECK $1 $2: $3 $4"
	[ "$3" = PASS ] || NFAIL=$((NFAIL + 1))
}
# waitfor FILE WORDS TENTHS: until FILE has a line starting with one of WORDS (ERE: A|B)
waitfor() {
	i=0
	while [ $i -lt "$3" ]; do
		grep -qE "^($2)" "$1" 2>/dev/null && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}
# lk ARGS...: one lockt call (not hold/wait), killed after $OPTMO s: a client whose server does
# not answer NLM retries for ever on a hard mount, and the run must go on to the next check
lk() {
	o=$(timeout -s KILL "$OPTMO" lockt "$@" 2>&1)
	[ $? = 137 ] && o="NO ANSWER within $OPTMO s"
	echo "${o:-no output}"
}
# hold KIND FILE OUT: a holder process in the background; its first line (LOCKED, DENIED or
# ERROR, or "NO ANSWER" when it has none within $OPTMO s: then it is killed) in $H, its pid in
# $HP (from its LOCKED line; empty unless it holds the lock)
hold() {
	timeout -s KILL $((HOLD_TMO + 10)) lockt hold "$1" "$2" "$HOLD_TMO" >"$3" 2>&1 &
	HJ=$!
	HP=""
	if ! waitfor "$3" 'LOCKED|DENIED|ERROR' $((OPTMO * 10)); then
		kill -KILL "$HJ" 2>/dev/null
		echo "NO ANSWER within $OPTMO s" >>"$3"
	fi
	HP=$(sed -n 's/^LOCKED .*pid=\([0-9]*\).*/\1/p' "$3")
	H=$(head -n 1 "$3")
}
# release OUT: SIGUSR1 to the holder, wait for it; its UNLOCKED line in $U
release() {
	[ -n "$HP" ] && kill -USR1 "$HP" 2>/dev/null
	wait "$HJ"
	U=$(grep '^UNLOCKED' "$1")
	[ -n "$U" ] || U="(no unlock: $(tail -n 1 "$1"))"
}
took() { echo "$1" | sed -n 's/.*took=\([0-9]*\).*/\1/p'; }
field() { awk -v w="$1" '$1 == w {print $2; exit}' "$2"; }
diag() {
	say "--- diagnostics: dmesg (last 30 lines)"
	dmesg | tail -n 30 | sed 's/^/[lock]   /'
	say "--- guest rpcinfo -p 127.0.0.1"
	rpcinfo -p 127.0.0.1 2>&1 | sed 's/^/[lock]   /'
	say "--- rpc.statd log (last 20 lines)"
	tail -n 20 /tmp/statd.log 2>/dev/null | sed 's/^/[lock]   /'
	say "--- statd monitors: $(ls /var/lib/nfs/sm 2>/dev/null | tr '\n' ' ')"
}

: >/host/results
# ---- network: this guest's own address on the namespace's /24, no default route
ip addr flush dev eth0
ip addr add "$GUEST_IP/$NETBITS" dev eth0 && ip link set eth0 up
printf '127.0.0.1 localhost\n%s guest\n%s server\n' "$GUEST_IP" "$SERVER" >/etc/hosts
i=0
while [ $i -lt 50 ] && ! ping -c 1 -W 1 "$SERVER" >/dev/null 2>&1; do i=$((i + 1)); sleep 0.2; done
say "guest $GUEST_IP, server $SERVER $(ping -c 1 -W 2 "$SERVER" 2>&1 | grep -o 'time=[0-9.]* ms' || echo unreachable)"

# ---- NLM/NSM user space: rpcbind, then rpc.statd (mount.nfs refuses a lock mount without it)
mkdir -p /run/rpcbind /var/lib/nfs/sm /var/lib/nfs/sm.bak
rpcbind -f >/tmp/rpcbind.log 2>&1 &
i=0
while [ $i -lt 50 ] && [ ! -S /run/rpcbind.sock ]; do i=$((i + 1)); sleep 0.1; done
rpc.statd -F -d >/tmp/statd.log 2>&1 &
i=0
while [ $i -lt 100 ] && ! rpcinfo -T tcp 127.0.0.1 100024 1 >/dev/null 2>&1; do i=$((i + 1)); sleep 0.1; done
if ! rpcinfo -T tcp 127.0.0.1 100024 1 >/dev/null 2>&1; then
	say "guest's rpc.statd did not register"
	diag
fi

# ---- check 1: the server's portmapper lists NFS, MOUNT, NLM and NSM
timeout -s KILL 30 rpcinfo -p "$SERVER" >/tmp/rpcinfo.out 2>&1
rc=$?
sed 's/^/[lock]   server rpcinfo| /' /tmp/rpcinfo.out
missing="" have=""
for p in 100003 100005 100021 100024; do
	v=$(awk -v p=$p '$1 == p {print $2 "/" $3}' /tmp/rpcinfo.out | sort -u | tr '\n' ',')
	if [ -n "$v" ]; then have="$have $p:${v%,}"; else missing="$missing $p"; fi
done
awk '$1 == 100021 && $2 == 4 && $3 == "tcp"' /tmp/rpcinfo.out | grep -q . || missing="$missing 100021v4/tcp"
if [ $rc = 0 ] && [ -z "$missing" ]; then
	result 1 rpcinfo PASS "registered:$have"
else
	result 1 rpcinfo FAIL "rpcinfo rc=$rc; missing:$missing; registered:$have"
fi

# ---- the two mounts of the export: A, and B with nosharecache (its own inodes, so that the
# client's own lock table does not settle conflicts between them: they go to the server)
mkdir -p $A $B
t0=$(date +%s)
timeout -s KILL 90 mount.nfs "$SERVER:$EXPORT" $A -o vers=3,proto=tcp >/tmp/mount.out 2>&1
ma=$?
timeout -s KILL 90 mount.nfs "$SERVER:$EXPORT" $B -o vers=3,proto=tcp,nosharecache >>/tmp/mount.out 2>&1
mb=$?
say "mount A rc=$ma, B (nosharecache) rc=$mb in $(($(date +%s) - t0)) s $(cat /tmp/mount.out)"
grep " $A \| $B " /proc/mounts | sed 's/^/[lock]   /'
if [ $ma != 0 ] || [ $mb != 0 ]; then
	result 2 fcntl FAIL "mount failed (A rc=$ma, B rc=$mb)"
	result 3 flock FAIL "mount failed"
	result 4 blocklock FAIL "mount failed"
	diag
	exit $NFAIL
fi
say "the guest's lockd: $(rpcinfo -p 127.0.0.1 | awk '$1 == 100021 {print "v" $2 "/" $3 ":" $4}' | sort -u | tr '\n' ' ')"
D=lt.$$
rm -rf "${A:?}/$D"
mkdir $A/$D && echo data >$A/$D/f && echo data >$A/$D/g
i=0
while [ $i -lt 50 ] && [ ! -f $B/$D/g ]; do i=$((i + 1)); sleep 0.1; done

# ---- check 2: fcntl F_SETLK on A; F_GETLK and F_SETLK from another process on B see it
bad=""
hold fcntl $A/$D/f /tmp/h2
say "fcntl: A F_SETLK: $H"
if [ -n "$HP" ]; then
	g1=$(lk test $B/$D/f)
	say "fcntl: B F_GETLK while A holds: $g1"
	case $g1 in "held type=W"*) ;; *) bad="$bad; B F_GETLK while held: $g1" ;; esac
	t1=$(lk try fcntl $B/$D/f)
	say "fcntl: B F_SETLK while A holds: $t1"
	case $t1 in "DENIED EAGAIN"* | "DENIED EACCES"*) ;; *) bad="$bad; B F_SETLK while held: $t1" ;; esac
	release /tmp/h2
	say "fcntl: A: $U"
	case $U in UNLOCKED*) ;; *) bad="$bad; A unlock: $U" ;; esac
	g2=$(lk test $B/$D/f)
	t2=$(lk try fcntl $B/$D/f)
	say "fcntl: after A's unlock: B F_GETLK: $g2; B F_SETLK: $t2"
	case $g2 in none*) ;; *) bad="$bad; B F_GETLK after unlock: $g2" ;; esac
	case $t2 in OK*) ;; *) bad="$bad; B F_SETLK after unlock: $t2" ;; esac
	nums="A lock $(took "$H") ms; B F_GETLK $(took "$g1") ms: ${g1%% took*}; B F_SETLK $(took "$t1") ms: ${t1%% took*}; A unlock $(echo "$U" | sed -n 's/.*call=//p') ms; after: B F_GETLK ${g2%% took*}, F_SETLK ${t2%% took*}"
else
	release /tmp/h2
	bad="A F_SETLK: $H"
	nums="(no lock taken)"
fi
if [ -z "$bad" ]; then result 2 fcntl PASS "$nums"; else result 2 fcntl FAIL "${bad#; } | $nums"; fi

# ---- check 3: flock LOCK_EX on A (a whole-file NLM lock); LOCK_EX|LOCK_NB on B must fail
bad=""
hold flock $A/$D/g /tmp/h3
say "flock: A LOCK_EX: $H"
if [ -n "$HP" ]; then
	t1=$(lk try flock $B/$D/g)
	say "flock: B LOCK_EX|LOCK_NB while A holds: $t1"
	case $t1 in "DENIED EAGAIN"*) ;; *) bad="$bad; B flock while held: $t1 (want EWOULDBLOCK)" ;; esac
	g1=$(lk test $B/$D/g)
	say "flock: B F_GETLK while A holds (informational: the server's whole-file lock): $g1"
	release /tmp/h3
	case $U in UNLOCKED*) ;; *) bad="$bad; A LOCK_UN: $U" ;; esac
	t2=$(lk try flock $B/$D/g)
	say "flock: after A's LOCK_UN: B LOCK_EX|LOCK_NB: $t2"
	case $t2 in OK*) ;; *) bad="$bad; B flock after unlock: $t2" ;; esac
	nums="A flock $(took "$H") ms; B LOCK_NB while held $(took "$t1") ms: ${t1%% took*}; A unlock $(echo "$U" | sed -n 's/.*call=//p') ms; after: B ${t2%% took*} in $(took "$t2") ms"
else
	release /tmp/h3
	bad="A flock: $H"
	nums="(no lock taken)"
fi
if [ -z "$bad" ]; then result 3 flock PASS "$nums"; else result 3 flock FAIL "${bad#; } | $nums"; fi

# ---- check 4: blocklock. A holds; B's F_SETLKW through the second mount is BLOCKED at the
# server; A unlocks; B must have the lock within 1 s, which takes the server's GRANTED callback
# to the guest's lockd (without it the client asks again only after 30 s). ROUNDS times (3);
# the guest's lockd debug log (nlm_debug) counts the BLOCKED answers and GRANTED callbacks.
# blockround N: one hand-off; its milliseconds in $HANDOFF, what went wrong in $bad
blockround() {
	f=$A/$D/h$1 ha=/tmp/h4.$1 wb=/tmp/w4.$1
	echo data >"$f"
	i=0
	while [ $i -lt 50 ] && [ ! -f "$B/$D/h$1" ]; do i=$((i + 1)); sleep 0.1; done
	HANDOFF=""
	hold fcntl "$f" "$ha"
	say "blocklock $1: A F_SETLK: $H"
	if [ -z "$HP" ]; then
		release "$ha"
		bad="$bad; round $1: A F_SETLK: $H"
		return
	fi
	timeout -s KILL 90 lockt wait "$B/$D/h$1" 80 >"$wb" 2>&1 &
	wp=$!
	waitfor "$wb" REQ 100
	# time for B's request to reach the server and be answered BLOCKED (a round trip is ms)
	sleep 3
	if grep -q '^GOT\|^ERROR\|^TIMEOUT' "$wb"; then
		bad="$bad; round $1: B was not blocked while A held the lock: $(tail -n 1 "$wb")"
	fi
	release "$ha"
	wait $wp
	sed 's/^/[lock]   A| /' "$ha"
	sed 's/^/[lock]   B| /' "$wb"
	lu=$(field UNLOCKED "$ha")
	br=$(field REQ "$wb")
	bg=$(field GOT "$wb")
	if [ -n "$lu" ] && [ -n "$br" ] && [ -n "$bg" ]; then
		HANDOFF=$((bg - lu))
		say "blocklock $1: B waited $((bg - br)) ms in F_SETLKW, had the lock $HANDOFF ms after A's unlock (A's unlock call $(sed -n 's/^UNLOCKED.*call=//p' "$ha") ms)"
		[ "$br" -lt "$lu" ] || bad="$bad; round $1: B's request was not made while A held the lock"
		[ "$HANDOFF" -ge 0 ] || bad="$bad; round $1: B had the lock before A's unlock"
		[ "$HANDOFF" -le 1000 ] || bad="$bad; round $1: hand-off took $HANDOFF ms (> 1000: no usable GRANTED callback?)"
	else
		bad="$bad; round $1: B did not get the lock (A unlock=${lu:-none} B req=${br:-none} got=${bg:-none}: $(tail -n 1 "$wb"))"
	fi
}
bad=""
ROUNDS=${ROUNDS:-3}
NLMDBG=/proc/sys/sunrpc/nlm_debug
[ -w $NLMDBG ] && { dmesg -c >/dev/null; echo 0x7fff >$NLMDBG; }
r=1 times="" worst=0
while [ $r -le "$ROUNDS" ]; do
	blockround $r
	[ -n "$HANDOFF" ] || break
	times="$times${times:+ }$HANDOFF"
	[ "$HANDOFF" -gt $worst ] && worst=$HANDOFF
	[ -z "$bad" ] || break   # a server that fails once would only fail again, slower
	r=$((r + 1))
done
[ -w $NLMDBG ] && echo 0 >$NLMDBG
dmesg >/tmp/nlm.dmesg
cp /tmp/nlm.dmesg /host/nlm-dmesg.txt 2>/dev/null
if [ -w $NLMDBG ]; then
	ngr=$(grep -c 'lockd: GRANTED *status' /tmp/nlm.dmesg)
	nbl=$(grep -c 'lockd: server returns status 3' /tmp/nlm.dmesg)
else
	ngr="n/a (no $NLMDBG)" nbl="n/a"
fi
say "blocklock: guest lockd debug: $nbl BLOCKED answers (status 3), $ngr GRANTED callbacks; excerpt:"
grep -E 'GRANTED|blocked|lockd: server returns status|nlmsvc_lookup_host|lockd: request from' /tmp/nlm.dmesg |
	head -n 40 | sed 's/^/[lock]   nlm| /'
nums="hand-off after A's unlock: ${times:-none} ms (worst $worst, limit 1000) in $((r > ROUNDS ? ROUNDS : r)) round(s); server BLOCKED answers $nbl, GRANTED callbacks $ngr"
if [ -z "$bad" ]; then result 4 blocklock PASS "$nums"; else result 4 blocklock FAIL "${bad#; } | $nums"; fi

# ---- check 6: plainmount. `mount -o vers=3` and nothing else: mount.nfs finds NFS and MOUNT
# (perhaps over UDP) through the server's portmapper, lockd finds NLM; a lock taken on C is
# the server's (B, with its own inodes, sees it), and is released
bad=""
mkdir -p $C
t0=$(date +%s)
# (mount.nfs is what `mount -t nfs` runs; busybox's mount may not)
timeout -s KILL 90 mount.nfs "$SERVER:$EXPORT" $C -o vers=3 >/tmp/mountc.out 2>&1
mc=$?
say "plainmount: mount.nfs $SERVER:$EXPORT $C -o vers=3: rc=$mc in $(($(date +%s) - t0)) s $(cat /tmp/mountc.out)"
copts=$(awk -v m=$C '$2 == m {print $4}' /proc/mounts)
say "plainmount: C's options: ${copts:-(not mounted)}"
if [ $mc = 0 ] && [ -n "$copts" ]; then
	echo data >$A/$D/p
	i=0
	while [ $i -lt 50 ] && { [ ! -f $C/$D/p ] || [ ! -f $B/$D/p ]; }; do i=$((i + 1)); sleep 0.1; done
	hold fcntl $C/$D/p /tmp/h6
	say "plainmount: C F_SETLK: $H"
	if [ -n "$HP" ]; then
		t1=$(lk try fcntl $B/$D/p)
		say "plainmount: B F_SETLK while C holds: $t1"
		case $t1 in "DENIED EAGAIN"* | "DENIED EACCES"*) ;; *) bad="$bad; B F_SETLK while C held: $t1" ;; esac
		release /tmp/h6
		say "plainmount: C: $U"
		case $U in UNLOCKED*) ;; *) bad="$bad; C unlock: $U" ;; esac
		t2=$(lk try fcntl $B/$D/p)
		say "plainmount: B F_SETLK after C's unlock: $t2"
		case $t2 in OK*) ;; *) bad="$bad; B F_SETLK after C's unlock: $t2" ;; esac
	else
		release /tmp/h6
		bad="$bad; C F_SETLK: $H"
	fi
	nums="mount $(echo "$copts" | tr ',' '\n' | grep -E '^(vers|proto|port|mountproto|mountport)=' | tr '\n' ',' | sed 's/,$//'); C lock $(took "$H") ms, B while held: ${t1%% took*}, B after: ${t2%% took*}"
	timeout -s KILL 30 umount $C || bad="$bad; umount $C failed"
else
	bad="mount -o vers=3 failed (rc=$mc): $(cat /tmp/mountc.out)"
	nums=""
fi
if [ -z "$bad" ]; then result 6 plainmount PASS "$nums"; else result 6 plainmount FAIL "${bad#; } | $nums"; diag; fi

# ---- check 7: reclaim. P holds an F_SETLK lock on A; the host takes the server down (SIGTERM,
# or SIGKILL) and starts it again with the same state_dir; the server's SM_NOTIFY reaches our
# rpc.statd, which tells lockd, which reclaims P's lock during the grace period. The host
# answers once its server's log shows the notify answered and the reclaim granted. Then B's
# F_SETLK must get EAGAIN while P holds (the lock is held at the server again, and only P's
# reclaim can have put it there: the old server's locks went with its process), and succeed
# after P's unlock.
CTLN=0
# hostctl ACTION: asks the host, waits for its answer (bounded): in $ACK; 0 when it is "ok ..."
hostctl() {
	CTLN=$((CTLN + 1))
	req=/host/ctl/$CTLN-$1
	: >"$req.req"
	i=0 n=$(((GRACE + 90) * 10))
	while [ ! -f "$req.ack" ] && [ $i -lt $n ]; do sleep 0.1; i=$((i + 1)); done
	if [ ! -f "$req.ack" ]; then
		ACK="FAIL no answer from the host to $1 within $((n / 10)) s"
		return 1
	fi
	ACK=$(cat "$req.ack")
	[ -f "$req.info" ] && sed 's/^/[lock]   host| /' "$req.info"
	case $ACK in ok*) return 0 ;; *) return 1 ;; esac
}
# reclaimround N HOW: one round; what went wrong in $bad, its numbers in $rnums
reclaimround() {
	f=$A/$D/r$1 hp=/tmp/h7.$1
	echo data >"$f"
	i=0
	while [ $i -lt 50 ] && [ ! -f "$B/$D/r$1" ]; do i=$((i + 1)); sleep 0.1; done
	rnums="$2:"
	hold fcntl "$f" "$hp"
	say "reclaim $1 ($2): P F_SETLK on A: $H"
	if [ -z "$HP" ]; then
		release "$hp"
		bad="$bad; round $1: P F_SETLK: $H"
		return
	fi
	tb=$(lk try fcntl "$B/$D/r$1")
	say "reclaim $1: B F_SETLK before the restart: $tb"
	case $tb in "DENIED EAGAIN"* | "DENIED EACCES"*) ;; *) bad="$bad; round $1: B F_SETLK before the restart: $tb" ;; esac
	s0=$(cut -d' ' -f1 /proc/uptime)
	hostctl "$2"
	hrc=$?
	say "reclaim $1: host: $ACK"
	# ACK: "ok NUMBERS", "FAIL WHY | NUMBERS", "DOWN WHY"
	hnums=${ACK#ok }
	if [ $hrc != 0 ]; then
		why=${ACK%% | *}
		bad="$bad; round $1 ($2): host: ${why#FAIL }"
		hnums=${ACK##* | }
	fi
	case $ACK in DOWN* | "FAIL no answer"*)
		# no server (or no host) to talk to: P's unlock and B's calls would only hang
		kill -KILL "$HJ" 2>/dev/null
		rnums="$2: stopped there"
		RDOWN=1
		return
		;;
	esac
	t1=$(lk try fcntl "$B/$D/r$1")
	s1=$(cut -d' ' -f1 /proc/uptime)
	say "reclaim $1: B F_SETLK after the restart, P still holding: $t1"
	case $t1 in
	"DENIED EAGAIN"* | "DENIED EACCES"*) ;;
	OK*) bad="$bad; round $1: B got the lock while P held it: P's lock was not reclaimed" ;;
	*) bad="$bad; round $1: B F_SETLK after the restart: $t1" ;;
	esac
	g1=$(lk test "$B/$D/r$1")
	say "reclaim $1: B F_GETLK after the restart: $g1"
	case $g1 in "held type=W"*) ;; *) bad="$bad; round $1: B F_GETLK after the restart: $g1" ;; esac
	release "$hp"
	say "reclaim $1: P: $U"
	case $U in UNLOCKED*) ;; *) bad="$bad; round $1: P unlock: $U" ;; esac
	t2=$(lk try fcntl "$B/$D/r$1")
	say "reclaim $1: B F_SETLK after P's unlock: $t2"
	case $t2 in OK*) ;; *) bad="$bad; round $1: B F_SETLK after P's unlock: $t2" ;; esac
	rnums="$2: $hnums; B while P held ${t1%% took*} in $(took "$t1") ms, F_GETLK ${g1%% pid*}, after P's unlock ${t2%% took*}; restart to B's answer $(awk -v a="$s0" -v b="$s1" 'BEGIN {printf "%.1f", b - a}') s"
}
if [ -n "$RECLAIM" ]; then
	bad="" nums=""
	[ -w $NLMDBG ] && { dmesg -c >/dev/null; echo 0x7fff >$NLMDBG; }
	sl=$(wc -l </tmp/statd.log)
	r=1 RDOWN=0
	for how in $RECLAIM; do
		reclaimround $r "$how"
		nums="$nums${nums:+ || }$rnums"
		if [ $RDOWN != 0 ] || [ -n "$bad" ]; then break; fi   # a failure would only repeat itself
		r=$((r + 1))
	done
	[ -w $NLMDBG ] && echo 0 >$NLMDBG
	dmesg >/tmp/nlm7.dmesg
	cp /tmp/nlm7.dmesg /host/nlm-dmesg-reclaim.txt 2>/dev/null
	say "reclaim: guest rpc.statd log since the first restart:"
	tail -n +$((sl + 1)) /tmp/statd.log | grep -iE 'notify|reboot|state|monitor' | head -n 20 | sed 's/^/[lock]   statd| /'
	say "reclaim: guest lockd debug (reclaim lines):"
	grep -iE 'reclaim|rebooted|nsm_notify|SM_NOTIFY|recovery|server returns status|grace' /tmp/nlm7.dmesg |
		head -n 30 | sed 's/^/[lock]   nlm| /'
	nrc=$(grep -ciE 'reclaiming locks|done reclaiming' /tmp/nlm7.dmesg)
	nums="$nums; guest lockd reclaim lines: $nrc"
	if [ -z "$bad" ]; then result 7 reclaim PASS "$nums"; else result 7 reclaim FAIL "${bad#; } | $nums"; fi
fi

if [ "${RDOWN:-0}" = 1 ]; then
	# every call to the export would hang (a hard mount): no clean-up, no umount
	diag
	say "done: $NFAIL check(s) failed (the server is gone: no clean-up)"
	exit $NFAIL
fi
rm -rf "${A:?}/$D"
[ $NFAIL = 0 ] || diag
say "guest lockd/statd: nsm_local_state=$(cat /proc/sys/fs/nfs/nsm_local_state 2>/dev/null) statd monitors: $(ls /var/lib/nfs/sm 2>/dev/null | tr '\n' ' ')"
timeout -s KILL 30 umount $B || say "umount $B failed"
timeout -s KILL 30 umount $A || say "umount $A failed"
say "done: $NFAIL check(s) failed"
exit $NFAIL
