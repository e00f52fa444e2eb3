#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Failures injected into hzram's allocations and codec while data goes
# through it: every write either succeeds or fails with an I/O error that
# io_stat counts, every read returns what the last successful write
# wrote, and once everything is discarded and compacted nothing is left
# allocated or accounted.
#
# The kernel's failslab and fail_page_alloc are aimed at the module with
# their stack-trace filter (only allocations with hzram's code on the
# stack fail); the module's own fail_compress and fail_decompress
# (/sys/kernel/debug/hzram/) make the codec fail. Kernels built without
# fault injection (the distribution kernels) skip these tests.
# Needs the hzram module loaded.
. "$(dirname "$0")/ktap.sh"

FI=/sys/kernel/debug
DEV=

have_fault_injection() {
	[ -e $FI/failslab/require-start ] && [ -e $FI/fail_page_alloc/require-start ] &&
		[ -d $FI/hzram/fail_compress ]
}

# The addresses of hzram's code, as two hex numbers: from its .text
# section to the first of its sections above it that is not code, or to
# the end of the module. (Shell arithmetic wraps these kernel addresses to
# negative numbers, which keeps their order.) Shell builtins only: on the
# debug kernel every process started costs a tenth of a second or more,
# and the module has dozens of sections.
hzram_text_range() {
	local start end a f name size base
	read -r start </sys/module/hzram/sections/.text
	start=$((start))
	while read -r name size _ _ _ base _; do
		[ "$name" = hzram ] && break
	done </proc/modules
	end=$((base + size))
	for f in /sys/module/hzram/sections/.[!.]* /sys/module/hzram/sections/*; do
		case "${f##*/}" in *text*) continue ;; esac
		[ -f "$f" ] || continue
		read -r a <"$f"
		a=$((a))
		[ "$a" -gt "$start" ] && [ "$a" -lt "$end" ] && end=$a
	done
	printf '0x%x 0x%x\n' "$start" "$end"
}

# aim KNOB PROBABILITY IGNORE_GFP_WAIT: fail KNOB's allocations that have
# hzram's code on the stack, with PROBABILITY percent, forever, quietly.
aim() {
	local d=$FI/$1 range
	range=$(hzram_text_range)
	echo 0 >"$d/probability"
	echo "${range% *}" >"$d/require-start"
	echo "${range#* }" >"$d/require-end"
	echo 32 >"$d/stacktrace-depth"
	echo N >"$d/task-filter"
	echo 0 >"$d/space"
	echo 1 >"$d/interval"
	echo 0 >"$d/verbose"
	echo -1 >"$d/times"
	echo "$3" >"$d/ignore-gfp-wait"
	[ "$1" = fail_page_alloc ] && echo N >"$d/ignore-gfp-highmem" && echo 0 >"$d/min-order"
	echo "$2" >"$d/probability"
}

# codec KNOB PROBABILITY INTERVAL: the module's own failure knobs.
codec() {
	local d=$FI/hzram/$1
	echo 0 >"$d/verbose"
	echo N >"$d/task-filter"
	echo -1 >"$d/times"
	echo "$3" >"$d/interval"
	echo "$2" >"$d/probability"
}

all_off() {
	local k
	for k in failslab fail_page_alloc hzram/fail_compress hzram/fail_decompress; do
		echo 0 >"$FI/$k/probability" 2>/dev/null || true
	done
}

setup() {
	have_fault_injection || skip "this kernel has no fault injection (failslab, fail_page_alloc, stack-trace filter)"
	DEV=hzram$(cat /sys/class/hzram-control/hot_add)
	echo "$1" >/sys/block/$DEV/disksize
	# Injection may not outlive a failed test.
	trap all_off EXIT
}

teardown() {
	all_off
	remove_dev $DEV
}

# Discard the whole device and compact: nothing stored, nothing allocated.
expect_empty_after_discard() {
	blkdiscard /dev/$DEV
	echo 1 >/sys/block/$DEV/compact
	echo "after discard and compact: mm_stat $(cat /sys/block/$DEV/mm_stat)"
	expect_eq "$(mm_field $DEV 1)" 0 "orig_data_size"
	expect_eq "$(mm_field $DEV 2)" 0 "compr_data_size"
	expect_eq "$(mm_field $DEV 3)" 0 "mem_used_total"
}

