# SPDX-License-Identifier: GPL-2.0
# What the benchmarks' host sides share (sourced).

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# usage FIRST LAST: the script's usage, lines FIRST to LAST of its header.
usage() {
	sed -n "s/^# \{0,1\}//; $1,$2p" "$0" >&2
	exit 2
}

# bench_build [hzramd]: the guest's benchmark programs and, with
# "hzramd", hzramd with its libraries for the guest (tests/vm/run builds
# the module, the kernel's initramfs and the tools image).
bench_build() {
	make -s -C "$top/bench"
	[ "${1:-}" != hzramd ] && return 0
	make -s -C "$top" hzramd >/dev/null
	make -s -C "$top/tests/kselftest" "$top/build/kselftest/guest/hzramd/hzramd"
}

# bench_guest LOG KERNEL MEM CPUS TIMEOUT [hzramd] -- GUEST-ARGS...: one
# guest with the benchmarks, the page corpus and (with "hzramd") hzramd
# in /data; its console into LOG and, but for the BENCH-JSON lines, onto
# stdout.
bench_guest() {
	local log=$1 kernel=$2 mem=$3 cpus=$4 timeout=$5 adds=()
	shift 5
	if [ "$1" = hzramd ]; then
		adds=(--add "$top/build/kselftest/guest/hzramd")
		shift
	fi
	[ "$1" = -- ] && shift
	"$top/tests/vm/run" --kernel "$kernel" --mem "$mem" --cpus "$cpus" --timeout "$timeout" \
		--add "$top/build/bench/guest" "${adds[@]}" \
		--add "$top/tests/data/procmem-64m.pages.xz" -- "$@" |
		tee "$log" | grep -v '^BENCH-JSON '
}

# bench_json LOG FILE NAME: LOG's BENCH-JSON lines as one JSON array in
# FILE (nothing when FILE is empty).
bench_json() {
	[ -n "$2" ] || return 0
	{
		echo "["
		sed -n 's/^BENCH-JSON //p' "$1" | sed '$!s/$/,/'
		echo "]"
	} >"$2"
	echo "$3: $(grep -c '^BENCH-JSON ' "$1") results in $2"
}
