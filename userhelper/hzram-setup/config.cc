// SPDX-License-Identifier: GPL-2.0
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/hzram.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <climits>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string_view>
#include <utility>

#include "hzram-common/number.h"

namespace hzsetup {
namespace {

const char* const kAlgorithms[] = {"lzo", "lzo-rle", "lz4", "lz4hc", "zstd"};
// The directories searched, lowest precedence first.
const char* const kDirs[] = {"/usr/lib", "/usr/local/lib", "/etc", "/run"};

std::string Trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return "";
  const auto e = s.find_last_not_of(" \t");
  return std::string(s.substr(b, e - b + 1));
}

// A value in matching double or single quotes loses them.
std::string Unquote(std::string v) {
  if (v.size() >= 2 && (v[0] == '"' || v[0] == '\'') && v.back() == v[0])
    return v.substr(1, v.size() - 2);
  return v;
}

bool IsIdentifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

// A whole decimal number (digits only) that fits 64 bits.
bool ParseU64(const std::string& s, std::uint64_t* out) {
  return hzram::ParseDecimal<std::uint64_t>(s, 0, UINT64_MAX, out);
}

// "none" or a number of MiB.
bool ParseOptionalMib(const std::string& s, std::optional<std::uint64_t>* out) {
  if (s == "none") {
    out->reset();
    return true;
  }
  std::uint64_t v;
  if (!ParseU64(s, &v)) return false;
  *out = v;
  return true;
}

// A whole decimal number in [lo, hi], with a sign or not ("+5", as
// zram-generator takes it).
bool ParseInt(const std::string& s, int lo, int hi, int* out) {
  std::string_view v = s;
  if (v.size() > 1 && v[0] == '+' && v[1] != '-') v.remove_prefix(1);
  return hzram::ParseDecimal<int>(v, lo, hi, out);
}

// An absolute path, without "..": normalised (no "//", "/./" or trailing
// '/'), as zram-generator takes mount-point.
bool NormalisePath(const std::string& s, std::string* out, std::string* why) {
  if (s.empty() || s[0] != '/') {
    *why = "not an absolute path";
    return false;
  }
  std::string path;
  std::size_t i = 0;
  while (i < s.size()) {
    const std::size_t slash = s.find('/', i);
    const std::string part =
        s.substr(i, slash == std::string::npos ? std::string::npos : slash - i);
    if (part == "..") {
      *why = "not normalised (\"..\")";
      return false;
    }
    if (!part.empty() && part != ".") path += "/" + part;
    if (slash == std::string::npos) break;
    i = slash + 1;
  }
  *out = path.empty() ? "/" : path;
  return true;
}

bool ReadFile(const std::string& path, std::string* text, std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = path + ": " + std::strerror(errno);
    return false;
  }
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) {
    *error = path + ": read error";
    return false;
  }
  *text = s.str();
  return true;
}

// A file to read: a regular file, or /dev/null (a masked file).
bool Readable(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return false;
  return S_ISREG(st.st_mode) || (S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3));
}

std::string Quoted(const std::string& s) { return "'" + s + "'"; }

// Parses @value as the size expression of @key.
bool ParseSize(const std::string& key, const std::string& value, const Origin& origin,
               std::optional<SizeSetting>* out, std::string* why) {
  SizeSetting s;
  ExprError e;
  if (!s.expr.Parse(value, &e)) {
    *why = e.ToString() + " in " + Quoted(value);
    return false;
  }
  s.key = key;
  s.origin = origin;
  *out = std::move(s);
  return true;
}

