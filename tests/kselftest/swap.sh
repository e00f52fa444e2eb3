#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# hzram as swap in a small guest: a program allocates and verifies about
# 2.5 times the guest's memory (1.5 times on the debug kernel, where
# KASAN and lockdep make every page slow) of patterned data; no OOM kill,
# no hang, every word verified; reset refused while swapping; swapoff.
# Loads and unloads the hzram module itself.
. "$(dirname "$0")/ktap.sh"

test_swap_under_pressure() {
	local mem_mib want rc
	mem_mib=$(awk '/MemTotal/ {print int($2 / 1024)}' /proc/meminfo)
	# 2.5 times the memory; 1.5 times on the debug kernel (SHRINK).
	want=$((SHRINK > 1 ? mem_mib * 3 / 2 : mem_mib * 5 / 2))
	modprobe hzram
	echo 2G >/sys/block/hzram0/disksize
	mkswap /dev/hzram0 >/dev/null
	swapon -p 100 /dev/hzram0
	grep -q '^/dev/hzram0 ' /proc/swaps || fail "not in /proc/swaps"
	expect_errno EBUSY /sys/block/hzram0/reset 1
	echo "guest memory ${mem_mib} MiB; allocating ${want} MiB"
	rc=0
	# Two verifying passes; one on the debug kernel (SHRINK).
	swap_verify "$want" $((SHRINK > 1 ? 1 : 2)) || rc=$?
	echo "swap_verify exit $rc; mm_stat $(cat /sys/block/hzram0/mm_stat)"
	echo "io_stat $(cat /sys/block/hzram0/io_stat); debug_stat $(tr '\n' ' ' </sys/block/hzram0/debug_stat)"
	grep -E '^(Swap|Mem)(Total|Free)' /proc/meminfo | tr -s ' ' | tr '\n' ' '; echo
	dmesg | grep -iE 'out of memory|oom-kill|killed process' && fail "OOM killer ran"
	expect_eq "$rc" 0 "swap_verify exit status"
	expect_eq "$(io_field hzram0 1)$(io_field hzram0 2)" 00 "failed I/O in io_stat"
	swapoff /dev/hzram0
	grep -q '^/dev/hzram0 ' /proc/swaps && fail "still in /proc/swaps"
	# Freed slots: swap told the device, so little is left stored.
	echo "after swapoff: mm_stat $(cat /sys/block/hzram0/mm_stat)"
	echo 1 >/sys/block/hzram0/reset
	rmmod hzram
}

test_swap_pages_are_freed() {
	local stored
	modprobe hzram
	echo 1G >/sys/block/hzram0/disksize
	mkswap /dev/hzram0 >/dev/null
	swapon /dev/hzram0
	swap_verify $(( $(awk '/MemTotal/ {print int($2 / 1024)}' /proc/meminfo) * (SHRINK > 1 ? 9 : 12) / 8 )) 1
	stored=$(mm_field hzram0 1)
	echo "after the program exited: orig_data_size $stored, notify_free $(io_field hzram0 4)"
	# The program's pages were freed: swap discards or notifies them.
	[ "$(io_field hzram0 4)" -gt 0 ] || [ "$stored" -lt 16777216 ] ||
		fail "freed swap pages still stored"
	swapoff /dev/hzram0
	echo 1 >/sys/block/hzram0/reset
	rmmod hzram
}

ktap_main test_swap_under_pressure test_swap_pages_are_freed
