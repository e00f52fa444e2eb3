# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
# Starting and stopping hzramd in the test guests, for helper.sh and
# swap.sh (after ktap.sh). DEV is the hzram device served (hzramN).

HZRAMD_PID=
LOG=/tmp/hzramd.log

# hzramd with its libraries: a command, not a function, so that "&" starts
# hzramd itself (env execs it) and $! is its pid.
HZRAMD=(env LD_LIBRARY_PATH="$HERE/hzramd/lib" "$HERE/hzramd/hzramd")

# off_field N: field N (1-based) of offload_stat.
off_field() {
	local f
	read -ra f <"/sys/block/$DEV/offload_stat"
	echo "${f[$1 - 1]}"
}

# How long the waits below wait before they fail: only a failure's bound.
# Generous: a guest short of CPU time (a swap guest of make check, at
# nice 19, gets about 1% of a CPU while the host's other work keeps both
# busy) can take a minute to start hzramd, and a commit may be held for
# one (hold_next_commit).
WAIT_S=120

# wait_attached 0|1 [PID]: wait (up to WAIT_S) until offload_stat says
# whether a helper is attached (fail at once if PID exits). Reads with
# the shell's read: no process per poll.
wait_attached() {
	local f end=$((SECONDS + WAIT_S))
	while :; do
		read -ra f <"/sys/block/$DEV/offload_stat"
		[ "${f[0]}" = "$1" ] && return 0
		[ -z "${2:-}" ] || kill -0 "$2" 2>/dev/null || return 1
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.01
	done
}

# start_hzramd: start hzramd for $DEV and wait until it is attached.
start_hzramd() {
	"${HZRAMD[@]}" --device "${DEV#hzram}" --threads 2 --log-level warn >>$LOG 2>&1 &
	HZRAMD_PID=$!
	wait_attached 1 $HZRAMD_PID || fail "hzramd did not attach: $(tail -n 3 $LOG)"
}

# stop_hzramd: SIGTERM; hzramd commits what it holds and exits 0, and
# the module holds every page itself.
stop_hzramd() {
	local rc=0
	kill -TERM $HZRAMD_PID
	wait $HZRAMD_PID || rc=$?
	expect_eq $rc 0 "hzramd exit status after SIGTERM ($(tail -n 3 $LOG))"
	expect_eq "$(off_field 1)" 0 "helper still attached after hzramd exited"
	expect_eq "$(off_field 3)" 0 "pages still staged after hzramd exited"
}

# wait_unstaged: wait (up to WAIT_S) until no page of $DEV is staged
# (offload_stat field 3: it drops as each page is stored, or freed,
# overwritten or discarded while staged): the allocations for the pages
# written are over, but for a commit that had just found its page there.
wait_unstaged() {
	local end=$((SECONDS + WAIT_S))
	while [ "$(off_field 3)" != 0 ]; do
		[ "$SECONDS" -lt "$end" ] || fail "$(off_field 3) pages still staged after $WAIT_S s"
		sleep 0.01
	done
}

# offload_every_page DEV: every batch to hzramd, however few pages it has,
# in one batch (a write's pages are staged well within 100 ms), never
# taken back; every read to hzramd.
offload_every_page() {
	echo 1 >/sys/block/$1/offload_min_pages
	echo 100000 >/sys/block/$1/offload_flush_us
	echo 60000 >/sys/block/$1/offload_timeout_ms
	echo on >/sys/block/$1/offload
	echo 1 >/sys/block/$1/offload_read_min_pages
}

# hold_next_commit MS: the next commit waits MS ms before it stores its
# batch (debugfs delay_commit; skips the test without delay points);
# release_commits undoes it (for EXIT traps; the module may be gone).
# The hold is of wall time (msleep), in which a guest short of CPU time
# does little: writeback.sh's and recomp.sh's tests, which run in the
# swap guests, check with now_ms whether it can have ended before what
# it was to last through, and if so hold the next one longer. At most
# 40 s: offload_every_page's batches wait 60 s, and the kernel reports a
# task blocked for 120.
hold_next_commit() {
	[ -e /sys/kernel/debug/hzram/delay_commit ] ||
		skip "no delay points (a module without fault injection)"
	echo "$1" >/sys/kernel/debug/hzram/delay_commit
	echo 1 >/sys/kernel/debug/hzram/delay_commit_times
}
release_commits() {
	[ ! -e /sys/kernel/debug/hzram/delay_commit ] || {
		echo 0 >/sys/kernel/debug/hzram/delay_commit_times
		echo 0 >/sys/kernel/debug/hzram/delay_commit
	}
}

# now_ms: the time, in ms (for hold_next_commit's tests).
now_ms() {
	local t=${EPOCHREALTIME/[.,]/}
	echo $((t / 1000))
}
