#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# hzram as swap in a small guest, with hzramd: a program allocates and
# verifies twice the guest's memory of patterned data in one pass that
# brings every page back from swap, while hzramd compresses, is killed,
# and is started again (see the test); on the debug kernel, where KASAN
# and lockdep make every page slow, 48 MiB more than the memory available
# in a pass that brings back only what went out. No OOM kill, no hang,
# every word verified; reset refused while swapping; once the program has
# exited its pages leave the device; swapoff. Then, with memory made
# short on demand, that what hzramd compressed is stored as its write
# would have been: plain writes wait, swap-outs take from part of the
# reserves. Loads and unloads the module itself.
. "$(dirname "$0")/ktap.sh"
. "$(dirname "$0")/hzramd-lib.sh"

# expect_freed OVER: the pages of the program that exited left the
# device. When it exited, at least what did not fit in memory (OVER MiB)
# was in swap; swap frees its slots (free notifications, discards), so
# less than that is stored now (other programs' pages may be).
expect_freed() {
	local stored
	stored=$(mm_field hzram0 1)
	echo "after the program exited: orig_data_size $stored, notify_free $(io_field hzram0 4)"
	[ "$stored" -lt $(($1 * 1048576)) ] ||
		fail "$stored bytes still stored; the program had $1 MiB or more in swap"
}

# pswp in|out: pages read from or written to swap so far.
pswp() {
	awk -v k="pswp$1" '$1 == k {print $2}' /proc/vmstat
}

# One verifying pass over twice the memory through swap, every page out
# and back (on the debug kernel 48 MiB more than MemAvailable, walking
# backwards, swap_verify -r: only what did not fit goes out and comes
# back; MemAvailable being an estimate, at least 32 MiB of it must).
# hzramd compresses the first third of the swap-outs; then it is
# killed (SIGKILL, under memory pressure: the module takes its batches
# back) and the device goes on without a helper for the second third;
# then a new hzramd attaches, under pressure, for the rest. No OOM kill,
# no failed I/O, every word verified, one death and two attaches counted.
test_swap_with_hzramd_killed_and_restarted() {
	local mem_mib want rc over in0 out0 swapped_in swapped_out reverse= pid out
	mem_mib=$(awk '/MemTotal/ {print int($2 / 1024)}' /proc/meminfo)
	want=$((mem_mib * 2))
	over=$((want - mem_mib))
	modprobe hzram
	DEV=hzram0
	# A failure leaves nothing to the tests after it (they would find the
	# swap area and the device in use). Under set -e: guarded.
	trap 'swapoff /dev/hzram0 2>/dev/null || true
		[ -z "${HZRAMD_PID:-}" ] || kill -KILL "$HZRAMD_PID" 2>/dev/null || true
		echo 1 2>/dev/null >/sys/block/hzram0/reset || true
		rmmod hzram 2>/dev/null || true' EXIT
	# Under lockdep and KASAN a batch takes longer to fill.
	[ "$SLOW" = 0 ] || echo 50000 >/sys/block/hzram0/offload_flush_us
	echo 3G >/sys/block/hzram0/disksize
	: >$LOG
	start_hzramd
	mkswap /dev/hzram0 >/dev/null
	swapon -p 100 /dev/hzram0
	grep -q '^/dev/hzram0 ' /proc/swaps || fail "not in /proc/swaps"
	expect_errno EBUSY /sys/block/hzram0/reset 1
	if [ "$SLOW" = 1 ]; then
		# A pass over 1.125 times MemTotal took 4 minutes here, most
		# of it thrashing: what is available is far less than that.
		want=$(( $(awk '/MemAvailable/ {print int($2 / 1024)}' /proc/meminfo) + 48 ))
		over=32 reverse=-r
	fi
	echo "guest memory ${mem_mib} MiB; allocating ${want} MiB"
	rc=0
	in0=$(pswp in) out0=$(pswp out)
	swap_verify $reverse "$want" 1 &
	pid=$!
	out() { echo $(( ($(pswp out) - out0) / 256 )); }
	while kill -0 $pid 2>/dev/null && [ "$(out)" -lt $((over / 3)) ]; do sleep 0.2; done
	kill -KILL $HZRAMD_PID
	wait $HZRAMD_PID 2>/dev/null || true
	wait_attached 0 || fail "the killed hzramd is still attached"
	echo "hzramd killed after $(out) MiB swapped out"
	while kill -0 $pid 2>/dev/null && [ "$(out)" -lt $((2 * over / 3)) ]; do sleep 0.2; done
	start_hzramd
	echo "hzramd started again after $(out) MiB swapped out"
	wait $pid || rc=$?
	swapped_in=$(( ($(pswp in) - in0) / 256 )) swapped_out=$(( ($(pswp out) - out0) / 256 ))
	echo "swap_verify exit $rc; swapped out $swapped_out MiB, in $swapped_in MiB"
	echo "offload_stat $(cat /sys/block/hzram0/offload_stat)"
	echo "mm_stat $(cat /sys/block/hzram0/mm_stat)"
	echo "io_stat $(cat /sys/block/hzram0/io_stat); debug_stat $(tr '\n' ' ' </sys/block/hzram0/debug_stat)"
	dmesg | grep -iE 'out of memory|oom-kill|killed process' && fail "OOM killer ran"
	expect_eq "$rc" 0 "swap_verify exit status"
	expect_eq "$(io_field hzram0 1)$(io_field hzram0 2)" 00 "failed I/O in io_stat"
	# What did not fit in memory went out to swap and came back.
	[ "$swapped_out" -ge "$over" ] || fail "swapped out $swapped_out MiB, want $over or more"
	[ "$swapped_in" -ge "$over" ] || fail "swapped in $swapped_in MiB, want $over or more"
	expect_freed "$over"
	kill -0 $HZRAMD_PID || fail "hzramd is gone: $(tail -n 3 $LOG)"
	expect_eq "$(off_field 13) $(off_field 14)" "2 1" "helper attaches and deaths"
	[ "$(off_field 4)" -gt 0 ] || fail "no page went through hzramd"
	swapoff /dev/hzram0
	grep -q '^/dev/hzram0 ' /proc/swaps && fail "still in /proc/swaps"
	stop_hzramd
	echo 1 >/sys/block/hzram0/reset
	rmmod hzram
}

