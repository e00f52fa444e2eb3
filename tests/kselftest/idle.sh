#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Idle pages: sysfs idle and debugfs block_state, against the kernel's
# zram where it has them (Debian's cloud kernels build zram with memory
# tracking), and with hzramd serving the device.
# Needs the hzram and zram modules loaded with no devices (run-guest).
. "$(dirname "$0")/ktap.sh"
. "$(dirname "$0")/hzramd-lib.sh"

DBG=/sys/kernel/debug

# new_dev zram|hzram: a new 16 MiB lz4 device's name.
new_dev() {
	local d
	d=$1$(cat /sys/class/$1-control/hot_add)
	echo lz4 >/sys/block/$d/comp_algorithm
	echo 16M >/sys/block/$d/disksize
	echo "$d"
}

# put DEV PAGE COUNT SOURCE: write COUNT pages at PAGE from SOURCE.
put() {
	dd if="$4" of=/dev/$1 bs=4096 seek="$2" count="$3" oflag=direct \
		status=none
}

# get DEV PAGE: read page PAGE.
get() {
	dd if=/dev/$1 of=/dev/null bs=4096 skip="$2" count=1 iflag=direct \
		status=none
}

# states DEV: block_state without the access times: "index flags" lines.
states() {
	awk '{ print $1, $3 }' $DBG/${1%%[0-9]*}/$1/block_state
}

# count DEV [LETTER]: how many pages block_state lists (with LETTER in
# their states). One process: they cost under lockdep and KASAN.
count() {
	awk -v l="${2:-}" 'l == "" || index($3, l) { n++ } END { print n + 0 }' \
		$DBG/${1%%[0-9]*}/$1/block_state
}

# The same steps on each device given, each step on all of them at once,
# recording after each what users see: block_state's flags, mm_stat's
# fields that do not depend on the allocator, the data's hash, and the
# errno of each bad write. The records must be equal.
record_steps() {
	local d
	for d in "$@"; do
		# Pages 0-7 random (huge), 8-15 zeros (same-filled), 16-39 text.
		put $d 0 8 /tmp/random
		put $d 8 8 /dev/zero
		put $d 16 24 /tmp/text
	done
	for d in "$@"; do echo "$d written: $(states $d | tr '\n' ' ')" >>/tmp/rec.$d; done
	for d in "$@"; do echo all >/sys/block/$d/idle; done
	for d in "$@"; do echo "$d all idle: $(states $d | tr '\n' ' ')" >>/tmp/rec.$d; done
	# Reads and writes clear the mark; a discarded page is not listed.
	for d in "$@"; do
		get $d 3
		get $d 20
		put $d 21 1 /tmp/text
		put $d 9 1 /tmp/text
		blkdiscard -o $((5 * 4096)) -l 4096 /dev/$d
	done
	for d in "$@"; do echo "$d touched: $(states $d | tr '\n' ' ')" >>/tmp/rec.$d; done
	# By age, on pages not marked: what was written 6 s before is idle at
	# 3 s, not what was read or written right before. Each device's
	# accesses and marking back to back, so that both see the same ages.
	for d in "$@"; do put $d 16 24 /tmp/text; done
	sleep 6
	for d in "$@"; do
		get $d 22
		put $d 23 1 /tmp/text
		echo 3 >/sys/block/$d/idle
	done
	for d in "$@"; do echo "$d idle 3 s: $(states $d | tr '\n' ' ')" >>/tmp/rec.$d; done
	# Errors: zram's errno for each.
	for d in "$@"; do
		# (Not 4294967296: zram took any u64 until 6.14, a u32 since.)
		for v in idle 1x -1 "all all" 0x 09; do
			echo "$d idle '$v': $(sysattr write /sys/block/$d/idle "$v" || true)" >>/tmp/rec.$d
		done
		echo "$d mm_stat: $(awk '{ print $1, $2, $6, $8, $9 }' /sys/block/$d/mm_stat)" >>/tmp/rec.$d
		echo "$d data: $(dd if=/dev/$d bs=1M iflag=direct status=none | sha256sum | cut -d' ' -f1)" >>/tmp/rec.$d
		echo 1 >/sys/block/$d/reset
		echo "$d reset, idle all: $(sysattr write /sys/block/$d/idle all || true)" >>/tmp/rec.$d
		echo "$d reset, block_state: $(sysattr read $DBG/${d%%[0-9]*}/$d/block_state || true)" >>/tmp/rec.$d
	done
}

make_data() {
	dd if=/dev/urandom of=/tmp/random bs=4096 count=8 status=none
	# Text that compresses: the kernel's own messages, repeated.
	kmsg_text $((24 * 4096)) >/tmp/text
}

