// SPDX-License-Identifier: GPL-2.0
#include "plan.h"

#include <cstdio>
#include <sstream>

namespace hzsetup {
namespace {

std::string Sysfs(const Device& d, const char* attr) { return "/sys/block/" + d.name + "/" + attr; }

Step Write(std::string path, std::string value) {
  Step s;
  s.kind = Step::Kind::kWrite;
  s.path = std::move(path);
  s.value = std::move(value);
  return s;
}

Step Run(std::vector<std::string> argv) {
  Step s;
  s.kind = Step::Kind::kRun;
  s.argv = std::move(argv);
  return s;
}

// A word as the shell would need it: quoted when it has anything but
// letters, digits and ,._+:@%/=-
std::string ShellWord(const std::string& w) {
  if (!w.empty() && w.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789,._+:@%/=-") == std::string::npos)
    return w;
  std::string q = "'";
  for (char c : w) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Undoes the octal escapes (\040 and so on) of /proc's files.
std::string Unescape(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); i++) {
    if (s[i] == '\\' && i + 3 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '3' && s[i + 2] >= '0' &&
        s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
      out += static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::string Mib(double mib) {
  std::ostringstream s;
  s << mib;
  return s.str();
}

// " level=N dict=PATH" for algorithm_params.
std::string Params(const Algorithm& a) {
  std::string s;
  if (a.level) s += " level=" + std::to_string(*a.level);
  if (!a.dict.empty()) s += " dict=" + a.dict;
  return s;
}

}  // namespace

std::vector<Step> SetupSteps(const Device& d) {
  std::vector<Step> steps;
  Step ensure;
  ensure.kind = Step::Kind::kEnsureDevice;
  ensure.path = "/dev/" + d.name;
  steps.push_back(ensure);
  if (!d.algorithm.empty()) steps.push_back(Write(Sysfs(d, "comp_algorithm"), d.algorithm));
  if (d.primary && (d.primary->level || !d.primary->dict.empty()))
    steps.push_back(Write(Sysfs(d, "algorithm_params"), "priority=0" + Params(*d.primary)));
  for (std::size_t i = 0; i < d.recompression.size(); i++) {
    const Algorithm& a = d.recompression[i];
    const std::string prio = "priority=" + std::to_string(i + 1);
    steps.push_back(Write(Sysfs(d, "recomp_algorithm"), "algo=" + a.name + " " + prio));
    if (a.level || !a.dict.empty())
      steps.push_back(Write(Sysfs(d, "algorithm_params"), prio + Params(a)));
  }
  if (!d.writeback_device.empty()) {
    steps.push_back(Write(Sysfs(d, "backing_dev"), d.writeback_device));
    // Both, always: the limit's settings outlive a reset (as zram's).
    steps.push_back(Write(Sysfs(d, "writeback_limit_enable"), d.writeback_limit_pages ? "1" : "0"));
    if (d.writeback_limit_pages)
      steps.push_back(Write(Sysfs(d, "writeback_limit"), std::to_string(*d.writeback_limit_pages)));
  }
  if (d.mem_limit) steps.push_back(Write(Sysfs(d, "mem_limit"), std::to_string(d.mem_limit)));
  steps.push_back(Write(Sysfs(d, "disksize"), std::to_string(d.disksize)));
  const std::string dev = "/dev/" + d.name;
  if (d.swap()) {
    steps.push_back(Run({"mkswap", dev}));
    // The short options, as systemd's swap units use them (swapon 2.38
    // takes --options' value only after '=').
    std::vector<std::string> swapon = {"swapon"};
    // -1: no priority given, the kernel's own (negative, decreasing).
    if (d.swap_priority >= 0) {
      swapon.push_back("-p");
      swapon.push_back(std::to_string(d.swap_priority));
    }
    if (!d.options.empty()) {
      swapon.push_back("-o");
      swapon.push_back(d.options);
    }
    swapon.push_back(dev);
    steps.push_back(Run(swapon));
    return steps;
  }
  // mke2fs prints its version on stderr unless quiet.
  if (d.fs_type == "ext2" || d.fs_type == "ext3" || d.fs_type == "ext4")
    steps.push_back(Run({"mkfs." + d.fs_type, "-q", dev}));
  else
    steps.push_back(Run({"mkfs." + d.fs_type, dev}));
  if (d.mount_point.empty()) return steps;
  Step mkdir;
  mkdir.kind = Step::Kind::kMkdir;
  mkdir.path = d.mount_point;
  steps.push_back(mkdir);
  std::vector<std::string> mount = {"mount", "-t", d.fs_type};
  if (!d.options.empty()) {
    mount.push_back("-o");
    mount.push_back(d.options);
  }
  mount.push_back(dev);
  mount.push_back(d.mount_point);
  steps.push_back(Run(mount));
  return steps;
}

std::vector<Step> MaintainSteps(const Device& d) {
  std::vector<Step> steps;
  // Each priority in turn, on the pages idle then (a page tried loses its
  // mark): a page the first cannot store smaller gets the next.
  for (std::size_t p = 1; d.recompress_idle_s && p <= d.recompression.size(); p++) {
    steps.push_back(Write(Sysfs(d, "idle"), std::to_string(d.recompress_idle_s)));
    steps.push_back(Write(Sysfs(d, "recompress"), "type=idle priority=" + std::to_string(p)));
  }
  if (d.writeback_idle_s) {
    if (d.writeback_limit_pages) {
      Step refill = Write(Sysfs(d, "writeback_limit"), std::to_string(*d.writeback_limit_pages));
      refill.daily = true;
      steps.push_back(refill);
    }
    steps.push_back(Write(Sysfs(d, "idle"), std::to_string(d.writeback_idle_s)));
    steps.push_back(Write(Sysfs(d, "writeback"), "idle"));
  }
  return steps;
}

std::vector<Step> ResetSteps(const Device& d) {
  std::vector<Step> steps;
  if (d.swap())
    steps.push_back(Run({"swapoff", "/dev/" + d.name}));
  else if (!d.mount_point.empty())
    steps.push_back(Run({"umount", d.mount_point}));
  steps.push_back(Write(Sysfs(d, "reset"), "1"));
  return steps;
}

std::string FormatStep(const Step& s) {
  switch (s.kind) {
    case Step::Kind::kEnsureDevice:
      return "# create " + s.path + " if missing (modprobe hzram, hot_add)";
    case Step::Kind::kWrite:
      return "echo " + ShellWord(s.value) + " > " + ShellWord(s.path) +
             (s.daily ? "  # at the first run of each day" : "");
    case Step::Kind::kMkdir:
      return "mkdir -p " + ShellWord(s.path);
    case Step::Kind::kRun: {
      std::string line;
      for (const std::string& a : s.argv) line += (line.empty() ? "" : " ") + ShellWord(a);
      return line;
    }
  }
  return "";
}

std::string DescribeDevice(const Device& d) {
  std::string s = "# " + d.name + ": ";
  if (d.swap())
    s += "swap";
  else if (d.mount_point.empty())
    s += d.fs_type + ", not mounted";
  else
    s += d.fs_type + " on " + d.mount_point;
  if (!d.enabled) return s + ": disabled, " + d.why_disabled;
  s += ", " + Mib(d.size_mib) + " MiB (" + d.size_text + ")";
  s += ", " + (d.algorithm.empty() ? std::string("the default algorithm") : d.algorithm);
  for (const Algorithm& a : d.recompression) s += ", recompression " + a.name;
  if (d.recompress_idle_s)
    s += " after " + std::to_string(d.recompress_idle_s) + " s idle";
  if (!d.writeback_device.empty()) {
    s += ", writeback to " + d.writeback_device;
    if (d.writeback_idle_s) s += " after " + std::to_string(d.writeback_idle_s) + " s idle";
    if (d.writeback_limit_pages)
      s += ", at most " + std::to_string(*d.writeback_limit_pages / 256) + " MiB a day";
  }
  if (d.mem_limit) s += ", mem_limit " + std::to_string(d.mem_limit) + " bytes";
  if (d.swap()) s += ", priority " + std::to_string(d.swap_priority);
  if (d.swap() || !d.mount_point.empty())
    s += d.options.empty() ? std::string(", no options") : ", options " + d.options;
  return s;
}

std::string FormatPlan(const std::vector<Device>& devices, std::uint64_t ram_mib, PlanKind kind) {
  const bool reset = kind == PlanKind::kReset;
  std::string out = "# ram = " + std::to_string(ram_mib) + " MiB\n";
  if (devices.empty()) return out + "# no devices configured\n";
  // A reset goes the other way, from the last device.
  for (std::size_t i = 0; i < devices.size(); i++) {
    const Device& d = devices[reset ? devices.size() - 1 - i : i];
    out += DescribeDevice(d) + "\n";
    if (!d.enabled) continue;
    const std::vector<Step> steps = kind == PlanKind::kReset      ? ResetSteps(d)
                                    : kind == PlanKind::kMaintain ? MaintainSteps(d)
                                                                  : SetupSteps(d);
    if (kind == PlanKind::kMaintain && steps.empty()) out += "# nothing to maintain\n";
    for (const Step& s : steps) out += FormatStep(s) + "\n";
  }
  return out;
}

std::vector<std::string> ParseSwaps(const std::string& text) {
  std::vector<std::string> names;
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);  // Filename Type Size Used Priority
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string name;
    if (words >> name) names.push_back(Unescape(name));
  }
  return names;
}

std::vector<Mount> ParseMountinfo(const std::string& text) {
  // ID PARENT MAJOR:MINOR ROOT MOUNT-POINT OPTIONS ...
  std::vector<Mount> mounts;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string id, parent, dev, root, point;
    if (!(words >> id >> parent >> dev >> root >> point)) continue;
    Mount m;
    if (std::sscanf(dev.c_str(), "%u:%u", &m.major, &m.minor) != 2) continue;
    m.mount_point = Unescape(point);
    mounts.push_back(std::move(m));
  }
  return mounts;
}

}  // namespace hzsetup
