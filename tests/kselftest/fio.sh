#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# fio with verify=crc32c on hzram: 4k random and 1M sequential, several
# jobs at once, direct I/O; the data fio reads back must verify.
# Needs the hzram module loaded.
. "$(dirname "$0")/ktap.sh"

DEV=

setup() {
	DEV=hzram$(cat /sys/class/hzram-control/hot_add)
	echo 512M >/sys/block/$DEV/disksize
}

teardown() {
	echo "${DEV#hzram}" >/sys/class/hzram-control/hot_remove
}

# run_fio NAME ARGS...: run fio; fail on any error or verify failure.
run_fio() {
	local name=$1 out
	shift
	out=$(fio --name="$name" --filename=/dev/$DEV --direct=1 \
		--verify=crc32c --verify_fatal=1 --do_verify=1 \
		--buffer_compress_percentage=60 --refill_buffers \
		--group_reporting --output-format=terse --terse-version=3 "$@" 2>&1) ||
		fail "fio $name: $out"
	# Terse v3: field 5 is the error count.
	echo "$out" | awk -F';' -v n="$name" '$1 == 3 {print "fio " n ": errors " $5; if ($5 != 0) exit 1}'
	expect_eq "$(io_field $DEV 1)$(io_field $DEV 2)" 00 "failed I/O in io_stat"
}

test_fio_randwrite_4k_verify() {
	setup
	run_fio rand4k --rw=randwrite --bs=4k --size=32M --numjobs=4 \
		--offset_increment=64M --ioengine=libaio --iodepth=16
	teardown
}

test_fio_seqwrite_1m_verify() {
	setup
	run_fio seq1m --rw=write --bs=1M --size=96M --numjobs=3 \
		--offset_increment=128M --ioengine=libaio --iodepth=4
	teardown
}

test_fio_randrw_mixed_verify() {
	setup
	# Writers of unaligned sizes between 512 bytes and 64 KiB.
	run_fio mixed --rw=randwrite --bsrange=512-64k --blockalign=512 \
		--size=16M --numjobs=4 --offset_increment=32M --ioengine=psync
	teardown
}

ktap_main test_fio_randwrite_4k_verify test_fio_seqwrite_1m_verify \
	test_fio_randrw_mixed_verify
