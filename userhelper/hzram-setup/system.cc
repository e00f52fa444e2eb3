// SPDX-License-Identifier: GPL-2.0
#include "system.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "plan.h"

extern char** environ;

namespace hzsetup {
namespace {

const char kControl[] = "/sys/class/hzram-control";

bool Exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

bool ReadAttr(const std::string& path, std::string* value, std::string* error) {
  std::ifstream in(path);
  if (!in) {
    *error = "reading " + path + ": " + std::strerror(errno);
    return false;
  }
  std::ostringstream s;
  s << in.rdbuf();
  *value = s.str();
  while (!value->empty() && (value->back() == '\n' || value->back() == ' ')) value->pop_back();
  return true;
}

// Writes @value to a sysfs file; *err gets errno.
bool WriteAttr(const std::string& path, const std::string& value, std::string* error,
               int* err = nullptr) {
  const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  ssize_t n = -1;
  if (fd >= 0) {
    n = write(fd, value.data(), value.size());
    const int e = errno;
    close(fd);
    errno = e;
  }
  if (n == static_cast<ssize_t>(value.size())) return true;
  if (err) *err = errno;
  *error = "writing '" + value + "' to " + path + ": " + std::strerror(errno);
  return false;
}

std::string CommandLine(const std::vector<std::string>& argv) {
  Step s;
  s.argv = argv;
  return FormatStep(s);
}

// Runs @argv, found in PATH, its standard output discarded (its errors
// go to ours), and waits for it. False and *error unless it exits 0.
bool Run(const std::vector<std::string>& argv, std::string* error) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  pid_t pid;
  const int r = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (r != 0) {
    *error = CommandLine(argv) + ": " + (r == ENOENT ? "command not found" : std::strerror(r));
    return false;
  }
  int st;
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR) {
      *error = CommandLine(argv) + ": waitpid: " + std::strerror(errno);
      return false;
    }
  if (WIFEXITED(st) && WEXITSTATUS(st) == 0) return true;
  *error = CommandLine(argv) + ": " +
           (WIFEXITED(st) ? "exit status " + std::to_string(WEXITSTATUS(st))
                          : "killed by signal " + std::to_string(WTERMSIG(st)));
  return false;
}

bool MakeDirs(const std::string& path, std::string* error) {
  std::string p;
  std::size_t i = 1;
  for (;;) {
    const std::size_t slash = path.find('/', i);
    p = path.substr(0, slash);
    if (!p.empty() && mkdir(p.c_str(), 0755) != 0 && errno != EEXIST) {
      *error = "mkdir " + p + ": " + std::strerror(errno);
      return false;
    }
    if (slash == std::string::npos) break;
    i = slash + 1;
  }
  struct stat st;
  if (stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    *error = path + ": not a directory";
    return false;
  }
  return true;
}