// One key of a [hzramN] section. False and *why (without the place).
bool SetKey(DeviceConfig* d, const std::string& key, const std::string& value, const Origin& origin,
            std::string* canonical, std::string* why) {
  *canonical = key;
  if (key == "host-memory-limit" || key == "memory-limit") {
    *canonical = "host-memory-limit";
    if (!ParseOptionalMib(value, &d->host_memory_limit_mb)) {
      *why = Quoted(value) + " is not a number of MiB or \"none\"";
      return false;
    }
  } else if (key == "zram-size" || key == "hzram-size") {
    *canonical = "zram-size";
    return ParseSize(key, value, origin, &d->size, why);
  } else if (key == "zram-resident-limit" || key == "hzram-resident-limit") {
    *canonical = "zram-resident-limit";
    return ParseSize(key, value, origin, &d->resident_limit, why);
  } else if (key == "compression-algorithm") {
    return ParseAlgorithms(value, &d->algorithms, why);
  } else if (key == "writeback-device") {
    std::string path, bad;
    if (!NormalisePath(value, &path, &bad)) {
      *why = Quoted(value) + " is " + bad;
      return false;
    }
    d->writeback_device = path;
  } else if (key == "writeback-limit") {
    if (!ParseOptionalMib(value, &d->writeback_limit_mb)) {
      *why = Quoted(value) + " is not a number of MiB or \"none\"";
      return false;
    }
  } else if (key == "writeback-idle-age" || key == "recompress-idle-age") {
    std::uint64_t s;
    if (!ParseDuration(value, &s)) {
      *why = Quoted(value) + " is not a duration (seconds, or a number with min, h or d)";
      return false;
    }
    (key == "writeback-idle-age" ? d->writeback_idle_s : d->recompress_idle_s) = s;
  } else if (key == "swap-priority") {
    if (!ParseInt(value, -1, 32767, &d->swap_priority)) {
      *why = Quoted(value) + " is not a number from -1 to 32767";
      return false;
    }
  } else if (key == "mount-point") {
    std::string path, bad;
    if (!NormalisePath(value, &path, &bad)) {
      *why = Quoted(value) + " is " + bad;
      return false;
    }
    d->mount_point = path;
  } else if (key == "fs-type") {
    if (value.empty() ||
        value.find_first_not_of("abcdefghijklmnopqrstuvwxyz"
                                "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != std::string::npos) {
      *why = Quoted(value) + " is not a file system type (letters, digits, '.', '_', '-')";
      return false;
    }
    d->fs_type = value;
  } else if (key == "options") {
    d->options = value;
  } else if (key == "zram-fraction") {
    char* end;
    errno = 0;
    const double f = std::strtod(value.c_str(), &end);
    if (value.empty() || *end || errno || !std::isfinite(f) || f < 0) {
      *why = Quoted(value) + " is not a fraction (a number, 0 or more)";
      return false;
    }
    d->fraction = f;
  } else if (key == "max-zram-size") {
    std::optional<std::uint64_t> v;
    if (!ParseOptionalMib(value, &v)) {
      *why = Quoted(value) + " is not a number of MiB or \"none\"";
      return false;
    }
    d->max_size_mb = v;
  } else {
    *why = "unknown key";
    return false;
  }
  return true;
}

}  // namespace

