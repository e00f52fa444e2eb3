#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Module load and unload, num_devices, hot_add/hot_remove, rmmod while busy.
# Runs with the hzram module unloaded, and leaves it unloaded.
. "$(dirname "$0")/ktap.sh"

loaded() {
	grep -q '^hzram ' /proc/modules
}

ndevs() {
	ls -d /sys/block/hzram* 2>/dev/null | wc -l
}

test_load_unload() {
	loaded && fail "hzram is loaded before the test"
	modprobe hzram
	loaded
	expect_eq "$(cat /sys/module/hzram/parameters/num_devices)" 1 num_devices
	expect_eq "$(ndevs)" 1 "devices"
	[ -b /dev/hzram0 ] || fail "no /dev/hzram0"
	[ -d /sys/class/hzram-control ] || fail "no hzram-control class"
	expect_eq "$(cat /sys/block/hzram0/initstate)" 0 initstate
	rmmod hzram
	loaded && fail "still loaded after rmmod"
	[ ! -e /dev/hzram0 ] || fail "/dev/hzram0 left behind"
	[ ! -e /sys/class/hzram-control ] || fail "class left behind"
}

test_num_devices() {
	modprobe hzram num_devices=4
	expect_eq "$(ndevs)" 4 "devices"
	for i in 0 1 2 3; do
		[ -b /dev/hzram$i ] || fail "no /dev/hzram$i"
	done
	rmmod hzram
	modprobe hzram num_devices=0
	expect_eq "$(ndevs)" 0 "devices"
	expect_eq "$(cat /sys/class/hzram-control/hot_add)" 0 "hot_add id"
	[ -b /dev/hzram0 ] || fail "hot_add made no /dev/hzram0"
	rmmod hzram
}

test_num_devices_bad() {
	local v
	for v in 257 1000 -1 abc 1x; do
		if modprobe hzram num_devices=$v 2>/dev/null; then
			rmmod hzram
			fail "num_devices=$v was accepted"
		fi
		loaded && fail "loaded with num_devices=$v"
	done
	dmesg | grep -q 'hzram: num_devices=257: at most 256 devices' ||
		fail "no clear error in the kernel log"
}

test_max_devices() {
	local i
	# 256 devices take 37 s on the lockdep kernel (10 s elsewhere) and
	# take no lock in a way that three do not.
	[ "$SLOW" = 0 ] || skip "256 devices under lockdep and KASAN: tested on the other kernels"
	modprobe hzram num_devices=256
	expect_eq "$(ndevs)" 256 "devices"
	expect_errno ENODEV /sys/class/hzram-control/hot_remove 999
	# hot_add past the limit fails with ENOSPC and creates nothing.
	expect_read_errno ENOSPC /sys/class/hzram-control/hot_add
	expect_eq "$(ndevs)" 256 "devices"
	for i in 255 128 0; do
		echo $i >/sys/class/hzram-control/hot_remove
	done
	expect_eq "$(ndevs)" 253 "devices after hot_remove"
	# Ids are reused from the lowest free one.
	expect_eq "$(cat /sys/class/hzram-control/hot_add)" 0 "reused id"
	rmmod hzram
}

test_rmmod_while_open() {
	modprobe hzram num_devices=2
	echo 16M >/sys/block/hzram1/disksize
	exec 3<>/dev/hzram1
	rmmod hzram 2>/dev/null && fail "rmmod succeeded with /dev/hzram1 open"
	loaded
	expect_errno EBUSY /sys/class/hzram-control/hot_remove 1
	exec 3>&-
	# Data left in an idle device does not stop the unload.
	dd if=/dev/urandom of=/dev/hzram1 bs=1M count=4 oflag=direct status=none
	expect_eq "$(mm_field hzram1 1)" 4194304 "orig_data_size"
	rmmod hzram
	loaded && fail "rmmod failed once idle"
	true
}

test_hot_remove_initialised() {
	local id
	modprobe hzram num_devices=0
	id=$(cat /sys/class/hzram-control/hot_add)
	echo 8M >/sys/block/hzram$id/disksize
	dd if=/dev/urandom of=/dev/hzram$id bs=1M count=8 oflag=direct status=none
	echo "$id" >/sys/class/hzram-control/hot_remove
	[ ! -e /dev/hzram$id ] || fail "device left after hot_remove"
	rmmod hzram
}

ktap_main test_load_unload test_num_devices test_num_devices_bad \
	test_max_devices test_rmmod_while_open test_hot_remove_initialised