// The module loaded, and /dev/hzramN there.
bool EnsureDevice(const Device& d, std::string* error) {
  if (!Exists(kControl)) {
    std::string why;
    if (!Run({"modprobe", "hzram"}, &why)) {
      *error = "the hzram module is not loaded, and loading it failed: " + why;
      return false;
    }
    if (!Exists(kControl)) {
      *error =
          std::string("the hzram module is not loaded: no ") + kControl + " after modprobe hzram";
      return false;
    }
  }
  const std::string block = "/sys/block/" + d.name;
  // hot_add makes the lowest free id: add until N exists.
  for (unsigned tries = 0; !Exists(block); tries++) {
    std::string id;
    if (tries > d.id || !ReadAttr(std::string(kControl) + "/hot_add", &id, error)) {
      if (tries > d.id) *error = "hot_add did not make " + d.name;
      return false;
    }
  }
  const std::string dev = "/dev/" + d.name;
  for (int i = 0; i < 500; i++) {
    struct stat st;
    if (stat(dev.c_str(), &st) == 0 && S_ISBLK(st.st_mode)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  *error = dev + " did not appear";
  return false;
}

struct Usage {
  bool initialised = false;
  std::vector<std::string> swaps;   // active swap areas on the device
  std::vector<std::string> mounts;  // its mount points
  std::string mount_point;          // the configured one, links resolved, as mountinfo has it
  std::string top_of_mount_point;   // "" if the configured mount point's top mount is the device's
};

// What uses the device now. False and *error if its state cannot be read.
bool GetUsage(const Device& d, Usage* u, std::string* error) {
  *u = Usage();
  std::string v, dev;
  if (!ReadAttr("/sys/block/" + d.name + "/initstate", &v, error) ||
      !ReadAttr("/sys/block/" + d.name + "/dev", &dev, error))
    return false;
  u->initialised = v == "1";
  unsigned maj = 0, min = 0;
  if (std::sscanf(dev.c_str(), "%u:%u", &maj, &min) != 2) {
    *error = "/sys/block/" + d.name + "/dev: '" + dev + "' is not MAJOR:MINOR";
    return false;
  }
  std::string text;
  if (!ReadAttr("/proc/swaps", &text, error)) return false;
  for (const std::string& name : ParseSwaps(text)) {
    struct stat st;
    if (stat(name.c_str(), &st) == 0 && S_ISBLK(st.st_mode) && maj == major(st.st_rdev) &&
        min == minor(st.st_rdev))
      u->swaps.push_back(name);
  }
  if (!d.mount_point.empty()) {
    char* real = realpath(d.mount_point.c_str(), nullptr);
    u->mount_point = real ? real : d.mount_point;
    std::free(real);
  }
  if (!ReadAttr("/proc/self/mountinfo", &text, error)) return false;
  for (const Mount& m : ParseMountinfo(text)) {
    const bool ours = m.major == maj && m.minor == min;
    if (ours) u->mounts.push_back(m.mount_point);
    if (!d.mount_point.empty() && m.mount_point == u->mount_point)
      u->top_of_mount_point = ours ? "" : std::to_string(m.major) + ":" + std::to_string(m.minor);
  }
  return true;
}

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// "active swap", "mounted on /a, /b", or "initialised (disksize N)".
std::string DescribeUsage(const Device& d, const Usage& u) {
  if (!u.swaps.empty()) return "active swap";
  if (!u.mounts.empty()) return "mounted on " + Join(u.mounts);
  std::string size, unused;
  ReadAttr("/sys/block/" + d.name + "/disksize", &size, &unused);
  return "initialised (disksize " + size + ")";
}

// Writes reset. EBUSY is tried again for a second: udev's blkid opens a
// device for a moment after mkfs or mkswap closed it.
bool ResetAttr(const Device& d, std::string* error, int* err) {
  for (int i = 0;; i++) {
    *err = 0;
    if (WriteAttr("/sys/block/" + d.name + "/reset", "1", error, err)) return true;
    if (*err != EBUSY || i == 20) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

void Fail(const Device& d, const std::string& error) {
  std::fprintf(stderr, "hzram-setup: %s: %s\n", d.name.c_str(), error.c_str());
}

// After a failed setup: what of it took effect is undone (swapon or mount
// may have done their work and failed after), the device reset.
void Undo(const Device& d) {
  Usage u;
  std::string error;
  bool ok = GetUsage(d, &u, &error);
  if (ok && !u.swaps.empty()) ok = Run({"swapoff", "/dev/" + d.name}, &error);
  for (std::size_t i = 0; ok && i < u.mounts.size(); i++)
    if (u.mounts[i] == u.mount_point) ok = Run({"umount", d.mount_point}, &error);
  int err;
  if (ok) ok = ResetAttr(d, &error, &err);
  if (!ok) Fail(d, "undoing: " + error);
}

// The day (UTC) a daily step was last made for @d, from kStateDir; -1
// if never.
long LastDay(const Device& d) {
  std::ifstream in(std::string(kStateDir) + "/" + d.name + ".writeback-day");
  long day = -1;
  if (!(in >> day)) return -1;
  return day;
}

bool SaveDay(const Device& d, long day, std::string* error) {
  if (!MakeDirs(kStateDir, error)) return false;
  const std::string path = std::string(kStateDir) + "/" + d.name + ".writeback-day";
  std::ofstream out(path, std::ios::trunc);
  out << day << "\n";
  if (!out.flush()) {
    *error = "writing " + path + ": " + std::strerror(errno);
    return false;
  }
  return true;
}

bool SetUp(const Device& d) {
  std::string error;
  bool touched = false;
  for (const Step& s : SetupSteps(d)) {
    bool ok = true;
    switch (s.kind) {
      case Step::Kind::kEnsureDevice: {
        Usage u;
        ok = EnsureDevice(d, &error) && GetUsage(d, &u, &error);
        if (ok && u.initialised) {
          Fail(d, "in use, " + DescribeUsage(d, u) + ": left alone (hzram-setup --reset " + d.name +
                      " frees it if it is ours)");
          return false;
        }
        break;
      }
      case Step::Kind::kWrite:
        touched = true;
        ok = WriteAttr(s.path, s.value, &error);
        break;
      case Step::Kind::kMkdir:
        ok = MakeDirs(s.path, &error);
        break;
      case Step::Kind::kRun:
        ok = Run(s.argv, &error);
        break;
    }
    if (ok) continue;
    Fail(d, error);
    if (touched) Undo(d);
    return false;
  }
  // The day's writeback budget was just given: --maintain refills it
  // from tomorrow on.
  if (d.writeback_limit_pages && !SaveDay(d, static_cast<long>(time(nullptr) / 86400), &error))
    Fail(d, error);
  std::printf("%s\n", DescribeDevice(d).substr(2).c_str());
  return true;
}

bool Reset(const Device& d) {
  if (!Exists("/sys/block/" + d.name)) {
    std::printf("%s: no such device, nothing to reset\n", d.name.c_str());
    return true;
  }
  Usage u;
  std::string error;
  if (!GetUsage(d, &u, &error)) {
    Fail(d, error);
    return false;
  }
  if (!u.initialised) {
    std::printf("%s: not initialised, nothing to reset\n", d.name.c_str());
    return true;
  }
  const std::string dev = "/dev/" + d.name;
  const auto refuse = [&](const std::string& why) {
    Fail(d, why + ": left alone");
    return false;
  };
  if (d.swap()) {
    if (!u.mounts.empty())
      return refuse("mounted on " + Join(u.mounts) + ", but hzram.conf makes it swap");
    if (!u.swaps.empty() && !Run({"swapoff", dev}, &error)) return refuse(error);
  } else if (!d.mount_point.empty()) {
    if (!u.swaps.empty())
      return refuse("active swap, but hzram.conf mounts it on " + d.mount_point);
    for (const std::string& m : u.mounts)
      if (m != u.mount_point)
        return refuse("mounted on " + m + ", but hzram.conf mounts it on " + d.mount_point);
    if (!u.mounts.empty() && !u.top_of_mount_point.empty())
      return refuse("device " + u.top_of_mount_point + " is mounted over it on " + d.mount_point);
    for (std::size_t i = 0; i < u.mounts.size(); i++)
      if (!Run({"umount", d.mount_point}, &error)) return refuse(error);
  } else if (!u.swaps.empty() || !u.mounts.empty()) {
    return refuse(DescribeUsage(d, u) + ", but hzram.conf neither mounts it nor makes it swap");
  }
  int err;
  if (!ResetAttr(d, &error, &err))
    return refuse(err == EBUSY ? std::string("busy (held open by a process)") : error);
  std::printf("%s: reset\n", d.name.c_str());
  return true;
}

bool EndsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// hzram-setup --maintain for @d: its MaintainSteps(), on a device set up
// as configured (one that is not, or has another backing device, or no
// recompression algorithm, is left alone for that part). An age the
// machine has not been up for yet is skipped (marking would leave the
// marks of a shorter age in place). A writeback whose limit is spent
// for the day, or whose backing device is full, is not a failure.
bool Maintain(const Device& d) {
  const std::vector<Step> steps = MaintainSteps(d);
  if (steps.empty()) return true;
  const std::string sys = "/sys/block/" + d.name + "/";
  std::string error, value, backing, recomp;
  if (!Exists(sys) || !ReadAttr(sys + "initstate", &value, &error) || value != "1") {
    std::printf("%s: not set up, nothing to maintain\n", d.name.c_str());
    return true;
  }
  ReadAttr(sys + "backing_dev", &backing, &error);
  ReadAttr(sys + "recomp_algorithm", &recomp, &error);
  const bool writeback_ok = d.writeback_device.empty() || backing == d.writeback_device;
  if (d.writeback_idle_s && !writeback_ok)
    std::printf("%s: its backing device is %s, not %s: no writeback\n", d.name.c_str(),
                backing.c_str(), d.writeback_device.c_str());
  if (d.recompress_idle_s && recomp.empty())
    std::printf("%s: set up without a recompression algorithm: no recompression\n",
                d.name.c_str());
  double uptime = 0;
  if (std::FILE* f = std::fopen("/proc/uptime", "r")) {
    if (std::fscanf(f, "%lf", &uptime) != 1) uptime = 0;
    std::fclose(f);
  }
  const long today = static_cast<long>(time(nullptr) / 86400);
  const auto spent = [&] {
    std::string enabled, left, unused;
    return ReadAttr(sys + "writeback_limit_enable", &enabled, &unused) &&
           ReadAttr(sys + "writeback_limit", &left, &unused) && enabled == "1" && left == "0";
  };
  bool ok = true;
  for (std::size_t i = 0; i < steps.size(); i++) {
    const Step& s = steps[i];
    const bool writeback = EndsWith(s.path, "/writeback") || EndsWith(s.path, "/writeback_limit") ||
                           (i + 1 < steps.size() && EndsWith(steps[i + 1].path, "/writeback"));
    if (writeback && !writeback_ok) continue;
    if (!writeback && recomp.empty()) continue;
    if (s.daily) {
      if (LastDay(d) == today) continue;
      if (!WriteAttr(s.path, s.value, &error) || !SaveDay(d, today, &error)) {
        Fail(d, error);
        ok = false;
      }
      continue;
    }
    if (EndsWith(s.path, "/idle") && std::stod(s.value) >= uptime) {
      std::printf("%s: up for less than %s s: nothing idle that long yet\n", d.name.c_str(),
                  s.value.c_str());
      i++;  // nor the step it marks for
      continue;
    }
    if (EndsWith(s.path, "/writeback") && spent()) {
      std::printf("%s: writeback limit spent for today\n", d.name.c_str());
      continue;
    }
    int err = 0;
    if (!WriteAttr(s.path, s.value, &error, &err)) {
      if (EndsWith(s.path, "/writeback") && err == EIO && spent()) {
        std::printf("%s: writeback limit spent for today\n", d.name.c_str());
        continue;
      }
      if (EndsWith(s.path, "/writeback") && err == ENOSPC) {
        std::printf("%s: backing device full\n", d.name.c_str());
        continue;
      }
      Fail(d, error);
      ok = false;
    }
  }
  if (!ok) return false;
  std::string bd, mm;
  ReadAttr(sys + "bd_stat", &bd, &error);
  ReadAttr(sys + "mm_stat", &mm, &error);
  std::istringstream b(bd), m(mm);
  std::uint64_t on_bd = 0, orig = 0, compr = 0;
  b >> on_bd;
  m >> orig >> compr;
  std::printf("%s: maintained: %llu MiB stored in %llu MiB, %llu MiB written back\n",
              d.name.c_str(), static_cast<unsigned long long>(orig >> 20),
              static_cast<unsigned long long>(compr >> 20),
              static_cast<unsigned long long>(on_bd >> 8));
  return true;
}

}  // namespace

int MaintainDevices(const std::vector<Device>& devices) {
  int failed = 0;
  for (const Device& d : devices) failed += !Maintain(d);
  return failed;
}

int SetUpDevices(const std::vector<Device>& devices) {
  int failed = 0;
  for (const Device& d : devices) failed += !SetUp(d);
  return failed;
}

int ResetDevices(const std::vector<Device>& devices) {
  int failed = 0;
  for (auto it = devices.rbegin(); it != devices.rend(); ++it) failed += !Reset(*it);
  return failed;
}

}  // namespace hzsetup
