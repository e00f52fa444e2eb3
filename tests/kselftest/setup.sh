#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# hzram-setup: /etc/hzram.conf with a swap device and an ext4 device;
# --dry-run changes nothing; the setup (swap at its priority, ext4
# mounted with its options, disksizes and mem_limit as the expressions
# give with ram from /proc/meminfo, the algorithm); a second run refuses
# the devices in use and leaves them alone; --reset refused while the
# file system is busy, then undoing it all; a device used otherwise than
# configured is left alone; a setup that fails at mkfs or mount is
# undone; a file system without a mount point, and reset refused while
# the device is held open; a mount point through a symbolic link; a bad
# configuration changes nothing; a device disabled by host-memory-limit;
# the second tier (recompression, a backing device and its daily limit)
# set up and maintained with --maintain; the module loaded by
# hzram-setup, and a clear error when it cannot be.
# Needs the hzram module loaded and hzram-setup in ./hzram-setup/
# (tests/kselftest/Makefile puts it there with its libraries); leaves the
# module loaded with num_devices=0.
. "$(dirname "$0")/ktap.sh"

HZSETUP=(env LD_LIBRARY_PATH="$HERE/hzram-setup/lib" "$HERE/hzram-setup/hzram-setup")
CONF=/etc/hzram.conf
MNT=/mnt/hzsetup
OUT=/tmp/hzsetup.out
RAM=$(($(awk '$1 == "MemTotal:" {print $2}' /proc/meminfo) / 1024))
# The first two free device numbers: the swap device and the ext4 one.
S=0
while [ -e /sys/block/hzram$S ] || [ -e /sys/block/hzram$((S + 1)) ]; do S=$((S + 1)); done
E=$((S + 1))
# min(ram / 4, 4096) and ram / 8 + 16 MiB, in bytes.
SWAP_BYTES=$((RAM * 262144))
[ $((RAM / 4)) -lt 4096 ] || SWAP_BYTES=$((4096 * 1048576))
EXT4_BYTES=$((RAM * 131072 + 16 * 1048576))

write_conf() {
	mkdir -p /etc
	cat >$CONF <<-EOC
		# the test's devices
		[hzram$S]
		zram-size = min(ram / 4, 4096)
		compression-algorithm = zstd
		swap-priority = 42

		[hzram$E]
		fs-type = ext4
		mount-point = $MNT
		hzram-size = ram / 8 + 16
		zram-resident-limit = 64
		options = discard,noatime
	EOC
}

# hzram_setup ARGS...: runs it, its output in $OUT (and printed); its
# exit status is the function's.
hzram_setup() {
	local rc=0
	"${HZSETUP[@]}" "$@" >$OUT 2>&1 || rc=$?
	sed 's/^/hzram-setup: /' $OUT
	return $rc
}

# expect_output LINE: $OUT has this line.
expect_output() {
	grep -qxF -- "$1" $OUT || fail "no line '$1' in the output"
}

swap_priority() { # DEV: its priority in /proc/swaps, or nothing
	awk -v d="/dev/$1" '$1 == d {print $5}' /proc/swaps
}

mounted() { # MOUNT-POINT: "DEVICE TYPE OPTIONS" of its mount, or nothing
	awk -v m="$1" '$2 == m {print $1, $3, $4}' /proc/mounts
}

initstate() {
	cat /sys/block/$1/initstate
}

# The devices as hzram-setup sets them up.
expect_set_up() {
	expect_eq "$(swap_priority hzram$S)" 42 "swap priority of hzram$S"
	expect_eq "$(cat /sys/block/hzram$S/disksize)" $SWAP_BYTES "hzram$S disksize"
	grep -q '\[zstd\]' /sys/block/hzram$S/comp_algorithm || fail "hzram$S is not zstd"
	local m
	m=$(mounted $MNT)
	expect_eq "${m%% *}" /dev/hzram$E "device on $MNT"
	case "$m" in
	"/dev/hzram$E ext4 "*discard*) ;;
	*) fail "$MNT: '$m', want ext4 with discard" ;;
	esac
	case "$m" in *noatime*) ;; *) fail "$MNT: '$m', want noatime" ;; esac
	expect_eq "$(cat /sys/block/hzram$E/disksize)" $EXT4_BYTES "hzram$E disksize"
	expect_eq "$(mm_field hzram$E 4)" $((64 * 1048576)) "hzram$E mem_limit"
	grep -q '\[lz4\]' /sys/block/hzram$E/comp_algorithm || fail "hzram$E is not lz4"
}

