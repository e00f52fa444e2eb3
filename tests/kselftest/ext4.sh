#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ext4 on hzram: mkfs, mount, copy files, umount, fsck clean, remount,
# compare; reset and hot_remove refused while mounted.
# Needs the hzram module loaded and the corpus at $HZRAM_CORPUS.
. "$(dirname "$0")/ktap.sh"

CORPUS=${HZRAM_CORPUS:-/tmp/corpus}
MNT=/mnt/hzram-ext4
DEV=

setup() {
	local id
	id=$(cat /sys/class/hzram-control/hot_add)
	DEV=hzram$id
	echo 256M >/sys/block/$DEV/disksize
	mkdir -p $MNT
}

teardown() {
	umount $MNT 2>/dev/null || true
	echo "${DEV#hzram}" >/sys/class/hzram-control/hot_remove
}

TREE_BYTES=$((32 * 1048576 / SHRINK))

# A tree of files: TREE_BYTES of the corpus cut in pieces of odd sizes,
# and programs.
make_tree() {
	local dst=$1 i=0 off=0 len
	mkdir -p "$dst/corpus" "$dst/bin"
	while [ $off -lt $TREE_BYTES ]; do
		len=$(( (i * 7919 % 3000 + 1) * 1021 ))
		dd if="$CORPUS" of="$dst/corpus/piece$i" bs=4096 iflag=skip_bytes,count_bytes \
			skip=$off count=$len status=none
		off=$((off + len))
		i=$((i + 1))
	done
	cp /usr/bin/* "$dst/bin/"
	: >"$dst/empty"
	mkdir -p "$dst/deep/a/b/c/d"
	echo hello >"$dst/deep/a/b/c/d/file"
}

test_ext4_copy_fsck_compare() {
	local src=/tmp/ext4-src
	setup
	make_tree $src
	mkfs.ext4 -q -F /dev/$DEV
	mount -t ext4 /dev/$DEV $MNT
	cp -a $src/. $MNT/
	sync
	# Busy while mounted.
	expect_errno EBUSY /sys/block/$DEV/reset 1
	expect_errno EBUSY /sys/class/hzram-control/hot_remove "${DEV#hzram}"
	expect_eq "$(cat /sys/block/$DEV/initstate)" 1 initstate
	umount $MNT
	fsck.ext4 -fn /dev/$DEV
	mount -t ext4 -o ro /dev/$DEV $MNT
	(cd $src && find . -type f | sort | xargs sha256sum) >/tmp/ext4-src.sum
	(cd $MNT && sha256sum -c --quiet /tmp/ext4-src.sum)
	expect_eq "$(cd $MNT && find . -type f | wc -l)" "$(wc -l </tmp/ext4-src.sum)" "file count"
	echo "$(wc -l </tmp/ext4-src.sum) files compared; mm_stat: $(cat /sys/block/$DEV/mm_stat)"
	umount $MNT
	[ "$(mm_field $DEV 1)" -gt $TREE_BYTES ] || fail "orig_data_size too small"
	rm -rf $src
	teardown
}

test_ext4_discard_frees() {
	local before after
	setup
	mkfs.ext4 -q -F -E nodiscard /dev/$DEV
	mount -t ext4 -o discard /dev/$DEV $MNT
	local mib=$((32 / SHRINK))
	dd if="$CORPUS" of=$MNT/big bs=1M count=$mib status=none
	sync
	before=$(mm_field $DEV 1)
	rm $MNT/big
	sync
	fstrim $MNT 2>/dev/null || true
	after=$(mm_field $DEV 1)
	echo "orig_data_size $before -> $after"
	[ "$after" -lt $((before - (mib << 20) * 15 / 16)) ] || fail "deleting $mib MiB freed too little"
	umount $MNT
	teardown
}

ktap_main test_ext4_copy_fsck_compare test_ext4_discard_frees