bool ParseAlgorithms(const std::string& value, std::vector<Algorithm>* out, std::string* why) {
  std::vector<Algorithm> algs;
  std::size_t i = 0;
  for (;;) {
    while (i < value.size() && std::isspace(static_cast<unsigned char>(value[i]))) i++;
    if (i == value.size()) break;
    const std::size_t start = i;
    while (i < value.size() && !std::isspace(static_cast<unsigned char>(value[i])) &&
           value[i] != '(')
      i++;
    Algorithm a;
    a.name = value.substr(start, i - start);
    if (a.name.empty()) {
      *why = "parameters in parentheses follow their algorithm without a space "
             "(\"zstd(level=3)\"), and recompression parameters without one are not taken: "
             "recompress-idle-age says when to recompress";
      return false;
    }
    bool known = false;
    for (const char* k : kAlgorithms) known |= a.name == k;
    if (!known) {
      *why = Quoted(a.name) + " is not one of hzram's algorithms: lzo, lzo-rle, lz4, lz4hc, zstd";
      return false;
    }
    if (i < value.size() && value[i] == '(') {
      const std::size_t close = value.find(')', i);
      if (close == std::string::npos) {
        *why = "no ')' after " + Quoted(value.substr(start));
        return false;
      }
      std::string params = value.substr(i + 1, close - i - 1);
      for (char& c : params)
        if (c == ',') c = ' ';
      std::istringstream words(params);
      for (std::string w; words >> w;) {
        const std::size_t eq = w.find('=');
        const std::string k = w.substr(0, eq), v = eq == std::string::npos ? "" : w.substr(eq + 1);
        int level;
        std::string path, bad;
        if (k == "level" && ParseInt(v, INT_MIN + 1, INT_MAX, &level)) {
          a.level = level;
        } else if (k == "dict" && NormalisePath(v, &path, &bad)) {
          a.dict = path;
        } else {
          *why = Quoted(w) + " in " + Quoted(a.name) +
                 "'s parameters is not level=NUMBER or dict=/PATH";
          return false;
        }
      }
      i = close + 1;
      if (i < value.size() && !std::isspace(static_cast<unsigned char>(value[i]))) {
        *why = "no space after " + Quoted(value.substr(start, i - start));
        return false;
      }
    }
    algs.push_back(std::move(a));
  }
  if (algs.size() > kMaxAlgorithms) {
    *why = "at most " + std::to_string(kMaxAlgorithms) +
           " algorithms (the primary and three for recompression), not " +
           std::to_string(algs.size());
    return false;
  }
  *out = std::move(algs);
  return true;
}

bool ParseDuration(const std::string& value, std::uint64_t* seconds) {
  std::size_t digits = 0;
  while (digits < value.size() && std::isdigit(static_cast<unsigned char>(value[digits])))
    digits++;
  if (!digits || digits > 12) return false;
  const std::string unit = value.substr(digits);
  std::uint64_t n = std::stoull(value.substr(0, digits)), mul;
  if (unit.empty() || unit == "s")
    mul = 1;
  else if (unit == "min")
    mul = 60;
  else if (unit == "h")
    mul = 3600;
  else if (unit == "d")
    mul = 86400;
  else
    return false;
  if (!n || n * mul > 0xffffffffULL) return false;
  *seconds = n * mul;
  return true;
}

namespace {

// A size expression's value in bytes. False and *error if it is not a size.
bool EvaluateSize(const SizeSetting& s, const std::string& device, const Variables& vars,
                  double* mib, std::uint64_t* bytes, std::string* error) {
  const std::string where = s.origin.ToString() + ": [" + device + "] " + s.key + ": ";
  ExprError e;
  if (!s.expr.Evaluate(vars, mib, &e)) {
    *error = where + e.ToString() + " in " + Quoted(s.expr.text());
    return false;
  }
  std::ostringstream v;
  v << *mib;
  const std::string is = Quoted(s.expr.text()) + " is " + v.str();
  if (std::isnan(*mib)) {
    *error = where + Quoted(s.expr.text()) + " is NaN, not a number";
    return false;
  }
  if (*mib < 0) {
    *error = where + is + ": a size cannot be negative";
    return false;
  }
  const double b = *mib * static_cast<double>(kMiB);
  if (!(b < 18446744073709551616.0)) {
    *error = where + is + " MiB: more than 2^64 bytes";
    return false;
  }
  *bytes = static_cast<std::uint64_t>(b);
  return true;
}

}  // namespace

std::string UnderRoot(const std::string& root, const std::string& path) {
  if (root.empty() || root == "/") return path;
  std::string r = root;
  while (r.size() > 1 && r.back() == '/') r.pop_back();
  return r + path;
}

