# SPDX-License-Identifier: GPL-2.0-or-later
# tests.sh - the Linux-client suite, run inside the guest (busybox sh) as /host/main.sh.
#
# /host is a 9p share of the host's job directory. /host/env sets:
#   PHASE   name printed on every line          EXPORT  path exported by the server
#   MOPTS   NFS mount options                   TESTS   groups to run, in order
#   FIO_SIZE  bytes of the big fio job          SEED    seed of the data patterns
# Every NFS file is compared with a copy of what was written, kept in tmpfs ($R), after the
# client's cache is dropped or the file system remounted, so the bytes come from the server.
# Files kept until the end are listed with their SHA-256 in /host/sums; the host checks them
# again on the exported file system once the server has stopped.
# The host acts on the server when asked through /host/ctl (hostctl below).
. /host/env
M=/mnt/nfs
R=/tmp/ref
NPASS=0
NFAIL=0
export PATH

say() { echo "[$PHASE] $*"; }
pass() { NPASS=$((NPASS + 1)); say "ok   $*"; }
fail() { NFAIL=$((NFAIL + 1)); say "FAIL $*"; }
now() { read -r up _ < /proc/uptime; echo "$up"; }
# since T: seconds since the time T printed by now
since() { awk -v a="$1" -v b="$(now)" 'BEGIN {print b - a}'; }

# check DESC CMD...: CMD must succeed; its time is shown when it took a second or more
check() {
	d=$1; shift
	ct=$(now)
	if out=$("$@" 2>&1); then
		ct=$(since "$ct")
		case $ct in 0.* | -*) pass "$d" ;; *) pass "$d ($ct s)" ;; esac
	else
		fail "$d: exit $?: $(echo "$out" | tail -n 4)"
	fi
}
# denied DESC CMD...: CMD must fail with EACCES or EPERM on a file under $M
denied() {
	d=$1; shift
	if out=$("$@" 2>&1); then
		fail "$d: succeeded, must be refused"
	else
		case $out in
		*"$M"*"ermission denied"* | *"$M"*"ot permitted"*) pass "$d (refused: $(echo "$out" | tail -n 1))" ;;
		*) fail "$d: refused with the wrong error: $out" ;;
		esac
	fi
}
# eq DESC GOT WANT
eq() {
	if [ "$2" = "$3" ]; then pass "$1"; else fail "$1: got '$2', want '$3'"; fi
}

