#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Writeback to a backing device (the second tier): backing_dev, writeback
# in every form, its limit, writeback_batch_size, compressed_writeback and
# bd_stat; against the kernel's zram where it has them (Debian's cloud
# kernels build zram with writeback and memory tracking), alone, and with
# hzramd serving the device. The backing devices are loop devices on files
# in /tmp, a tmpfs in the test guests.
# Needs the hzram and zram modules loaded with no devices (run-guest).
. "$(dirname "$0")/ktap.sh"
. "$(dirname "$0")/hzramd-lib.sh"
. "$(dirname "$0")/dev-lib.sh"

# bdis COUNT READS WRITES: bd_stat as it shows those.
bdis() {
	printf '%8d %8d %8d' "$1" "$2" "$3"
}

lim() {
	echo "$(cat /sys/block/$1/writeback_limit) $(cat /sys/block/$1/writeback_limit_enable)"
}

# The differential record (test_writeback_as_zram_does).

note() {
	echo "$2" >>/tmp/wb-rec.$1
}

# rec DEV LABEL: what users see now: block_state's flags (without the
# access times), bd_stat, mm_stat's fields that do not depend on the
# allocator, writeback_limit and writeback_limit_enable. A written-back
# page keeps its 'h' in 7.3's zram (and hzram) and loses it in 6.12's:
# the 'h' of a page marked 'w' is not recorded (mm_stat's huge_pages, which
# both drop, is).
rec() {
	note $1 "$2: $(awk '{ f = $3; if (index(f, "w")) f = substr(f, 1, 2) "." substr(f, 4)
		printf "%d %s ", $1, f }' "$(bs_file $1)")| bd_stat $(bd $1) | mm_stat $(mm_all $1) | limit $(lim $1)"
}

# recsum DEV LABEL: rec with block_state's pages counted, not listed.
recsum() {
	note $1 "$2: $(awk '$3 ~ /w/ { w++ } $3 ~ /h/ && $3 !~ /w/ { h++ } { n++ }
		END { printf "listed %d, written back %d, huge in memory %d", n, w, h }' \
		"$(bs_file $1)") | bd_stat $(bd $1) | mm_stat $(mm_all $1) | limit $(lim $1)"
}

mm_all() {
	awk '{ print $1, $2, $6, $8, $9 }' /sys/block/$1/mm_stat
}

hashrec() {
	note $1 "data: $(devhash $1)"
}

# The same steps on each device given, each step on all of them at once,
# recording after each what users see. Each device has its own backing
# device LOOP[DEV] (16 MiB) and LOOP[DEV.small] (8 pages); LOOP[tiny] has
# under a page.
record_steps() {
	local d v r p STEP_DEVS="$*"
	for d in "$@"; do
		note $d "unset: backing_dev $(cat /sys/block/$d/backing_dev), bd_stat $(bd $d), limit $(lim $d)"
		# (A regular file hzram takes, beyond zram: not recorded; a
		# character device neither takes.)
		for v in /tmp/wb-missing /dev/null /tmp "${LOOP[tiny]}"; do
			note $d "backing_dev $v: $(attr $d backing_dev "$v")"
		done
		# 6.12's zram checks the mode first, 7.3's whether the device is
		# initialised first: both EINVAL here.
		note $d "uninitialised, no backing device: writeback huge $(attr $d writeback huge), bogus $(attr $d writeback bogus)"
		# The same device again: it is open exclusively already.
		note $d "backing_dev ${LOOP[$d]}: $(attr $d backing_dev "${LOOP[$d]}"), again $(attr $d backing_dev "${LOOP[$d]}"): $(cat /sys/block/$d/backing_dev)"
		# 6.12's zram finds page_index=0 out of range (no pages yet):
		# EINVAL too.
		note $d "uninitialised: writeback huge $(attr $d writeback huge), page_index=0 $(attr $d writeback page_index=0), bogus $(attr $d writeback bogus)"
		# writeback_limit is a u64, in decimal; writeback_limit_enable
		# a bool (any number but 0 is 1).
		for v in 7 -1 0x10 abc; do
			note $d "writeback_limit $v: $(attr $d writeback_limit $v), $(lim $d)"
		done
		for v in 2 0 -1 abc; do
			note $d "writeback_limit_enable $v: $(attr $d writeback_limit_enable $v), $(lim $d)"
		done
		echo $SIZE >/sys/block/$d/disksize
		note $d "initialised: backing_dev ${LOOP[tiny]} $(attr $d backing_dev "${LOOP[tiny]}"), $(cat /sys/block/$d/backing_dev)"
		# Pages 0-7 and 40-47 random (huge), 8-15 zeros (same-filled),
		# 16-39 text.
		put $d 0 8 /tmp/random
		put $d 8 8 /dev/zero
		put $d 16 24 /tmp/text
		put $d 40 8 /tmp/random 8
	done
	for d in "$@"; do rec $d written; hashrec $d; done
	# Errors, and writebacks that find nothing to write: no pages idle
	# yet, none incompressible (that takes recompression), a same-filled
	# page, an unwritten one. A page_index past the end is EINVAL in
	# 6.12's zram, ERANGE in 7.3's (and hzram's): recorded as "range".
	for d in "$@"; do
		for v in bogus page_index=abc page_index=-1 page_index= page_index=$NR \
			incompressible idle huge_idle page_index=8 page_index=100; do
			r=$(attr $d writeback "$v")
			if [ "$v" = page_index=$NR ]; then
				case $r in EINVAL | ERANGE) r=range ;; esac
			fi
			note $d "writeback $v: $r"
		done
	done
	for d in "$@"; do rec $d "nothing written back"; done
	# Single pages: a text page, a huge one, one written back already.
	for d in "$@"; do
		for v in page_index=16 page_index=0 page_index=16; do
			note $d "writeback $v: $(attr $d writeback $v)"
		done
	done
	for d in "$@"; do rec $d page_index; done
	for d in "$@"; do note $d "writeback huge: $(attr $d writeback huge)"; done
	for d in "$@"; do rec $d huge; done
	# Reads of written-back pages: bd_stat's reads, the data.
	for d in "$@"; do get $d 1; get $d 40; done
	for d in "$@"; do rec $d "pages 1 and 40 read"; hashrec $d; done
	for d in "$@"; do rec $d "all read"; done
	# Idle pages; written-back pages are never marked.
	for d in "$@"; do
		echo all >/sys/block/$d/idle
		get $d 17
		put $d 18 1 /tmp/text 2
		note $d "writeback idle: $(attr $d writeback idle)"
	done
	for d in "$@"; do echo all >/sys/block/$d/idle; rec $d "idle written back, all marked"; done
	# Overwritten and discarded written-back pages free their blocks.
	for d in "$@"; do
		put $d 0 1 /tmp/text
		discard $d 3
		discard $d 20
	done
	for d in "$@"; do rec $d "page 0 overwritten, 3 and 20 discarded"; hashrec $d; done
	for d in "$@"; do
		put $d 48 4 /tmp/random
		put $d 52 1 /tmp/text
		echo all >/sys/block/$d/idle
		get $d 50
		note $d "writeback huge_idle: $(attr $d writeback huge_idle)"
	done
	for d in "$@"; do rec $d huge_idle; done
	# The limit. huge's candidates now, 50 and 60-67, are all huge pages
	# of random data, the same size: which 3 of them a limit of 3 lets
	# through (6.12's zram the lowest indexes, 7.3's the highest) shows
	# only in block_state, counted for that step. Exactly as many
	# candidates as the limit allows is EIO in 6.12's zram (it checks the
	# limit at each index after) and not in 7.3's: not recorded.
	for d in "$@"; do
		put $d 60 8 /tmp/random 8
		echo 1 >/sys/block/$d/writeback_limit_enable
	done
	limit_step 0 rec huge
	limit_step 3 recsum huge
	limit_step 100 rec huge
	limit_step 1 rec page_index=17 page_index=18
	for d in "$@"; do
		echo 0 >/sys/block/$d/writeback_limit_enable
		note $d "limit disabled: page_index=18 $(attr $d writeback page_index=18)"
	done
	for d in "$@"; do rec $d "limit disabled"; hashrec $d; done
	# What reset leaves: no backing device, bd_stat 0, the limit as set.
	for d in "$@"; do
		echo 5 >/sys/block/$d/writeback_limit
		echo 1 >/sys/block/$d/writeback_limit_enable
		echo 1 >/sys/block/$d/reset
		note $d "reset: bd_stat $(bd $d), backing_dev $(cat /sys/block/$d/backing_dev), limit $(lim $d), writeback huge $(attr $d writeback huge)"
		echo 0 >/sys/block/$d/writeback_limit_enable
		echo 0 >/sys/block/$d/writeback_limit
	done
	# A full backing device. 6.12's zram never uses its block 0 (7 pages
	# fit in 8), 7.3's does (8): recorded are the errno, the data, and
	# that bd_stat counts the pages block_state shows written back.
	for d in "$@"; do
		echo lz4 >/sys/block/$d/comp_algorithm	# reset restores zram's default
		init_dev $d "${LOOP[$d.small]}"
		put $d 0 16 /tmp/random
		note $d "8-page backing device: writeback huge $(attr $d writeback huge)"
	done
	for d in "$@"; do note $d "full: $(full_check $d)"; hashrec $d; done
	# A written-back page overwritten (with the same data) leaves its
	# block to another.
	for d in "$@"; do
		p=$(sel $d '$3 ~ /w/' | cut -d' ' -f1)
		put $d "$p" 1 /tmp/random "$p"
		note $d "a written-back page overwritten: written back again $(attr $d writeback page_index=$p), huge $(attr $d writeback huge)"
	done
	for d in "$@"; do note $d "full: $(full_check $d)"; hashrec $d; done
	for d in "$@"; do
		echo 1 >/sys/block/$d/reset
		note $d "reset: bd_stat $(bd $d), backing_dev $(cat /sys/block/$d/backing_dev)"
	done
}