std::vector<std::string> FindConfigFiles(const std::string& root) {
  std::vector<std::string> files;
  for (int i = static_cast<int>(std::size(kDirs)) - 1; i >= 0; i--) {
    const std::string main = UnderRoot(root, std::string(kDirs[i]) + "/hzram.conf");
    if (Readable(main)) {
      files.push_back(main);
      break;
    }
  }
  std::map<std::string, std::string> dropins;  // name -> path
  for (const char* dir : kDirs) {
    const std::string d = UnderRoot(root, std::string(dir) + "/hzram.conf.d");
    DIR* dp = opendir(d.c_str());
    if (!dp) continue;
    while (const dirent* e = readdir(dp)) {
      const std::string name = e->d_name;
      if (name[0] == '.' || name.size() <= 5 || name.compare(name.size() - 5, 5, ".conf") != 0)
        continue;
      const std::string path = d + "/" + name;
      // A file that cannot be read (a dangling link, a directory) is no
      // configuration, and does not hide one of the same name.
      if (Readable(path)) dropins[name] = path;
    }
    closedir(dp);
  }
  for (const auto& [name, path] : dropins) files.push_back(path);
  return files;
}

bool ParseMemTotal(const std::string& meminfo, std::uint64_t* kb) {
  std::istringstream in(meminfo);
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string key, value;
    words >> key >> value;
    if (key == "MemTotal:") return ParseU64(value, kb);
  }
  return false;
}

bool ParseDeviceName(const std::string& name, unsigned* id) {
  if (name.rfind("hzram", 0) != 0) return false;
  const std::string n = name.substr(5);
  if (n.empty() || n.size() > 3 || (n.size() > 1 && n[0] == '0')) return false;
  std::uint64_t v;
  if (!ParseU64(n, &v) || v >= HZRAM_MAX_DEVICES) return false;
  *id = static_cast<unsigned>(v);
  return true;
}

bool ParseConfigText(const std::string& file, const std::string& text, Config* config,
                     const ShellRunner& shell, std::string* error) {
  std::istringstream in(text);
  DeviceConfig* section = nullptr;
  int n = 0;
  for (std::string raw; std::getline(in, raw);) {
    n++;
    if (!raw.empty() && raw.back() == '\r') raw.pop_back();
    const Origin origin{file, n};
    const std::string at = origin.ToString() + ": ";
    const std::string line = Trim(raw);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line[0] == '[') {
      if (line.back() != ']') {
        *error = at + "a section header ends with ']'";
        return false;
      }
      const std::string name = Trim(line.substr(1, line.size() - 2));
      unsigned id;
      if (!ParseDeviceName(name, &id)) {
        *error = at + "unknown section [" + name + "]: sections are [hzramN], N from 0 to " +
                 std::to_string(HZRAM_MAX_DEVICES - 1);
        return false;
      }
      section = &config->devices[id];
      section->id = id;
      continue;
    }
    const auto eq = line.find('=');
    if (eq == std::string::npos) {
      *error = at + "expected 'key = value', a [section] or a comment, found " + Quoted(line);
      return false;
    }
    const std::string key = Trim(line.substr(0, eq));
    const std::string value = Unquote(Trim(line.substr(eq + 1)));
    if (key.empty()) {
      *error = at + "no key before '='";
      return false;
    }
    if (section) {
      std::string canonical, why;
      if (!SetKey(section, key, value, origin, &canonical, &why)) {
        *error = at + "[hzram" + std::to_string(section->id) + "] " + key + ": " + why;
        return false;
      }
      section->origins[canonical] = origin;
      continue;
    }
    // Before the first section: set!VARIABLE = PROGRAM.
    if (key.rfind("set!", 0) != 0) {
      *error = at + Quoted(key) +
               " outside a section: only set!VARIABLE = PROGRAM may come before the first "
               "[hzramN]";
      return false;
    }
    const std::string var = key.substr(4);
    if (!IsIdentifier(var) || var == "ram") {
      *error = at + key + ": " + Quoted(var) +
               (var == "ram" ? " is the machine's memory, it cannot be set"
                             : " is not a variable name (letters, digits, '_')");
      return false;
    }
    std::string output, why;
    int status = 0;
    if (!shell(value, &output, &status, &why)) {
      *error = at + key + ": " + why;
      return false;
    }
    if (status != 0)
      config->warnings.push_back(at + key + ": " + Quoted(value) + " exited with status " +
                                 std::to_string(status));
    while (!output.empty() && (output.back() == '\n' || output.back() == ' ')) output.pop_back();
    Expression e;
    ExprError ee;
    double v;
    if (!e.Parse(output, &ee) || !e.Evaluate(config->variables, &v, &ee)) {
      *error = at + key + ": the output of " + Quoted(value) + ", " + Quoted(output) + ": " +
               ee.ToString();
      return false;
    }
    config->variables[var] = v;
  }
  return true;
}

