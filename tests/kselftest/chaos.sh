#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Chaos: the events that can meet while hzramd serves, at random moments.
#
# Two devices served by one hzramd: fio writes and verifies on the first
# (A, psync, libaio and io_uring), and large direct reads that hzramd
# decodes check the page corpus on the second (B). Meanwhile, ROUNDS
# rounds (150; HZRAM_CHAOS_ROUNDS) of one event each, after a random
# pause of up to 100 ms (of each twenty rounds, in a random order):
#   - (2) hzramd killed with SIGKILL, or (1) stopped with SIGTERM (exit
#     status 0), and started again;
#   - (7) offload off, on or auto on either device;
#   - (9) an offload parameter changed while attached (flush, min pages,
#     timeout, read min pages, verify; batch pages: EBUSY while attached);
#   - (1) a third device hot-added, served by a second hzramd, written,
#     and hot-removed while that hzramd is killed at the same moment.
# The events that start a process are the fewer: under emulation each
# costs about a second, several under lockdep and KASAN, and the test's
# time (with the I/O that runs all along) grows with their number. With
# three kills and two hot_add/hot_remove in twenty, the test took 34 to
# 79 s on 6.1, by what ran beside the guest.
# Pass: every fio run verifies and every read is the corpus, while it
# lasts; afterwards both devices read back whole, as fio and the corpus
# wrote them, through hzramd and through the kernel alone; nothing stays
# staged, no I/O failed, every kill was counted as a death. run-guest
# then checks that rmmod works, tests/vm/run that the kernel log is clean.
#
# Needs the hzram module loaded, hzramd in ./hzramd/ and the page corpus.
. "$(dirname "$0")/ktap.sh"
. "$(dirname "$0")/hzramd-lib.sh"

ROUNDS=${HZRAM_CHAOS_ROUNDS:-150}
A= B=
HELPER2=
STOP=/tmp/chaos-stop
WRITES=/tmp/chaos-writes
READS=/tmp/chaos-reads

# mkdev SIZE: a new lz4 device; prints its name.
mkdev() {
	local d
	d=hzram$(cat /sys/class/hzram-control/hot_add)
	echo lz4 >/sys/block/$d/comp_algorithm
	# As in helper.sh: where lockdep and KASAN slow every write tenfold,
	# batches wait longer to fill and hzramd has longer to return them.
	if [ "$SLOW" = 1 ]; then
		echo 50000 >/sys/block/$d/offload_flush_us
		echo 10000 >/sys/block/$d/offload_timeout_ms
	fi
	echo "$1" >/sys/block/$d/disksize
	echo $d
}

# field DEV N: field N (1-based) of DEV's offload_stat.
field() {
	local f
	read -ra f <"/sys/block/$1/offload_stat"
	echo "${f[$2 - 1]}"
}

# Waits without a process each time (under lockdep and KASAN a fork and
# exec costs tens of ms): a read that times out on a FIFO nobody writes.
pause_ms() {
	local t
	printf -v t '%d.%03d' $(($1 / 1000)) $(($1 % 1000))
	read -rt "$t" -u $PAUSE_FD || true
}

# until_attached 0|1 DEV...: wait (up to 10 s) until each DEV says so.
until_attached() {
	local want=$1 d i f
	shift
	for d in "$@"; do
		for ((i = 0; i < 1000; i++)); do
			read -ra f <"/sys/block/$d/offload_stat"
			[ "${f[0]}" = "$want" ] && break
			pause_ms 10
		done
		[ "${f[0]}" = "$want" ] || fail "$d: attached is not $want after 10 s"
	done
}

# hzramd for A and B, attached to both.
start_both() {
	"${HZRAMD[@]}" --device "${A#hzram},${B#hzram}" --threads 2 --backend cpu \
		--log-level warn >>$LOG 2>&1 &
	HZRAMD_PID=$!
	until_attached 1 $A $B
}

# A's fio jobs: each writes its region and verifies it (fio_verify);
# with --verify_only, verifies what the last run of the same job wrote.
fio_jobs() {
	DEV=$A fio_verify c4k --rw=randwrite --bs=4k --size=$((16 / SHRINK))M \
		--ioengine=io_uring --iodepth=32 "$@" &&
	DEV=$A fio_verify c64k --rw=randwrite --bs=64k --size=$((16 / SHRINK))M \
		--offset=32M --ioengine=psync "$@" &&
	DEV=$A fio_verify c1m --rw=write --bs=1M --size=$((32 / SHRINK))M \
		--offset=64M --ioengine=libaio --iodepth=4 "$@"
}

