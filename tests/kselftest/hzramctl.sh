#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# hzramctl against util-linux's zramctl: a zram and an hzram device of the
# same size and algorithm hold the same pages of the corpus, and every
# column the two tools share prints the same, in raw bytes, in the
# default table and with --output-all; the JSON has the table's shape and
# values. --find, --size, --algorithm, --streams and --reset do what
# zramctl's do; the errors (no such device, a busy device, a bad size, a
# size or algorithm the module refuses, an unknown column, conflicting
# options) are zramctl's, word for word, with exit status 1. The listing
# comes from the module's netlink family (sysfs where the family is not).
# The offload columns, with hzramd attached and without; --monitor's lines,
# as text and JSON, for a device's life (hot_add, set up, reset, hzramd
# attached and gone, mem_limit reached, hot_remove) and for the module's
# unloading; hzramctl with the module unloaded. Needs the hzram and zram
# modules loaded with no devices in use, the corpus at $HZRAM_CORPUS, and
# hzramctl in ./hzramctl/ with its libraries (tests/kselftest/Makefile).
. "$(dirname "$0")/ktap.sh"
. "$(dirname "$0")/hzramd-lib.sh"

CORPUS=${HZRAM_CORPUS:-/tmp/corpus}
DEV=
ZDEV=  # the zram device compared with
# Every column of zramctl 2.38.1, in its order; hzramctl has them first.
ZCOLS=NAME,DISKSIZE,DATA,COMPR,ALGORITHM,STREAMS,ZERO-PAGES,TOTAL,MEM-LIMIT,MEM-USED,MIGRATED,MOUNTPOINT

# hzramctl with its libraries, named hzramctl (argv[0] too, as zramctl's
# is zramctl when run from the PATH).
hzramctl() {
	(LD_LIBRARY_PATH="$HERE/hzramctl/lib" exec -a hzramctl "$HERE/hzramctl/hzramctl" "$@")
}

# The same as a command (the binary's name is hzramctl too), for "&": $! is
# hzramctl's pid (env execs it), and for unshare.
HZRAMCTL=(env LD_LIBRARY_PATH="$HERE/hzramctl/lib" "$HERE/hzramctl/hzramctl")

# listening PID: wait (up to 10 s) until hzramctl --monitor PID waits in
# poll(2) (syscall 7; ppoll, 271), which it does once it is in the events
# group. Reads with the shell's read: no process per poll.
listening() {
	local n i
	for ((i = 0; i < 1000; i++)); do
		read -r n _ <"/proc/$1/syscall" || return 1
		[ "$n" = 7 ] || [ "$n" = 271 ] && return 0
		sleep 0.01
	done
	return 1
}

# wait_lines FILE N: wait (up to 10 s) until FILE has N lines.
wait_lines() {
	local l i
	for ((i = 0; i < 1000; i++)); do
		mapfile -t l <"$1"
		[ ${#l[@]} -ge "$2" ] && return 0
		sleep 0.01
	done
	return 1
}

# as_zram ARGS...: hzramctl's output for ARGS (on stdin) as zramctl's
# would be for an hzram device. Since Linux 6.15 zram has no
# max_comp_streams, and zramctl leaves STREAMS empty; hzram keeps it (the
# number of CPUs, as zram had it). There, the STREAMS cells are emptied:
# in raw output the column's field, in a table its seven characters.
as_zram() {
	local raw=0 heads=1 cols=NAME,ALGORITHM,DISKSIZE,DATA,COMPR,TOTAL,STREAMS,MOUNTPOINT c i k=0
	if [ -e "/sys/block/$ZDEV/max_comp_streams" ]; then
		cat
		return
	fi
	while [ $# -gt 0 ]; do
		case $1 in
		--raw) raw=1 ;;
		-n | --noheadings) heads=0 ;;
		-o | --output) cols=$2 && shift ;;
		--output-all) cols=$ZCOLS ;;
		esac
		shift
	done
	IFS=, read -ra c <<<"${cols^^}"
	for i in "${!c[@]}"; do
		[ "${c[$i]}" = STREAMS ] && k=$((i + 1))
	done
	if [ $k = 0 ]; then
		cat
	elif [ $raw = 1 ]; then
		awk -F'[ ]' -v OFS=' ' -v k=$k -v h=$heads 'NR > h {$k = ""} {print}'
	else
		awk 'NR == 1 {s = index($0, "STREAMS")}
			NR > 1 {$0 = substr($0, 1, s - 1) "       " substr($0, s + 7)} {print}'
	fi
}