# limit_step LIMIT REC ARG...: on each device of record_steps, the limit
# set to LIMIT, then a writeback of each ARG, each errno noted; then REC
# (rec or recsum) of each device: those in STEP_DEVS (record_steps sets it).
limit_step() {
	local limit=$1 how=$2 d a line
	shift 2
	for d in $STEP_DEVS; do
		echo "$limit" >/sys/block/$d/writeback_limit
		line="limit $limit:"
		for a in "$@"; do line="$line $a $(attr $d writeback "$a")"; done
		note $d "$line"
	done
	for d in $STEP_DEVS; do $how $d "limit $limit"; done
}

# full_check DEV: whether bd_stat counts as many pages as block_state
# shows written back, 7 or 8 of them.
full_check() {
	local w
	w=$(nsel $1 '$3 ~ /w/')
	if [ "$w" = "$(bd $1 1)" ] && [ "$w" -ge 7 ] && [ "$w" -le 8 ]; then
		echo consistent
	else
		echo "$w written back, bd_stat $(bd $1)"
	fi
}

make_data() {
	dd if=/dev/urandom of=/tmp/random bs=4096 count=16 status=none
	dd if=/dev/urandom of=/tmp/big bs=4096 count=128 status=none
	# Text that compresses: the kernel's own messages, repeated.
	kmsg_text $((24 * 4096)) >/tmp/text
	# A file, not a block device.
	dd if=/dev/zero of=/tmp/regfile bs=4096 count=1 status=none
}

# Writeback as zram does it, on zram and hzram in one guest.
test_writeback_as_zram_does() {
	local z h d devs SIZE=16M NR=4096
	DEVS='' LOOPS=''
	trap cleanup EXIT
	add_dev z zram
	[ -e /sys/block/$z/backing_dev ] && [ -e /sys/block/$z/writeback ] ||
		skip "this kernel's zram has no writeback"
	[ -e "$(bs_file $z)" ] || skip "this kernel's zram has no block_state"
	# zram before 6.2 lists four states, not six: hzram follows the
	# newer one.
	init_dev $z
	put $z 0 1 /tmp/text
	[ "$(awk '{ print length($3) }' "$(bs_file $z)")" = 6 ] ||
		skip "this kernel's zram predates 6.2's block_state"
	echo 1 >/sys/block/$z/reset
	echo lz4 >/sys/block/$z/comp_algorithm	# reset restores zram's default
	add_dev h hzram
	[ -e /sys/block/$h/backing_dev ] || fail "hzram has no backing_dev"
	devs="$z $h"
	mkloop tiny 2048
	for d in $devs; do
		mkloop $d $((16 << 20))
		mkloop $d.small $((8 * 4096))
	done
	rm -f /tmp/wb-rec.*
	record_steps $devs
	for d in $devs; do
		sed "s|${LOOP[$d.small]}|SMALL|g; s|${LOOP[$d]}|LOOP|g; s|${LOOP[tiny]}|TINY|g; s|$d|DEV|g" \
			/tmp/wb-rec.$d >/tmp/wb-rec.${d%%[0-9]*}
	done
	cat /tmp/wb-rec.zram
	diff /tmp/wb-rec.zram /tmp/wb-rec.hzram || fail "hzram's record differs from zram's"
}

