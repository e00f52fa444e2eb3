#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# hzram with hzramd, the real helper, attached: fio with verify (4k
# random and 1M sequential, several jobs, psync, libaio and io_uring at
# queue depth 32) with most pages compressed by hzramd; hzramd killed
# with SIGKILL at random moments 100 times while fio writes and verifies,
# restarted each time (12 times on the debug kernel, where a restart
# takes seconds; 100 / SHRINK where run-guest was given one); pages hzramd compressed read back
# through hzramd's decoder in large reads, and one at a time through the
# kernel's LZ4 once it has gone; SIGTERM drains and exits 0;
# hzramd's clear errors. Needs the hzram module loaded and hzramd in
# ./hzramd/ (tests/kselftest/Makefile puts it there with its libraries).
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

# 100 times (12 on the debug kernel, 100 / SHRINK where run-guest was
# given a SHRINK): hzramd killed with SIGKILL at a
# random moment while fio writes and verifies, then started again. Every
# fio run verifies; the module takes back whatever the dead helper held.
# Each round also reads back 2 MiB of the corpus (written at 128 MiB, as
# hzramd compressed it) in 256 KiB direct reads that go to hzramd (offload
# on), so that some of those die with it too.
test_hzramd_sigkill_during_fio_verify() {
	local kills=0 fio_pid runs=/tmp/fio-runs stop=/tmp/fio-stop rc=0
	local want=$((SLOW ? 12 : 100 / SHRINK)) reads=$((8 / SHRINK)) sum=
	: >$LOG
	rm -f $runs $stop
	setup
	echo on >/sys/block/$DEV/offload
	echo 16 >/sys/block/$DEV/offload_read_min_pages
	start_hzramd
	if [ -f "$HZRAM_CORPUS" ]; then
		dd if="$HZRAM_CORPUS" of=/dev/$DEV bs=256k count=$reads seek=512 \
			oflag=direct status=none
		sum=$(dd if="$HZRAM_CORPUS" bs=256k count=$reads status=none | sha256sum)
	fi
	(
		set -e
		while [ ! -e $stop ]; do
			fio_verify k4 --rw=randwrite --bs=4k --size=$((8 / SHRINK))M \
				--ioengine=io_uring --iodepth=32
			fio_verify k1m --rw=write --bs=1M --size=$((32 / SHRINK))M \
				--offset=64M --ioengine=libaio --iodepth=4
			if [ -n "$sum" ]; then
				got=$(dd if=/dev/$DEV bs=256k skip=512 count=$reads \
					iflag=direct status=none | sha256sum)
				[ "$got" = "$sum" ] || { echo "corpus read back wrong"; exit 1; }
			fi
			echo >>$runs
		done
	) &
	fio_pid=$!
	while [ $kills -lt $want ] && kill -0 $fio_pid 2>/dev/null; do
		sleep "0.$(printf '%03d' $((RANDOM % 100)))"
		kill -KILL $HZRAMD_PID
		wait $HZRAMD_PID 2>/dev/null || true
		kills=$((kills + 1))
		# The module notices the death within tens of milliseconds and
		# takes the batches back; until then a new helper gets EBUSY.
		wait_attached 0 || fail "the killed hzramd is still attached"
		start_hzramd
	done
	touch $stop
	wait $fio_pid || rc=$?
	echo "$kills kills; $(wc -l <$runs) rounds of fio verified; offload_stat $(cat /sys/block/$DEV/offload_stat)"
	expect_eq $rc 0 "fio (verify) exit status"
	expect_eq $kills $want "kills before fio failed"
	[ "$(off_field 4)" -gt 0 ] || fail "no page went through the helper"
	[ -z "$sum" ] || [ "$(off_field 22)" -gt 0 ] || fail "no read batch was committed"
	expect_eq "$(off_field 13)" $((want + 1)) "attaches in offload_stat"
	expect_eq "$(off_field 14)" $want "deaths in offload_stat"
	expect_reasons_add_up
	stop_hzramd
	expect_eq "$(io_field $DEV 1)$(io_field $DEV 2)" 00 "failed I/O in io_stat"
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
	echo "$out" | grep -q "does not use lz4" || fail "lzo-rle device: $out"
	out=$("${HZRAMD[@]}" --device x 2>&1) && rc=0 || rc=$?
	expect_eq $rc 2 "exit status for a bad argument"
	teardown
}

ktap_main test_hzramd_fio_verify test_hzramd_pages_decode_in_kernel \
	test_hzramd_sigkill_during_fio_verify test_hzramd_errors