# same_as_zramctl ZDEV HDEV ARGS...: zramctl ARGS ZDEV and hzramctl ARGS
# HDEV print the same, once zramctl's device name is replaced by
# hzramctl's (and, in a table, the NAME column widened by the difference).
same_as_zramctl() {
	local z=$1 h=$2 want got pad
	shift 2
	pad=$(printf "%$(( ${#h} - ${#z} ))s" '')
	want=$(zramctl "$@" "$z" | sed -e "s|^$z |$h |" -e "s|^$z\$|$h|" -e "1s|^NAME  |NAME  $pad|")
	got=$(hzramctl "$@" "$h")
	[ "$(printf '%s\n' "$got" | as_zram "$@")" = "$want" ] || fail "hzramctl $* $h printed
$got
zramctl $* $z, renamed:
$want"
	printf '%s\n' "$got"
}

# errors_as_zramctl ZARGS -- HARGS: both fail with status 1, nothing on
# stdout, and the same message once "zram" is read "hzram".
errors_as_zramctl() {
	local zargs=() zout hout zrc=0 hrc=0
	while [ "$1" != -- ]; do
		zargs+=("$1")
		shift
	done
	shift
	zout=$(zramctl "${zargs[@]}" 2>&1 >/dev/null) || zrc=$?
	hout=$(hzramctl "$@" 2>&1 >/tmp/hzramctl.out) || hrc=$?
	expect_eq "$zrc" 1 "zramctl ${zargs[*]}: exit status"
	expect_eq "$hrc" 1 "hzramctl $*: exit status"
	expect_eq "$hout" "${zout//zram/hzram}" "hzramctl $*: message"
	[ ! -s /tmp/hzramctl.out ] || fail "hzramctl $*: printed on stdout"
	echo "$hout"
}

# fails_with MESSAGE ARGS...: hzramctl ARGS fails with status 1, MESSAGE
# on stderr and nothing on stdout.
fails_with() {
	local want=$1 out rc=0
	shift
	out=$(hzramctl "$@" 2>&1 >/tmp/hzramctl.out) || rc=$?
	expect_eq "$rc" 1 "hzramctl $*: exit status"
	expect_eq "$out" "$want" "hzramctl $*: message"
	[ ! -s /tmp/hzramctl.out ] || fail "hzramctl $*: printed on stdout"
	echo "$out"
}

gone() {
	[ ! -e "/sys/block/${1#/dev/}" ] || fail "$1 still exists"
}