# hzram alone, on every kernel: what each step must show.
test_writeback_hzram() {
	local h h2 h3 v c0 c1 c2 t0 nw nwr n p
	DEVS='' LOOPS=''
	trap cleanup EXIT
	add_dev h hzram
	[ -e /sys/block/$h/backing_dev ] || fail "hzram has no backing_dev"
	mkloop main $((16 << 20))
	mkloop tiny 2048
	expect_eq "$(cat /sys/block/$h/backing_dev)" none "backing_dev unset"
	expect_eq "$(bd $h)" "$(bdis 0 0 0)" "bd_stat uninitialised"
	expect_eq "$(lim $h) $(cat /sys/block/$h/writeback_batch_size) $(cat /sys/block/$h/compressed_writeback)" \
		"0 0 32 0" "writeback_limit, _enable, writeback_batch_size, compressed_writeback at first"
	# Uninitialised.
	expect_errno EINVAL /sys/block/$h/writeback huge
	expect_errno EINVAL /sys/block/$h/writeback page_index=0
	expect_errno ENOENT /sys/block/$h/backing_dev /tmp/wb-missing
	expect_errno ENOTBLK /sys/block/$h/backing_dev /dev/null
	expect_errno EINVAL /sys/block/$h/backing_dev /tmp/regfile	# on tmpfs
	expect_errno EINVAL /sys/block/$h/backing_dev "${LOOP[tiny]}"	# under a page
	expect_eq "$(cat /sys/block/$h/backing_dev)" none "backing_dev after the errors"
	for v in 0 -1 abc 4294967296; do
		expect_errno EINVAL /sys/block/$h/writeback_batch_size $v
	done
	for v in 64 1 32; do
		echo $v >/sys/block/$h/writeback_batch_size
		expect_eq "$(cat /sys/block/$h/writeback_batch_size)" $v "writeback_batch_size"
	done
	for v in -1 abc 0x10 18446744073709551616; do
		expect_errno EINVAL /sys/block/$h/writeback_limit $v
	done
	echo 18446744073709551615 >/sys/block/$h/writeback_limit
	expect_eq "$(cat /sys/block/$h/writeback_limit)" 18446744073709551615 "writeback_limit"
	expect_errno EINVAL /sys/block/$h/writeback_limit_enable abc
	expect_errno EINVAL /sys/block/$h/compressed_writeback maybe
	echo yes >/sys/block/$h/compressed_writeback
	expect_eq "$(cat /sys/block/$h/compressed_writeback)" 1 "compressed_writeback after yes"
	echo 0 >/sys/block/$h/compressed_writeback
	init_dev $h "${LOOP[main]}"
	expect_eq "$(cat /sys/block/$h/backing_dev)" "${LOOP[main]}" "backing_dev"
	expect_errno EBUSY /sys/block/$h/backing_dev "${LOOP[tiny]}"
	expect_errno EBUSY /sys/block/$h/compressed_writeback 1
	expect_eq "$(cat /sys/block/$h/backing_dev)" "${LOOP[main]}" "backing_dev after EBUSY"

	# Pages 0-7 and 40-47 random (huge), 8-15 zeros, 16-39 text.
	truncate -s $SIZE /tmp/wb-img.$h
	put $h 0 8 /tmp/random
	put $h 8 8 /dev/zero
	put $h 16 24 /tmp/text
	put $h 40 8 /tmp/random 8
	expect_eq "$(mm $h 1) $(mm $h 6) $(mm $h 8)" "$((48 * 4096)) 8 16" \
		"orig_data_size, same_pages, huge_pages written"
	c0=$(mm $h 2)
	t0=$(atime $h 0)
	for v in bogus type=bogus type= page_index=abc page_index= page_indexes=5 \
		page_indexes=a-5 page_indexes=5-b; do
		expect_errno EINVAL /sys/block/$h/writeback "$v"
	done
	for v in page_index=$NR page_indexes=9-3 page_indexes=0-$NR \
		page_indexes=$NR-$((NR + 1)); do
		expect_errno ERANGE /sys/block/$h/writeback "$v"
	done
	# Nothing to write back: unknown keys, modes without candidates, a
	# same-filled page, an unwritten one.
	for v in foo=bar incompressible type=incompressible idle type=idle huge_idle \
		type=huge_idle page_index=8 page_index=100 page_indexes=8-15; do
		echo "$v" >/sys/block/$h/writeback
	done
	expect_eq "$(bd $h)" "$(bdis 0 0 0)" "bd_stat after writebacks of nothing"
	expect_eq "$(nsel $h '$3 ~ /w/')" 0 "pages written back by nothing"

	echo page_index=16 >/sys/block/$h/writeback
	expect_eq "$(flags $h 16)" ".w...." "page 16 (text) written back"
	c1=$(mm $h 2)
	[ $((c0 - c1)) -gt 0 ] && [ $((c0 - c1)) -lt 4096 ] ||
		fail "compr_data_size $c0, $c1 after a text page written back"
	echo page_index=0 >/sys/block/$h/writeback
	expect_eq "$(flags $h 0) $(atime $h 0)" ".wh... $t0" "page 0 (huge) written back: flags, access time"
	expect_eq "$(($(mm $h 2) - c1)) $(mm $h 8)" "-4096 15" "compr_data_size change, huge_pages"
	echo page_indexes=1-3 >/sys/block/$h/writeback
	expect_eq "$(sel $h '$3 ~ /w/')" "0 1 2 3 16 " "written back after page_indexes=1-3"
	c1=$(mm $h 2)
	echo "page_index=4 page_index=17" >/sys/block/$h/writeback
	c2=$(mm $h 2)
	[ $((c1 - c2 - 4096)) -gt 0 ] && [ $((c1 - c2 - 4096)) -lt 4096 ] ||
		fail "compr_data_size $c1, $c2 after pages 4 and 17 written back"
	echo type=huge >/sys/block/$h/writeback
	echo huge >/sys/block/$h/writeback
	expect_eq "$(sel $h '$3 ~ /w/')" "0 1 2 3 4 5 6 7 16 17 40 41 42 43 44 45 46 47 " \
		"written back after type=huge"
	expect_eq "$(nsel $h '$3 ~ /wh/')" 16 "huge pages written back, still 'h'"
	expect_eq "$(mm $h 1) $(($(mm $h 2) - c2)) $(mm $h 8)" "$((48 * 4096)) $((-11 * 4096)) 0" \
		"orig_data_size, compr_data_size change, huge_pages after type=huge"
	nw=18 nwr=18
	expect_eq "$(bd $h)" "$(bdis 18 0 18)" "bd_stat after the writebacks"
	sleep 1		# that the reads' access time differs
	expect_eq "$(devhash $h)" "$(imghash $h)" "data read back"
	expect_eq "$(bd $h)" "$(bdis 18 18 18)" "bd_stat after all was read"
	[ "${t0%.*}" -lt "$(atime $h 0 | cut -d. -f1)" ] || fail "page 0's access time $(atime $h 0) after a read, $t0 before"
	expect_eq "$(flags $h 0)" ".wh..." "page 0 after a read"
	# 512 bytes of page 2, and 512 bytes written into page 5.
	dd if=/dev/$h of=/tmp/wb-s1 bs=512 skip=$((2 * 8 + 3)) count=1 iflag=direct status=none
	dd if=/tmp/wb-img.$h of=/tmp/wb-s2 bs=512 skip=$((2 * 8 + 3)) count=1 status=none
	cmp /tmp/wb-s1 /tmp/wb-s2 || fail "512 bytes read of a written-back page"
	expect_eq "$(bd $h) $(flags $h 2)" "$(bdis 18 19 18) .wh..." "bd_stat, page 2 after a 512-byte read"
	dd if=/tmp/text of=/dev/$h bs=512 seek=$((5 * 8 + 2)) count=1 oflag=direct status=none
	dd if=/tmp/text of=/tmp/wb-img.$h bs=512 seek=$((5 * 8 + 2)) count=1 conv=notrunc status=none
	put $h 6 1 /tmp/text
	discard $h 7
	nw=15
	expect_eq "$(sel $h '$1 >= 5 && $1 <= 7 && $3 ~ /w/')" "" "written back after a 512-byte write to 5, overwrite of 6, discard of 7"
	expect_eq "$(sel $h '$1 == 7')" "" "page 7 listed after its discard"
	expect_eq "$(bd $h 1) $(bd $h 3)" "$nw $nwr" "bd_stat count and writes"
	expect_eq "$(devhash $h)" "$(imghash $h)" "data after the 512-byte write, overwrite and discard"

	# Idle pages: written-back ones are never marked.
	echo all >/sys/block/$h/idle
	expect_eq "$(nsel $h '$3 ~ /w/ && $3 ~ /i/')" 0 "written-back pages marked idle"
	get $h 18
	put $h 19 1 /tmp/text 3
	# 5 and 6 (written since theirs went back), 20-39.
	n=$(nsel $h '$3 ~ /i/')
	expect_eq "$n" 22 "idle pages before idle"
	echo idle >/sys/block/$h/writeback
	expect_eq "$(sel $h '$3 !~ /[ws]/')" "18 19 " "pages in memory after idle"
	nw=$((nw + n)) nwr=$((nwr + n))
	expect_eq "$(bd $h 1) $(bd $h 3) $(nsel $h '$3 ~ /i/ && $3 ~ /w/')" "$nw $nwr 0" \
		"bd_stat count and writes, idle pages written back, after idle"
	put $h 48 4 /tmp/random
	put $h 52 1 /tmp/text
	echo all >/sys/block/$h/idle
	get $h 50
	expect_eq "$(sel $h '$3 ~ /h/ && $3 ~ /i/ && $3 !~ /w/')" "48 49 51 " "huge idle pages before huge_idle"
	echo huge_idle >/sys/block/$h/writeback
	nw=$((nw + 3)) nwr=$((nwr + 3))
	expect_eq "$(sel $h '$3 ~ /h/ && $3 !~ /w/')" "50 " "huge pages in memory after huge_idle"
	expect_eq "$(bd $h 1) $(bd $h 3) $(nsel $h '$3 ~ /i/ && $3 ~ /w/')" "$nw $nwr 0" \
		"bd_stat count and writes, idle pages written back, after huge_idle"

	# The limit: EIO at 0, each page written back takes one.
	put $h 60 8 /tmp/random 8
	echo 0 >/sys/block/$h/writeback_limit
	echo 1 >/sys/block/$h/writeback_limit_enable
	expect_eq "$(cat /sys/block/$h/writeback_limit_enable)" 1 "writeback_limit_enable"
	expect_errno EIO /sys/block/$h/writeback huge
	expect_eq "$(bd $h 1)" $nw "bd_stat count after EIO at limit 0"
	echo 3 >/sys/block/$h/writeback_limit
	expect_errno EIO /sys/block/$h/writeback huge
	nw=$((nw + 3)) nwr=$((nwr + 3))
	expect_eq "$(bd $h 1) $(bd $h 3) $(cat /sys/block/$h/writeback_limit)" "$nw $nwr 0" \
		"bd_stat count and writes, the limit, after 3 of 9"
	echo 100 >/sys/block/$h/writeback_limit
	echo huge >/sys/block/$h/writeback
	nw=$((nw + 6)) nwr=$((nwr + 6))
	expect_eq "$(bd $h 1) $(bd $h 3) $(cat /sys/block/$h/writeback_limit)" "$nw $nwr 94" \
		"bd_stat count and writes, the limit left, after the other 6"
	echo 1 >/sys/block/$h/writeback_limit
	expect_errno EIO /sys/block/$h/writeback page_indexes=17-19
	nw=$((nw + 1)) nwr=$((nwr + 1))
	expect_eq "$(nsel $h '($1 == 18 || $1 == 19) && $3 ~ /w/') $(cat /sys/block/$h/writeback_limit)" "1 0" \
		"pages 18 and 19 written back at limit 1, the limit"
	echo 0 >/sys/block/$h/writeback_limit_enable
	echo page_index=52 >/sys/block/$h/writeback
	nw=$((nw + 1)) nwr=$((nwr + 1))
	expect_eq "$(flags $h 52) $(cat /sys/block/$h/writeback_limit)" ".w.... 0" \
		"page 52 written back with the limit disabled, the limit"
	expect_eq "$(bd $h 1) $(bd $h 3)" "$nw $nwr" "bd_stat count and writes"
	expect_eq "$(devhash $h)" "$(imghash $h)" "data after the limited writebacks"

	# One write in flight at a time, then 64.
	echo 1 >/sys/block/$h/writeback_batch_size
	put $h 80 8 /tmp/random
	echo page_indexes=80-87 >/sys/block/$h/writeback
	echo 64 >/sys/block/$h/writeback_batch_size
	put $h 256 128 /tmp/big
	echo page_indexes=256-383 >/sys/block/$h/writeback
	nw=$((nw + 136)) nwr=$((nwr + 136))
	expect_eq "$(bd $h 1) $(bd $h 3) $(nsel $h '$3 ~ /w/')" "$nw $nwr $nw" \
		"bd_stat count and writes, pages written back, after batches of 1 and 64"
	expect_eq "$(devhash $h)" "$(imghash $h)" "data after batches of 1 and 64"

	# Reset frees every block and lets the backing device go: it can be
	# opened (exclusively) again.
	echo 1 >/sys/block/$h/reset
	expect_eq "$(bd $h) $(cat /sys/block/$h/backing_dev)" "$(bdis 0 0 0) none" "bd_stat, backing_dev after reset"
	expect_errno EINVAL /sys/block/$h/writeback huge
	echo lz4 >/sys/block/$h/comp_algorithm
	init_dev $h "${LOOP[main]}"
	expect_eq "$(bd $h)" "$(bdis 0 0 0)" "bd_stat initialised again"
	truncate -s 0 /tmp/wb-img.$h
	truncate -s $SIZE /tmp/wb-img.$h
	put $h 0 1 /tmp/random 5
	echo page_index=0 >/sys/block/$h/writeback
	expect_eq "$(bd $h)" "$(bdis 1 0 1)" "bd_stat after reset and a writeback"
	expect_eq "$(devhash $h)" "$(imghash $h)" "data after reset and a writeback"

	# No backing device: ENODEV, which 7.3 checks before the command.
	add_dev h2 hzram
	init_dev $h2
	for v in huge bogus page_index=$NR; do
		expect_errno ENODEV /sys/block/$h2/writeback $v
	done
	# A full backing device (8 pages; the first is used too, as in 7.3).
	echo 1 >/sys/block/$h2/reset
	mkloop small $((8 * 4096))
	init_dev $h2 "${LOOP[small]}"
	truncate -s $SIZE /tmp/wb-img.$h2
	put $h2 0 16 /tmp/random
	expect_errno ENOSPC /sys/block/$h2/writeback huge
	expect_eq "$(bd $h2) $(nsel $h2 '$3 ~ /w/')" "$(bdis 8 0 8) 8" "bd_stat, pages written back when full"
	expect_eq "$(devhash $h2)" "$(imghash $h2)" "data with the backing device full"
	p=$(sel $h2 '$3 ~ /w/' | cut -d' ' -f1)
	put $h2 "$p" 1 /tmp/big
	expect_eq "$(bd $h2 1)" 7 "bd_stat count after a written-back page was overwritten"
	echo page_index=$p >/sys/block/$h2/writeback
	expect_errno ENOSPC /sys/block/$h2/writeback huge
	expect_eq "$(bd $h2 1) $(bd $h2 3) $(flags $h2 $p)" "8 9 .wh..." "bd_stat, page $p written back to the freed block"
	expect_eq "$(devhash $h2)" "$(imghash $h2)" "data after the block was used again"

	# compressed_writeback: text and random pages, every one written back.
	add_dev h3 hzram
	mkloop comp $((16 << 20))
	echo 1 >/sys/block/$h3/compressed_writeback
	init_dev $h3 "${LOOP[comp]}"
	expect_errno EBUSY /sys/block/$h3/compressed_writeback 0
	truncate -s $SIZE /tmp/wb-img.$h3
	put $h3 0 24 /tmp/text
	put $h3 24 8 /tmp/random
	echo page_indexes=0-31 >/sys/block/$h3/writeback
	expect_eq "$(bd $h3) $(nsel $h3 '$3 ~ /w/')" "$(bdis 32 0 32) 32" "bd_stat, pages written back compressed"
	expect_eq "$(mm $h3 1) $(mm $h3 2) $(mm $h3 8)" "$((32 * 4096)) 0 0" \
		"orig_data_size, compr_data_size, huge_pages, all written back compressed"
	expect_eq "$(devhash $h3)" "$(imghash $h3)" "data written back compressed"
	expect_eq "$(bd $h3)" "$(bdis 32 32 32)" "bd_stat after all was read"
	dd if=/dev/$h3 of=/tmp/wb-s1 bs=512 skip=$((3 * 8 + 5)) count=1 iflag=direct status=none
	dd if=/tmp/wb-img.$h3 of=/tmp/wb-s2 bs=512 skip=$((3 * 8 + 5)) count=1 status=none
	cmp /tmp/wb-s1 /tmp/wb-s2 || fail "512 bytes read of a page written back compressed"
	expect_eq "$(cat /sys/block/$h3/compressed_writeback)" 1 "compressed_writeback"
}

