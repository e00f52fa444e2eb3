#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# systemd-analyze verify on one of our units, with the /usr/sbin/PROGRAM
# of its Exec lines pointed at the PROGRAM just built (verify checks that
# the program exists), each FILE beside it (another unit; FILE:DEST puts
# it at DEST, such as UNIT.d/NAME.conf for a drop-in), and the man pages
# of its Documentation= lines taken from Documentation/man (verify checks
# that they exist). Fails on any complaint about these files, warnings
# included; exits 77 (skipped) where systemd-analyze is missing.
# Usage: systemd_unit_test.sh UNIT-FILE PROGRAM [FILE[:DEST]...]
set -eu
command -v systemd-analyze >/dev/null || { echo "systemd-analyze not found: skipped"; exit 77; }
top=$(cd "$(dirname "$0")/../.." && pwd)
unit_file=$1 program=$2
shift 2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
unit=$dir/$(basename "$unit_file")
sed -E "s#^(Exec[A-Za-z]*=[-@:+!]*)/usr/sbin/$(basename "$program")( |\$)#\1$program\2#" \
	"$unit_file" >"$unit"
grep -qE "^Exec[A-Za-z]*=[-@:+!]*$program( |$)" "$unit" ||
	{ echo "$unit_file: no Exec line runs /usr/sbin/$(basename "$program")"; exit 1; }
names=$(basename "$unit_file" .service)
for f in "$@"; do
	dest=$(basename "$f")
	case $f in *:*) dest=${f#*:} f=${f%%:*} ;; esac
	mkdir -p "$(dirname "$dir/$dest")"
	cp "$f" "$dir/$dest"
	names="$names
$(basename "$dest")"
done
# The man pages, where man is installed (else verify cannot look).
man=--man=no
if command -v man >/dev/null; then
	man=--man=yes
	for page in "$top"/Documentation/man/*.[1-8]; do
		[ -e "$page" ] || continue
		mkdir -p "$dir/man/man${page##*.}"
		cp "$page" "$dir/man/man${page##*.}/"
	done
	export MANPATH="$dir/man"
fi
status=0
out=$(systemd-analyze verify "$man" "$unit" 2>&1) || status=$?
# Complaints about other units of this machine are not the unit's.
complaints=$(printf '%s\n' "$out" | grep -F "$names" || true)
[ -z "$complaints" ] && [ $status = 0 ] && { echo "$unit_file: verified"; exit 0; }
printf '%s\n' "$out"
exit 1