test_find_size_algorithm_streams() {
	local h h2 h3 out
	h=$(hzramctl --find)
	[[ $h =~ ^/dev/hzram[0-9]+$ ]] || fail "--find printed '$h'"
	[ -b "$h" ] || fail "no $h"
	expect_eq "$(cat /sys/block/${h#/dev/}/disksize)" 0 "disksize of the device --find gave"
	expect_eq "$(hzramctl -f)" "$h" "--find again, the device still free"

	out=$(hzramctl --size 16M --algorithm lzo-rle --streams 2 "$h")
	expect_eq "$out" "" "output of --size with a device"
	expect_eq "$(cat /sys/block/${h#/dev/}/disksize)" 16777216 disksize
	grep -q '\[lzo-rle\]' /sys/block/${h#/dev/}/comp_algorithm || fail "lzo-rle not selected"

	# That one is set up: --find makes a new one (hot_add) and sets it up.
	h2=$(hzramctl -f -s 1.5M -a zstd -t 1)
	[[ $h2 =~ ^/dev/hzram[0-9]+$ ]] && [ "$h2" != "$h" ] || fail "--find -s printed '$h2'"
	expect_eq "$(cat /sys/block/${h2#/dev/}/disksize)" 1572864 disksize
	grep -q '\[zstd\]' /sys/block/${h2#/dev/}/comp_algorithm || fail "zstd not selected"
	h3=$(hzramctl -f)
	[ -b "$h3" ] && [ "$h3" != "$h" ] && [ "$h3" != "$h2" ] || fail "third --find: '$h3'"

	# The list: the devices set up, not $h3. STREAMS is the number of CPUs,
	# as zram's.
	out=$(hzramctl --raw --noheadings -o NAME,ALGORITHM,DISKSIZE,STREAMS)
	expect_eq "$out" "$h lzo-rle 16M $(nproc)
$h2 zstd 1.5M $(nproc)" "hzramctl --raw --noheadings"

	# -s again: reset first, so a set-up device can be sized again.
	hzramctl -s 4M "$h"
	expect_eq "$(hzramctl --raw -n -o ALGORITHM,DISKSIZE "$h")" "lz4 4M" "after -s 4M"

	# --reset resets and removes each device (hot_remove), as zramctl.
	hzramctl --reset "$h" "$h2"
	gone "$h"
	gone "$h2"
	hzramctl -r "$h3"
	gone "$h3"
	expect_eq "$(hzramctl)" "" "the list with no device set up"
}

test_same_as_zramctl() {
	local z h mib=$((8 / SHRINK)) out v
	[ -f "$CORPUS" ] || skip "no page corpus"
	z=$(zramctl -f -s 8M -a lz4)
	h=$(hzramctl -f -s 8M -a lz4)
	ZDEV=${z#/dev/}
	dd if="$CORPUS" of="$z" bs=1M count=$mib oflag=direct status=none
	dd if="$CORPUS" of="$h" bs=1M count=$mib oflag=direct status=none
	echo "zram  mm_stat: $(cat /sys/block/${z#/dev/}/mm_stat)"
	echo "hzram mm_stat: $(cat /sys/block/${h#/dev/}/mm_stat)"

	same_as_zramctl "$z" "$h" --raw --bytes --noheadings -o "$ZCOLS"
	same_as_zramctl "$z" "$h" -o "${ZCOLS,,}"
	same_as_zramctl "$z" "$h"

	# --output-all: zramctl's columns, then hzram's.
	out=$(hzramctl --output-all --raw "$h" | as_zram --output-all --raw)
	expect_eq "$(printf '%s\n' "$out" | cut -d' ' -f1-12)" \
		"$(zramctl --output-all --raw "$z" | sed "s|^$z |$h |")" "--output-all, zramctl's columns"
	expect_eq "$(printf '%s\n' "$out" | head -n1 | cut -d' ' -f13-)" \
		"OFFLOAD HELPER HELPER-PAGES FALLBACKS WRITTEN-BACK RECOMPRESSED" "--output-all, hzram's columns"

	# Without a device: each tool lists its own, the same way.
	expect_eq "$(hzramctl --raw | as_zram --raw)" "$(zramctl --raw | sed "s|^$z |$h |")" "the lists"

	# Those came through the netlink family: with other numbers bound over
	# mm_stat, hzramctl still prints the module's, listing (a dump) or
	# showing the device (by id). In a network namespace of its own, where
	# the family is not, it reads sysfs, silently.
	out=$(hzramctl --raw -n -o NAME,DATA,COMPR,TOTAL)
	echo "1 2 3 4 5 6 7 8 9" >/tmp/hzramctl-mm_stat
	mount --bind /tmp/hzramctl-mm_stat "/sys/block/${h#/dev/}/mm_stat"
	v=("$(hzramctl --raw -n -o NAME,DATA,COMPR,TOTAL 2>&1)"
		"$(hzramctl --raw -n -o NAME,DATA,COMPR,TOTAL "$h" 2>&1)"
		"$(unshare -n "${HZRAMCTL[@]}" --raw -n -o NAME,DATA,COMPR,TOTAL 2>&1)") || true
	umount "/sys/block/${h#/dev/}/mm_stat"
	echo "$out; with mm_stat covered: ${v[*]}"
	[[ $out != *" 1B 2B 3B" ]] || fail "the device holds nothing"
	expect_eq "${v[0]}" "$out" "the list, mm_stat covered"
	expect_eq "${v[1]}" "$out" "the device, mm_stat covered"
	expect_eq "${v[2]}" "$h 1B 2B 3B" "the list from sysfs, in another network namespace"

	# JSON: the default columns, the values of the table, sizes as
	# strings; with --bytes, as numbers.
	read -ra v < <(hzramctl --raw --noheadings "$h")
	out=$(hzramctl --json "$h")
	expect_eq "$out" "{
   \"hzramdevices\": [
      {
         \"name\": \"${v[0]}\",
         \"algorithm\": \"${v[1]}\",
         \"disksize\": \"${v[2]}\",
         \"data\": \"${v[3]}\",
         \"compr\": \"${v[4]}\",
         \"total\": \"${v[5]}\",
         \"streams\": ${v[6]},
         \"mountpoint\": null
      }
   ]
}" "hzramctl --json"
	read -ra v < <(hzramctl --raw --noheadings --bytes -o DISKSIZE,DATA,ZERO-PAGES,HELPER "$h")
	out=$(hzramctl -J -b -o DISKSIZE,DATA,ZERO-PAGES,HELPER)
	expect_eq "$out" "{
   \"hzramdevices\": [
      {
         \"disksize\": ${v[0]},
         \"data\": ${v[1]},
         \"zero-pages\": ${v[2]},
         \"helper\": false
      }
   ]
}" "hzramctl -J -b"
	printf '%s\n' "$out"

	# As swap: MOUNTPOINT [SWAP], and both busy: --reset and --size fail
	# with zramctl's message; the data stays.
	mkswap "$z" >/dev/null
	mkswap "$h" >/dev/null
	swapon "$z"
	swapon "$h"
	same_as_zramctl "$z" "$h" -o NAME,DISKSIZE,MOUNTPOINT
	expect_eq "$(hzramctl -n -o MOUNTPOINT "$h")" "[SWAP]" MOUNTPOINT
	errors_as_zramctl -r "$z" -- -r "$h"
	errors_as_zramctl -s 4M "$z" -- -s 4M "$h"
	expect_eq "$(hzramctl --raw -n -o DISKSIZE "$h")" 8M "disksize after the refused -s"
	swapoff "$z"
	swapoff "$h"
	# Held open by a process: busy too.
	exec 3<"$h" 4<"$z"
	errors_as_zramctl -s 1M "$z" -- -s 1M "$h"
	errors_as_zramctl --reset "$z" -- --reset "$h"
	exec 3<&- 4<&-

	# Mounted: its mount point.
	mkfs.ext4 -q "$h"
	mkdir -p /tmp/hzramctl-mnt
	mount "$h" /tmp/hzramctl-mnt
	expect_eq "$(hzramctl --raw -n -o NAME,MOUNTPOINT "$h")" "$h /tmp/hzramctl-mnt" MOUNTPOINT
	umount /tmp/hzramctl-mnt

	zramctl -r "$z"
	hzramctl -r "$h"
	gone "$z"
	gone "$h"
}

