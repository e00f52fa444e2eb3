// SPDX-License-Identifier: GPL-2.0
#include "device.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/hzram.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <climits>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "format.h"

namespace hzramctl {
namespace {

constexpr char kPrefix[] = HZRAM_DEVICE_PREFIX;
constexpr std::size_t kPrefixLen = sizeof(kPrefix) - 1;

// "hzramN": N in *id.
bool ParseKernelName(const std::string& name, int* id) {
  if (name.compare(0, kPrefixLen, kPrefix) != 0 || name.size() == kPrefixLen) return false;
  long long v = 0;
  for (std::size_t i = kPrefixLen; i < name.size(); i++) {
    if (name[i] < '0' || name[i] > '9') return false;
    v = v * 10 + (name[i] - '0');
    if (v > INT_MAX) return false;
  }
  *id = static_cast<int>(v);
  return true;
}

// A sysfs "MAJ:MIN" file.
dev_t ReadDevno(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "re");
  if (!f) return 0;
  int maj = 0, min = 0;
  dev_t dev = 0;
  if (std::fscanf(f, "%d:%d", &maj, &min) == 2)
    dev = makedev(static_cast<unsigned>(maj), static_cast<unsigned>(min));
  std::fclose(f);
  return dev;
}

bool ReadWhole(const std::string& path, std::string* text) {
  std::ifstream in(path);
  if (!in) return false;
  std::ostringstream s;
  s << in.rdbuf();
  *text = s.str();
  return true;
}

std::vector<std::uint64_t> Numbers(const std::string& text, bool* ok) {
  std::vector<std::uint64_t> v;
  std::istringstream in(text);
  std::string word;
  *ok = true;
  while (in >> word) {
    std::uint64_t n;
    if (ParseU64(word.c_str(), &n) != 0) {
      *ok = false;
      break;
    }
    v.push_back(n);
  }
  return v;
}

bool IsBlockDevice(const std::string& path, dev_t devno) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISBLK(st.st_mode) && st.st_rdev == devno;
}

}  // namespace

int Sysfs::ControlClass() const {
  return access(Path(kControlClass).c_str(), F_OK) == 0 ? 0 : -errno;
}

std::optional<DeviceRef> Sysfs::Resolve(const std::string& arg) const {
  dev_t devno = 0;
  std::string name = arg;

  if (name.compare(0, 5, "/dev/") == 0) {
    struct stat st;
    if (stat(Path(name).c_str(), &st) == 0) {
      if (S_ISBLK(st.st_mode)) devno = st.st_rdev;
      name.clear();  // a file that is not a block device: nothing else
    } else {
      name.erase(0, 5);  // no such node: try the name in /sys/block
    }
  }
  if (!devno && !name.empty() && name.find('/') == std::string::npos)
    devno = ReadDevno(Path("/sys/block/" + name + "/dev"));

  DeviceRef ref;
  if (devno) {
    char link[PATH_MAX];
    const std::string dir = Path("/sys/dev/block/" + std::to_string(major(devno)) + ":" +
                                 std::to_string(minor(devno)));
    const ssize_t n = readlink(dir.c_str(), link, sizeof(link) - 1);
    if (n > 0) {
      link[n] = '\0';
      const char* base = std::strrchr(link, '/');
      ref.kname = base ? base + 1 : link;
    }
  }
  if (!devno || !ParseKernelName(ref.kname, &ref.id)) {
    errno = ENODEV;
    return std::nullopt;
  }
  ref.devno = devno;
  ref.name = arg;
  // A name without a path: shown as its node in /dev, as zramctl does.
  if (arg[0] != '/' && IsBlockDevice(Path("/dev/" + ref.kname), devno))
    ref.name = "/dev/" + ref.kname;
  return ref;
}

std::vector<int> Sysfs::DeviceIds() const {
  std::vector<int> ids;
  DIR* dir = opendir(Path("/sys/block").c_str());
  if (!dir) return ids;
  while (const dirent* d = readdir(dir)) {
    int id;
    if (ParseKernelName(d->d_name, &id)) ids.push_back(id);
  }
  closedir(dir);
  std::sort(ids.begin(), ids.end());
  return ids;
}