# With hzramd: staged pages are not written back; once stored they can
# be, and reads of them while hzramd decodes reads come back whole.
test_writeback_with_hzramd() {
	local hits r0 hold t0 took left
	DEVS='' LOOPS=''
	trap 'release_commits
		[ -z "$HZRAMD_PID" ] || { kill -9 $HZRAMD_PID; wait $HZRAMD_PID; }
		cleanup' EXIT
	# The commit waits 3 s (5 under lockdep and KASAN): the pages stay
	# staged through the writebacks. If fewer are staged after them and
	# they took as long as the hold (a guest short of CPU time), the hold
	# may have ended first: again on a new device (this one's bd_stat
	# counts what was written back), the commit held longer (at most 40
	# s: offload_every_page's batches wait 60 s). A drop within the hold
	# is a failure (below).
	for hold in $((SLOW ? 5000 : 3000)) 20000 40000; do
		add_dev DEV hzram
		[ -e /sys/block/$DEV/backing_dev ] || fail "hzram has no backing_dev"
		mkloop bd $((16 << 20))
		init_dev $DEV "${LOOP[bd]}"
		offload_every_page $DEV
		: >$LOG
		start_hzramd
		hold_next_commit $hold
		hits=$(cat $DBG/hzram/delay_commit_hits)
		t0=$(now_ms)
		dd if=/tmp/text of=/dev/$DEV bs=96K count=1 oflag=direct status=none
		echo all >/sys/block/$DEV/idle
		for v in page_indexes=0-23 page_index=5 idle type=idle huge; do
			echo "$v" >/sys/block/$DEV/writeback
		done
		left=$(off_field 3)
		took=$(($(now_ms) - t0))
		[ "$left" != 24 ] && [ $took -ge $hold ] || break
		echo "# $left pages staged after the writebacks, which took $took ms with the commit held $hold ms: again, held longer"
		wait_unstaged
		stop_hzramd
		HZRAMD_PID=
	done
	# Else the writebacks did not meet staged pages: nothing was tested.
	expect_eq "$left" 24 "pages still staged after the writebacks"
	expect_eq "$(bd $DEV) $(nsel $DEV '$3 ~ /w/')" "$(bdis 0 0 0) 0" "bd_stat, pages written back while staged"
	wait_unstaged
	expect_eq $(($(cat $DBG/hzram/delay_commit_hits) - hits)) 1 "commits held"
	echo 0 >$DBG/hzram/delay_commit
	[ "$(off_field 4)" -gt 0 ] || fail "no page went through hzramd"
	echo page_indexes=0-11 >/sys/block/$DEV/writeback
	expect_eq "$(bd $DEV) $(sel $DEV '$3 ~ /w/')" "$(bdis 12 0 12) 0 1 2 3 4 5 6 7 8 9 10 11 " \
		"bd_stat, pages written back once stored"
	# Pages 12-23 through hzramd's decoder, then all 24 in one read.
	r0=$(off_field 23)
	dd if=/dev/$DEV of=/tmp/wb-r1 bs=48K skip=1 count=1 iflag=direct status=none
	dd if=/tmp/text of=/tmp/wb-r2 bs=48K skip=1 count=1 status=none
	cmp /tmp/wb-r1 /tmp/wb-r2 || fail "pages 12-23 read back differ"
	[ "$(off_field 23)" -gt "$r0" ] || fail "no page read was decoded by hzramd"
	dd if=/dev/$DEV bs=96K count=1 iflag=direct status=none | cmp - /tmp/text ||
		fail "data read back differs"
	expect_eq "$(bd $DEV)" "$(bdis 12 12 12)" "bd_stat after the reads"
	stop_hzramd
	HZRAMD_PID=
	dd if=/dev/$DEV bs=96K count=1 iflag=direct status=none | cmp - /tmp/text ||
		fail "data read back after hzramd exited differs"
}