test_errors() {
	local z h
	z=$(zramctl -f -s 1M)
	h=$(hzramctl -f -s 1M)
	errors_as_zramctl /dev/zram200 -- /dev/hzram200
	errors_as_zramctl -r /dev/zram200 -- -r /dev/hzram200
	errors_as_zramctl -s abc "$z" -- -s abc "$h"
	errors_as_zramctl -t -1 -s 1M "$z" -- -t -1 -s 1M "$h"
	# Sizes and algorithms the module refuses: its errno.
	errors_as_zramctl -s 0 "$z" -- -s 0 "$h"
	errors_as_zramctl -s 1M -a nosuch "$z" -- -s 1M -a nosuch "$h"
	fails_with "hzramctl: $h: failed to set disksize (35184372088832 bytes): Argument list too long" \
		-s 32T "$h"
	errors_as_zramctl -o NAME,FOO,DATA -- -o NAME,FOO,DATA
	errors_as_zramctl --bogus -- --bogus
	errors_as_zramctl -f -r -- -f -r
	errors_as_zramctl -f "$z" -- -f "$h"
	errors_as_zramctl -a lz4 -- -a lz4
	errors_as_zramctl -r -- -r
	fails_with "hzramctl: mutually exclusive arguments: --json --raw" --json --raw
	fails_with "hzramctl: option --monitor is mutually exclusive with --size" --monitor -s 1M "$h"
	# A device of another driver is no hzram device.
	fails_with "hzramctl: $z: No such device" "$z"
	fails_with "hzramctl: $z: failed to reset: No such device" -r "$z"
	[ -e "/sys/block/${z#/dev/}" ] || fail "hzramctl -r removed $z"
	zramctl -r "$z"
	hzramctl -r "$h"
}