bool LoadConfig(const std::string& root, std::uint64_t ram_mib, Config* config, std::string* error,
                const ShellRunner& shell) {
  *config = Config();
  config->variables["ram"] = static_cast<double>(ram_mib);
  for (const std::string& f : FindConfigFiles(root)) {
    std::string text;
    if (!ReadFile(f, &text, error) || !ParseConfigText(f, text, config, shell, error)) return false;
    config->files.push_back(f);
  }
  return true;
}

bool RunShell(const std::string& program, std::string* output, int* status, std::string* error) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    *error = std::string("pipe: ") + std::strerror(errno);
    return false;
  }
  const pid_t pid = fork();
  if (pid < 0) {
    *error = std::string("fork: ") + std::strerror(errno);
    close(fds[0]);
    close(fds[1]);
    return false;
  }
  if (pid == 0) {
    const int null = open("/dev/null", O_RDONLY);
    if (null < 0 || dup2(null, 0) < 0 || dup2(fds[1], 1) < 0) _exit(127);
    execl("/bin/sh", "sh", "-c", "--", program.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  output->clear();
  char buf[4096];
  for (;;) {
    const ssize_t r = read(fds[0], buf, sizeof(buf));
    if (r > 0) {
      output->append(buf, static_cast<std::size_t>(r));
    } else if (r == 0 || errno != EINTR) {
      break;
    }
  }
  close(fds[0]);
  int st;
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR) {
      *error = std::string("waitpid: ") + std::strerror(errno);
      return false;
    }
  *status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return true;
}