# A block that reads back other than it was written fails the read of its
# page (EIO, failed_reads), and only that page; a block written back
# compressed too. Another hzram device cannot be the backing device.
test_writeback_bad_blocks() {
	local h c v p
	DEVS='' LOOPS=''
	trap cleanup EXIT
	add_dev h hzram
	add_dev v hzram
	init_dev $v
	expect_errno EINVAL /sys/block/$h/backing_dev /dev/$v
	for c in 0 1; do
		add_dev h hzram
		mkloop bad$c $((16 << 20))
		echo $c >/sys/block/$h/compressed_writeback
		init_dev $h "${LOOP[bad$c]}"
		# Text: compressed, so that compressed_writeback writes it so.
		put $h 0 3 /tmp/text
		# Blocks 0, 1 and 2 in that order, on a fresh backing device.
		for p in 0 1 2; do echo page_index=$p >/sys/block/$h/writeback; done
		expect_eq "$(bd $h)" "$(bdis 3 0 3)" "compressed_writeback $c: bd_stat"
		# Block 1 changed behind the device's back (one byte).
		printf x | dd of=/tmp/wb-loop-bad$c bs=1 seek=$((4096 + 100)) conv=notrunc status=none
		echo 3 >/proc/sys/vm/drop_caches
		dd if=/dev/$h of=/tmp/wb-p0 bs=4096 count=1 iflag=direct status=none
		dd if=/tmp/text of=/tmp/wb-t0 bs=4096 count=1 status=none
		cmp /tmp/wb-p0 /tmp/wb-t0 || fail "compressed_writeback $c: page 0"
		if dd if=/dev/$h of=/dev/null bs=4096 skip=1 count=1 iflag=direct status=none; then
			fail "compressed_writeback $c: page 1, its block changed, read without error"
		fi
		expect_eq "$(io_field $h 1)" 1 "compressed_writeback $c: failed reads"
		dd if=/dev/$h of=/tmp/wb-p2 bs=4096 skip=2 count=1 iflag=direct status=none
		dd if=/tmp/text of=/tmp/wb-t2 bs=4096 skip=2 count=1 status=none
		cmp /tmp/wb-p2 /tmp/wb-t2 || fail "compressed_writeback $c: page 2"
		# Rewritten, page 1 reads again.
		put $h 1 1 /tmp/text 1
		dd if=/dev/$h of=/tmp/wb-p1 bs=4096 skip=1 count=1 iflag=direct status=none
		dd if=/tmp/text of=/tmp/wb-t1 bs=4096 skip=1 count=1 status=none
		cmp /tmp/wb-p1 /tmp/wb-t1 || fail "compressed_writeback $c: page 1 rewritten"
		expect_eq "$(bd $h 1)" 2 "compressed_writeback $c: blocks held"
	done
}