int Sysfs::Read(const DeviceRef& dev, const char* attr, std::string* value) const {
  const std::string path = Path("/sys/block/" + dev.kname + "/" + attr);
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  char buf[8192];
  ssize_t n;
  do {
    n = read(fd, buf, sizeof(buf) - 1);
  } while (n < 0 && errno == EINTR);
  const int err = errno;
  close(fd);
  if (n < 0) return -err;
  if (n > 0 && buf[n - 1] == '\n') n--;
  value->assign(buf, static_cast<std::size_t>(n));
  return 0;
}

namespace {

int WriteFile(const std::string& path, const std::string& value) {
  const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  std::size_t done = 0;
  int rc = 0;
  while (done < value.size()) {
    const ssize_t n = write(fd, value.data() + done, value.size() - done);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      rc = -errno;
      break;
    }
    if (n == 0) {
      rc = -EIO;
      break;
    }
    done += static_cast<std::size_t>(n);
  }
  close(fd);
  if (rc) errno = -rc;
  return rc;
}

}  // namespace

int Sysfs::Write(const DeviceRef& dev, const char* attr, const std::string& value) const {
  return WriteFile(Path("/sys/block/" + dev.kname + "/" + attr), value);
}

int Sysfs::HotAdd(int* id) const {
  FILE* f = std::fopen(Path(std::string(kControlClass) + "/hot_add").c_str(), "re");
  if (!f) return -errno;
  int n = -1;
  const int got = std::fscanf(f, "%d", &n);
  const int err = errno;
  std::fclose(f);
  if (got != 1 || n < 0) return -(got == EOF && err ? err : EINVAL);
  *id = n;
  return 0;
}

int Sysfs::HotRemove(int id) const {
  return WriteFile(Path(std::string(kControlClass) + "/hot_remove"), std::to_string(id));
}

bool Sysfs::Used(const DeviceRef& dev) const {
  std::string s;
  std::uint64_t size;
  return Read(dev, "disksize", &s) == 0 && std::sscanf(s.c_str(), "%" SCNu64, &size) == 1 &&
         size > 0;
}

std::optional<MemStat> ParseMemStat(const std::string& text) {
  bool ok;
  const std::vector<std::uint64_t> f = Numbers(text, &ok);
  if (f.size() <= HZRAM_MM_PAGES_COMPACTED) return std::nullopt;
  MemStat m;
  m.orig_data_size = f[HZRAM_MM_ORIG_DATA_SIZE];
  m.compr_data_size = f[HZRAM_MM_COMPR_DATA_SIZE];
  m.mem_used_total = f[HZRAM_MM_MEM_USED_TOTAL];
  m.mem_limit = f[HZRAM_MM_MEM_LIMIT];
  m.mem_used_max = f[HZRAM_MM_MEM_USED_MAX];
  m.same_pages = f[HZRAM_MM_SAME_PAGES];
  m.pages_compacted = f[HZRAM_MM_PAGES_COMPACTED];
  return m;
}

std::optional<std::uint64_t> FirstField(const std::string& text, std::uint64_t unit) {
  bool ok;
  const std::vector<std::uint64_t> f = Numbers(text, &ok);
  if (f.empty()) return std::nullopt;
  return f[0] * unit;
}

std::optional<OffloadStat> ParseOffloadStat(const std::string& text) {
  bool ok;
  const std::vector<std::uint64_t> f = Numbers(text, &ok);
  if (f.size() <= HZRAM_OFF_PAGES_HELPER) return std::nullopt;
  OffloadStat o;
  o.helper = f[HZRAM_OFF_HELPER] != 0;
  o.pages_helper = f[HZRAM_OFF_PAGES_HELPER];
  if (f.size() > HZRAM_OFF_KERNEL_REFUSED)
    o.fallbacks = f[HZRAM_OFF_KERNEL_TIMEOUT] + f[HZRAM_OFF_KERNEL_GONE] +
                  f[HZRAM_OFF_KERNEL_REFUSED];
  return o;
}

