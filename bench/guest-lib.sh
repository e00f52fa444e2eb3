# SPDX-License-Identifier: GPL-2.0
# What the benchmarks' guest sides share (sourced, in the guest).

corpus=/tmp/corpus

# load_corpus: the page corpus, decompressed into $corpus; $size its bytes.
load_corpus() {
	xz -dc /data/procmem-64m.pages.xz >$corpus
	size=$(stat -c %s $corpus)
}

# load_modules: zram and hzram, with no device yet.
load_modules() {
	modprobe zram num_devices=0
	modprobe hzram num_devices=0
}

# mkdev KIND LABEL [DISKSIZE]: a new lz4 device of zram or hzram, named
# in dev[LABEL]; DISKSIZE defaults to twice the corpus.
declare -A dev
mkdev() {
	local id
	id=$(cat /sys/class/$1-control/hot_add)
	echo lz4 >/sys/block/$1$id/comp_algorithm
	echo "${3:-$((2 * size))}" >/sys/block/$1$id/disksize
	dev[$2]=$1$id
}

# stat_field DEV N: field N (from 1) of DEV's offload_stat.
stat_field() {
	local f
	read -ra f <"/sys/block/$1/offload_stat"
	echo "${f[$2 - 1]}"
}

# start_hzramd DEV: hzramd (from /data/hzramd) serving hzram device DEV,
# in the background, its pid in $hzramd_pid; returns once it is attached
# (fails after 5 s).
start_hzramd() {
	local i
	env LD_LIBRARY_PATH=/data/hzramd/lib /data/hzramd/hzramd --device "${1#hzram}" \
		--log-level warn &
	hzramd_pid=$!
	for i in $(seq 500); do
		[ "$(stat_field "$1" 1)" = 1 ] && return 0
		sleep 0.01
	done
	echo "hzramd did not attach to $1" >&2
	return 1
}

# wait_unstaged DEV: until nothing is staged on DEV (what a write run
# with hzramd includes: staging is not storing).
wait_unstaged() {
	while [ "$(stat_field "$1" 3)" != 0 ]; do sleep 0.01; done
}

# Busy CPU time of the whole guest, in USER_HZ ticks.
busy() { awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat; }
uptime_ms() { awk '{ printf "%d", $1 * 1000 }' /proc/uptime; }
