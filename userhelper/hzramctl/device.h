// SPDX-License-Identifier: GPL-2.0
//
// hzram devices as hzramctl sees them: finding a device from a name, what
// it reports (one DeviceInfo per device, from a DeviceInfoSource), and the
// sysfs writes that set it up. Everything under a root directory, "" for
// the real /sys, /proc and /dev (the tests give a fake tree).
#ifndef HZRAMCTL_DEVICE_H
#define HZRAMCTL_DEVICE_H

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hzramctl {

// The control class of the hzram module (Documentation/admin-guide.rst).
inline constexpr const char* kControlClass = "/sys/class/hzram-control";

// A device that exists.
struct DeviceRef {
  std::string name;   // as NAME shows it: /dev/hzramN, or the path given
  std::string kname;  // hzramN
  int id = -1;        // N
  dev_t devno = 0;
};

// mm_stat's first seven fields (zramctl reads those).
struct MemStat {
  std::uint64_t orig_data_size = 0;
  std::uint64_t compr_data_size = 0;
  std::uint64_t mem_used_total = 0;
  std::uint64_t mem_limit = 0;
  std::uint64_t mem_used_max = 0;
  std::uint64_t same_pages = 0;
  std::uint64_t pages_compacted = 0;
};

// What offload_stat says about the helper (include/uapi/linux/hzram.h,
// enum hzram_offload_stat_field).
struct OffloadStat {
  bool helper = false;              // HZRAM_OFF_HELPER: a helper is attached
  std::uint64_t pages_helper = 0;   // HZRAM_OFF_PAGES_HELPER
  // Pages of write batches handed to the helper that the module compressed
  // itself (HZRAM_OFF_KERNEL_TIMEOUT + KERNEL_GONE + KERNEL_REFUSED): the
  // helper did not commit them in offload_timeout_ms, detached or died
  // holding them (or offload off or reset took them back), or returned
  // records that were refused, failed verification or said "not encoded".
  // Not HZRAM_OFF_KERNEL_SMALL (batches too small to send), nor writes
  // never staged (staging full, not lz4). Nothing if the module's
  // offload_stat is too short to say.
  std::optional<std::uint64_t> fallbacks;
};

// One device's state; a field the source could not read stays empty, and
// so does its column.
struct DeviceInfo {
  std::string name;  // DeviceRef::name
  int id = -1;
  std::optional<std::uint64_t> disksize;   // bytes; 0: not set up
  std::optional<std::string> algorithm;    // the selected one
  std::optional<std::uint64_t> streams;    // max_comp_streams
  std::optional<MemStat> mm;
  std::optional<std::string> mountpoint;   // "[SWAP]", a mount point, or nothing
  std::optional<std::string> offload;      // off, auto or on
  std::optional<OffloadStat> offload_stat;
  std::optional<std::uint64_t> written_back;  // bytes on the backing device (bd_stat)
  std::optional<std::uint64_t> recompressed;  // pages (recomp_stat)
};

// Which DeviceInfo fields a caller needs (a source may fill more).
enum Field : unsigned {
  kFieldDisksize = 1u << 0,
  kFieldAlgorithm = 1u << 1,
  kFieldStreams = 1u << 2,
  kFieldMemStat = 1u << 3,
  kFieldMountpoint = 1u << 4,
  kFieldOffload = 1u << 5,
  kFieldOffloadStat = 1u << 6,
  kFieldBdStat = 1u << 7,
  kFieldRecompStat = 1u << 8,
};

// Sysfs access under a root.
class Sysfs {
 public:
  explicit Sysfs(std::string root = "") : root_(std::move(root)) {}

  std::string Path(const std::string& absolute) const { return root_ + absolute; }

  // 0 if the hzram control class exists, else -errno of looking it up.
  int ControlClass() const;

  // The hzram device that @arg names, as zramctl finds a zram device: a
  // device node (a path under /dev/), else a name in /sys/block
  // ("hzram0", or "/dev/hzram0" without the node). Nothing, and errno
  // ENODEV, when there is no such block device or it is not an hzram one.
  std::optional<DeviceRef> Resolve(const std::string& arg) const;
  std::optional<DeviceRef> ById(int id) const { return Resolve(DevName(id)); }
  static std::string DevName(int id) { return "/dev/hzram" + std::to_string(id); }

  // Ids of the hzram devices in /sys/block, ascending.
  std::vector<int> DeviceIds() const;

  // An attribute of the device, its trailing newline removed: 0 or -errno.
  int Read(const DeviceRef& dev, const char* attr, std::string* value) const;
  // Write @value (no newline added): 0, or -errno with errno set.
  int Write(const DeviceRef& dev, const char* attr, const std::string& value) const;

  // hot_add: the new device's id in *id; 0 or -errno.
  int HotAdd(int* id) const;
  // hot_remove: 0 or -errno.
  int HotRemove(int id) const;

  // disksize > 0, as zramctl's zram_used().
  bool Used(const DeviceRef& dev) const;

 private:
  std::string root_;
};

// Where DeviceInfo comes from: sysfs (SysfsInfoSource), or the module's
// generic netlink family (NetlinkInfoSource, netlink.h).
class DeviceInfoSource {
 public:
  virtual ~DeviceInfoSource() = default;
  // One device; @fields: the Field bits wanted.
  virtual DeviceInfo Get(const DeviceRef& dev, unsigned fields) = 0;
  // Every device whose disksize is set, ascending by id.
  virtual std::vector<DeviceInfo> ListUsed(unsigned fields) = 0;
};

class SysfsInfoSource : public DeviceInfoSource {
 public:
  explicit SysfsInfoSource(const Sysfs& sysfs) : sysfs_(sysfs) {}
  DeviceInfo Get(const DeviceRef& dev, unsigned fields) override;
  std::vector<DeviceInfo> ListUsed(unsigned fields) override;

 private:
  const Sysfs& sysfs_;
};

// MOUNTPOINT: "[SWAP]" if /proc/swaps lists the device, else the mount
// point of its first mount in /proc/self/mountinfo (or "/" if it holds the
// root file system), else nothing.
std::optional<std::string> MountPointOf(const Sysfs& sysfs, const DeviceRef& dev);

// mm_stat and offload_stat parsed: nothing if too short or not numbers.
std::optional<MemStat> ParseMemStat(const std::string& text);
std::optional<OffloadStat> ParseOffloadStat(const std::string& text);
// The first number of a statistics file, times @unit; empty if none.
std::optional<std::uint64_t> FirstField(const std::string& text, std::uint64_t unit);

// A mount point as /proc/self/mountinfo escapes it ("\040" for a space).
std::string UnescapeMountPath(const std::string& s);

}  // namespace hzramctl

#endif  // HZRAMCTL_DEVICE_H
