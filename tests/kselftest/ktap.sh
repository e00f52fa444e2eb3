# shellcheck shell=bash
# KTAP output for the shell tests, in the format of the kernel's
# kselftest.h: "TAP version 13", a plan, "ok N name" / "not ok N name",
# "# SKIP reason", and everything a test prints as "# " diagnostics.
#
# A test is a function; it runs in a subshell with errexit, so the first
# failing command fails it. ktap_main runs the functions it is given and
# returns non-zero if any failed.

KSFT_SKIP=4
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PATH=$HERE:$PATH

# On a kernel with lockdep (the debug guest kernel, with KASAN too) every
# I/O costs several times more (SLOW=1): there the tests divide the data
# they move by SHRINK, 8, and take the same paths (lockdep needs each lock
# taken in each context, KASAN each access made, not gigabytes). Elsewhere
# SHRINK is 1, or what run-guest was given (HZRAM_SHRINK).
if [ -e /proc/lockdep ]; then
	SLOW=1 SHRINK=8
else
	SLOW=0 SHRINK=${HZRAM_SHRINK:-1}
fi

# kmsg_text BYTES [tac]: BYTES of the kernel's messages (in the other
# order with tac), repeated as often as it takes: text that compresses.
# Line by line, in linear time: appending each line to one string, as
# this once did, copied the whole log for every line, which took 10 to
# 20 s of emulated CPU per call on the lockdep kernel's longer log.
kmsg_text() {
	dmesg | { if [ "${2:-}" = tac ]; then tac; else cat; fi; } |
		awk -v n="$1" '{ l[NR] = $0 "\n" }
			END { while (len < n) for (i = 1; i <= NR && len < n; i++) {
				printf "%s", substr(l[i], 1, n - len); len += length(l[i]) } }'
}

fail() {
	echo "FAIL: $*"
	return 1
}

# skip REASON: end the current test as skipped.
skip() {
	echo "SKIP: $*"
	exit $KSFT_SKIP
}

expect_eq() {
	[ "$1" = "$2" ] || fail "${3:-values differ}: got '$1', want '$2'"
}

# expect_errno ERRNO FILE VALUE: writing VALUE to FILE fails with ERRNO.
expect_errno() {
	local got
	got=$(sysattr write "$2" "$3") && fail "writing '$3' to $2 succeeded, want $1"
	[ "$got" = "$1" ] || fail "writing '$3' to $2: got $got, want $1"
}

# expect_read_errno ERRNO FILE: reading FILE fails with ERRNO.
expect_read_errno() {
	local got
	got=$(sysattr read "$2") && fail "reading $2 succeeded, want $1"
	[ "$got" = "$1" ] || fail "reading $2: got $got, want $1"
}

# mm_field DEV N: field N (1-based) of /sys/block/DEV/mm_stat.
mm_field() {
	awk -v n="$2" '{print $n}' "/sys/block/$1/mm_stat"
}

io_field() {
	awk -v n="$2" '{print $n}' "/sys/block/$1/io_stat"
}

# remove_dev DEV: hot_remove DEV. A program that did io_uring I/O on it
# may have exited while its ring still holds the device open: the kernel
# tears rings down in a workqueue after the exit (fio.sh met it on 7.3).
# EBUSY is retried for up to 10 s.
remove_dev() {
	local i
	for ((i = 0; i < 100; i++)); do
		echo "${1#hzram}" 2>/dev/null >/sys/class/hzram-control/hot_remove && return 0
		sleep 0.1
	done
	fail "hot_remove of $1 still refused after 10 s: $(sysattr write \
		/sys/class/hzram-control/hot_remove "${1#hzram}" 2>&1)"
}

# fio_verify NAME ARGS...: fio on /dev/$DEV with verify=crc32c, direct
# I/O, buffers 60% compressible; fail on any error or verify failure.
fio_verify() {
	local name=$1 out
	shift
	out=$(fio --name="$name" --filename=/dev/$DEV --direct=1 \
		--verify=crc32c --verify_fatal=1 --do_verify=1 \
		--buffer_compress_percentage=60 --refill_buffers \
		--group_reporting --output-format=terse --terse-version=3 "$@" 2>&1) ||
		fail "fio $name: $out"
	# Terse v3: field 5 is the error count.
	echo "$out" | awk -F';' -v n="$name" '$1 == 3 {print "fio " n ": errors " $5; if ($5 != 0) exit 1}'
}

ktap_main() {
	local n=0 failed=0 passed=0 skipped=0 t t0 rc
	echo "TAP version 13"
	echo "1..$#"
	for t in "$@"; do
		n=$((n + 1))
		echo "# RUN $t"
		t0=$SECONDS
		( set -eo pipefail; "$t" ) 2>&1 | while IFS= read -r line; do
			printf '# %s\n' "$line"
		done
		rc=${PIPESTATUS[0]}
		echo "# $t: $((SECONDS - t0)) s"
		case $rc in
		0) echo "ok $n $t"; passed=$((passed + 1)) ;;
		"$KSFT_SKIP") echo "ok $n $t # SKIP"; skipped=$((skipped + 1)) ;;
		*) echo "not ok $n $t"; failed=$((failed + 1)) ;;
		esac
	done
	echo "# Totals: pass:$passed fail:$failed xfail:0 xpass:0 skip:$skipped error:0"
	[ $failed = 0 ]
}
