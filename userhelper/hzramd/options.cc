// SPDX-License-Identifier: GPL-2.0
#include "options.h"

#include <linux/hzram.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <utility>

#include "hzram-common/number.h"
#include "hzram-common/options.h"

#ifndef HZRAM_VERSION
#error "HZRAM_VERSION is defined by CMake, from dkms.conf"
#endif

namespace hzramd {
namespace {

bool ParseSeconds(const std::string& s, double* out) {
  if (s.empty()) return false;
  char* end;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (*end || errno || !std::isfinite(v) || v <= 0 || v > 3600) return false;
  *out = v;
  return true;
}

const std::pair<const char*, Backend> kBackends[] = {{"auto", Backend::kAuto},
                                                     {"cpu", Backend::kCpu},
                                                     {"gpu", Backend::kGpu},
                                                     {"hybrid", Backend::kHybrid}};
const std::pair<const char*, LogLevel> kLogLevels[] = {{"error", LogLevel::kError},
                                                       {"warn", LogLevel::kWarn},
                                                       {"info", LogLevel::kInfo},
                                                       {"debug", LogLevel::kDebug}};

// The long name of option @id in @options.
const char* LongName(const option* options, int id) {
  for (; options->name; options++)
    if (options->val == id) return options->name;
  return "?";
}

template <class T, std::size_t N>
bool Lookup(const std::pair<const char*, T> (&table)[N], const std::string& name, T* out) {
  for (const auto& [n, v] : table)
    if (name == n) {
      *out = v;
      return true;
    }
  return false;
}

}  // namespace

const char* BackendName(Backend backend) {
  for (const auto& [name, b] : kBackends)
    if (b == backend) return name;
  return "?";
}

std::string UsageText() {
  return "usage: hzramd --device N[,N...] [--device N...] [--threads N]\n"
         "              [--backend cpu|gpu|hybrid|auto] [--log-level error|warn|info|debug]\n"
         "              [--no-mlock]\n"
         "       hzramd --bench FILE [--batch-pages N] [--seconds S] [--json FILE]\n"
         "              [--threads N] [--backend cpu|gpu|hybrid|auto]\n"
         "       hzramd --help | --version\n"
         "\n"
         "Compresses the write batches of hzram devices for the kernel module.\n"
         "  --device N      serve /dev/hzramN (a list, or repeated: several devices)\n"
         "  --threads N     codec threads (default: one per CPU)\n"
         "  --backend B     cpu, gpu (CUDA), hybrid (CPU and GPU), auto (hybrid where\n"
         "                  a GPU is usable, else cpu; the default)\n"
         "  --log-level L   error, warn, info (default) or debug\n"
         "  --no-mlock      do not lock the daemon's memory (tests, unprivileged runs)\n"
         "  --bench FILE    run the batch pipeline on FILE's 4 KiB pages, without the\n"
         "                  module: its speed and CPU time per GiB\n"
         "  --batch-pages N pages per batch for --bench (1..4096, default 1024)\n"
         "  --seconds S     how long --bench measures each figure (default 3)\n"
         "  --json FILE     --bench also writes its figures to FILE\n";
}

std::string VersionText() {
  std::string s = "hzramd " HZRAM_VERSION " (helper protocol " +
                  std::to_string(HZRAM_UAPI_VERSION) + "; backends: cpu";
#ifdef HZRAM_HAVE_CUDA
  s += ", gpu, hybrid";
#endif
  return s + ")\n";
}

namespace {

enum {
  kOptNoMlock = 256,
  kOptDevice,
  kOptThreads,
  kOptBackend,
  kOptLogLevel,
  kOptBench,
  kOptBatchPages,
  kOptSeconds,
  kOptJson,
};
const option kLongOptions[] = {
    {"help", no_argument, nullptr, 'h'},
    {"version", no_argument, nullptr, 'V'},
    {"no-mlock", no_argument, nullptr, kOptNoMlock},
    {"device", required_argument, nullptr, kOptDevice},
    {"threads", required_argument, nullptr, kOptThreads},
    {"backend", required_argument, nullptr, kOptBackend},
    {"log-level", required_argument, nullptr, kOptLogLevel},
    {"bench", required_argument, nullptr, kOptBench},
    {"batch-pages", required_argument, nullptr, kOptBatchPages},
    {"seconds", required_argument, nullptr, kOptSeconds},
    {"json", required_argument, nullptr, kOptJson},
    {nullptr, 0, nullptr, 0},
};

// The options given that keep their default's value in Options.
struct Given {
  bool batch_pages = false, seconds = false;
};

// The option walk: option @id (kLongOptions) with @value into @o, or
// false and *why for a bad value.
bool TakeOption(int id, const std::string& value, Options* o, Given* given, std::string* why) {
  auto bad = [&](const char* what) {
    *why = "bad value '" + value + "' for --" + LongName(kLongOptions, id) + ": " + what;
    return false;
  };
  unsigned long v;
  switch (id) {
    case kOptNoMlock:
      o->mlock = false;
      break;
    case kOptDevice: {
      std::string_view rest = value;
      for (;;) {
        const auto comma = rest.find(',');
        if (!hzram::ParseDecimal<unsigned long>(rest.substr(0, comma), 0, HZRAM_MAX_DEVICES - 1,
                                                &v))
          return bad("device numbers are 0 to 255, as a list N,N,...");
        for (unsigned d : o->devices)
          if (d == v) return bad("device given twice");
        o->devices.push_back(static_cast<unsigned>(v));
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
      }
      break;
    }
    case kOptThreads:
      if (!hzram::ParseDecimal<unsigned long>(value, 1, 1024, &v)) return bad("1 to 1024 threads");
      o->threads = static_cast<unsigned>(v);
      break;
    case kOptBackend:
      if (!Lookup(kBackends, value, &o->backend)) return bad("cpu, gpu, hybrid or auto");
      break;
    case kOptLogLevel:
      if (!Lookup(kLogLevels, value, &o->log_level)) return bad("error, warn, info or debug");
      break;
    case kOptBench:
      if (value.empty()) return bad("a file of 4 KiB pages");
      o->bench = value;
      break;
    case kOptBatchPages:
      if (!hzram::ParseDecimal<unsigned long>(value, 1, 4096, &v)) return bad("1 to 4096 pages");
      o->batch_pages = v;
      given->batch_pages = true;
      break;
    case kOptSeconds:
      if (!ParseSeconds(value, &o->seconds)) return bad("seconds, more than 0, at most 3600");
      given->seconds = true;
      break;
    case kOptJson:
      if (value.empty()) return bad("a file name");
      o->json = value;
      break;
  }
  return true;
}

// The option check: the options of a daemon or of --bench, not both.
// Returns what is wrong, or "".
std::string CheckOptions(const Options& o, const Given& given) {
  if (!o.bench.empty())
    return o.devices.empty() ? "" : "--bench runs without devices: drop --device";
  const char* bench_only = given.batch_pages ? "--batch-pages"
                           : given.seconds   ? "--seconds"
                           : !o.json.empty() ? "--json"
                                             : nullptr;
  if (bench_only) return std::string(bench_only) + " is an option of --bench";
  if (o.devices.empty()) return "no device to serve: give --device N";
  return "";
}

}  // namespace

ParseResult ParseOptions(int argc, const char* const* argv, Options* o, std::string* error) {
  *o = Options();
  Given given;
  ParseResult result = ParseResult::kRun;
  *error = hzram::WalkOptions(argc, argv, "hV", kLongOptions, false,
                              [&](int id, const char* value, std::string* why) {
                                if (id == 'h' || id == 'V') {
                                  result = id == 'h' ? ParseResult::kHelp : ParseResult::kVersion;
                                  return false;
                                }
                                return TakeOption(id, value ? value : "", o, &given, why);
                              });
  if (!error->empty()) return ParseResult::kUsage;
  if (result != ParseResult::kRun) return result;
  *error = CheckOptions(*o, given);
  return error->empty() ? ParseResult::kRun : ParseResult::kUsage;
}

}  // namespace hzramd
