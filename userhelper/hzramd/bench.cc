// SPDX-License-Identifier: GPL-2.0
#include "bench.h"

#include <sched.h>
#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include "daemon.h"
#include "hzram-common/json.h"
#include "loopback.h"

namespace hzramd {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kPageSize = HZRAM_PAGE_SIZE;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// The CPU time this process has used, its threads' included (user and
// system), in seconds.
double CpuSeconds() {
  rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return s(ru.ru_utime) + s(ru.ru_stime);
}

struct Timing {
  double best = 0;        // the best pass's seconds; 0 if a pass failed
  int passes = 0;
  double cpu_seconds = 0;  // CPU time of all the passes (CpuSeconds())
};

// Run @pass (which returns false on failure) for at least @seconds and
// three times.
template <class F>
Timing TimePasses(double seconds, F&& pass) {
  Timing t;
  double spent = 0;
  const double cpu = CpuSeconds();
  for (; spent < seconds || t.passes < 3; t.passes++) {
    const auto a = Clock::now();
    if (!pass()) return {};
    const double s = Seconds(a, Clock::now());
    t.best = t.passes ? std::min(t.best, s) : s;
    spent += s;
  }
  t.cpu_seconds = CpuSeconds() - cpu;
  return t;
}

std::string CpuModel() {
  std::string model = "unknown CPU";
  if (FILE* f = std::fopen("/proc/cpuinfo", "r")) {
    char line[512];
    while (std::fgets(line, sizeof(line), f)) {
      const char* p = std::strchr(line, ':');
      if (!std::strncmp(line, "model name", 10) && p) {
        model.assign(p + 2, std::strcspn(p + 2, "\n"));
        break;
      }
    }
    std::fclose(f);
  }
  return model;
}

}  // namespace

int RunBench(const Options& o) {
  SetLogLevel(o.log_level);
  std::string error;
  auto io = LoopbackIo::FromFile(o.bench, static_cast<std::uint32_t>(o.batch_pages), kBenchBatches,
                                 &error);
  if (!io) {
    HZ_ERR("--bench: %s", error.c_str());
    return 1;
  }
  auto encoder = MakeEncoder(o.backend, o.threads, &error);
  if (!encoder) {
    HZ_ERR("%s", error.c_str());
    return 1;
  }
  const std::size_t n = io->pages(), bytes = n * kPageSize;
  // The in-memory device detaches at the end of every pass: not news.
  if (o.log_level == LogLevel::kInfo) SetLogLevel(LogLevel::kWarn);

  // The staging lent to a GPU backend once, as the daemon does for as
  // long as it serves a device (ServeLent()), not once a pass.
  const bool lent = encoder->ShareMemory(io->regions()) == 0;
  struct GiveBack {
    BatchEncoder& encoder;
    const Regions& regions;
    bool lent;
    ~GiveBack() {
      if (lent) encoder.UnshareMemory(regions);
    }
  } give_back{*encoder, io->regions(), lent};

  // The pipeline: a first pass, not timed, with every batch decoded again
  // by the encoder and compared with its pages.
  io->set_decoder(encoder.get());
  ServeStats check;
  if (Serve(*io, *encoder, &check)) return 1;
  if (io->bad_pages() || io->committed_pages() != n || check.not_encoded) {
    HZ_ERR(
        "--bench: the pipeline did not give the pages back: %llu wrong, %llu not encoded, %llu "
        "of %zu committed",
        static_cast<unsigned long long>(io->bad_pages()),
        static_cast<unsigned long long>(check.not_encoded.load()),
        static_cast<unsigned long long>(io->committed_pages()), n);
    return 1;
  }
  io->set_decoder(nullptr);
  const double ratio =
      static_cast<double>(bytes) / std::max<std::uint64_t>(1, check.stored_bytes.load());
  const Timing t = TimePasses(o.seconds, [&] {
    ServeStats st;
    io->Rewind();
    return Serve(*io, *encoder, &st) == 0 && st.pages.load() == n;
  });
  if (t.best == 0) {
    HZ_ERR("--bench: a timed pass failed");
    return 1;
  }
  // Host CPU per GiB of pages compressed: all the process's threads (the
  // codec's, a GPU backend's), over every timed pass.
  const double cpu_per_gib = t.cpu_seconds / (static_cast<double>(bytes) * t.passes / (1u << 30));

  cpu_set_t set;
  const unsigned cpus = sched_getaffinity(0, sizeof(set), &set) ? 1 : CPU_COUNT(&set);
  const std::string cpu = CpuModel(), enc = encoder->Describe();
  std::printf("hzramd --bench: %zu pages (%.1f MiB) of %s; %s, %u CPUs\n", n, bytes / 1048576.0,
              o.bench.c_str(), cpu.c_str(), cpus);
  std::printf("pipeline: %s; batches of %zu pages, %u in flight\n\n", enc.c_str(), o.batch_pages,
              kBenchBatches);
  std::printf("%-28s %12s %8s %8s %10s\n", "", "pages/s", "GB/s", "ratio", "CPU s/GiB");
  std::printf("%-28s %12.0f %8.2f %8.3f %10.3f\n", "hzramd pipeline", n / t.best,
              bytes / t.best / 1e9, ratio, cpu_per_gib);

  if (!o.json.empty()) {
    FILE* f = std::fopen(o.json.c_str(), "w");
    if (!f) {
      HZ_ERR("--json %s: %s", o.json.c_str(), std::strerror(errno));
      return 1;
    }
    std::fprintf(f, "{\n  \"file\": %s, \"pages\": %zu, \"cpu\": %s, \"cpus\": %u,\n",
                 hzram::JsonString(o.bench).c_str(), n, hzram::JsonString(cpu).c_str(), cpus);
    std::fprintf(f, "  \"encoder\": %s, \"batch_pages\": %zu, \"batches_in_flight\": %u,\n",
                 hzram::JsonString(enc).c_str(), o.batch_pages, kBenchBatches);
    std::fprintf(f,
                 "  \"pipeline\": {\"pages_per_s\": %.0f, \"gbs\": %.3f, \"ratio\": %.4f, "
                 "\"passes\": %d, \"cpu_s_per_gib\": %.4f}\n}\n",
                 n / t.best, bytes / t.best / 1e9, ratio, t.passes, cpu_per_gib);
    if (std::fclose(f)) {
      HZ_ERR("--json %s: %s", o.json.c_str(), std::strerror(errno));
      return 1;
    }
  }
  return 0;
}

}  // namespace hzramd
