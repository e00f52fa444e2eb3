#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# fio with verify=crc32c on hzram: 4k random and 1M sequential, several
# jobs at once, direct I/O with libaio, psync and io_uring at queue depth
# 32, and once while a CPU goes offline and back; the data fio reads back
# must verify. Needs the hzram module loaded.
. "$(dirname "$0")/ktap.sh"

DEV=

setup() {
	DEV=hzram$(cat /sys/class/hzram-control/hot_add)
	echo 512M >/sys/block/$DEV/disksize
}

teardown() {
	remove_dev $DEV
}

# run_fio NAME ARGS...: fio_verify, and no failed I/O in io_stat.
run_fio() {
	fio_verify "$@"
	expect_eq "$(io_field $DEV 1)$(io_field $DEV 2)" 00 "failed I/O in io_stat"
}

test_fio_randwrite_4k_verify() {
	setup
	run_fio rand4k --rw=randwrite --bs=4k --size=$((16 / SHRINK))M --numjobs=4 \
		--offset_increment=64M --ioengine=libaio --iodepth=16
	teardown
}

test_fio_seqwrite_1m_verify() {
	setup
	run_fio seq1m --rw=write --bs=1M --size=$((48 / SHRINK))M --numjobs=3 \
		--offset_increment=128M --ioengine=libaio --iodepth=4
	teardown
}

test_fio_randrw_mixed_verify() {
	setup
	# Writers of unaligned sizes between 512 bytes and 64 KiB.
	run_fio mixed --rw=randwrite --bsrange=512-64k --blockalign=512 \
		--size=$((8 / SHRINK))M --numjobs=4 --offset_increment=32M --ioengine=psync
	teardown
}

test_fio_io_uring_randwrite_4k_qd32_verify() {
	setup
	run_fio uring4k --rw=randwrite --bs=4k --size=$((16 / SHRINK))M --numjobs=4 \
		--offset_increment=64M --ioengine=io_uring --iodepth=32
	teardown
}

test_fio_io_uring_seqwrite_1m_qd32_verify() {
	setup
	run_fio uring1m --rw=write --bs=1M --size=$((48 / SHRINK))M --numjobs=3 \
		--offset_increment=128M --ioengine=io_uring --iodepth=32
	teardown
}

# CPU 1 goes offline and comes back, again and again, while fio writes and
# verifies: the per-CPU compression streams follow the CPUs.
test_fio_verify_while_a_cpu_goes_offline() {
	local cpu=/sys/devices/system/cpu/cpu1/online pid rc=0 flips=0
	[ -w $cpu ] || skip "no CPU 1 that can go offline"
	setup
	run_fio hotplug --rw=randwrite --bs=4k --size=$((16 / SHRINK))M --numjobs=2 \
		--offset_increment=64M --ioengine=io_uring --iodepth=32 &
	pid=$!
	while kill -0 $pid 2>/dev/null; do
		echo 0 >$cpu
		sleep 0.2
		echo 1 >$cpu
		sleep 0.2
		flips=$((flips + 1))
	done
	wait $pid || rc=$?
	expect_eq "$(cat $cpu)" 1 "CPU 1 online at the end"
	echo "CPU 1 went offline and back $flips times"
	[ $flips -gt 0 ] || fail "fio ended before the CPU went offline once"
	expect_eq $rc 0 "fio exit status"
	teardown
}

ktap_main test_fio_randwrite_4k_verify test_fio_seqwrite_1m_verify \
	test_fio_randrw_mixed_verify test_fio_io_uring_randwrite_4k_qd32_verify \
	test_fio_io_uring_seqwrite_1m_qd32_verify test_fio_verify_while_a_cpu_goes_offline
