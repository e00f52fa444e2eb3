#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rmmod and modprobe against everything else a user can do at the same
# time: hot_add, hot_remove, disksize, reset, comp_algorithm, opening the
# device and I/O. Whatever fails must fail cleanly: the module is either
# loaded and working or gone, and a device made at the end stores data.
# Runs with the hzram module unloaded, and leaves it unloaded.
. "$(dirname "$0")/ktap.sh"

# Load/unload cycles go on for at least MIN_SECONDS, and until MIN_UNLOADS
# unloads have succeeded (at most MAX_SECONDS).
MIN_SECONDS=6 MIN_UNLOADS=3 MAX_SECONDS=90

loaded() {
	grep -q '^hzram ' /proc/modules
}

# Background users; they stop when /tmp/race-stop exists. Their errors are
# expected (the module comes and goes under them) and not reported.
user_control() {
	while [ ! -e /tmp/race-stop ]; do
		id=$(cat /sys/class/hzram-control/hot_add 2>/dev/null) || continue
		echo lz4 >/sys/block/hzram$id/comp_algorithm 2>/dev/null
		echo 8M >/sys/block/hzram$id/disksize 2>/dev/null
		cat /sys/block/hzram$id/mm_stat >/dev/null 2>&1
		echo 1 >/sys/block/hzram$id/reset 2>/dev/null
		echo "$id" >/sys/class/hzram-control/hot_remove 2>/dev/null
	done
}

# Holding the device open keeps it (and the module) in place: what it
# writes then must read back. (Nothing here may create /dev/hzram0 as a
# file when the node is gone: no O_CREAT.)
user_io() {
	while [ ! -e /tmp/race-stop ]; do
		exec 4</dev/hzram0 2>/dev/null || continue
		echo 4M >/sys/block/hzram0/disksize 2>/dev/null
		if dd if=/tmp/race-data of=/dev/hzram0 bs=64k oflag=direct conv=nocreat \
			status=none 2>/dev/null; then
			cmp -s -n 1048576 /tmp/race-data /dev/hzram0 ||
				echo "I/O: data differs" >>/tmp/race-bad
		fi
		exec 4>&-
		echo 1 >/sys/block/hzram0/reset 2>/dev/null
		# Closed for a moment: rmmod's chance.
		usleep 30000
	done
}

test_rmmod_against_users() {
	local start=$SECONDS cycles=0 unloads=0
	loaded && fail "hzram is loaded before the test"
	rm -f /tmp/race-stop /tmp/race-bad
	dd if=/dev/urandom of=/tmp/race-data bs=1M count=1 status=none
	user_control 2>/dev/null &
	user_control 2>/dev/null &
	user_io 2>/dev/null &
	while [ $((SECONDS - start)) -lt $MIN_SECONDS ] ||
		{ [ $unloads -lt $MIN_UNLOADS ] && [ $((SECONDS - start)) -lt $MAX_SECONDS ]; }; do
		modprobe hzram num_devices=1 2>/dev/null
		usleep 20000
		rmmod hzram 2>/dev/null && unloads=$((unloads + 1))
		cycles=$((cycles + 1))
	done
	touch /tmp/race-stop
	wait
	echo "$cycles load/unload cycles, $unloads unloads succeeded"
	[ ! -e /tmp/race-bad ] || fail "$(cat /tmp/race-bad)"
	[ $unloads -ge $MIN_UNLOADS ] || fail "rmmod succeeded only $unloads times"
	# Nothing is left behind, and a fresh load works.
	if loaded; then
		for d in /sys/block/hzram*; do
			[ -e "$d" ] && echo 1 >"$d/reset"
		done
		rmmod hzram
	fi
	[ ! -e /sys/class/hzram-control ] || fail "class left behind"
	ls /dev/hzram* >/dev/null 2>&1 && fail "device nodes left behind"
	modprobe hzram
	echo 4M >/sys/block/hzram0/disksize
	dd if=/tmp/race-data of=/dev/hzram0 bs=64k oflag=direct conv=nocreat status=none
	cmp -n 1048576 /tmp/race-data /dev/hzram0
	rmmod hzram
	rm -f /tmp/race-stop /tmp/race-data
}

# rmmod during I/O fails (the device is open) and disturbs nothing.
test_rmmod_busy_while_io() {
	local pid tries=0
	modprobe hzram
	echo 64M >/sys/block/hzram0/disksize
	dd if=/dev/urandom of=/tmp/race-data bs=1M count=32 status=none
	exec 3</dev/hzram0
	dd if=/tmp/race-data of=/dev/hzram0 bs=1M oflag=direct conv=nocreat status=none &
	pid=$!
	while kill -0 $pid 2>/dev/null; do
		rmmod hzram 2>/dev/null && fail "rmmod succeeded during I/O"
		tries=$((tries + 1))
		usleep 10000
	done
	wait $pid
	exec 3>&-
	echo "rmmod refused $tries times during the write"
	loaded || fail "the module went away"
	cmp /tmp/race-data <(dd if=/dev/hzram0 bs=1M count=32 iflag=direct status=none)
	rmmod hzram
	rm -f /tmp/race-data
}

ktap_main test_rmmod_against_users test_rmmod_busy_while_io