# fio_faulty NAME ARGS...: fio with verify that goes on after a failed
# write (fio then leaves that block out of the verification) and stops
# on any other error. Prints the number of failed writes.
fio_faulty() {
	local name=$1 out errs
	shift
	out=$(fio --name="$name" --filename=/dev/$DEV --direct=1 \
		--verify=crc32c --verify_fatal=1 --do_verify=1 \
		--continue_on_error=write --buffer_compress_percentage=60 --refill_buffers \
		--group_reporting --output-format=json "$@" 2>&1) ||
		{ echo "$out" >&2; fail "fio $name failed"; }
	# One job entry (group_reporting): its write errors and verify state.
	errs=$(echo "$out" | sed -n 's/.*"total_err" : \([0-9]*\).*/\1/p' | head -1)
	[ -n "$errs" ] || { echo "$out" >&2; fail "no error count in fio's output"; }
	echo "$errs"
}

faulty_run() {
	local name=$1 errs failed
	shift
	aim failslab 5 N
	aim fail_page_alloc 5 N
	errs=$(fio_faulty "$name" "$@")
	all_off
	failed=$(io_field $DEV 2)
	echo "fio $name: $errs writes failed, io_stat $(cat /sys/block/$DEV/io_stat)"
	echo "mm_stat $(cat /sys/block/$DEV/mm_stat); debug_stat $(tail -n1 /sys/block/$DEV/debug_stat)"
	[ "$errs" -gt 0 ] || fail "no write failed: the injection did not reach hzram"
	expect_eq "$failed" "$errs" "failed writes in io_stat against fio's"
	expect_eq "$(io_field $DEV 1)" 0 "failed reads"
	expect_empty_after_discard
}

test_fio_random_4k_with_failing_allocations() {
	setup 256M
	faulty_run rand4k --rw=randwrite --bs=4k --size=$((32 / SHRINK))M --numjobs=4 \
		--offset_increment=64M --ioengine=libaio --iodepth=16
	teardown
}

test_fio_sequential_1m_with_failing_allocations() {
	setup 256M
	faulty_run seq1m --rw=write --bs=1M --size=$((96 / SHRINK))M --numjobs=3 \
		--offset_increment=64M --ioengine=psync
	teardown
}

# Only the allocations that must not sleep fail: every write waits for
# its object instead (debug_stat's writestall) and still goes in.
test_writes_that_wait_for_memory_all_go_in() {
	local stall
	setup 64M
	# 2 MiB of random data and 4 MiB of the corpus: 1536 pages.
	dd if=/dev/urandom of=/tmp/r bs=1M count=2 status=none
	dd if="$HZRAM_CORPUS" of=/tmp/c bs=1M count=4 status=none
	aim failslab 100 Y
	aim fail_page_alloc 100 Y
	dd if=/tmp/r of=/dev/$DEV bs=1M oflag=direct status=none
	dd if=/tmp/c of=/dev/$DEV bs=1M seek=2 oflag=direct status=none
	# Sub-page writes: read-modify-write of stored pages.
	dd if=/tmp/r of=/dev/$DEV bs=512 count=64 seek=8 oflag=direct conv=notrunc status=none
	all_off
	stall=$(tail -n1 /sys/block/$DEV/debug_stat | awk '{print $1}')
	echo "writestall $stall; mm_stat $(cat /sys/block/$DEV/mm_stat)"
	# Nearly every page waits; a third of them at the least.
	[ "$stall" -gt 512 ] || fail "writestall $stall: the writes did not wait"
	expect_eq "$(io_field $DEV 2)" 0 "failed writes"
	dd if=/tmp/r of=/tmp/want bs=512 count=64 status=none
	cat /tmp/r /tmp/c >/tmp/all
	dd if=/tmp/want of=/tmp/all bs=512 seek=8 conv=notrunc status=none
	cmp /tmp/all <(dd if=/dev/$DEV bs=1M count=6 iflag=direct status=none) ||
		fail "data differs"
	expect_eq "$(mm_field $DEV 1)" $((6 << 20)) "orig_data_size"
	expect_empty_after_discard
	rm -f /tmp/r /tmp/c /tmp/all /tmp/want
	teardown
}