# The corpus pages B holds: their checksum, and read back through B.
corpus_sum() {
	dd if="$HZRAM_CORPUS" bs=256k count=$CHUNKS status=none | sha256sum
}
b_sum() {
	dd if=/dev/$B bs=256k count=$CHUNKS iflag=direct status=none | sha256sum
}

# One event: hot_add, a second hzramd, a write, then hot_remove while
# that hzramd is killed.
hotplug_event() {
	local c rc pid2 ret
	c=$(mkdev 16M)
	"${HZRAMD[@]}" --device "${c#hzram}" --threads 1 --backend cpu --log-level error \
		>>$LOG 2>&1 &
	pid2=$!
	HELPER2=$pid2
	until_attached 1 $c
	dd if="$HZRAM_CORPUS" of=/dev/$c bs=256k count=4 oflag=direct status=none
	# Both at once; either may come first.
	kill -KILL $pid2 &
	ret=$(sysattr write /sys/class/hzram-control/hot_remove "${c#hzram}") && rc=0 || rc=$?
	wait $pid2 2>/dev/null || true
	HELPER2=
	[ $rc = 0 ] || fail "hot_remove of $c with its helper dying: $ret"
}

# One parameter of a random device, changed while hzramd serves it.
param_event() {
	local d=$1 ret
	case $((RANDOM % 6)) in
	0) echo $((500 + RANDOM % 50000)) >/sys/block/$d/offload_flush_us ;;
	1) echo $((1 + RANDOM % 64)) >/sys/block/$d/offload_min_pages ;;
	2) echo $((SLOW ? 3000 + RANDOM % 7000 : 100 + RANDOM % 1900)) \
		>/sys/block/$d/offload_timeout_ms ;;
	3) echo $((RANDOM % 3 * 16)) >/sys/block/$d/offload_read_min_pages ;;
	4) echo $((RANDOM % 2)) >/sys/block/$d/offload_verify ;;
	5)
		# Fixed while a helper is attached; hzramd may be between
		# lives, when it is not.
		ret=$(sysattr write /sys/block/$d/offload_batch_pages 256) && return 0
		[ "$ret" = EBUSY ] || fail "offload_batch_pages on $d: $ret"
		;;
	esac
}

# The rounds' events, in a random order: of each twenty rounds, two
# SIGKILLs, one SIGTERM, one hot_add/hot_remove, seven offload modes and
# nine parameter changes. Fixed counts keep
# the test's time the same from run to run; the order and the moments are
# random.
make_deck() {
	local i j t kills=2 plugs=1
	deck=()
	for ((i = 0; i < ROUNDS; i++)); do
		j=$((i % 20))
		if [ $j -lt $kills ]; then deck+=(kill)
		elif [ $j -lt $((kills + 1)) ]; then deck+=(term)
		elif [ $j -lt $((kills + 1 + plugs)) ]; then deck+=(plug)
		elif [ $j -lt $((kills + 1 + plugs + 7)) ]; then deck+=(mode)
		else deck+=(param)
		fi
	done
	for ((i = ROUNDS - 1; i > 0; i--)); do
		j=$((RANDOM % (i + 1)))
		t=${deck[i]} deck[i]=${deck[j]} deck[j]=$t
	done
}

cleanup() {
	touch $STOP
	[ -z "$HELPER2" ] || kill -KILL "$HELPER2" 2>/dev/null
	[ -z "$HZRAMD_PID" ] || kill -KILL "$HZRAMD_PID" 2>/dev/null
	wait
}