# block_state as zram has it, on zram and hzram in one guest.
test_idle_as_zram_does() {
	# Not local: the EXIT trap removes them.
	z= h=
	trap '[ -z "$z" ] || echo ${z#zram} >/sys/class/zram-control/hot_remove
		[ -z "$h" ] || remove_dev $h' EXIT
	z=$(new_dev zram)
	[ -e $DBG/zram/$z/block_state ] && [ -e /sys/block/$z/idle ] || {
		skip "this kernel's zram has no idle tracking"
	}
	# zram before 6.2 lists four states, not six, and marks same-filled
	# pages idle: hzram follows the newer one.
	put $z 0 1 /tmp/text
	if [ "$(states $z | awk '{ print length($2) }')" != 6 ]; then
		skip "this kernel's zram predates 6.2's block_state"
	fi
	echo 1 >/sys/block/$z/reset
	echo lz4 >/sys/block/$z/comp_algorithm	# reset restores zram's default
	echo 16M >/sys/block/$z/disksize
	h=$(new_dev hzram)
	rm -f /tmp/rec.$z /tmp/rec.$h
	record_steps $z $h
	sed "s/$z/DEV/g" /tmp/rec.$z >/tmp/rec.zram
	sed "s/$h/DEV/g" /tmp/rec.$h >/tmp/rec.hzram
	cat /tmp/rec.hzram
	diff /tmp/rec.zram /tmp/rec.hzram || fail "hzram's record differs from zram's"
}

# hzram alone, on every kernel: what each step must show.
test_idle_marks_and_clears() {
	local h s
	h=$(new_dev hzram)
	trap "remove_dev $h" EXIT
	put $h 0 8 /tmp/random
	put $h 8 8 /dev/zero
	put $h 16 24 /tmp/text
	expect_eq "$(count $h h) $(count $h s) $(count $h)" "8 8 40" \
		"huge, same-filled and all pages listed"
	echo all >/sys/block/$h/idle
	# Every page but the same-filled ones.
	expect_eq "$(count $h i)" 32 "idle pages after 'all'"
	get $h 3
	put $h 17 1 /tmp/text
	s=$(states $h)
	expect_eq "$(echo "$s" | awk '$1 == 3 || $1 == 17 { print $2 }' | tr '\n' ' ')" \
		"..h... ...... " "pages 3 and 17 after a read and a write"
	# A sub-page write too.
	dd if=/tmp/text of=/dev/$h bs=512 seek=$((18 * 8 + 3)) count=1 oflag=direct status=none
	expect_eq "$(states $h | awk '$1 == 18 { print $2 }')" "......" "page 18 after a 512-byte write"
	# The access time: seconds since boot, as zram's.
	awk -v now="$(cut -d. -f1 /proc/uptime)" '$1 == 17 && ($2 + 0 > now + 1 || $2 + 0 < now - 5) {
		print "access time " $2 " not within 5 s of " now; exit 1 }' \
		$DBG/hzram/$h/block_state || fail "page 17's access time"
	# An age at least the time since boot marks nothing, even uninitialised;
	# an age is a u32 (zram 6.14 and later).
	expect_errno EINVAL /sys/block/$h/idle 4294967296
	echo 4000000000 >/sys/block/$h/idle
	echo 1 >/sys/block/$h/reset
	echo 4000000000 >/sys/block/$h/idle
	expect_errno EINVAL /sys/block/$h/idle all
	expect_errno EINVAL /sys/block/$h/idle 5
	expect_read_errno EINVAL $DBG/hzram/$h/block_state
}

# With hzramd: staged pages are listed, keep an idle mark made while they
# were staged once hzramd's result is stored, and lose it when hzramd
# decodes them for a read.
test_idle_through_hzramd() {
	local t0 hits
	DEV=$(new_dev hzram)
	trap 'release_commits
		[ -z "$HZRAMD_PID" ] || { kill -9 $HZRAMD_PID; wait $HZRAMD_PID; }
		remove_dev $DEV' EXIT
	offload_every_page $DEV
	: >$LOG
	start_hzramd
	# The commit waits 5 s: the pages stay staged while they are marked.
	hold_next_commit 5000
	hits=$(cat $DBG/hzram/delay_commit_hits)
	t0=$(cut -d. -f1 /proc/uptime)
	dd if=/tmp/text of=/dev/$DEV bs=96K count=1 oflag=direct status=none
	expect_eq "$(count $DEV)" 24 "staged pages listed"
	echo all >/sys/block/$DEV/idle
	# Else the marks did not meet staged pages: nothing would be tested.
	expect_eq "$(off_field 3)" 24 "pages still staged when marked idle"
	wait_unstaged
	expect_eq $(($(cat $DBG/hzram/delay_commit_hits) - hits)) 1 "commits held"
	echo 0 >$DBG/hzram/delay_commit
	expect_eq "$(count $DEV i)" 24 "idle after their commit"
	# The time of the write, not of the commit 5 s later.
	awk -v t0="$t0" '$2 + 0 < t0 || $2 + 0 > t0 + 2 {
		print "page " $1 ": access time " $2 ", written at " t0; bad = 1 }
		END { exit bad }' $DBG/hzram/$DEV/block_state || fail "access times after the commit"
	[ "$(off_field 4)" -gt 0 ] || fail "no page went through hzramd"
	dd if=/dev/$DEV bs=96K count=1 iflag=direct status=none | cmp - /tmp/text ||
		fail "data read back differs"
	[ "$(off_field 23)" -gt 0 ] || fail "no page read was decoded by hzramd"
	expect_eq "$(count $DEV i)" 0 "idle after a read"
	stop_hzramd
	HZRAMD_PID=
}

make_data
ktap_main test_idle_as_zram_does test_idle_marks_and_clears \
	test_idle_through_hzramd
