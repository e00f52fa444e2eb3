// SPDX-License-Identifier: GPL-2.0
#include "options.h"

#include <linux/hzram.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <utility>

#ifndef HZRAM_VERSION
#error "HZRAM_VERSION is defined by CMake, from dkms.conf"
#endif

namespace hzramd {
namespace {

// A whole decimal number in [lo, hi].
bool ParseUnsigned(std::string_view s, unsigned long lo, unsigned long hi, unsigned long* out) {
  if (s.empty() || s.size() > 10) return false;
  unsigned long v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<unsigned long>(c - '0');
  }
  if (v < lo || v > hi) return false;
  *out = v;
  return true;
}

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
         "                  module, and compare with liblz4 on one thread\n"
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

ParseResult ParseOptions(int argc, const char* const* argv, Options* o, std::string* error) {
  *o = Options();
  bool given_batch = false, given_seconds = false;
  for (int i = 1; i < argc; i++) {
    std::string arg = argv[i], value;
    bool has_value = false;
    if (arg.rfind("--", 0) == 0) {
      if (const auto eq = arg.find('='); eq != std::string::npos) {
        value = arg.substr(eq + 1);
        arg.resize(eq);
        has_value = true;
      }
    } else if (arg == "-h") {
      arg = "--help";
    } else if (arg == "-V") {
      arg = "--version";
    } else {
      *error = "unexpected argument '" + arg + "'";
      return ParseResult::kUsage;
    }

    static const char* const kFlags[] = {"--help", "--version", "--no-mlock"};
    static const char* const kValued[] = {"--device", "--threads",     "--backend", "--log-level",
                                          "--bench",  "--batch-pages", "--seconds", "--json"};
    bool flag = false, valued = false;
    for (const char* f : kFlags) flag |= arg == f;
    for (const char* f : kValued) valued |= arg == f;
    if (!flag && !valued) {
      *error = "unknown option '" + arg + "'";
      return ParseResult::kUsage;
    }
    if (flag && has_value) {
      *error = "option " + arg + " takes no value";
      return ParseResult::kUsage;
    }
    if (valued && !has_value) {
      if (i + 1 >= argc) {
        *error = "option " + arg + " needs a value";
        return ParseResult::kUsage;
      }
      value = argv[++i];
    }
    auto bad = [&](const char* what) {
      *error = "bad value '" + value + "' for " + arg + ": " + what;
      return ParseResult::kUsage;
    };

    unsigned long v;
    if (arg == "--help") {
      return ParseResult::kHelp;
    } else if (arg == "--version") {
      return ParseResult::kVersion;
    } else if (arg == "--no-mlock") {
      o->mlock = false;
    } else if (arg == "--device") {
      std::string_view rest = value;
      for (;;) {
        const auto comma = rest.find(',');
        if (!ParseUnsigned(rest.substr(0, comma), 0, HZRAM_MAX_DEVICES - 1, &v))
          return bad("device numbers are 0 to 255, as a list N,N,...");
        for (unsigned d : o->devices)
          if (d == v) return bad("device given twice");
        o->devices.push_back(static_cast<unsigned>(v));
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
      }
    } else if (arg == "--threads") {
      if (!ParseUnsigned(value, 1, 1024, &v)) return bad("1 to 1024 threads");
      o->threads = static_cast<unsigned>(v);
    } else if (arg == "--backend") {
      if (!Lookup(kBackends, value, &o->backend)) return bad("cpu, gpu, hybrid or auto");
    } else if (arg == "--log-level") {
      if (!Lookup(kLogLevels, value, &o->log_level)) return bad("error, warn, info or debug");
    } else if (arg == "--bench") {
      if (value.empty()) return bad("a file of 4 KiB pages");
      o->bench = value;
    } else if (arg == "--batch-pages") {
      if (!ParseUnsigned(value, 1, 4096, &v)) return bad("1 to 4096 pages");
      o->batch_pages = v;
      given_batch = true;
    } else if (arg == "--seconds") {
      if (!ParseSeconds(value, &o->seconds)) return bad("seconds, more than 0, at most 3600");
      given_seconds = true;
    } else if (arg == "--json") {
      if (value.empty()) return bad("a file name");
      o->json = value;
    }
  }

  if (o->bench.empty()) {
    const char* bench_only = nullptr;
    if (given_batch)
      bench_only = "--batch-pages";
    else if (given_seconds)
      bench_only = "--seconds";
    else if (!o->json.empty())
      bench_only = "--json";
    if (bench_only) {
      *error = std::string(bench_only) + " is an option of --bench";
      return ParseResult::kUsage;
    }
    if (o->devices.empty()) {
      *error = "no device to serve: give --device N";
      return ParseResult::kUsage;
    }
  } else if (!o->devices.empty()) {
    *error = "--bench runs without devices: drop --device";
    return ParseResult::kUsage;
  }
  return ParseResult::kRun;
}

}  // namespace hzramd
