// SPDX-License-Identifier: GPL-2.0
#include "bench.h"

#include <lz4.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

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

// Run @pass (which returns false on failure) for at least @seconds and
// three times; the best pass's time, or 0 if one failed.
template <class F>
double BestTime(double seconds, F&& pass) {
  double best = 0, spent = 0;
  for (int passes = 0; spent < seconds || passes < 3; passes++) {
    const auto a = Clock::now();
    if (!pass()) return 0;
    const double s = Seconds(a, Clock::now());
    best = passes ? std::min(best, s) : s;
    spent += s;
  }
  return best;
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

struct Figure {
  double seconds = 0;  // best pass over the file
  double ratio = 0;
};

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

  // The pipeline: a first pass with every record checked, not timed.
  io->set_verify(true);
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
  io->set_verify(false);
  Figure pipeline;
  pipeline.ratio =
      static_cast<double>(bytes) / std::max<std::uint64_t>(1, check.stored_bytes.load());
  pipeline.seconds = BestTime(o.seconds, [&] {
    ServeStats st;
    io->Rewind();
    return Serve(*io, *encoder, &st) == 0 && st.pages.load() == n;
  });
  if (pipeline.seconds == 0) {
    HZ_ERR("--bench: a timed pass failed");
    return 1;
  }

  // liblz4, page by page on one thread; a page that does not shrink is
  // counted as stored raw.
  Figure base;
  std::vector<char> out(LZ4_COMPRESSBOUND(kPageSize));
  std::size_t stored = 0;
  base.seconds = BestTime(o.seconds, [&] {
    stored = 0;
    for (std::size_t i = 0; i < n; i++) {
      const int len = LZ4_compress_default(reinterpret_cast<const char*>(io->page(i)), out.data(),
                                           kPageSize, static_cast<int>(out.size()));
      stored += std::min<std::size_t>(static_cast<std::size_t>(len), kPageSize);
    }
    return true;
  });
  base.ratio = static_cast<double>(bytes) / stored;

  cpu_set_t set;
  const unsigned cpus = sched_getaffinity(0, sizeof(set), &set) ? 1 : CPU_COUNT(&set);
  const std::string cpu = CpuModel(), enc = encoder->Describe();
  std::printf("hzramd --bench: %zu pages (%.1f MiB) of %s; %s, %u CPUs\n", n, bytes / 1048576.0,
              o.bench.c_str(), cpu.c_str(), cpus);
  std::printf("pipeline: %s; batches of %zu pages, %u in flight\n\n", enc.c_str(), o.batch_pages,
              kBenchBatches);
  std::printf("%-28s %12s %8s %8s %10s\n", "", "pages/s", "GB/s", "ratio", "x liblz4");
  for (const auto& [name, f] : {std::pair<const char*, const Figure&>{"liblz4, 1 thread", base},
                                {"hzramd pipeline", pipeline}})
    std::printf("%-28s %12.0f %8.2f %8.3f %10.2f\n", name, n / f.seconds, bytes / f.seconds / 1e9,
                f.ratio, base.seconds / f.seconds);

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
                 "  \"baseline\": {\"name\": \"liblz4 %s, LZ4_compress_default, 1 thread\", "
                 "\"pages_per_s\": %.0f, \"gbs\": %.3f, \"ratio\": %.4f},\n",
                 LZ4_versionString(), n / base.seconds, bytes / base.seconds / 1e9, base.ratio);
    std::fprintf(f,
                 "  \"pipeline\": {\"pages_per_s\": %.0f, \"gbs\": %.3f, \"ratio\": %.4f, "
                 "\"speedup\": %.3f}\n}\n",
                 n / pipeline.seconds, bytes / pipeline.seconds / 1e9, pipeline.ratio,
                 base.seconds / pipeline.seconds);
    if (std::fclose(f)) {
      HZ_ERR("--json %s: %s", o.json.c_str(), std::strerror(errno));
      return 1;
    }
  }
  return 0;
}

}  // namespace hzramd
