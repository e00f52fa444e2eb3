#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# hzram as swap in a small guest: a program allocates and verifies about
# 2.5 times the guest's memory of patterned data in one pass that brings
# every page back from swap (on the debug kernel, where KASAN and lockdep
# make every page slow, 1.25 times, in a pass that brings back only the
# pages that went out); no OOM kill, no hang, every word verified, as
# much swapped out and in as did not fit; reset refused while swapping;
# swapoff; the pages of a program that exits leave the device. Then the
# same with hzramd attached, 3 times the guest's memory (on the debug
# kernel this one replaces the first, at its size).
# Loads and unloads the hzram module itself.
. "$(dirname "$0")/ktap.sh"
. "$(dirname "$0")/hzramd-lib.sh"

# pswp in|out: pages read from or written to swap so far.
pswp() {
	awk -v k="pswp$1" '$1 == k {print $2}' /proc/vmstat
}

test_swap_under_pressure() {
	local mem_mib want rc over in0 out0 swapped_in swapped_out reverse=
	mem_mib=$(awk '/MemTotal/ {print int($2 / 1024)}' /proc/meminfo)
	# 2.5 times the memory, one verifying pass that walks forwards: each
	# page it brings back pushes out one it has yet to read, so all of
	# them go out and come back. On the debug kernel (SHRINK) 1.25 times,
	# and the pass walks backwards (swap_verify -r): only what did not fit
	# goes out and comes back, a third of the swap traffic.
	want=$((SHRINK > 1 ? mem_mib * 5 / 4 : mem_mib * 5 / 2))
	over=$((want - mem_mib))
	[ "$SHRINK" -gt 1 ] && reverse=-r
	modprobe hzram
	echo 2G >/sys/block/hzram0/disksize
	mkswap /dev/hzram0 >/dev/null
	swapon -p 100 /dev/hzram0
	grep -q '^/dev/hzram0 ' /proc/swaps || fail "not in /proc/swaps"
	expect_errno EBUSY /sys/block/hzram0/reset 1
	echo "guest memory ${mem_mib} MiB; allocating ${want} MiB"
	rc=0
	in0=$(pswp in) out0=$(pswp out)
	swap_verify $reverse "$want" 1 || rc=$?
	swapped_in=$(( ($(pswp in) - in0) / 256 )) swapped_out=$(( ($(pswp out) - out0) / 256 ))
	echo "swap_verify exit $rc; swapped out $swapped_out MiB, in $swapped_in MiB"
	echo "mm_stat $(cat /sys/block/hzram0/mm_stat)"
	echo "io_stat $(cat /sys/block/hzram0/io_stat); debug_stat $(tr '\n' ' ' </sys/block/hzram0/debug_stat)"
	grep -E '^(Swap|Mem)(Total|Free)' /proc/meminfo | tr -s ' ' | tr '\n' ' '; echo
	dmesg | grep -iE 'out of memory|oom-kill|killed process' && fail "OOM killer ran"
	expect_eq "$rc" 0 "swap_verify exit status"
	expect_eq "$(io_field hzram0 1)$(io_field hzram0 2)" 00 "failed I/O in io_stat"
	# What did not fit in memory went out to swap and came back.
	[ "$swapped_out" -ge "$over" ] || fail "swapped out $swapped_out MiB, want $over or more"
	[ "$swapped_in" -ge "$over" ] || fail "swapped in $swapped_in MiB, want $over or more"
	swapoff /dev/hzram0
	grep -q '^/dev/hzram0 ' /proc/swaps && fail "still in /proc/swaps"
	# Freed slots: swap told the device, so little is left stored.
	echo "after swapoff: mm_stat $(cat /sys/block/hzram0/mm_stat)"
	echo 1 >/sys/block/hzram0/reset
	rmmod hzram
}