# The object a write waited for must be freed when the write fails after
# all: the compressor fails on the second try (every other call fails),
# or mem_limit is reached.
test_waited_object_freed_when_the_write_fails() {
	setup 64M
	dd if=/dev/urandom of=/tmp/r bs=1M count=2 status=none
	# Pages that compress well below the huge class (one that does not
	# is stored raw after the wait, from the page itself, without
	# compressing it again; LZ4 leaves a page of `seq` output huge).
	awk 'BEGIN { for (i = 0; i < 30000; i++) printf "line %d of a page that compresses\n", i % 97 }' >/tmp/t
	aim failslab 100 Y
	aim fail_page_alloc 100 Y
	# The first compression of the page succeeds, the one after the wait fails.
	codec fail_compress 100 2
	dd if=/tmp/t of=/dev/$DEV bs=4k count=256 oflag=direct status=none 2>/dev/null &&
		fail "writes succeeded with a failing compressor"
	codec fail_compress 0 1
	echo "compressor failing: io_stat $(cat /sys/block/$DEV/io_stat); mm_stat $(cat /sys/block/$DEV/mm_stat)"
	# The write waited for its object (and failed in the compression after).
	expect_eq "$(tail -n1 /sys/block/$DEV/debug_stat | awk '{print $1}')" 1 "writestall"
	expect_eq "$(io_field $DEV 2)" 1 "failed writes"
	expect_eq "$(mm_field $DEV 1)" 0 "orig_data_size"
	echo 1 >/sys/block/$DEV/compact
	expect_eq "$(mm_field $DEV 3)" 0 "mem_used_total: a waited object leaked"

	# Past mem_limit: the waited objects go back too.
	echo 256K >/sys/block/$DEV/mem_limit
	dd if=/tmp/r of=/dev/$DEV bs=1M count=2 oflag=direct status=none 2>/dev/null &&
		fail "2 MiB of random data fit in a 256 KiB limit"
	all_off
	echo "past mem_limit: io_stat $(cat /sys/block/$DEV/io_stat); mm_stat $(cat /sys/block/$DEV/mm_stat)"
	expect_eq "$(io_field $DEV 2)" 2 "failed writes"
	echo 0 >/sys/block/$DEV/mem_limit
	# What went in before the limit reads back.
	n=$(( $(mm_field $DEV 1) / 4096 ))
	[ "$n" -gt 0 ] || fail "nothing went in below the limit"
	cmp -n $((n * 4096)) /tmp/r /dev/$DEV || fail "the pages stored before the limit differ"
	expect_empty_after_discard
	rm -f /tmp/r /tmp/t
	teardown
}

# A page that does not decompress is a read error, counted; the next read
# of the same page, without the fault, returns it intact.
test_decompression_failure_is_a_read_error() {
	setup 16M
	dd if="$HZRAM_CORPUS" of=/tmp/c bs=1M count=1 status=none
	dd if=/tmp/c of=/dev/$DEV bs=1M oflag=direct status=none
	echo 1 >$FI/hzram/fail_decompress/times
	echo 100 >$FI/hzram/fail_decompress/probability
	echo 0 >$FI/hzram/fail_decompress/verbose
	dd if=/dev/$DEV of=/dev/null bs=1M count=1 iflag=direct status=none 2>/dev/null &&
		fail "the read succeeded"
	all_off
	expect_eq "$(io_field $DEV 1)" 1 "failed reads"
	cmp /tmp/c <(dd if=/dev/$DEV bs=1M count=1 iflag=direct status=none) ||
		fail "data differs after the failed read"
	rm -f /tmp/c
	teardown
}

ktap_main test_fio_random_4k_with_failing_allocations \
	test_fio_sequential_1m_with_failing_allocations \
	test_writes_that_wait_for_memory_all_go_in \
	test_waited_object_freed_when_the_write_fails \
	test_decompression_failure_is_a_read_error