test_chaos() {
	local r kills=0 terms=0 modes=0 params=0 plugs=0 rc=0 want got d
	local writer reader modes_list=(off on auto) deck
	[ -f "$HZRAM_CORPUS" ] || skip "no page corpus"
	: >$LOG
	rm -f $STOP $WRITES $READS /tmp/chaos-pause
	mkfifo /tmp/chaos-pause
	exec {PAUSE_FD}<>/tmp/chaos-pause
	trap cleanup EXIT
	A=$(mkdev 128M)
	B=$(mkdev 64M)
	CHUNKS=$((64 / SHRINK))		# 16 MiB of the corpus, of 256 KiB each
	echo on >/sys/block/$B/offload
	echo 16 >/sys/block/$B/offload_read_min_pages
	start_both
	# B's pages as hzramd compresses them, with the checksums that let
	# the module check what hzramd decodes.
	dd if="$HZRAM_CORPUS" of=/dev/$B bs=256k count=$CHUNKS oflag=direct status=none
	want=$(corpus_sum)
	(
		while [ ! -e $STOP ]; do
			fio_jobs || exit 1
			echo >>$WRITES
		done
	) &
	writer=$!
	(
		while [ ! -e $STOP ]; do
			[ "$(b_sum)" = "$want" ] || { echo "FAIL: $B read back wrong"; exit 1; }
			echo >>$READS
		done
	) &
	reader=$!

	make_deck
	for ((r = 0; r < ROUNDS; r++)); do
		pause_ms $((RANDOM % 100))
		kill -0 $writer 2>/dev/null && kill -0 $reader 2>/dev/null || break
		case ${deck[r]} in
		kill)
			kill -KILL $HZRAMD_PID
			wait $HZRAMD_PID 2>/dev/null || true
			kills=$((kills + 1))
			# The module sees the death within tens of ms; until
			# then a new helper would get EBUSY.
			until_attached 0 $A $B
			start_both
			;;
		term)
			kill -TERM $HZRAMD_PID
			wait $HZRAMD_PID && rc=0 || rc=$?
			expect_eq $rc 0 "hzramd's exit status after SIGTERM ($(tail -n 3 $LOG))"
			terms=$((terms + 1))
			until_attached 0 $A $B
			start_both
			;;
		mode)
			d=$A
			[ $((RANDOM % 2)) = 0 ] || d=$B
			echo "${modes_list[RANDOM % 3]}" >/sys/block/$d/offload
			modes=$((modes + 1))
			;;
		param)
			d=$A
			[ $((RANDOM % 2)) = 0 ] || d=$B
			param_event $d
			params=$((params + 1))
			;;
		plug)
			hotplug_event
			plugs=$((plugs + 1))
			;;
		esac
	done
	touch $STOP
	rc=0
	wait $writer || rc=$?
	expect_eq $rc 0 "fio (verify) on $A during the chaos"
	rc=0
	wait $reader || rc=$?
	expect_eq $rc 0 "reads of $B during the chaos"
	echo "$r rounds: $kills SIGKILL, $terms SIGTERM, $modes offload modes," \
		"$params parameters, $plugs hot_add/hot_remove with a dying helper;" \
		"$(wc -l <$WRITES) fio rounds and $(wc -l <$READS) corpus reads verified"
	expect_eq $r $ROUNDS "rounds before a reader or writer failed"

	# Afterwards: both whole, through hzramd, then through the kernel.
	echo auto >/sys/block/$A/offload
	echo on >/sys/block/$B/offload
	echo 16 >/sys/block/$B/offload_read_min_pages
	fio_jobs
	fio_jobs --verify_only
	got=$(b_sum)
	expect_eq "$got" "$want" "$B read back through hzramd"
	echo "offload_stat $A: $(cat /sys/block/$A/offload_stat)"
	echo "offload_stat $B: $(cat /sys/block/$B/offload_stat)"
	[ "$(field $A 4)" -gt 0 ] || fail "no page of $A went through hzramd"
	[ "$(field $B 22)" -gt 0 ] || fail "no read batch of $B was committed"
	expect_eq "$(field $A 14)" $kills "deaths of hzramd counted on $A"
	expect_eq "$(field $B 14)" $kills "deaths of hzramd counted on $B"
	kill -TERM $HZRAMD_PID
	wait $HZRAMD_PID && rc=0 || rc=$?
	HZRAMD_PID=
	expect_eq $rc 0 "hzramd's exit status after SIGTERM"
	fio_jobs --verify_only
	got=$(b_sum)
	expect_eq "$got" "$want" "$B read back by the kernel alone"
	for d in $A $B; do
		expect_eq "$(field $d 1)$(field $d 3)" 00 "$d: attached, pages staged"
		expect_eq "$(io_field $d 1)$(io_field $d 2)" 00 "$d: failed reads, writes"
		expect_eq $(($(field $d 15) + $(field $d 16) + $(field $d 17) + $(field $d 18))) \
			"$(field $d 5)" "$d: pages the module compressed, by reason and in all"
	done
	trap - EXIT
	remove_dev $A
	remove_dev $B
}

ktap_main test_chaos