# Writes to the backing device that fail (a loop device on a file in a
# full tmpfs: ENOSPC from the loop driver) leave their pages in memory,
# release their blocks and give their page of the limit back; the other
# pages are written back.
test_writeback_failed_writes() {
	local h n w
	DEVS='' LOOPS=''
	# Not /tmp/wb-*, which cleanup removes.
	trap 'cleanup; umount /tmp/wbfull; rmdir /tmp/wbfull' EXIT
	mkdir -p /tmp/wbfull
	mount -t tmpfs -o size=32k tmpfs /tmp/wbfull
	truncate -s 16M /tmp/wbfull/bd
	n=$(losetup -f)
	losetup "$n" /tmp/wbfull/bd
	LOOPS="$n"
	add_dev h hzram
	init_dev $h "$n"
	truncate -s $SIZE /tmp/wb-img.$h
	put $h 0 16 /tmp/random
	echo 100 >/sys/block/$h/writeback_limit
	echo 1 >/sys/block/$h/writeback_limit_enable
	echo 1 >/sys/block/$h/writeback_batch_size
	if echo huge >/sys/block/$h/writeback 2>/dev/null; then
		fail "writeback to a full backing device succeeded"
	fi
	w=$(nsel $h '$3 ~ /w/')
	[ "$w" -lt 16 ] || fail "all 16 pages written back to 32 KiB"
	expect_eq "$(bd $h 1) $(bd $h 3)" "$w $w" "bd_stat: blocks held, writes, with $w pages written back"
	expect_eq "$(cat /sys/block/$h/writeback_limit)" $((100 - w)) "the limit left"
	expect_eq "$(mm $h 8)" $((16 - w)) "huge pages in memory"
	expect_eq "$(devhash $h)" "$(imghash $h)" "data after the failed writes"
}

# dmsetup without udev: it makes /dev/mapper's nodes itself.
dms() {
	DM_DISABLE_UDEV=1 dmsetup --noudevsync "$@"
}

