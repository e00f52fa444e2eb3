#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The page corpus through hzram with every algorithm: write a quarter of
# it (the whole corpus goes through lz4 in hzram_corpus; a quarter on the
# debug kernel), read it back, compare checksums of the whole device.
# Needs the hzram module loaded and the corpus at $HZRAM_CORPUS.
. "$(dirname "$0")/ktap.sh"

CORPUS=${HZRAM_CORPUS:-/tmp/corpus}

round_trip() {
	local alg=$1 dev want got
	dev=hzram$(cat /sys/class/hzram-control/hot_add)
	echo "$alg" >/sys/block/$dev/comp_algorithm
	local mib=$((16 / SHRINK))
	echo ${mib}M >/sys/block/$dev/disksize
	dd if="$CORPUS" of=/dev/$dev bs=1M count=$mib oflag=direct status=none
	want=$(dd if="$CORPUS" bs=1M count=$mib status=none | sha256sum | cut -d' ' -f1)
	got=$(dd if=/dev/$dev bs=1M iflag=direct status=none | sha256sum | cut -d' ' -f1)
	expect_eq "$got" "$want" "sha256 of /dev/$dev ($alg)"
	echo "$alg: mm_stat $(cat /sys/block/$dev/mm_stat)"
	expect_eq "$(mm_field $dev 1)" $((mib << 20)) "orig_data_size"
	remove_dev $dev
}

test_corpus_lz4() { round_trip lz4; }
test_corpus_lz4hc() { round_trip lz4hc; }
test_corpus_lzo() { round_trip lzo; }
test_corpus_lzo_rle() { round_trip lzo-rle; }
test_corpus_zstd() { round_trip zstd; }

ktap_main test_corpus_lz4 test_corpus_lz4hc test_corpus_lzo \
	test_corpus_lzo_rle test_corpus_zstd