expect_reset() {
	expect_eq "$(swap_priority hzram$S)" "" "hzram$S still swap"
	expect_eq "$(mounted $MNT)" "" "still mounted on $MNT"
	expect_eq "$(initstate hzram$S)" 0 "hzram$S initstate"
	expect_eq "$(initstate hzram$E)" 0 "hzram$E initstate"
	grep -q '\[lz4\]' /sys/block/hzram$S/comp_algorithm || fail "hzram$S algorithm not back to lz4"
}

test_dry_run_changes_nothing() {
	write_conf
	echo "ram = $RAM MiB: hzram$S $SWAP_BYTES bytes, hzram$E $EXT4_BYTES bytes"
	hzram_setup --dry-run
	expect_output "# ram = $RAM MiB"
	expect_output "echo zstd > /sys/block/hzram$S/comp_algorithm"
	expect_output "echo $SWAP_BYTES > /sys/block/hzram$S/disksize"
	expect_output "swapon -p 42 -o discard /dev/hzram$S"
	expect_output "echo $((64 * 1048576)) > /sys/block/hzram$E/mem_limit"
	expect_output "echo $EXT4_BYTES > /sys/block/hzram$E/disksize"
	expect_output "mkfs.ext4 -q /dev/hzram$E"
	expect_output "mount -t ext4 -o discard,noatime /dev/hzram$E $MNT"
	[ ! -e /sys/block/hzram$S ] || fail "the dry run made hzram$S"
	[ ! -e $MNT ] || fail "the dry run made $MNT"
}

test_setup() {
	write_conf
	hzram_setup
	expect_set_up
	echo "hello from hzram-setup" >$MNT/file
	sync
	cat /proc/swaps
}

test_setup_again_refuses_devices_in_use() {
	if hzram_setup; then fail "a second setup succeeded"; fi
	expect_output "hzram-setup: hzram$S: in use, active swap: left alone (hzram-setup --reset hzram$S frees it if it is ours)"
	expect_output "hzram-setup: hzram$E: in use, mounted on $MNT: left alone (hzram-setup --reset hzram$E frees it if it is ours)"
	expect_set_up
	expect_eq "$(cat $MNT/file)" "hello from hzram-setup" "file on $MNT"
}

test_reset_refused_while_busy() {
	local rc=0
	# A shell inside the mount point keeps it busy.
	(cd $MNT && exec sleep 30) &
	local pid=$!
	sleep 0.2
	hzram_setup --reset hzram$E || rc=$?
	kill $pid
	wait $pid 2>/dev/null || true
	expect_eq $rc 1 "exit status of --reset while busy"
	grep -q "^hzram-setup: hzram$E: umount $MNT: exit status [0-9]*: left alone\$" $OUT ||
		fail "no clear error"
	expect_set_up
	expect_eq "$(cat $MNT/file)" "hello from hzram-setup" "file on $MNT"
}

test_reset() {
	hzram_setup --reset
	expect_output "hzram$E: reset"
	expect_output "hzram$S: reset"
	expect_reset
	# Again: nothing to do.
	hzram_setup --reset
	expect_output "hzram$S: not initialised, nothing to reset"
}

test_reset_leaves_other_uses_alone() {
	# hzram$S, a swap device in hzram.conf, made an ext4 by hand.
	mkdir -p /mnt/other
	echo 32M >/sys/block/hzram$S/disksize
	mkfs.ext4 -q /dev/hzram$S
	mount -t ext4 /dev/hzram$S /mnt/other
	local rc=0
	hzram_setup --reset hzram$S || rc=$?
	expect_eq $rc 1 "exit status of --reset"
	expect_output "hzram-setup: hzram$S: mounted on /mnt/other, but hzram.conf makes it swap: left alone"
	local m
	m=$(mounted /mnt/other)
	expect_eq "${m% *}" "/dev/hzram$S ext4" "mount on /mnt/other"
	if hzram_setup hzram$S; then fail "setup of a mounted device succeeded"; fi
	expect_output "hzram-setup: hzram$S: in use, mounted on /mnt/other: left alone (hzram-setup --reset hzram$S frees it if it is ours)"
	umount /mnt/other
	echo 1 >/sys/block/hzram$S/reset
}

test_failed_setup_is_undone() {
	local rc=0
	# mkfs fails: the device is reset.
	printf '[hzram%s]\nfs-type = nosuchfs\nmount-point = %s\nzram-size = 16\n' $S $MNT >$CONF
	hzram_setup || rc=$?
	expect_eq $rc 1 "exit status"
	expect_output "hzram-setup: hzram$S: mkfs.nosuchfs /dev/hzram$S: command not found"
	expect_eq "$(initstate hzram$S)" 0 "hzram$S initstate after mkfs failed"
	# mount fails after mkfs: reset too.
	printf '[hzram%s]\nfs-type = ext4\nmount-point = %s\nzram-size = 16\noptions = nosuchoption\n' \
		$S $MNT >$CONF
	rc=0
	hzram_setup || rc=$?
	expect_eq $rc 1 "exit status"
	grep -q "^hzram-setup: hzram$S: mount -t ext4 -o nosuchoption /dev/hzram$S $MNT: exit status [0-9]*\$" \
		$OUT || fail "no clear error"
	expect_eq "$(mounted $MNT)" "" "mounted on $MNT"
	expect_eq "$(initstate hzram$S)" 0 "hzram$S initstate after mount failed"
}

