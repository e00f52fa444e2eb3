# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
# Devices, backing devices, data and block_state for writeback.sh and
# recomp.sh (after ktap.sh and hzramd-lib.sh). SIZE and NR are the
# devices' size and pages.
DBG=/sys/kernel/debug
# The devices' size, and their pages: 2 MiB, whose hashes cost little
# under lockdep and KASAN; the comparison with zram sets its own.
SIZE=2M NR=512
declare -A LOOP		# loop devices by name (mkloop)
DEVS='' LOOPS=''	# what cleanup removes

modprobe loop 2>/dev/null || true

# add_dev VAR zram|hzram: a new lz4 device, its name in VAR (and DEVS).
add_dev() {
	local d
	d=$2$(cat /sys/class/$2-control/hot_add) || return 1
	DEVS="$DEVS $d"
	printf -v "$1" %s "$d"
	echo lz4 >/sys/block/$d/comp_algorithm
}

# init_dev DEV [BACKING]: BACKING as DEV's backing device, and SIZE.
init_dev() {
	[ -z "${2:-}" ] || echo "$2" >/sys/block/$1/backing_dev || return 1
	echo $SIZE >/sys/block/$1/disksize
}

# mkloop NAME BYTES: a loop device on a new file of BYTES in /tmp, as
# LOOP[NAME] (and in LOOPS).
mkloop() {
	local file=/tmp/wb-loop-${1//./-} l
	[ "$(awk '$2 == "/tmp" { print $3 }' /proc/mounts)" = tmpfs ] ||
		fail "/tmp is not a tmpfs"
	rm -f "$file"
	truncate -s "$2" "$file"
	l=$(losetup -f) || return 1
	losetup "$l" "$file" || return 1
	LOOPS="$LOOPS $l"
	LOOP[$1]=$l
}

# cleanup: the EXIT trap: remove the devices (which lets their backing
# devices go), then detach the loop devices.
cleanup() {
	local d l
	for d in $DEVS; do
		case $d in
		zram*) echo "${d#zram}" >/sys/class/zram-control/hot_remove ||
			echo "cleanup: hot_remove of $d failed" ;;
		*) remove_dev "$d" || true ;;
		esac
	done
	for l in $LOOPS; do
		losetup -d "$l" || echo "cleanup: losetup -d $l failed"
	done
	rm -f /tmp/wb-*
}

# put DEV PAGE COUNT SOURCE [FROM]: write COUNT pages at PAGE from SOURCE's
# page FROM; into DEV's expected image too where it has one.
put() {
	dd if="$4" of=/dev/$1 bs=4096 seek="$2" skip="${5:-0}" count="$3" \
		oflag=direct status=none
	[ ! -e /tmp/wb-img.$1 ] || dd if="$4" of=/tmp/wb-img.$1 bs=4096 \
		seek="$2" skip="${5:-0}" count="$3" conv=notrunc status=none
}

# get DEV PAGE: read page PAGE.
get() {
	dd if=/dev/$1 of=/dev/null bs=4096 skip="$2" count=1 iflag=direct \
		status=none
}

# discard DEV PAGE: discard page PAGE (zeros in the expected image).
# Forced: else blkdiscard looks for signatures, reading the device
# through the page cache, which reads written-back pages (bd_stat) and
# clears idle marks.
discard() {
	local out
	out=$(blkdiscard -f -o $(($2 * 4096)) -l 4096 /dev/$1 2>&1) ||
		fail "blkdiscard of page $2 of $1: $out"
	[ ! -e /tmp/wb-img.$1 ] || dd if=/dev/zero of=/tmp/wb-img.$1 bs=4096 \
		seek="$2" count=1 conv=notrunc status=none
}

devhash() {
	dd if=/dev/$1 bs=1M iflag=direct status=none | sha256sum | cut -d' ' -f1
}

imghash() {
	sha256sum /tmp/wb-img.$1 | cut -d' ' -f1
}

# attr DEV ATTR VALUE: write VALUE (no newline) to DEV's ATTR: "ok" or
# the errno's name.
attr() {
	local e
	e=$(sysattr write /sys/block/$1/$2 "$3") && echo ok || echo "$e"
}

bs_file() {
	echo $DBG/${1%%[0-9]*}/$1/block_state
}

# sel DEV COND: the pages block_state lists for which the awk condition
# COND holds ($1 the index, $2 the access time, $3 the flags "swhirn").
sel() {
	awk "$2 { print \$1 }" "$(bs_file $1)" | tr '\n' ' '
}

# nsel DEV COND: how many. One process: they cost under lockdep and KASAN.
nsel() {
	awk "$2 { n++ } END { print n + 0 }" "$(bs_file $1)"
}

# flags DEV PAGE, atime DEV PAGE: block_state's flags and access time.
flags() {
	awk -v p="$2" '$1 == p { print $3 }' "$(bs_file $1)"
}

atime() {
	awk -v p="$2" '$1 == p { print $2 }' "$(bs_file $1)"
}

# bd DEV [N]: bd_stat, or its field N.
bd() {
	if [ -n "${2:-}" ]; then
		awk -v n="$2" '{ print $n }' /sys/block/$1/bd_stat
	else
		cat /sys/block/$1/bd_stat
	fi
}

# mm DEV N: mm_stat's field N.
mm() {
	mm_field "$@"
}