# The backing device fails (dm-flakey over a loop device, switched in and
# out with a table reload: while it is in, every read and write fails): a
# read of a written-back page fails with EIO and is counted, and its page
# is not lost; pages in memory read as written; a writeback fails and
# leaves its pages in memory, with their blocks released. Once the device
# is back, every page reads as written.
test_writeback_device_faults() {
	local h sectors=$((16 << 11)) linear flakey
	DEVS='' LOOPS=''
	modprobe dm-flakey 2>/dev/null || skip "no dm-flakey in this kernel"
	mkloop fl $((16 << 20))
	# The device first (it lets the dm device go), then dm (it lets the
	# loop device go), then the loop device.
	trap 'for d in $DEVS; do remove_dev $d || true; done; DEVS=
		dms remove hzflaky 2>/dev/null || true; cleanup' EXIT
	linear="0 $sectors linear ${LOOP[fl]} 0"
	flakey="0 $sectors flakey ${LOOP[fl]} 0 0 1"	# up 0 s, down 1 s: always down
	dms create hzflaky --table "$linear"
	add_dev h hzram
	init_dev $h /dev/mapper/hzflaky
	truncate -s $SIZE /tmp/wb-img.$h
	put $h 0 16 /tmp/text
	put $h 16 8 /tmp/random
	echo page_indexes=0-7 >/sys/block/$h/writeback
	expect_eq "$(bd $h)" "$(bdis 8 0 8)" "bd_stat after writing 8 pages back"
	dms load hzflaky --table "$flakey"
	dms resume hzflaky
	if get $h 3 2>/dev/null; then
		fail "a written-back page read without error from a failing device"
	fi
	expect_eq "$(io_field $h 1)" 1 "failed reads"
	[[ "$(flags $h 3)" == *w* ]] || fail "page 3 not written back after the failed read: $(flags $h 3)"
	get $h 10 || fail "a page in memory did not read"
	if echo page_indexes=8-15 >/sys/block/$h/writeback 2>/dev/null; then
		fail "writeback to a failing device succeeded"
	fi
	expect_eq "$(nsel $h '$3 ~ /w/') $(bd $h 1)" "8 8" "pages and blocks written back after the failed writeback"
	# Written back or not, a page counts in orig_data_size, as in zram.
	expect_eq "$(mm $h 1) $(mm $h 8)" "$((24 * 4096)) 8" \
		"orig_data_size, huge_pages after the failed writeback"
	dms load hzflaky --table "$linear"
	dms resume hzflaky
	expect_eq "$(devhash $h)" "$(imghash $h)" "data once the device is back"
	expect_eq "$(io_field $h 1)" 1 "failed reads once the device is back"
}

# As swap: pages swapped out, written back, then swapped in again from the
# backing device, each checked (tests/kselftest/swap_verify.c).
test_writeback_swapped_pages() {
	local h pid rc=0
	DEVS='' LOOPS=''
	# (swapoff exits 4, a skip, when it is off already: the trap runs
	# under set -e.)
	trap 'swapoff /dev/$h 2>/dev/null || true
		[ -z "${pid:-}" ] || kill $pid 2>/dev/null || true
		rm -f /tmp/wb-go; cleanup' EXIT
	add_dev h hzram
	mkloop swap $((32 << 20))
	init_dev $h "${LOOP[swap]}"
	mkswap /dev/$h >/dev/null
	swapon /dev/$h
	rm -f /tmp/wb-go
	swap_verify -p -w /tmp/wb-go $((16 / SHRINK + 1)) 1 >/tmp/wb-sv 2>&1 &
	pid=$!
	while [ ! -e /tmp/wb-go ]; do
		kill -0 $pid 2>/dev/null || { cat /tmp/wb-sv; fail "swap_verify ended early"; }
		sleep 0.1
	done
	[ "$(mm $h 1)" -gt 0 ] || fail "nothing swapped out"
	echo all >/sys/block/$h/idle
	echo idle >/sys/block/$h/writeback
	[ "$(bd $h 1)" -gt 0 ] || fail "no swapped-out page written back"
	rm /tmp/wb-go
	wait $pid || rc=$?
	pid=
	cat /tmp/wb-sv
	expect_eq "$rc" 0 "swap_verify's exit"
	[ "$(bd $h 2)" -gt 0 ] || fail "no page swapped in from the backing device"
	swapoff /dev/$h
	# The swap header, page 0, written back too.
	expect_eq "$(sel $h 1) $(bd $h 1)" "0  1" "pages left after swapoff, blocks held"
}

# A regular file as backing store (hzram's own, beyond zram): on ext4 on
# a loop device. Held while in use (not written, truncated or removed;
# not taken by a second device); a file with holes refused; the data
# back whole through its blocks; let go at reset.
test_writeback_to_a_file() {
	local h h2 fs=/tmp/wbfs f i n
	DEVS='' LOOPS=''
	trap 'cleanup; umount /tmp/wbfs 2>/dev/null || true; rmdir /tmp/wbfs 2>/dev/null || true' EXIT
	mkloop fs $((32 << 20))
	mkfs.ext4 -q -F "${LOOP[fs]}"
	mkdir -p $fs
	mount -t ext4 "${LOOP[fs]}" $fs
	f=$fs/backing
	add_dev h hzram
	add_dev h2 hzram
	truncate -s 4M $fs/sparse
	expect_errno EINVAL /sys/block/$h/backing_dev $fs/sparse
	dd if=/dev/zero of=$fs/half bs=4096 count=4 status=none
	truncate -s 32K $fs/half	# pages 4-7 a hole
	expect_errno EINVAL /sys/block/$h/backing_dev $fs/half
	expect_errno EISDIR /sys/block/$h/backing_dev $fs
	# Written, not only allocated: blocks that map. 4 MiB; 1 MiB under
	# lockdep and KASAN.
	dd if=/dev/zero of=$f bs=1M count=$((SLOW ? 1 : 4)) status=none
	echo "$f" >/sys/block/$h/backing_dev
	expect_eq "$(cat /sys/block/$h/backing_dev)" "$f" "backing_dev"
	expect_errno EBUSY /sys/block/$h2/backing_dev "$f"
	# Held as a swap file is.
	if echo x >>$f 2>/dev/null; then fail "the backing file was written"; fi
	if truncate -s 1M $f 2>/dev/null; then fail "the backing file was truncated"; fi
	if rm -f $f 2>/dev/null && [ ! -e $f ]; then fail "the backing file was removed"; fi
	init_dev $h
	truncate -s $SIZE /tmp/wb-img.$h
	put $h 0 8 /tmp/random
	put $h 8 24 /tmp/text
	echo all >/sys/block/$h/idle
	echo idle >/sys/block/$h/writeback
	expect_eq "$(bd $h)" "$(bdis 32 0 32)" "bd_stat after writeback to a file"
	sync
	echo 3 >/proc/sys/vm/drop_caches
	expect_eq "$(devhash $h)" "$(imghash $h)" "data read back from the file"
	expect_eq "$(bd $h 2)" 32 "pages read from the file"
	dd if=/dev/$h of=/tmp/wb-s1 bs=512 skip=$((9 * 8 + 1)) count=1 iflag=direct status=none
	dd if=/tmp/wb-img.$h of=/tmp/wb-s2 bs=512 skip=$((9 * 8 + 1)) count=1 status=none
	cmp /tmp/wb-s1 /tmp/wb-s2 || fail "512 bytes of a page written back to a file"
	put $h 3 1 /tmp/text
	discard $h 4
	expect_eq "$(bd $h 1)" 30 "blocks held after an overwrite and a discard"
	expect_eq "$(devhash $h)" "$(imghash $h)" "data after an overwrite and a discard"
	# Each of its pages usable: written back and read again.
	n=$((SLOW ? 2 : 8))	# 512 KiB pieces of the file
	echo 1 >/sys/block/$h/reset
	echo lz4 >/sys/block/$h/comp_algorithm
	echo "$f" >/sys/block/$h/backing_dev
	echo 8M >/sys/block/$h/disksize
	for ((i = 0; i < n; i++)); do
		dd if=/tmp/big of=/dev/$h bs=512K seek=$i count=1 oflag=direct status=none
	done
	echo huge >/sys/block/$h/writeback
	expect_eq "$(bd $h)" "$(bdis $((n * 128)) 0 $((n * 128)))" "bd_stat with the file full"
	dd if=/tmp/random of=/dev/$h bs=4096 seek=1100 count=1 oflag=direct status=none
	expect_errno ENOSPC /sys/block/$h/writeback page_index=1100
	for ((i = 0; i < n; i++)); do
		dd if=/dev/$h bs=512K skip=$i count=1 iflag=direct status=none | cmp - /tmp/big ||
			fail "512 KiB at $i read back from the file differ"
	done
	# Let go at reset: writable, removable, and the other device may have it.
	echo 1 >/sys/block/$h/reset
	expect_eq "$(cat /sys/block/$h/backing_dev)" none "backing_dev after reset"
	echo "$f" >/sys/block/$h2/backing_dev
	echo 1 >/sys/block/$h2/reset
	echo x >>$f || fail "the backing file not writable after reset"
	rm $f || fail "the backing file not removable after reset"
}