test_swap_pages_are_freed() {
	local stored mem_mib want out0 swapped_out
	mem_mib=$(awk '/MemTotal/ {print int($2 / 1024)}' /proc/meminfo)
	# 1.5 times the memory (1.0625 times on the debug kernel), verified
	# once walking backwards: what did not fit stays on the device until
	# the program exits.
	want=$((mem_mib * (SHRINK > 1 ? 17 : 24) / 16))
	modprobe hzram
	echo 1G >/sys/block/hzram0/disksize
	mkswap /dev/hzram0 >/dev/null
	swapon /dev/hzram0
	out0=$(pswp out)
	swap_verify -r "$want" 1
	swapped_out=$(( ($(pswp out) - out0) / 256 ))
	stored=$(mm_field hzram0 1)
	echo "after the program exited: swapped out $swapped_out MiB; orig_data_size $stored, notify_free $(io_field hzram0 4)"
	# Enough went to swap that pages left behind would show.
	[ "$swapped_out" -ge 32 ] || fail "only $swapped_out MiB went to swap"
	# The program's pages were freed: swap discards or notifies them.
	[ "$(io_field hzram0 4)" -gt 0 ] || [ "$stored" -lt 16777216 ] ||
		fail "freed swap pages still stored"
	swapoff /dev/hzram0
	echo 1 >/sys/block/hzram0/reset
	rmmod hzram
}

# 3 times the memory through swap with hzramd compressing: one verifying
# pass forwards, every page out and back (on the debug kernel 1.25 times,
# backwards, as above). The writes staged for hzramd are copied into the
# arena it mapped when it attached: nothing is allocated to swap out.
test_swap_with_hzramd() {
	local mem_mib want rc over in0 out0 swapped_in swapped_out reverse=
	mem_mib=$(awk '/MemTotal/ {print int($2 / 1024)}' /proc/meminfo)
	want=$((SHRINK > 1 ? mem_mib * 5 / 4 : mem_mib * 3))
	over=$((want - mem_mib))
	[ "$SHRINK" -gt 1 ] && reverse=-r
	modprobe hzram
	DEV=hzram0
	# Under lockdep and KASAN a batch takes longer to fill.
	[ "$SHRINK" = 1 ] || echo 50000 >/sys/block/hzram0/offload_flush_us
	echo 3G >/sys/block/hzram0/disksize
	: >$LOG
	start_hzramd
	mkswap /dev/hzram0 >/dev/null
	swapon -p 100 /dev/hzram0
	echo "guest memory ${mem_mib} MiB; allocating ${want} MiB"
	rc=0
	in0=$(pswp in) out0=$(pswp out)
	swap_verify $reverse "$want" 1 || rc=$?
	swapped_in=$(( ($(pswp in) - in0) / 256 )) swapped_out=$(( ($(pswp out) - out0) / 256 ))
	echo "swap_verify exit $rc; swapped out $swapped_out MiB, in $swapped_in MiB"
	echo "offload_stat $(cat /sys/block/hzram0/offload_stat)"
	echo "mm_stat $(cat /sys/block/hzram0/mm_stat)"
	dmesg | grep -iE 'out of memory|oom-kill|killed process' && fail "OOM killer ran"
	expect_eq "$rc" 0 "swap_verify exit status"
	expect_eq "$(io_field hzram0 1)$(io_field hzram0 2)" 00 "failed I/O in io_stat"
	[ "$swapped_out" -ge "$over" ] || fail "swapped out $swapped_out MiB, want $over or more"
	[ "$swapped_in" -ge "$over" ] || fail "swapped in $swapped_in MiB, want $over or more"
	kill -0 $HZRAMD_PID || fail "hzramd is gone: $(tail -n 3 $LOG)"
	expect_eq "$(off_field 14)" 0 "helper deaths"
	[ "$(off_field 4)" -gt 0 ] || fail "no page went through hzramd"
	swapoff /dev/hzram0
	stop_hzramd
	echo 1 >/sys/block/hzram0/reset
	rmmod hzram
}

if [ "$SHRINK" -gt 1 ]; then
	ktap_main test_swap_with_hzramd test_swap_pages_are_freed
else
	ktap_main test_swap_under_pressure test_swap_pages_are_freed test_swap_with_hzramd
fi