test_unmounted_file_system_and_reset_while_open() {
	# A file system without a mount point: made, not mounted.
	printf '[hzram%s]\nfs-type = ext4\nzram-size = 16\n' $S >$CONF
	hzram_setup
	expect_output "hzram$S: ext4, not mounted, 16 MiB (16), the default algorithm"
	expect_eq "$(initstate hzram$S)" 1 "hzram$S initstate"
	dumpe2fs -h /dev/hzram$S 2>/dev/null | grep -q '^Filesystem magic number: *0xEF53' ||
		fail "no ext4 on hzram$S"
	# Held open: reset refused (EBUSY), the device left as it is.
	local rc=0
	exec 3</dev/hzram$S
	hzram_setup --reset || rc=$?
	exec 3<&-
	expect_eq $rc 1 "exit status of --reset while open"
	expect_output "hzram-setup: hzram$S: busy (held open by a process): left alone"
	expect_eq "$(initstate hzram$S)" 1 "hzram$S initstate"
	hzram_setup --reset
	expect_output "hzram$S: reset"
	expect_eq "$(initstate hzram$S)" 0 "hzram$S initstate"
}

test_mount_point_through_a_link() {
	# The kernel reports the mount on the link's target.
	mkdir -p /mnt/real
	ln -sfn /mnt/real /tmp/hzlink
	printf '[hzram%s]\nfs-type = ext4\nmount-point = /tmp/hzlink/x\nzram-size = 16\n' $S >$CONF
	hzram_setup
	local m
	m=$(mounted /mnt/real/x)
	expect_eq "${m%% *}" /dev/hzram$S "device on /mnt/real/x"
	hzram_setup --reset
	expect_output "hzram$S: reset"
	expect_eq "$(mounted /mnt/real/x)" "" "still mounted"
}

test_bad_config_changes_nothing() {
	write_conf
	printf '[hzram%s]\nzram-size = ram / 2\nswap-priority = top\n' $S >>$CONF
	local rc=0
	hzram_setup || rc=$?
	expect_eq $rc 1 "exit status"
	expect_output "hzram-setup: $CONF:15: [hzram$S] swap-priority: 'top' is not a number from -1 to 32767"
	expect_eq "$(initstate hzram$S)" 0 "hzram$S initstate"
	expect_eq "$(initstate hzram$E)" 0 "hzram$E initstate"
}

test_disabled_by_host_memory_limit() {
	printf '[hzram%s]\nhost-memory-limit = %s\n' $S $((RAM - 1)) >$CONF
	hzram_setup
	expect_output "hzram$S: disabled, ram ($RAM MiB) is above host-memory-limit ($((RAM - 1)) MiB)"
	expect_eq "$(initstate hzram$S)" 0 "hzram$S initstate"
}

test_loads_the_module() {
	local d
	for d in /sys/block/hzram*; do
		[ "$(cat $d/initstate)" = 0 ] || skip "${d##*/} is in use: the module stays"
	done
	rmmod hzram || skip "the module cannot be unloaded"
	# Without the module, and without modprobe that works: a clear error.
	mkdir -p /tmp/nomodprobe
	printf '#!/bin/sh\necho "modprobe: FATAL: Module $1 not found" >&2\nexit 1\n' >/tmp/nomodprobe/modprobe
	chmod +x /tmp/nomodprobe/modprobe
	printf '[hzram1]\nzram-size = 64\n' >$CONF
	local rc=0
	PATH=/tmp/nomodprobe:$PATH hzram_setup || rc=$?
	expect_eq $rc 1 "exit status without the module"
	expect_output "modprobe: FATAL: Module hzram not found"
	expect_output "hzram-setup: hzram1: the hzram module is not loaded, and loading it failed: modprobe hzram: exit status 1"
	# It loads the module (one device, hzram0) and makes hzram1.
	hzram_setup
	grep -q '^hzram ' /proc/modules || fail "hzram-setup did not load the module"
	expect_eq "$(swap_priority hzram1)" 100 "default priority of hzram1"
	expect_eq "$(cat /sys/block/hzram1/disksize)" $((64 * 1048576)) "hzram1 disksize"
	hzram_setup --reset
	expect_eq "$(swap_priority hzram1)" "" "hzram1 still swap"
	# Back as run-guest left it.
	rmmod hzram
	modprobe hzram num_devices=0
}