sum() { sha256sum "$1" 2>&1 | cut -d' ' -f1; }
# same DESC REF NFSFILE: equal SHA-256; NFSFILE is recorded for the host's check
same() {
	a=$(sum "$2"); b=$(sum "$3")
	if [ "$a" = "$b" ]; then
		pass "$1 (sha256 ${a%"${a#????????????}"})"
		echo "$a  ${3#"$M"/}" >> /host/sums
	else
		fail "$1: sha256 of $3 is $b, of what was written $a; first differences:"
		cmp -l "$2" "$3" 2>&1 | head -n 5
	fi
}

mnt() { mkdir -p $M && mount.nfs "10.0.2.2:$EXPORT" $M -o "$MOPTS"; }
remount() { cd / && umount $M && mnt; }
flushcache() { sync; echo 3 > /proc/sys/vm/drop_caches; }

# hostctl ACTION: the host acts on the server, then answers: kill9 (SIGKILL and start again),
# restart (SIGTERM, expecting exit status 0, and start again), kill (SIGKILL), start
hostctl() {
	n=$(nextctl)
	: > "/host/ctl/$n-$1.req"
	waitack "/host/ctl/$n-$1.ack"
}
# requests are numbered by count, so that a call from a subshell is numbered right too
nextctl() { echo $(($(ls /host/ctl | grep -c '\.req$') + 1)); }
waitack() {
	i=0
	while [ ! -f "$1" ] && [ $i -lt 900 ]; do sleep 0.1; i=$((i + 1)); done
	[ -f "$1" ] || { say "no answer from the host in $1"; return 1; }
	[ "$(cat "$1")" = ok ] || { say "host: $(cat "$1")"; return 1; }
}

t_everyday() {
	E=$M/every
	check "mkdir" mkdir "$E"
	cd "$E" || return
	check "create and write" sh -c 'echo hello > f1'
	check "append" sh -c 'echo world >> f1'
	flushcache
	eq "content after append" "$(cat f1)" "$(printf 'hello\nworld')"
	check "truncate down" gtruncate -s 3 f1
	flushcache
	eq "content after truncate down" "$(cat f1)" "hel"
	check "truncate up" gtruncate -s 10000 f1
	printf 'hel' > "$R/f1" && gtruncate -s 10000 "$R/f1"
	flushcache
	same "content after truncate up (zeros)" "$R/f1" "$E/f1"

	mkdir -p a b
	echo x > a/x
	check "rename across directories" mv a/x b/y
	flushcache
	check "old name gone" test ! -e a/x
	eq "renamed content" "$(cat b/y)" x
	echo 1 > a/o && echo 2 > b/o
	check "rename over an existing file" mv a/o b/o
	eq "rename target content" "$(cat b/o)" 1
	mkdir -p a/sub/deeper && echo z > a/sub/deeper/f
	check "rename a directory across directories" mv a/sub b/sub2
	flushcache
	eq "renamed directory content" "$(cat b/sub2/deeper/f 2>&1)" z

	check "hard link" ln b/y a/h
	flushcache
	eq "link count 2" "$(gstat -c %h b/y)" 2
	echo more >> a/h
	eq "write through one link seen through the other" "$(cat b/y)" "$(printf 'x\nmore')"
	check "unlink one name" rm b/y
	flushcache
	eq "link count back to 1" "$(gstat -c %h a/h)" 1
	eq "data kept by the other name" "$(cat a/h)" "$(printf 'x\nmore')"
	check "symlink to a directory" ln -s ../b/sub2 a/s
	check "symlink to a file" ln -s h a/sh
	flushcache
	eq "readlink" "$(readlink a/s)" ../b/sub2
	eq "follow a directory symlink" "$(cat a/s/deeper/f 2>&1)" z
	eq "follow a file symlink" "$(cat a/sh 2>&1)" "$(printf 'x\nmore')"

	check "chmod 640" chmod 640 f1
	check "chmod 4755 (setuid bit)" chmod 4755 a/h
	flushcache
	eq "mode 640" "$(gstat -c %a f1)" 640
	eq "mode 4755" "$(gstat -c %a a/h)" 4755
	check "chown by root (no_root_squash)" chown 1000:1001 f1
	flushcache
	eq "owner after chown" "$(gstat -c %u:%g f1)" 1000:1001
	check "chgrp by root" chgrp 0 f1
	eq "group after chgrp" "$(gstat -c %u:%g f1)" 1000:0

	t_users
	cd "$E" || return

	deep=$(seq -s / 1 64)
	check "mkdir -p of a 64-level tree" mkdir -p "deep/$deep"
	check "file at the bottom" sh -c "echo bottom > deep/$deep/leaf"
	flushcache
	eq "deep tree read back" "$(cat "deep/$deep/leaf" 2>&1)" bottom
	eq "deep tree entries" "$(find deep | wc -l)" 66

	nfst mktree "$R/tree" 20 2000 "$SEED"
	check "cp -a of a 2000-file tree" gcp -a "$R/tree" "$M/tree"
	flushcache
	check "diff -r against the source" gdiff -r "$R/tree" "$M/tree"
	# cp -a must carry modes, owners and mtimes; directory sizes differ between file systems
	meta "$R/tree" > /tmp/meta.ref
	meta "$M/tree" > /tmp/meta.nfs
	check "modes, owners and mtimes kept by cp -a" gdiff /tmp/meta.ref /tmp/meta.nfs
	eq "file count" "$(find "$M/tree" -type f | wc -l)" 2000

	cd "$M" || return
	check "rm -rf of the tree" rm -rf "$M/tree"
	check "rm -rf of the everyday directory" rm -rf "$E"
	flushcache
	check "tree and directory gone" test ! -e "$M/tree" -a ! -e "$E"
	rm -rf "$R/tree"
}

# meta DIR: type, mode, owner and mtime of everything under DIR (no symlink mtimes)
meta() {
	(cd "$1" && { find . ! -type l | xargs gstat -c '%n %F %a %u:%g %Y'; find . -type l | xargs gstat -c '%n %F %u:%g'; } | sort)
}

# rpcstats: calls, average round trip and average total time per NFS operation on this mount
rpcstats() {
	awk '/per-op statistics/ {on = 1; next} on && $2 > 0 {printf "%s%s %d (rtt %.1f ms, total %.1f ms)", sep, $1, $2, $8 / $2, $9 / $2; sep = ", "}' \
		/proc/self/mountstats
}

t_users() {
	U="nfst asuser 1000 1000"
	mkdir -p "$E/u" "$E/rootdir"
	chown 1000:1000 "$E/u"
	echo secret > "$E/rootonly" && chmod 600 "$E/rootonly"
	echo pub > "$E/rootpub" && chmod 644 "$E/rootpub"
	echo keep > "$E/rootdir/keep"
	check "user runs commands (nfst asuser works)" $U sh -c 'test "$(id -u):$(id -g)" = 1000:1000'
	check "user creates a file in its directory" $U sh -c "echo mine > $E/u/m"
	check "user chmods its file" $U chmod 600 "$E/u/m"
	flushcache
	eq "user's file owner and mode" "$(gstat -c '%u:%g %a' "$E/u/m")" "1000:1000 600"
	check "user reads its file" $U cat "$E/u/m"
	check "user chgrps its file to its own group" $U chgrp 1000 "$E/u/m"
	denied "user opens root's 0644 file for writing" \
		$U gdd if=/dev/zero of="$E/rootpub" bs=1 count=1 oflag=append conv=notrunc,nocreat status=none
	# open(O_CREAT) of an existing file: a 6.x client sends CREATE UNCHECKED, which succeeds
	# for an existing file (as on knfsd); the WRITE must still be refused, at fsync at the latest
	denied "user appends to root's 0644 file through open(O_CREAT)" \
		$U gdd if=/dev/zero of="$E/rootpub" bs=1 count=1 oflag=append conv=notrunc,fsync status=none
	denied "user truncates root's 0644 file" $U gtruncate -s 0 "$E/rootpub"
	denied "user reads root's 0600 file" $U cat "$E/rootonly"
	denied "user creates a file in root's 0755 directory" $U touch "$E/rootdir/new"
	denied "user removes a file in root's 0755 directory" $U rm -f "$E/rootdir/keep"
	denied "user renames root's file" $U mv "$E/rootpub" "$E/u/stolen"
	denied "user chmods root's file" $U chmod 666 "$E/rootpub"
	denied "user chowns its file to another user" $U chown 1001 "$E/u/m"
	denied "user chgrps its file to a group it is not in" $U chgrp 1001 "$E/u/m"
	denied "another user reads the user's 0600 file" nfst asuser 1001 1001 cat "$E/u/m"
	denied "another user writes in the user's 0755 directory" nfst asuser 1001 1001 touch "$E/u/x"
	flushcache
	eq "root's file untouched" "$(cat "$E/rootpub")" pub
	eq "root's directory untouched" "$(ls "$E/rootdir")" keep
	eq "no file created by the refused users" "$(ls "$E/u")" m
	eq "root reads the user's 0600 file" "$(cat "$E/u/m")" mine
	check "root chowns the user's file" chown 1001:1001 "$E/u/m"
	flushcache
	check "the new owner reads it" nfst asuser 1001 1001 cat "$E/u/m"
	denied "the old owner no longer reads it" $U cat "$E/u/m"
}

t_misaligned() {
	D=$M/mis
	mkdir -p "$D"
	head -c 5000001 /dev/urandom > "$R/src"
	head -c 700000 /dev/urandom > "$R/src2"
	for bs in 511 4097 65537 1000000; do
		check "dd bs=$bs" gdd if="$R/src" of="$D/odd$bs" bs=$bs status=none
	done
	flushcache
	for bs in 511 4097 65537 1000000; do same "dd bs=$bs read back" "$R/src" "$D/odd$bs"; done

	# overwrites at unaligned offsets, buffered then O_DIRECT, applied to a copy in tmpfs too
	cp "$R/src" "$R/ow"
	check "dd a base file" gdd if="$R/src" of="$D/ow" bs=1M status=none
	for w in "12345 6789" "4095 2" "1 131072" "65536 4096" "200001 300000" "4999999 10000"; do
		set -- $w
		gdd if="$R/src2" of="$R/ow" bs=$2 count=1 skip=$1 seek=$1 iflag=skip_bytes oflag=seek_bytes conv=notrunc status=none
		check "buffered overwrite of $2 bytes at $1" gdd if="$R/src2" of="$D/ow" bs=$2 count=1 skip=$1 seek=$1 \
			iflag=skip_bytes oflag=seek_bytes conv=notrunc status=none
	done
	for w in "7 4090" "8191 3" "100000 65537" "333333 123457" "5010000 5555"; do
		set -- $w
		gdd if="$R/src2" of="$R/ow" bs=$2 count=1 skip=$(($1 % 500000)) seek=$1 iflag=skip_bytes oflag=seek_bytes \
			conv=notrunc status=none
		check "O_DIRECT write of $2 bytes at $1" gdd if="$R/src2" of="$D/ow" bs=$2 count=1 skip=$(($1 % 500000)) \
			seek=$1 iflag=skip_bytes oflag=direct,seek_bytes conv=notrunc status=none
	done
	flushcache
	same "unaligned overwrites read back" "$R/ow" "$D/ow"
	eq "unaligned overwrites read back with O_DIRECT" "$(gdd if="$D/ow" bs=65536 iflag=direct status=none | sha256sum | cut -d' ' -f1)" \
		"$(sum "$R/ow")"
	# each O_DIRECT write that fits one WRITE goes FILE_SYNC: one server fdatasync per write
	gdd if="$R/src" of="$R/dio" bs=12347 count=170 status=none
	check "O_DIRECT copy with bs=12347" gdd if="$R/src" of="$D/dio" bs=12347 count=170 oflag=direct status=none
	flushcache
	same "O_DIRECT copy read back" "$R/dio" "$D/dio"

	# several processes writing one file at once
	nfst stripes "$R/stripes" 1 1000 3000 "$SEED"
	check "4 processes pwrite interleaved 1000-byte pieces" nfst stripes "$D/stripes" 4 1000 3000 "$SEED"
	nfst stripes "$R/stripesd" 1 3001 360 "$SEED"
	check "6 processes O_DIRECT pwrite interleaved 3001-byte pieces" nfst stripes "$D/stripesd" 6 3001 360 "$SEED" direct
	cp "$R/src" "$R/par"
	check "dd a base file for parallel dd" gdd if="$R/src" of="$D/par" bs=1M status=none
	for i in 0 1 2 3; do
		gdd if="$R/src2" of="$R/par" bs=7777 skip=$((i * 20)) seek=$((i * 20)) count=20 conv=notrunc status=none
	done
	for i in 0 1 2 3; do
		gdd if="$R/src2" of="$D/par" bs=7777 skip=$((i * 20)) seek=$((i * 20)) count=20 conv=notrunc status=none &
	done
	wait
	flushcache
	same "concurrent pwrite read back" "$R/stripes" "$D/stripes"
	same "concurrent O_DIRECT pwrite read back" "$R/stripesd" "$D/stripesd"
	same "4 parallel dd conv=notrunc read back" "$R/par" "$D/par"

	nfst mmapw "$R/mm" 300001 "$SEED"
	check "mmap stores + msync" nfst mmapw "$D/mm" 300001 "$SEED"
	remount
	same "mmap file read back after remount" "$R/mm" "$D/mm"
	same "dd bs=4097 read back after remount" "$R/src" "$D/odd4097"
	rm -f "$R/ow" "$R/par" "$R/stripes" "$R/stripesd" "$R/mm" "$R/f1" "$R/dio"
}

# fio_job NAME BS SIZE ARGS...: write with crc32c verify headers, remount, verify from the server
fio_job() {
	n=$1 bs=$2 size=$3; shift 3
	# a whole number of blocks: else --verify_only lays the file out again and overwrites it
	set -- --name="$n" --filename="$M/fio/$n" --bs="$bs" --size=$((size / bs * bs)) \
		--verify=crc32c --verify_fatal=1 "$@"
	t0=$(now)
	if fio "$@" --do_verify=0 > "/tmp/fio-$n.w" 2>&1; then
		pass "fio $n write ($(since "$t0") s, $(grep -o 'bw=[^ ]*' "/tmp/fio-$n.w" | head -n 1))"
	else
		fail "fio $n write:"; tail -n 20 "/tmp/fio-$n.w"; return
	fi
	remount
	if fio "$@" --verify_only > "/tmp/fio-$n.v" 2>&1 && ! grep -qi 'verify.*bad\|crc32c: verify failed' "/tmp/fio-$n.v"; then
		pass "fio $n verify after remount"
	else
		fail "fio $n verify:"; tail -n 20 "/tmp/fio-$n.v"
	fi
	rm -f "$M/fio/$n"
}

t_fio() {
	mkdir -p "$M/fio"
	# small blocks cost one RPC each (milliseconds under TCG): a quarter of the size for them
	fio_job seq-buffered 62464 "$FIO_SIZE" --rw=write
	fio_job seq-direct 10240 $((FIO_SIZE / 4)) --rw=write --direct=1 --ioengine=libaio --iodepth=8
	fio_job rand-buffered 6144 $((FIO_SIZE / 4)) --rw=randwrite
	fio_job rand-direct 3072 $((FIO_SIZE / 4)) --rw=randwrite --direct=1 --ioengine=libaio --iodepth=8
	rmdir "$M/fio"
}

# counts of WRITE and COMMIT calls after "nfst stride: WHEN:" in $out
stride_counts() { echo "$out" | awk -v w="$1:" '$3 == w {print $5, $7}'; }

t_crash() {
	C=$M/crash
	mkdir -p "$C"
	# 1. partial-page WRITEs (each one a partial block the server keeps in memory until
	#    COMMIT) answered UNSTABLE, server killed in the middle of the burst: the client must
	#    see the new verifier at COMMIT and send them again
	stride_crash stride 3000 1000 kill "partial-page writer across a SIGKILL of the server"
	set -- $(stride_counts at-start) $(stride_counts at-kill) $(stride_counts at-end)
	if [ $# = 6 ] && [ $4 = $2 ] && [ $3 -gt $1 ] && [ $3 -lt $(($1 + 3000)) ]; then
		# WRITEs were answered by the old server and no COMMIT was: they must be sent again
		if [ $(($5 - $1)) -gt 4000 ]; then
			pass "client sent again the WRITEs answered before the kill ($(($5 - $1 - 4000)) resent; $(($3 - $1)) answered before the kill)"
		else
			fail "client did not send again the $(($3 - $1)) WRITEs answered UNSTABLE before the kill ($(($5 - $1)) WRITEs for 4000 pieces): did the write verifier change at the restart?"
		fi
	else
		say "     (the kill did not land inside the WRITE burst: resending not checked this time)"
	fi
	remount
	same "partial-page file after the crash" "$R/stride" "$C/stride"

	# 2. a streaming buffered dd; small dirty limits keep WRITEs flowing while dd runs
	head -c 24000001 /dev/urandom > "$R/stream"
	echo 2097152 > /proc/sys/vm/dirty_bytes
	echo 1048576 > /proc/sys/vm/dirty_background_bytes
	stream_crash "buffered dd bs=1M" "$C/stream" 6000000 bs=1M conv=fsync
	echo 10 > /proc/sys/vm/dirty_background_ratio
	echo 20 > /proc/sys/vm/dirty_ratio
	# 3. O_DIRECT writes of 3000001 bytes at unaligned offsets: each is several UNSTABLE WRITEs
	#    with partial blocks at both ends, then a COMMIT
	head -c 15000005 /dev/urandom > "$R/dstream"
	stream_crash "O_DIRECT dd bs=3000001" "$C/dstream" 4000000 bs=3000001 oflag=direct conv=fsync
	# 4. write_mode = cached: a burst of 12000 partial-page UNSTABLE WRITEs, which the server's
	#    cache holds dirty (none completes a block); SIGKILL once it holds 32 MiB or more of them
	[ "${WMODE:-}" = cached ] && dirty_crash
	remount
	same "buffered stream after the crash" "$R/stream" "$C/stream"
	same "O_DIRECT stream after the crash" "$R/dstream" "$C/dstream"
	[ "${WMODE:-}" = cached ] && same "partial pages killed with 32 MiB dirty in the cache" \
		"$R/dirty" "$C/dirty"
	rm -f "$R/stream" "$R/dstream" "$R/stride" "$R/dirty"
}

# stride_crash NAME FIRST SECOND KILL DESC: nfst stride of $R/NAME (the reference) and $C/NAME,
# the host asked for KILL (kill: at once; killdirty: once its cache holds 32 MiB dirty) during the
# first burst and to start the server again after; sets out (nfst's report) and k (the request)
stride_crash() {
	nfst stride "$R/$1" "$2" "$3" "$SEED"
	n=$(nextctl)
	k=/host/ctl/$n-$4 s=/host/ctl/$((n + 1))-start
	if out=$(nfst stride "$C/$1" "$2" "$3" "$SEED" "$k.req" "$k.ack" "$s.req" "$s.ack" 2>&1); then
		pass "$5 (exit status 0)"
	else
		fail "$5: exit status $?"
	fi
	echo "$out" | sed 's/^/     /'
}

dirty_crash() {
	stride_crash dirty 12000 500 killdirty "partial-page burst across a SIGKILL with dirty data cached"
	held=$(cat "$k.dirty" 2> /dev/null || echo -)
	if [ "$held" != - ] && [ "$held" -ge $((32 << 20)) ]; then
		pass "the server's cache held $held bytes dirty when it was killed"
	else
		fail "the server's cache held only $held bytes dirty at the kill: the crash did not test a large dirty cache"
	fi
}

# stream_crash DESC FILE BYTES DDARGS...: dd $R/<FILE's name> to FILE, SIGKILL the server once
# BYTES are written; dd must exit 0 without a message
stream_crash() {
	sd=$1 f=$2 at=$3; shift 3
	w0=$(awk '$1 == "WRITE:" {print $2}' /proc/self/mountstats)
	gdd if="$R/${f##*/}" of="$f" status=none "$@" 2> /tmp/dd.err &
	ddpid=$!
	i=0
	while [ "$(gstat -c %s "$f" 2> /dev/null || echo 0)" -lt "$at" ] && [ $i -lt 1200 ]; do
		sleep 0.1; i=$((i + 1))
	done
	if kill -0 $ddpid 2> /dev/null; then
		check "$sd: server killed with SIGKILL and restarted while dd writes" hostctl kill9
	else
		fail "$sd: dd finished before the server could be killed: the test did not test"
	fi
	wait $ddpid
	rc=$?
	eq "$sd: dd exit status and messages across the crash" "$rc $(cat /tmp/dd.err)" "0 "
	say "     $sd: $(($(awk '$1 == "WRITE:" {print $2}' /proc/self/mountstats) - w0)) WRITE calls"
}

t_restart() {
	S=$M/rs
	mkdir -p "$S/dir"
	echo one > "$S/file"
	echo ro > "$S/rofile"
	cd "$S/dir" || return
	exec 3>> "$S/file" 4< "$S/rofile"
	check "server stopped (SIGTERM) and restarted" hostctl restart
	flushcache
	check "cwd listable after the restart" ls -la .
	check "create in cwd after the restart" sh -c 'echo new > ./created'
	eq "read back in cwd" "$(cat ./created 2>&1)" new
	check "append through a file opened before the restart" sh -c 'echo two >&3'
	eq "read through a file opened before the restart" "$(cat <&4 2>&1)" ro
	check "fstat of the open file" gstat -L /proc/self/fd/3
	exec 3>&- 4<&-
	flushcache
	eq "content written through the old descriptor" "$(cat "$S/file")" "$(printf 'one\ntwo')"
	check "cd .. from the old cwd" sh -c 'cd .. && ls dir'
	check "a second restart" hostctl restart
	check "stat of the old cwd" gstat .
	check "rm in the old cwd" rm ./created
	cd / && rm -rf "$S"
}

t_smoke() {
	S=$M/smoke
	check "mkdir" mkdir -p "$S/d"
	check "write" sh -c "echo hello > $S/d/f"
	head -c 3000001 /dev/urandom > "$R/sm"
	check "dd bs=4097" gdd if="$R/sm" of="$S/big" bs=4097 status=none
	remount
	eq "read back" "$(cat "$S/d/f")" hello
	same "dd file read back" "$R/sm" "$S/big"
	check "ls" ls -la "$S"
	rm -f "$R/sm"
}

[ -f /host/extra.sh ] && . /host/extra.sh
mkdir -p "$R" /host/ctl
: > /host/sums
say "kernel $(uname -r); mount 10.0.2.2:$EXPORT -o $MOPTS"
t0=$(now)
if ! mnt; then
	fail "mount 10.0.2.2:$EXPORT"
	dmesg | tail -n 20
	exit 1
fi
pass "mount ($(since "$t0") s): $(grep " $M " /proc/mounts)"
for t in $TESTS; do
	t0=$(now)
	say "== $t"
	"t_$t"
	cd /
	say "     rpc: $(rpcstats)"
	say "== $t took $(since "$t0") s"
done
cd /
# the host checks the files still there once the server has stopped
while read -r s f; do [ -f "$M/$f" ] && echo "$s  $f"; done < /host/sums > /tmp/sums
cp /tmp/sums /host/sums
umount $M || fail "umount"
if [ $NFAIL -gt 0 ]; then
	say "kernel log:"
	dmesg | tail -n 30
fi
say "$NPASS checks ok, $NFAIL failed"
[ $NFAIL = 0 ]
