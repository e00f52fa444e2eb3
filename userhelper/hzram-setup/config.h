// SPDX-License-Identifier: GPL-2.0
//
// hzram.conf: where it is read from, its syntax, and what it asks of each
// device once the machine's memory is known. The format is
// zram-generator's (zram-generator.conf(5)) with [hzramN] sections; see
// Documentation/man/hzram.conf.5.
#ifndef HZRAM_SETUP_CONFIG_H
#define HZRAM_SETUP_CONFIG_H

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "expr.h"

namespace hzsetup {

inline constexpr std::uint64_t kMiB = 1 << 20;
inline constexpr const char* kDefaultSize = "min(ram / 2, 4096)";

// Where a setting was made: "FILE:LINE".
struct Origin {
  std::string file;
  int line = 0;
  std::string ToString() const { return file + ":" + std::to_string(line); }
};

// zram-size or zram-resident-limit: the expression and the line that set
// it (key: the name it was given as, for messages).
struct SizeSetting {
  Expression expr;
  std::string key;
  Origin origin;
};

// An algorithm of compression-algorithm, with its parameters in
// parentheses: "zstd(level=12,dict=/etc/hzram/dict)".
struct Algorithm {
  std::string name;
  std::optional<int> level;
  std::string dict;  // empty: none
  bool operator==(const Algorithm&) const = default;
};

// The most algorithms: the primary and three for recompression.
inline constexpr std::size_t kMaxAlgorithms = 4;

// One [hzramN] section, all files merged: the last value of each key wins.
struct DeviceConfig {
  unsigned id = 0;
  std::optional<std::uint64_t> host_memory_limit_mb;  // unset or "none": no limit
  std::optional<SizeSetting> size;                    // zram-size; unset: kDefaultSize
  std::optional<SizeSetting> resident_limit;          // zram-resident-limit; unset: 0
  // The obsolete pair; either one set overrides zram-size.
  std::optional<double> fraction;                           // zram-fraction
  std::optional<std::optional<std::uint64_t>> max_size_mb;  // max-zram-size; inner unset: none
  // compression-algorithm: the primary, then the recompression algorithms
  // by priority; empty: the module's default.
  std::vector<Algorithm> algorithms;
  std::string writeback_device;                            // empty: none
  std::optional<std::uint64_t> writeback_limit_mb;         // MiB a day; unset: no limit
  std::optional<std::uint64_t> writeback_idle_s;           // writeback-idle-age
  std::optional<std::uint64_t> recompress_idle_s;          // recompress-idle-age
  int swap_priority = 100;
  std::optional<std::string> mount_point, fs_type;
  std::string options = "discard";
  std::map<std::string, Origin> origins;  // by key, where it was last set
};

struct Config {
  std::vector<std::string> files;            // the files read, in order
  std::map<unsigned, DeviceConfig> devices;  // by N
  Variables variables;                       // ram, and those of set!
  std::vector<std::string> warnings;
};

// Runs a set! program with /bin/sh -c: its standard output in *output,
// its exit status in *status (128 + N for signal N). False and *error if
// it could not be run at all.
using ShellRunner = std::function<bool(const std::string& program, std::string* output, int* status,
                                       std::string* error)>;
bool RunShell(const std::string& program, std::string* output, int* status, std::string* error);

// @path under @root ("/" or empty: @path itself).
std::string UnderRoot(const std::string& root, const std::string& path);

// The configuration files, in the order they are read: the first of
// /run/hzram.conf, /etc/hzram.conf, /usr/local/lib/hzram.conf and
// /usr/lib/hzram.conf that exists, then the *.conf files of the
// hzram.conf.d directories of /usr/lib, /usr/local/lib, /etc and /run,
// sorted by name, a name in a later directory replacing the same name in
// an earlier one. Under @root.
std::vector<std::string> FindConfigFiles(const std::string& root);

// MemTotal of /proc/meminfo's text, in kB. False if it has none.
bool ParseMemTotal(const std::string& meminfo, std::uint64_t* kb);

// Adds one file's text to *config (whose variables must hold ram). False
// and *error ("FILE:LINE: ...") at the first error.
bool ParseConfigText(const std::string& file, const std::string& text, Config* config,
                     const ShellRunner& shell, std::string* error);

// FindConfigFiles, each read and parsed in turn, with ram = @ram_mib.
// No file: true, with no devices.
bool LoadConfig(const std::string& root, std::uint64_t ram_mib, Config* config, std::string* error,
                const ShellRunner& shell = RunShell);

// A device as it is to be set up.
struct Device {
  unsigned id = 0;
  std::string name;  // hzramN
  bool enabled = true;
  std::string why_disabled;     // when not enabled
  std::string size_text;        // what the size was computed from
  double size_mib = 0;          // its value
  std::uint64_t disksize = 0;   // bytes
  std::uint64_t mem_limit = 0;  // bytes; 0: none
  std::string algorithm;        // empty: the kernel's default
  std::vector<Algorithm> recompression;  // recomp_algorithm's, priority 1 first
  std::optional<Algorithm> primary;      // algorithm, with its parameters
  std::string writeback_device;          // backing_dev; empty: none
  std::optional<std::uint64_t> writeback_limit_pages;  // 4 KiB pages a day; unset: none
  std::uint64_t writeback_idle_s = 0;    // 0: no writeback
  std::uint64_t recompress_idle_s = 0;   // 0: no recompression
  std::string fs_type;          // "swap", or a file system
  std::string mount_point;      // empty for swap, or a file system left unmounted
  std::string options;
  int swap_priority = 100;
  bool swap() const { return fs_type == "swap"; }
};

// Evaluates every device of @config with ram = @ram_mib, in the order of
// N. A device is disabled when ram is above its host-memory-limit or its
// size is 0. False and *error ("FILE:LINE: [hzramN] ...") when a size is
// not one (negative, NaN, infinite, past 2^64 bytes, an unknown
// variable) or the keys contradict each other.
bool ResolveDevices(const Config& config, std::uint64_t ram_mib, std::vector<Device>* devices,
                    std::vector<std::string>* warnings, std::string* error);

// compression-algorithm's value: algorithms separated by spaces, each
// NAME or NAME(PARAMS), PARAMS level=N and dict=/PATH separated by commas
// or spaces. False and *why for anything else, or more than
// kMaxAlgorithms.
bool ParseAlgorithms(const std::string& value, std::vector<Algorithm>* out, std::string* why);

// A duration: a whole number of seconds, or of minutes, hours or days
// with the suffix min, h or d ("30min", "12h", "7d"), from 1 s to
// 2^32 - 1 s (what sysfs idle takes).
bool ParseDuration(const std::string& value, std::uint64_t* seconds);

// "hzramN" for N in 0..255, without leading zeros; false otherwise.
bool ParseDeviceName(const std::string& name, unsigned* id);

}  // namespace hzsetup

#endif  // HZRAM_SETUP_CONFIG_H
