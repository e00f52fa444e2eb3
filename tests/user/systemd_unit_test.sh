#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# systemd-analyze verify on hzramd's unit, with ExecStart pointed at the
# hzramd just built (verify checks that the program exists). Fails on any
# complaint about the unit, warnings included; exits 77 (skipped) where
# systemd-analyze is missing.
# Usage: systemd_unit_test.sh UNIT-FILE HZRAMD
set -eu
command -v systemd-analyze >/dev/null || { echo "systemd-analyze not found: skipped"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
unit=$dir/$(basename "$1")
sed "s|^ExecStart=/usr/sbin/hzramd |ExecStart=$2 |" "$1" >"$unit"
grep -q "^ExecStart=$2 " "$unit" || { echo "$1: no ExecStart=/usr/sbin/hzramd line"; exit 1; }
status=0
out=$(systemd-analyze verify "$unit" 2>&1) || status=$?
# Complaints about other units of this machine are not the unit's.
complaints=$(printf '%s\n' "$out" | grep -F "$(basename "$1" .service)" || true)
[ -z "$complaints" ] && [ $status = 0 ] && { echo "$1: verified"; exit 0; }
printf '%s\n' "$out"
exit 1
