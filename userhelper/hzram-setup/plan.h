// SPDX-License-Identifier: GPL-2.0
//
// What hzram-setup does to a device, as a list of steps: the same list is
// printed by --dry-run and carried out (system.cc). Also the readers of
// /proc/swaps and /proc/self/mountinfo that tell whether a device is in use.
#ifndef HZRAM_SETUP_PLAN_H
#define HZRAM_SETUP_PLAN_H

#include <string>
#include <vector>

#include "config.h"

namespace hzsetup {

struct Step {
  enum class Kind {
    kEnsureDevice,  // load the module and hot_add until /dev/hzramN exists
    kWrite,         // write value to the sysfs file path
    kRun,           // run argv (looked up in PATH)
    kMkdir,         // create the directory path and its parents
  };
  Kind kind = Kind::kRun;
  std::string path, value;
  std::vector<std::string> argv;
  // A write of the maintenance that is made at its first run of each day
  // only (UTC; the day of the last one is kept in kStateDir).
  bool daily = false;
};

// Where --maintain keeps the day it last refilled each writeback limit.
inline constexpr const char* kStateDir = "/run/hzram-setup";

// Setting @d up: the device, comp_algorithm and its algorithm_params (if
// set), each recompression algorithm's recomp_algorithm and
// algorithm_params, backing_dev and the writeback limit (if set),
// mem_limit (if not 0), disksize, then mkswap and swapon, or mkfs.TYPE
// (-q for ext2, ext3 and ext4), and for a mount point mkdir and mount.
std::vector<Step> SetupSteps(const Device& d);

// The periodic maintenance of @d (hzram-setup --maintain, from
// hzram-setup-maintain.timer): pages idle for recompress-idle-age
// recompressed, then pages idle for writeback-idle-age written back, and
// the writeback limit refilled once a day. Empty when none is configured.
std::vector<Step> MaintainSteps(const Device& d);

// Undoing it: swapoff or umount (a real reset skips them when the device
// is not swap or not mounted), then reset.
std::vector<Step> ResetSteps(const Device& d);

// A step as one line, a shell command where it is one:
//   "echo 4294967296 > /sys/block/hzram0/disksize", "swapon -p 100 ...".
std::string FormatStep(const Step& s);

// "# hzram0: swap, 4096 MiB (min(ram / 2, 4096)), lz4, priority 100, options discard"
std::string DescribeDevice(const Device& d);

// The --dry-run output for @devices: a header line with ram, then per
// device its description and steps (or why it is disabled); for a reset,
// from the last device to the first, as ResetDevices goes.
enum class PlanKind { kSetUp, kReset, kMaintain };
std::string FormatPlan(const std::vector<Device>& devices, std::uint64_t ram_mib, PlanKind kind);

// /proc/swaps: the file names of the active swap areas, unescaped.
std::vector<std::string> ParseSwaps(const std::string& text);

struct Mount {
  unsigned major = 0, minor = 0;
  std::string mount_point;  // unescaped
};
// /proc/self/mountinfo: each mount's device number and mount point.
std::vector<Mount> ParseMountinfo(const std::string& text);

}  // namespace hzsetup

#endif  // HZRAM_SETUP_PLAN_H