# writestall: debug_stat's count of allocations that had to reclaim.
writestall() {
	local l
	{ read -r _; read -r l _; } </sys/block/hzram0/debug_stat
	echo "$l"
}

# A page hzramd compressed is stored as its write would have stored it:
# a swap-out's from part of the memory reserves when memory is short
# (__GFP_HIGH), not by waiting first in reclaim without I/O. That reclaim
# cannot swap: where anonymous memory is most of what there is, it scans
# the whole LRU and takes nothing, and on 6.1's LRU that ages the pages in
# use out (35 times zram's pages scanned, a quarter more major faults).
# The next allocations that may not reclaim are made to find memory short
# (short_nowait_times): while hzramd stores plain writes, each counts a
# stall (writestall), as the write would have waited; while it stores
# swap-outs (paged out without memory pressure, so that part of the
# reserves always serves), none does.
test_staged_swap_out_allocates_as_a_swap_out() {
	local dbg=/sys/kernel/debug/hzram want rc h0 s0 p0 hits stalls helped
	modprobe hzram
	[ -e $dbg/short_nowait_times ] || { rmmod hzram; skip "no $dbg/short_nowait_times"; }
	# Whatever happens, nothing made short after the test (the module
	# may be gone by then).
	trap "[ ! -e $dbg/short_nowait_times ] || echo 0 >$dbg/short_nowait_times" EXIT
	DEV=hzram0
	echo 1G >/sys/block/hzram0/disksize
	: >$LOG
	start_hzramd
	# Plain writes: 4 MiB of pseudo-random pages (stored raw).
	h0=$(cat $dbg/short_nowait_hits) s0=$(writestall) p0=$(off_field 4)
	echo 256 >$dbg/short_nowait_times
	dd if=/dev/urandom of=/tmp/random bs=1M count=4 status=none
	dd if=/tmp/random of=/dev/hzram0 bs=1M oflag=direct status=none
	rm /tmp/random
	wait_unstaged
	hits=$(($(cat $dbg/short_nowait_hits) - h0)) stalls=$(($(writestall) - s0))
	helped=$(($(off_field 4) - p0))
	echo 0 >$dbg/short_nowait_times
	echo "plain writes: $hits short, $stalls stalls, $helped pages through hzramd"
	[ "$hits" -gt 0 ] || fail "no allocation was made short"
	[ "$helped" -gt 0 ] || fail "no page went through hzramd"
	expect_eq "$stalls" "$hits" "writestall of plain writes made short"
	# Swap-outs: 16 MiB paged out at once (MADV_PAGEOUT, no memory
	# pressure: part of the reserves always serves), while 2048 first
	# tries find memory short; then read back. Reclaim sends them a few
	# at a time, so batches that offload_flush_us closes are small: with
	# offload_min_pages 1 every staged page goes to hzramd, not only those
	# that happened to fill a batch of 32 (once 32 pages of 4096, and on
	# a slower machine none).
	echo 1 >/sys/block/hzram0/offload_min_pages
	mkswap /dev/hzram0 >/dev/null
	swapon /dev/hzram0
	wait_unstaged	# mkswap's page: a plain write
	h0=$(cat $dbg/short_nowait_hits) s0=$(writestall) p0=$(off_field 4)
	echo 2048 >$dbg/short_nowait_times
	rc=0
	swap_verify -p 16 1 || rc=$?
	wait_unstaged
	hits=$(($(cat $dbg/short_nowait_hits) - h0)) stalls=$(($(writestall) - s0))
	helped=$(($(off_field 4) - p0))
	echo 0 >$dbg/short_nowait_times
	echo "swap-outs: $hits short, $stalls stalls, $helped pages through hzramd"
	expect_eq "$rc" 0 "swap_verify exit status"
	expect_eq "$(io_field hzram0 1)$(io_field hzram0 2)" 00 "failed I/O in io_stat"
	[ "$hits" -gt 0 ] || fail "no allocation was made short"
	[ "$helped" -gt 0 ] || fail "no page went through hzramd"
	expect_eq "$stalls" 0 "writestall of swap-outs made short"
	swapoff /dev/hzram0
	stop_hzramd
	echo 1 >/sys/block/hzram0/reset
	rmmod hzram
}