bool ResolveDevices(const Config& config, std::uint64_t ram_mib, std::vector<Device>* devices,
                    std::vector<std::string>* warnings, std::string* error) {
  devices->clear();
  Variables vars = config.variables;
  vars["ram"] = static_cast<double>(ram_mib);
  for (const auto& [id, c] : config.devices) {
    Device d;
    d.id = id;
    d.name = "hzram" + std::to_string(id);
    const auto origin = [&](const char* key) {
      const auto it = c.origins.find(key);
      return it == c.origins.end() ? std::string("?") : it->second.ToString();
    };
    const bool swap = !c.mount_point && (!c.fs_type || *c.fs_type == "swap");
    if (!swap && c.fs_type && *c.fs_type == "swap") {
      *error = origin("fs-type") + ": [" + d.name + "] fs-type: swap, but mount-point is set (" +
               origin("mount-point") + ")";
      return false;
    }
    d.fs_type = swap ? "swap" : c.fs_type.value_or("ext2");
    d.mount_point = c.mount_point.value_or("");
    d.options = c.options;
    d.swap_priority = c.swap_priority;
    if (!c.algorithms.empty()) {
      d.primary = c.algorithms[0];
      d.algorithm = c.algorithms[0].name;
      d.recompression.assign(c.algorithms.begin() + 1, c.algorithms.end());
    }
    d.writeback_device = c.writeback_device;
    if (c.writeback_limit_mb) d.writeback_limit_pages = *c.writeback_limit_mb * (kMiB / 4096);
    if (c.recompress_idle_s && c.writeback_idle_s && *c.recompress_idle_s >= *c.writeback_idle_s)
      warnings->push_back(d.name + ": recompress-idle-age (" +
                          std::to_string(*c.recompress_idle_s) +
                          " s) is not below writeback-idle-age (" +
                          std::to_string(*c.writeback_idle_s) +
                          " s): pages are written back before they are recompressed");
    d.writeback_idle_s = c.writeback_idle_s.value_or(0);
    d.recompress_idle_s = c.recompress_idle_s.value_or(0);
    if (d.writeback_device.empty() && (c.writeback_idle_s || c.writeback_limit_mb)) {
      const char* key = c.writeback_idle_s ? "writeback-idle-age" : "writeback-limit";
      *error = origin(key) + ": [" + d.name + "] " + key + ": no writeback-device";
      return false;
    }
    if (c.recompress_idle_s && d.recompression.empty()) {
      *error = origin("recompress-idle-age") + ": [" + d.name +
               "] recompress-idle-age: compression-algorithm names no algorithm to recompress with";
      return false;
    }

    if (c.host_memory_limit_mb && *c.host_memory_limit_mb < ram_mib) {
      d.enabled = false;
      d.why_disabled = "ram (" + std::to_string(ram_mib) + " MiB) is above host-memory-limit (" +
                       std::to_string(*c.host_memory_limit_mb) + " MiB)";
      devices->push_back(std::move(d));
      continue;
    }

    if (c.fraction || c.max_size_mb) {
      // The obsolete pair, as zram-generator computes it.
      const double fraction = c.fraction.value_or(0.5);
      const std::optional<std::uint64_t> max = c.max_size_mb.value_or(std::nullopt);
      std::ostringstream t;
      t << "zram-fraction = " << fraction << ", max-zram-size = ";
      if (max)
        t << *max;
      else
        t << "none";
      d.size_text = t.str();
      const double f = fraction * static_cast<double>(ram_mib);
      std::uint64_t mib = f >= 18446744073709551616.0 ? UINT64_MAX : static_cast<std::uint64_t>(f);
      if (max && *max < mib) mib = *max;
      if (mib > UINT64_MAX / kMiB) {
        *error = origin(c.fraction ? "zram-fraction" : "max-zram-size") + ": [" + d.name + "] " +
                 d.size_text + ": more than 2^64 bytes";
        return false;
      }
      d.size_mib = static_cast<double>(mib);
      d.disksize = mib * kMiB;
    } else if (c.size) {
      d.size_text = c.size->expr.text();
      if (!EvaluateSize(*c.size, d.name, vars, &d.size_mib, &d.disksize, error)) return false;
    } else {
      SizeSetting def;
      ExprError unused;
      def.expr.Parse(kDefaultSize, &unused);
      def.key = "zram-size";
      def.origin = {"(default)", 0};
      d.size_text = kDefaultSize;
      if (!EvaluateSize(def, d.name, vars, &d.size_mib, &d.disksize, error)) return false;
    }
    if (d.disksize == 0) {
      d.enabled = false;
      d.why_disabled = "its size is 0";
      devices->push_back(std::move(d));
      continue;
    }
    if (c.resident_limit) {
      double mib;
      if (!EvaluateSize(*c.resident_limit, d.name, vars, &mib, &d.mem_limit, error)) return false;
    }
    if (ram_mib > 0 && d.disksize / (ram_mib * kMiB) > 32)
      warnings->push_back(d.name + ": a size of " + std::to_string(d.disksize) + " bytes (" +
                          d.size_text + ") would need a compression ratio of " +
                          std::to_string(d.disksize / (ram_mib * kMiB)) + " with " +
                          std::to_string(ram_mib) + " MiB of RAM: sizes are in MiB");
    devices->push_back(std::move(d));
  }
  return true;
}

}  // namespace hzsetup