# A backing file in many pieces (ext4 with 4 KiB blocks, its free space
# cut into single blocks), and one on ext4 with 1 KiB blocks (four to a
# page): every page of each written back and read again, whole; held
# against swapon, and swap's file refused.
test_writeback_to_file_extents() {
	local h fs=/tmp/wbfs f i n
	DEVS='' LOOPS=''
	trap 'swapoff /tmp/wbfs/swap 2>/dev/null || true; cleanup
		umount /tmp/wbfs 2>/dev/null || true; rmdir /tmp/wbfs 2>/dev/null || true' EXIT
	mkdir -p $fs
	mkloop fs4 $((4 << 20))
	mkfs.ext4 -q -F -b 4096 "${LOOP[fs4]}"
	mount -t ext4 "${LOOP[fs4]}" $fs
	# Fill it with one-block files (printf: no process each, which costs
	# under KASAN), free every other one.
	i=0
	while printf '%4096s' '' 2>/dev/null >$fs/f$i; do
		i=$((i + 1))
	done
	rm -f $(for ((n = 0; n < i; n += 2)); do echo $fs/f$n; done)
	sync
	f=$fs/backing
	dd if=/dev/zero of=$f bs=4096 count=256 status=none
	sync
	n=$(filefrag $f | awk '{ print $2 }')
	[ "$n" -gt 16 ] || fail "the backing file in $n pieces only"
	add_dev h hzram
	echo "$f" >/sys/block/$h/backing_dev
	echo 1M >/sys/block/$h/disksize
	for i in 0 1; do
		dd if=/tmp/big of=/dev/$h bs=512K seek=$i count=1 oflag=direct status=none
	done
	echo huge >/sys/block/$h/writeback
	expect_eq "$(bd $h)" "$(bdis 256 0 256)" "bd_stat, the file in $n pieces full"
	for i in 0 1; do
		dd if=/dev/$h bs=512K skip=$i count=1 iflag=direct status=none | cmp - /tmp/big ||
			fail "512 KiB at $i read back from the file in pieces differ"
	done
	echo 1 >/sys/block/$h/reset
	# Swap and hzram hold the same file each in turn, never both.
	mkswap $f >/dev/null
	echo "$f" >/sys/block/$h/backing_dev
	if swapon $f 2>/dev/null; then fail "swapon of a backing file"; fi
	echo 1 >/sys/block/$h/reset
	swapon $f
	expect_errno EBUSY /sys/block/$h/backing_dev "$f"
	if echo x >>$f 2>/dev/null; then fail "swap's file written after hzram refused it"; fi
	swapoff $f
	umount $fs
	# 1 KiB blocks.
	mkloop fs1 $((8 << 20))
	mkfs.ext4 -q -F -b 1024 "${LOOP[fs1]}"
	mount -t ext4 "${LOOP[fs1]}" $fs
	dd if=/dev/zero of=$f bs=4096 count=256 status=none
	echo "$f" >/sys/block/$h/backing_dev
	echo 1M >/sys/block/$h/disksize
	for i in 0 1; do
		dd if=/tmp/big of=/dev/$h bs=512K seek=$i count=1 oflag=direct status=none
	done
	echo huge >/sys/block/$h/writeback
	expect_eq "$(bd $h)" "$(bdis 256 0 256)" "bd_stat, the file on 1 KiB blocks full"
	for i in 0 1; do
		dd if=/dev/$h bs=512K skip=$i count=1 iflag=direct status=none | cmp - /tmp/big ||
			fail "512 KiB at $i read back from the file on 1 KiB blocks differ"
	done
	echo 1 >/sys/block/$h/reset
	# Not on tmpfs (no block device), nor removed before it was named.
	expect_errno EINVAL /sys/block/$h/backing_dev /tmp/random
	exec 3<>$f
	rm $f
	expect_errno ENOENT /sys/block/$h/backing_dev /proc/self/fd/3
	exec 3>&-
}

# The tests named, or all: run-guest runs the comparison with zram in the
# swap guests (the only ones on Debian's 6.12 cloud kernel, whose zram
# has writeback) and the others in the main guests.
make_data
if [ $# -gt 0 ]; then
	ktap_main "$@"
else
	ktap_main test_writeback_as_zram_does test_writeback_hzram \
		test_writeback_with_hzramd test_writeback_bad_blocks \
		test_writeback_failed_writes test_writeback_swapped_pages \
		test_writeback_to_a_file test_writeback_to_file_extents \
		test_writeback_device_faults
fi