test_offload_columns() {
	local h out f i
	[ -f "$CORPUS" ] || skip "no page corpus"
	h=$(hzramctl -f -s 64M -a lz4)
	DEV=${h#/dev/}
	expect_eq "$(hzramctl --raw -n -o OFFLOAD,HELPER,HELPER-PAGES,FALLBACKS "$h")" "auto 0 0 0" \
		"offload columns, no helper"
	echo on >/sys/block/$DEV/offload
	expect_eq "$(hzramctl --raw -n -o OFFLOAD "$h")" on OFFLOAD
	# Under lockdep and KASAN, batches wait longer to fill and hzramd has
	# longer to return them (as in helper.sh).
	if [ "$SLOW" = 1 ]; then
		echo 50000 >/sys/block/$DEV/offload_flush_us
		echo 10000 >/sys/block/$DEV/offload_timeout_ms
	fi
	: >$LOG
	start_hzramd
	dd if="$CORPUS" of="$h" bs=256K count=$((16 / SHRINK)) oflag=direct status=none
	for ((i = 0; i < 1000; i++)); do
		[ "$(off_field 3)" = 0 ] && break
		sleep 0.01
	done
	read -ra f <"/sys/block/$DEV/offload_stat"
	out=$(hzramctl --raw -n -o NAME,OFFLOAD,HELPER,HELPER-PAGES,FALLBACKS "$h")
	echo "$out; offload_stat: ${f[*]}"
	expect_eq "$out" "$h on 1 ${f[3]} $(( f[15] + f[16] + f[17] ))" "offload columns, hzramd attached"
	[ "${f[3]}" -gt 0 ] || fail "no page through hzramd"
	stop_hzramd
	read -ra f <"/sys/block/$DEV/offload_stat"
	expect_eq "$(hzramctl --raw -n -o HELPER,HELPER-PAGES "$h")" "0 ${f[3]}" \
		"offload columns, hzramd gone"
	hzramctl -r "$h"
	gone "$h"
}

# WRITTEN-BACK and RECOMPRESSED: bd_stat's first field (4 KiB pages, a
# size) and recomp_stat's, through the netlink family and, in a network
# namespace of its own, from sysfs.
test_second_tier_columns() {
	local d loop f=/tmp/hzramctl-bd want cols=WRITTEN-BACK,RECOMPRESSED
	[ -f "$CORPUS" ] || skip "no page corpus"
	modprobe loop 2>/dev/null || true
	rm -f $f
	truncate -s 16M $f
	loop=$(losetup -f --show $f)
	d=$(cat /sys/class/hzram-control/hot_add)
	echo algo=zstd >/sys/block/hzram$d/recomp_algorithm
	echo "$loop" >/sys/block/hzram$d/backing_dev
	echo 32M >/sys/block/hzram$d/disksize
	expect_eq "$(hzramctl --raw -n -b -o $cols /dev/hzram$d)" "0 0" "the columns at first"
	dd if="$CORPUS" of=/dev/hzram$d bs=1M count=4 oflag=direct status=none
	echo all >/sys/block/hzram$d/idle
	echo type=idle >/sys/block/hzram$d/recompress
	echo page_indexes=0-99 >/sys/block/hzram$d/writeback
	want="$(($(awk '{ print $1 }' /sys/block/hzram$d/bd_stat) * 4096)) $(awk '{ print $1 }' /sys/block/hzram$d/recomp_stat)"
	echo "bd_stat $(cat /sys/block/hzram$d/bd_stat), recomp_stat $(cat /sys/block/hzram$d/recomp_stat)"
	[[ $want != 0\ * && $want != *\ 0 ]] || fail "nothing written back or recompressed: $want"
	expect_eq "$(hzramctl --raw -n -b -o $cols /dev/hzram$d)" "$want" "the columns, from the module"
	expect_eq "$(unshare -n "${HZRAMCTL[@]}" --raw -n -b -o $cols /dev/hzram$d)" "$want" \
		"the columns, from sysfs"
	echo 1 >/sys/block/hzram$d/reset
	echo "$d" >/sys/class/hzram-control/hot_remove
	losetup -d "$loop"
	rm -f $f
}

# monitor_stop PID SIGNAL: hzramctl --monitor ends with status 0.
monitor_stop() {
	local rc=0
	kill "-$2" "$1"
	wait "$1" || rc=$?
	expect_eq $rc 0 "hzramctl --monitor's exit status after SIG$2"
}

test_monitor() {
	local text=/tmp/monitor.txt json=/tmp/monitor.json err=/tmp/monitor.err tpid jpid
	local id h pid f n want
	"${HZRAMCTL[@]}" --monitor >$text 2>$err &
	tpid=$!
	"${HZRAMCTL[@]}" --monitor --json >$json 2>>$err &
	jpid=$!
	# (The test runs in a subshell of its own: this ends them if it fails.)
	trap 'kill $tpid $jpid 2>/dev/null || :' EXIT
	listening $tpid && listening $jpid || fail "hzramctl --monitor does not listen: $(cat $err)"

	id=$(cat /sys/class/hzram-control/hot_add)
	h=/dev/hzram$id
	DEV=hzram$id
	hzramctl -s 8M -a zstd "$h"
	hzramctl -s 16M "$h"  # reset, then lz4 (the default)
	: >$LOG
	start_hzramd
	pid=$HZRAMD_PID
	stop_hzramd
	# Past mem_limit, writes fail: once each, at most once a second.
	echo 64K >/sys/block/$DEV/mem_limit
	! dd if=/dev/urandom of="$h" bs=1M count=1 oflag=direct status=none 2>/dev/null ||
		fail "writing past mem_limit succeeded"
	read -ra f <"/sys/block/$DEV/io_stat"
	hzramctl -r "$h"
	wait_lines $text 10 && wait_lines $json 10 ||
		fail "events missing: $(cat $text $json $err)"
	monitor_stop $tpid TERM
	monitor_stop $jpid INT
	expect_eq "$(cat $err)" "" "hzramctl --monitor's messages"

	# failed_writes: as io_stat had it at the first failure.
	n=$(sed -n 's/^hzram[0-9]* write-failed failed_writes=\([0-9]*\)$/\1/p' $text)
	[ -n "$n" ] && [ "$n" -ge 1 ] && [ "$n" -le "${f[1]}" ] ||
		fail "write-failed failed_writes='$n', io_stat ${f[*]}"
	cat $text
	want="hzram$id added
hzram$id initialised disksize=8388608 algorithm=zstd
hzram$id reset
hzram$id initialised disksize=16777216 algorithm=lz4
hzram$id helper-attached pid=$pid
hzram$id helper-detached pid=$pid
hzram$id mem-limit mem_limit=65536
hzram$id write-failed failed_writes=$n
hzram$id reset
hzram$id removed"
	expect_eq "$(cat $text)" "$want" "hzramctl --monitor"
	want="{\"device\":\"hzram$id\",\"event\":\"added\"}
{\"device\":\"hzram$id\",\"event\":\"initialised\",\"disksize\":8388608,\"algorithm\":\"zstd\"}
{\"device\":\"hzram$id\",\"event\":\"reset\"}
{\"device\":\"hzram$id\",\"event\":\"initialised\",\"disksize\":16777216,\"algorithm\":\"lz4\"}
{\"device\":\"hzram$id\",\"event\":\"helper-attached\",\"pid\":$pid}
{\"device\":\"hzram$id\",\"event\":\"helper-detached\",\"pid\":$pid}
{\"device\":\"hzram$id\",\"event\":\"mem-limit\",\"mem_limit\":65536}
{\"device\":\"hzram$id\",\"event\":\"write-failed\",\"failed_writes\":$n}
{\"device\":\"hzram$id\",\"event\":\"reset\"}
{\"device\":\"hzram$id\",\"event\":\"removed\"}"
	expect_eq "$(cat $json)" "$want" "hzramctl --monitor --json"
	gone "$h"
}

test_module_not_loaded() {
	local n id out mpid rc=0 mrc=0
	n=$(cat /sys/module/hzram/parameters/num_devices)
	# A monitor sees the devices go with the module, then the module.
	id=$(cat /sys/class/hzram-control/hot_add)
	"${HZRAMCTL[@]}" --monitor >/tmp/monitor.txt 2>/tmp/monitor.err &
	mpid=$!
	listening $mpid || fail "hzramctl --monitor does not listen: $(cat /tmp/monitor.err)"
	if ! rmmod hzram 2>/dev/null; then
		kill $mpid
		echo $id >/sys/class/hzram-control/hot_remove
		skip "hzram cannot be unloaded here"
	fi
	wait $mpid || mrc=$?
	out=$(hzramctl 2>&1) || rc=$?
	expect_eq "$(hzramctl --monitor 2>&1)" "$out" "hzramctl --monitor without the module"
	modprobe hzram num_devices="$n"
	expect_eq "$rc" 1 "exit status without the module"
	expect_eq "$out" \
		"hzramctl: hzram module not loaded (/sys/class/hzram-control: No such file or directory)" \
		"message without the module"
	expect_eq "$mrc" 1 "hzramctl --monitor's exit status, the module unloaded"
	# (Devices an earlier test failed to remove go too.)
	expect_eq "$(grep "^hzram$id " /tmp/monitor.txt)" "hzram$id removed" \
		"hzramctl --monitor, the module unloaded"
	expect_eq "$(cat /tmp/monitor.err)" "hzramctl: hzram module unloaded" \
		"hzramctl --monitor's message, the module unloaded"
}

# zramctl and hzramctl list every device: start from none, whatever the
# tests before this one left, with both modules loaded afresh as
# run-guest loads them.
reload() { # MODULE
	{ ! grep -q "^$1 " /proc/modules || rmmod "$1"; } && modprobe "$1" num_devices=0
}
reload hzram && reload zram || { echo "hzramctl.sh: cannot reload hzram and zram"; exit 1; }

ktap_main test_find_size_algorithm_streams test_same_as_zramctl test_errors \
	test_offload_columns test_second_tier_columns test_monitor test_module_not_loaded