# The second tier from hzram.conf: a recompression algorithm with its
# level and a backing device with a daily limit set up; --maintain
# recompresses the idle pages (less memory) and writes idle pages back up
# to the limit; a second run the same day writes nothing more, one the
# next day gets the limit again; the data read back whole.
test_second_tier_maintenance() {
	local loop f=/tmp/hzsetup-bd c0 c1 d=/sys/block/hzram$E
	[ -f "${HZRAM_CORPUS:-}" ] || skip "no page corpus"
	modprobe loop 2>/dev/null || true
	rm -f $f
	truncate -s 64M $f
	loop=$(losetup -f --show $f)
	rm -rf /run/hzram-setup
	cat >$CONF <<-EOC
		[hzram$E]
		fs-type = ext4
		mount-point = $MNT
		hzram-size = 64
		options = noatime
		compression-algorithm = lz4 zstd(level=9)
		writeback-device = $loop
		writeback-limit = 1
		writeback-idle-age = 2
		recompress-idle-age = 1
	EOC
	hzram_setup
	expect_eq "$(cat $d/backing_dev) $(cat $d/writeback_limit_enable) $(cat $d/writeback_limit)" \
		"$loop 1 256" "backing_dev, writeback_limit_enable, writeback_limit"
	# The set-up gave the day's budget: the first --maintain does not.
	[ -s /run/hzram-setup/hzram$E.writeback-day ] || fail "no day kept at set-up"
	grep -q '^#1: .*\[zstd\]' $d/recomp_algorithm || fail "recomp_algorithm: $(cat $d/recomp_algorithm)"
	dd if="$HZRAM_CORPUS" of=$MNT/data bs=1M count=8 conv=fsync status=none
	c0=$(mm_field hzram$E 2)
	sleep 3
	hzram_setup --maintain
	grep -q "^hzram$E: maintained: " $OUT || fail "no summary"
	c1=$(mm_field hzram$E 2)
	echo "# compr_data_size $c0 -> $c1, bd_stat $(cat $d/bd_stat)"
	[ "$c1" -lt "$c0" ] || fail "compr_data_size $c1 not below $c0"
	expect_eq "$(awk '{ print $1, $3 }' $d/bd_stat) $(cat $d/writeback_limit)" "256 256 0" \
		"pages written back (the day's limit), limit left"
	[ -s /run/hzram-setup/hzram$E.writeback-day ] || fail "no day kept"
	hzram_setup --maintain
	expect_output "hzram$E: writeback limit spent for today"
	expect_eq "$(awk '{ print $3 }' $d/bd_stat)" 256 "pages written back on the same day"
	echo $(($(date +%s) / 86400 - 1)) >/run/hzram-setup/hzram$E.writeback-day
	hzram_setup --maintain
	[ "$(awk '{ print $3 }' $d/bd_stat)" -gt 256 ] || fail "nothing written back the next day"
	dd if="$HZRAM_CORPUS" bs=1M count=8 status=none | cmp - $MNT/data || fail "data differs"
	# A day's age, up for less; another backing device than the one
	# configured: nothing done, and no failure.
	sed -i 's/^\(\s*writeback-idle-age = \).*/\11d/' $CONF
	hzram_setup --maintain
	expect_output "hzram$E: up for less than 86400 s: nothing idle that long yet"
	sed -i "s|^\(\s*writeback-device = \).*|\1/dev/loop7|" $CONF
	hzram_setup --maintain
	expect_output "hzram$E: its backing device is $loop, not /dev/loop7: no writeback"
	hzram_setup --reset
	expect_eq "$(initstate hzram$E)" 0 "hzram$E initstate after reset"
	losetup -d $loop
	rm -f $f
}

cleanup() {
	local id
	rm -f $CONF
	grep -q '^hzram ' /proc/modules || modprobe hzram num_devices=0
	for id in $S $E; do
		[ -e /sys/block/hzram$id ] && echo $id >/sys/class/hzram-control/hot_remove
	done
	true
}

ktap_main test_dry_run_changes_nothing test_setup test_setup_again_refuses_devices_in_use \
	test_reset_refused_while_busy test_reset test_reset_leaves_other_uses_alone \
	test_failed_setup_is_undone test_unmounted_file_system_and_reset_while_open \
	test_mount_point_through_a_link \
	test_bad_config_changes_nothing test_disabled_by_host_memory_limit \
	test_second_tier_maintenance test_loads_the_module
rc=$?
cleanup
exit $rc
