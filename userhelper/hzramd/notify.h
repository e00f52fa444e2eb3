// SPDX-License-Identifier: GPL-2.0
// systemd's service notification protocol (sd_notify(3)), without
// libsystemd: hzramd locks all its memory, and libsystemd and the five
// libraries it brings (libgcrypt, libzstd, liblzma, libgpg-error, libcap)
// are 3.3 MiB, for two calls.
#ifndef HZRAMD_NOTIFY_H
#define HZRAMD_NOTIFY_H

#include <cstdint>
#include <string_view>

namespace hzramd {

// Send @state (lines of "NAME=value") to the socket in $NOTIFY_SOCKET (a
// path, or an abstract name after '@'), as sd_notify(0, @state) does.
// Returns 1 if sent, 0 if there is no such socket to send to, or a
// negative errno.
int Notify(std::string_view state);

// systemd's watchdog interval for this process, as sd_watchdog_enabled(0,
// @usec) finds it: $WATCHDOG_USEC, if it is a positive number and
// $WATCHDOG_PID is unset or this process's (and under 2^63 ns: systemd's
// "infinity" is none). Returns true and sets *@usec if so.
bool WatchdogEnabled(std::uint64_t* usec);

}  // namespace hzramd

#endif  // HZRAMD_NOTIFY_H