std::string UnescapeMountPath(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); i++) {
    if (s[i] == '\\' && i + 3 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '3' && s[i + 2] >= '0' && s[i + 2] <= '7' &&
        s[i + 3] >= '0' && s[i + 3] <= '7') {
      out += static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::optional<std::string> MountPointOf(const Sysfs& sysfs, const DeviceRef& dev) {
  const std::string node = "/dev/" + dev.kname;
  auto is_dev = [&](const std::string& path) {
    return path == dev.name || path == node || IsBlockDevice(sysfs.Path(path), dev.devno);
  };

  std::string text;
  // /proc/swaps: a header line, then the swap areas, the name first.
  if (ReadWhole(sysfs.Path("/proc/swaps"), &text)) {
    std::istringstream in(text);
    std::string line;
    bool first = true;
    while (std::getline(in, line)) {
      if (first && line.compare(0, 9, "Filename\t") == 0) {
        first = false;
        continue;
      }
      first = false;
      line = line.substr(0, line.find(' '));
      line = line.substr(0, line.find('\t'));
      if (!line.empty() && is_dev(line)) return "[SWAP]";
    }
  }
  // mountinfo: "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [TAGS...] - TYPE SOURCE ...".
  if (ReadWhole(sysfs.Path("/proc/self/mountinfo"), &text)) {
    const std::string devno =
        std::to_string(major(dev.devno)) + ":" + std::to_string(minor(dev.devno));
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream f(line);
      std::string id, parent, majmin, root, mountpoint, word, type, source;
      if (!(f >> id >> parent >> majmin >> root >> mountpoint)) continue;
      while (f >> word && word != "-") {
      }
      f >> type >> source;
      if (majmin == devno || (!source.empty() && is_dev(UnescapeMountPath(source))))
        return UnescapeMountPath(mountpoint);
    }
  }
  struct stat st;
  if (stat(sysfs.Path("/").c_str(), &st) == 0 && st.st_dev == dev.devno) return "/";
  return std::nullopt;
}

DeviceInfo SysfsInfoSource::Get(const DeviceRef& dev, unsigned fields) {
  DeviceInfo info;
  info.name = dev.name;
  info.id = dev.id;
  std::string s;

  if (fields & kFieldDisksize) {
    std::uint64_t n;
    if (sysfs_.Read(dev, "disksize", &s) == 0 && std::sscanf(s.c_str(), "%" SCNu64, &n) == 1)
      info.disksize = n;
  }
  if ((fields & kFieldAlgorithm) && sysfs_.Read(dev, "comp_algorithm", &s) == 0)
    info.algorithm = BracketedSelection(s);
  if (fields & kFieldStreams) {
    std::uint64_t n;
    if (sysfs_.Read(dev, "max_comp_streams", &s) == 0 && ParseU64(s.c_str(), &n) == 0)
      info.streams = n;
  }
  if ((fields & kFieldMemStat) && sysfs_.Read(dev, "mm_stat", &s) == 0)
    info.mm = ParseMemStat(s);
  if (fields & kFieldMountpoint) info.mountpoint = MountPointOf(sysfs_, dev);
  if ((fields & kFieldOffload) && sysfs_.Read(dev, "offload", &s) == 0)
    info.offload = SelectedValue(s);
  if ((fields & kFieldOffloadStat) && sysfs_.Read(dev, "offload_stat", &s) == 0)
    info.offload_stat = ParseOffloadStat(s);
  if ((fields & kFieldBdStat) && sysfs_.Read(dev, "bd_stat", &s) == 0)
    info.written_back = FirstField(s, 4096);
  if ((fields & kFieldRecompStat) && sysfs_.Read(dev, "recomp_stat", &s) == 0)
    info.recompressed = FirstField(s, 1);
  return info;
}

std::vector<DeviceInfo> SysfsInfoSource::ListUsed(unsigned fields) {
  std::vector<DeviceInfo> list;
  for (int id : sysfs_.DeviceIds()) {
    const std::optional<DeviceRef> dev = sysfs_.ById(id);
    if (dev && sysfs_.Used(*dev)) list.push_back(Get(*dev, fields));
  }
  return list;
}

}  // namespace hzramctl
