// SPDX-License-Identifier: GPL-2.0
//
// Carrying the steps of plan.h out on this machine: the module, sysfs,
// mkswap, swapon, mkfs, mount, and their undoing.
#ifndef HZRAM_SETUP_SYSTEM_H
#define HZRAM_SETUP_SYSTEM_H

#include <vector>

#include "config.h"

namespace hzsetup {

// Sets each device up, in order. A device already initialised (in use)
// is refused and left alone; one that fails half way is reset. Prints a
// line per device on stdout, errors on stderr; returns how many failed.
int SetUpDevices(const std::vector<Device>& devices);

// Undoes it, in reverse order: swapoff or umount as the configuration
// says, then reset. A device in use otherwise (mounted elsewhere, swap
// where a file system is configured, held open) is refused and left
// alone. Returns how many failed.
int ResetDevices(const std::vector<Device>& devices);

// The periodic maintenance (MaintainSteps()) of each device set up:
// recompression and writeback of idle pages, the daily writeback limit.
// Returns how many failed.
int MaintainDevices(const std::vector<Device>& devices);

}  // namespace hzsetup

#endif  // HZRAM_SETUP_SYSTEM_H