HZSETUP=(env LD_LIBRARY_PATH="$HERE/hzram-setup/lib" "$HERE/hzram-setup/hzram-setup")

# The second tier under swap pressure: hzram-setup sets hzram0 up as swap
# from /etc/hzram.conf, with zstd to recompress pages idle a second and
# the guest's scratch disk (/dev/vdb, outside its memory) as the backing
# device for pages idle two seconds, at most 64 MiB a day (without a
# limit, in a 256 MiB guest, most of the 654 MiB allocated went to the
# disk and came back: 110 s instead of 31 alone); hzram-setup --maintain
# runs every 3 s, at most six times (what it does grows with the runs: a
# test slowed by the guests beside it recompressed every page once more),
# while a program allocates three times the
# guest's memory and verifies it in a pass that brings back what went out
# (swap_verify -r: twice the memory out to swap and back; on the debug
# kernel 48 MiB more than MemAvailable). Pages
# are recompressed and written back while they are swapped out and in;
# no OOM kill, no failed I/O, every word verified, what the program
# left freed (blocks on the backing device too). With HZRAMD 1, hzramd
# serves the device: it compresses the swap-outs and recompresses.
second_tier_under_swap() {
	local mem_mib want over pid mpid rc=0 runs=0 hz=$1 day0
	mem_mib=$(awk '/MemTotal/ {print int($2 / 1024)}' /proc/meminfo)
	want=$((mem_mib * 3)) over=$((mem_mib * 2))
	if [ "$SLOW" = 1 ]; then
		want=$(( $(awk '/MemAvailable/ {print int($2 / 1024)}' /proc/meminfo) + 48 ))
		over=32
	fi
	modprobe hzram num_devices=1
	DEV=hzram0
	mpid=
	rm -f /tmp/maintain.stop
	trap '[ -z "$mpid" ] || { touch /tmp/maintain.stop; wait $mpid; } 2>/dev/null || true
		rm -f /tmp/maintain.stop
		swapoff /dev/hzram0 2>/dev/null || true
		[ -z "${HZRAMD_PID:-}" ] || kill -KILL "$HZRAMD_PID" 2>/dev/null || true
		echo 1 2>/dev/null >/sys/block/hzram0/reset || true
		rm -f /etc/hzram.conf; rmmod hzram 2>/dev/null || true' EXIT
	mkdir -p /etc
	cat >/etc/hzram.conf <<-EOC
		[hzram0]
		zram-size = $((want + 256))
		compression-algorithm = lz4 zstd
		swap-priority = 100
		writeback-device = /dev/vdb
		writeback-idle-age = 2
		writeback-limit = 64
		recompress-idle-age = 1
	EOC
	: >$LOG
	if [ "$hz" = 1 ]; then
		start_hzramd
		[ "$SLOW" = 0 ] || echo 50000 >/sys/block/hzram0/offload_flush_us
	fi
	day0=$(($(date +%s) / 86400))
	"${HZSETUP[@]}" || fail "hzram-setup failed"
	grep -q '^/dev/hzram0 ' /proc/swaps || fail "hzram-setup did not swap on hzram0"
	expect_eq "$(cat /sys/block/hzram0/backing_dev)" /dev/vdb "backing_dev"
	# Six runs at most, the last one whole: the loop stops at the stop
	# file, between runs, and is waited for before anything is read.
	(
		for ((i = 0; i < 6; i++)); do
			[ ! -e /tmp/maintain.stop ] || break
			"${HZSETUP[@]}" --maintain >>/tmp/maintain.log 2>&1 || echo "FAILED" >>/tmp/maintain.log
			sleep 3
		done
	) &
	mpid=$!
	echo "guest memory ${mem_mib} MiB; allocating ${want} MiB, hzramd $hz"
	swap_verify -r "$want" 1 || rc=$?
	touch /tmp/maintain.stop
	wait $mpid || true
	rm -f /tmp/maintain.stop
	mpid=
	runs=$(grep -c 'maintained: ' /tmp/maintain.log || true)
	echo "maintenance runs $runs; last: $(grep 'maintained: ' /tmp/maintain.log | tail -n 1)"
	echo "bd_stat $(cat /sys/block/hzram0/bd_stat); recomp_stat $(cat /sys/block/hzram0/recomp_stat)"
	echo "mm_stat $(cat /sys/block/hzram0/mm_stat); io_stat $(cat /sys/block/hzram0/io_stat)"
	echo "offload_stat $(cat /sys/block/hzram0/offload_stat)"
	dmesg | grep -iE 'out of memory|oom-kill|killed process' && fail "OOM killer ran"
	grep -q FAILED /tmp/maintain.log && fail "hzram-setup --maintain failed: $(grep -B3 FAILED /tmp/maintain.log | head)"
	expect_eq "$rc" 0 "swap_verify exit status"
	expect_eq "$(io_field hzram0 1)$(io_field hzram0 2)" 00 "failed I/O in io_stat"
	[ "$runs" -gt 0 ] || fail "no maintenance run finished"
	[ "$(awk '{ print $3 }' /sys/block/hzram0/bd_stat)" -gt 0 ] || fail "no page written back"
	# The day's limit, set at the set-up: 64 MiB of 4 KiB pages (refilled
	# once more if the run spanned midnight).
	[ "$(awk '{ print $3 }' /sys/block/hzram0/bd_stat)" -le $((16384 * (1 + $(date +%s) / 86400 - day0))) ] ||
		fail "more written back than writeback-limit allows"
	[ "$(awk '{ print $2 }' /sys/block/hzram0/bd_stat)" -gt 0 ] || fail "no page read from the backing device"
	[ "$(awk '{ print $3 }' /sys/block/hzram0/recomp_stat)" -gt 0 ] || fail "no page recompressed"
	if [ "$hz" = 1 ]; then
		[ "$(off_field 4)" -gt 0 ] || fail "no page went through hzramd"
		kill -0 $HZRAMD_PID || fail "hzramd is gone: $(tail -n 3 $LOG)"
	fi
	expect_freed "$over"
	swapoff /dev/hzram0
	# What is left (the swap area's header, written back once idle) goes
	# with a discard of the whole device, its blocks with it.
	blkdiscard -f /dev/hzram0 2>/dev/null
	expect_eq "$(awk '{ print $1 }' /sys/block/hzram0/bd_stat) $(mm_field hzram0 1)" "0 0" \
		"blocks held and orig_data_size after swapoff and a discard"
	[ "$hz" = 0 ] || stop_hzramd
	echo 1 >/sys/block/hzram0/reset
	rm -f /etc/hzram.conf /tmp/maintain.log
	rmmod hzram
}
test_swap_second_tier() { second_tier_under_swap 0; }
test_swap_second_tier_with_hzramd() { second_tier_under_swap 1; }

if [ $# -gt 0 ]; then
	ktap_main "$@"
else
	ktap_main test_swap_with_hzramd_killed_and_restarted \
		test_staged_swap_out_allocates_as_a_swap_out
fi
