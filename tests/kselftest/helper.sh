#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# hzram with hzramd, the real helper, attached: fio with verify (4k
# random and 1M sequential, several jobs, psync, libaio and io_uring at
# queue depth 32) with most pages compressed by hzramd; pages hzramd
# compressed read back through hzramd's decoder in large reads, and one
# at a time through the kernel's LZ4 once it has gone; SIGTERM drains and
# exits 0; hzramd's clear errors. (hzramd killed and started again while
# fio verifies is chaos.sh's.) Needs the hzram module loaded and hzramd
# in ./hzramd/ (tests/kselftest/Makefile puts it there with its libraries).
. "$(dirname "$0")/ktap.sh"
. "$(dirname "$0")/hzramd-lib.sh"

DEV=

setup() {
	DEV=hzram$(cat /sys/class/hzram-control/hot_add)
	echo lz4 >/sys/block/$DEV/comp_algorithm
	# Where lockdep and KASAN make every write ten times slower, batches
	# wait longer to fill before the kernel takes them, and hzramd has
	# longer to return them.
	if [ "$SLOW" = 1 ]; then
		echo 50000 >/sys/block/$DEV/offload_flush_us
		echo 10000 >/sys/block/$DEV/offload_timeout_ms
	fi
	echo "${1:-512M}" >/sys/block/$DEV/disksize
}

teardown() {
	remove_dev $DEV
}

# offload_stat's pages compressed by the module, by reason, add up to all
# of them.
expect_reasons_add_up() {
	expect_eq $(( $(off_field 15) + $(off_field 16) + $(off_field 17) + $(off_field 18) )) \
		"$(off_field 5)" "pages compressed by the module, by reason and in all"
}

# The pages written while a helper served: most of them went through it
# (the rest were staged and compressed by the module, or compressed by
# the writer when staging was full).
expect_most_by_helper() {
	local helper kernel
	helper=$(off_field 4) kernel=$(( $(off_field 5) + $(off_field 6) ))
	echo "offload_stat: $(cat /sys/block/$DEV/offload_stat)"
	[ "$helper" -gt "$kernel" ] ||
		fail "$helper pages through the helper, $kernel in the kernel"
}

test_hzramd_fio_verify() {
	: >$LOG
	setup
	start_hzramd
	fio_verify rand4k --rw=randwrite --bs=4k --size=$((8 / SHRINK))M --numjobs=4 \
		--offset_increment=64M --ioengine=libaio --iodepth=16
	fio_verify seq1m --rw=write --bs=1M --size=$((32 / SHRINK))M --numjobs=2 \
		--offset_increment=128M --ioengine=psync
	fio_verify uring4k --rw=randwrite --bs=4k --size=$((8 / SHRINK))M --numjobs=2 \
		--offset_increment=64M --ioengine=io_uring --iodepth=32
	fio_verify uring1m --rw=write --bs=1M --size=$((32 / SHRINK))M --numjobs=2 \
		--offset_increment=128M --ioengine=io_uring --iodepth=32
	expect_most_by_helper
	stop_hzramd
	expect_reasons_add_up
	[ "$(off_field 20)" -gt 0 ] || fail "no round trip timed"
	expect_eq "$(io_field $DEV 1)$(io_field $DEV 2)" 00 "failed I/O in io_stat"
	teardown
}

# The corpus written with hzramd attached, then read back in 256 KiB
# direct reads that hzramd decodes (offload on, offload_read_min_pages 16)
# and compared; hzramd stops; every page read back by itself (4 KiB direct
# reads, so no readahead), decoded by the kernel's LZ4, and compared.
test_hzramd_pages_decode_in_kernel() {
	local pages want got
	[ -f "$HZRAM_CORPUS" ] || skip "no page corpus"
	: >$LOG
	setup
	pages=$(( $(stat -c %s "$HZRAM_CORPUS") / 4096 / SHRINK ))
	start_hzramd
	dd if="$HZRAM_CORPUS" of=/dev/$DEV bs=1M count=$((pages / 256)) oflag=direct status=none
	want=$(dd if="$HZRAM_CORPUS" bs=4k count=$pages status=none | sha256sum)
	echo on >/sys/block/$DEV/offload
	echo 16 >/sys/block/$DEV/offload_read_min_pages
	got=$(dd if=/dev/$DEV bs=256k count=$((pages / 64)) iflag=direct status=none | sha256sum)
	expect_eq "$got" "$want" "device contents read through hzramd"
	echo "offload_stat: $(cat /sys/block/$DEV/offload_stat)"
	[ "$(off_field 23)" -gt $((pages / 2)) ] ||
		fail "$(off_field 23) of $pages pages decoded by hzramd"
	expect_eq "$(off_field 25)" 0 "decoded pages refused"
	stop_hzramd
	expect_most_by_helper
	got=$(dd if=/dev/$DEV bs=4k count=$pages iflag=direct status=none | sha256sum)
	expect_eq "$got" "$want" "device contents after hzramd stopped"
	teardown
}

test_hzramd_errors() {
	local out rc
	setup
	echo "${DEV#hzram}" >/sys/class/hzram-control/hot_remove
	out=$("${HZRAMD[@]}" --device "${DEV#hzram}" --log-level warn 2>&1) && rc=0 || rc=$?
	expect_eq $rc 1 "exit status for a missing device"
	echo "$out" | grep -q "does not exist" || fail "missing device: $out"
	DEV=hzram$(cat /sys/class/hzram-control/hot_add)
	echo lzo-rle >/sys/block/$DEV/comp_algorithm
	echo 16M >/sys/block/$DEV/disksize
	out=$("${HZRAMD[@]}" --device "${DEV#hzram}" --log-level warn 2>&1) && rc=0 || rc=$?
	expect_eq $rc 1 "exit status for an lzo-rle device"
	echo "$out" | grep -q "does not use plain lz4" || fail "lzo-rle device: $out"
	out=$("${HZRAMD[@]}" --device x 2>&1) && rc=0 || rc=$?
	expect_eq $rc 2 "exit status for a bad argument"
	teardown
}

ktap_main test_hzramd_fio_verify test_hzramd_pages_decode_in_kernel test_hzramd_errors
