// SPDX-License-Identifier: GPL-2.0
// Run-time choice of the page codec's instruction sets: by a short timed
// trial of each ISA the CPU supports, once per process.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "hzram/page_codec.h"
#include "hzram/pages.h"
#include "page_codec_isa.h"

namespace hzram {

namespace scalar {
extern const PageKernels kKernels;
}
namespace avx2 {
extern const PageKernels kKernels;
}
namespace avx512 {
extern const PageKernels kKernels;
}

const char* IsaName(Isa isa) {
  switch (isa) {
    case Isa::kScalar: return "scalar";
    case Isa::kAvx2: return "avx2";
    case Isa::kAvx512: return "avx512";
  }
  return "?";
}

bool IsaSupported(Isa isa) {
  // libgcc's checks include the OS saving the vector state (XGETBV).
  switch (isa) {
    case Isa::kScalar:
      return true;
    case Isa::kAvx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
             __builtin_cpu_supports("bmi2");
    case Isa::kAvx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("bmi") &&
             __builtin_cpu_supports("bmi2");
  }
  return false;
}

namespace {

// The trial's pages: what memory holds, in miniature (hzram/pages.h: one
// of each kind), from a fixed seed, so every process measures the same
// bytes.
constexpr std::size_t kTrialPages = kMixedCycle;
// Rounds of the trial: each ISA runs once per round, the ISAs in turn
// (so that a disturbance hits them alike); the best round counts.
constexpr int kTrialRounds = 8;
// A wider ISA is taken only when it beats the narrower one by this much:
// a tie is noise, and the narrower one is the safer bet (no wider
// registers to power up, nothing shared with other code to slow down).
constexpr double kWiderMargin = 1.02;

struct TrialData {
  alignas(64) std::uint8_t pages[kTrialPages][kPageSize];
  alignas(64) std::uint8_t packed[kTrialPages][kCompressBufferSize];
  std::size_t packed_len[kTrialPages];
  alignas(64) std::uint8_t scratch[kCompressBufferSize];
  alignas(64) std::uint8_t out[kPageSize];
  Lz4Table table;
};

void MakeTrialPages(TrialData* d) {
  MakeMixedPages(d->pages[0], kTrialPages);
  // The blocks to decompress: every ISA emits the same bytes.
  for (std::size_t i = 0; i < kTrialPages; i++)
    d->packed_len[i] =
        scalar::kKernels.compress(d->pages[i], d->packed[i], kPageSize, &d->table);
}

using Clock = std::chrono::steady_clock;

// Seconds to compress every trial page with @k, as the batch codec does:
// the same-fill check, then LZ4.
double TimeCompress(const PageKernels& k, TrialData* d) {
  const auto a = Clock::now();
  for (std::size_t i = 0; i < kTrialPages; i++) {
    std::uint64_t word;
    if (!k.same_filled(d->pages[i], &word))
      k.compress(d->pages[i], d->scratch, kPageSize, &d->table);
  }
  return std::chrono::duration<double>(Clock::now() - a).count();
}

// Seconds to decompress every trial block with @k; false if one fails
// (then the ISA is not to be used).
bool TimeDecompress(const PageKernels& k, TrialData* d, double* t) {
  bool ok = true;
  const auto a = Clock::now();
  for (std::size_t i = 0; i < kTrialPages; i++)
    if (d->packed_len[i]) ok &= k.decompress(d->packed[i], d->packed_len[i], d->out) == 0;
  *t = std::chrono::duration<double>(Clock::now() - a).count();
  return ok;
}

// The fastest of the ISAs measured, the narrowest on a near tie.
Isa Fastest(const double* gbs) {
  Isa best = Isa::kScalar;
  for (int i = 1; i < kIsaCount; i++)
    if (gbs[i] > gbs[static_cast<int>(best)] * kWiderMargin) best = static_cast<Isa>(i);
  return best;
}

IsaTrial RunTrial() {
  IsaTrial r{};
  const auto start = Clock::now();
  std::unique_ptr<TrialData> d(new TrialData());  // zeroed: every page of it touched
  MakeTrialPages(d.get());
  const std::size_t bytes = kTrialPages * kPageSize;
  std::size_t packed_pages = 0;
  for (std::size_t i = 0; i < kTrialPages; i++) packed_pages += d->packed_len[i] != 0;

  double best_c[kIsaCount], best_d[kIsaCount];
  bool ok[kIsaCount];
  for (int i = 0; i < kIsaCount; i++) {
    best_c[i] = best_d[i] = 1e9;
    ok[i] = IsaSupported(static_cast<Isa>(i));
  }
  for (int round = 0; round < kTrialRounds; round++) {
    for (int i = 0; i < kIsaCount; i++) {
      if (!ok[i]) continue;
      const PageKernels& k = KernelsFor(static_cast<Isa>(i));
      best_c[i] = std::min(best_c[i], TimeCompress(k, d.get()));
    }
    for (int i = 0; i < kIsaCount; i++) {
      if (!ok[i]) continue;
      double t;
      ok[i] = TimeDecompress(KernelsFor(static_cast<Isa>(i)), d.get(), &t);
      best_d[i] = std::min(best_d[i], t);
    }
  }
  for (int i = 0; i < kIsaCount; i++) {
    if (!ok[i]) continue;
    r.compress_gbs[i] = bytes / std::max(best_c[i], 1e-9) / 1e9;
    r.decompress_gbs[i] = packed_pages * kPageSize / std::max(best_d[i], 1e-9) / 1e9;
  }
  r.choice.compress = Fastest(r.compress_gbs);
  r.choice.decompress = Fastest(r.decompress_gbs);
  // One ISA for both: the least time for a page compressed and
  // decompressed once.
  double best = 0;
  r.best = Isa::kScalar;
  for (int i = 0; i < kIsaCount; i++) {
    if (!ok[i]) continue;
    const double per_page = 1 / r.compress_gbs[i] + 1 / r.decompress_gbs[i];
    if (best == 0 || per_page * kWiderMargin < best) {
      best = per_page;
      r.best = static_cast<Isa>(i);
    }
  }
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return r;
}

}  // namespace

const IsaTrial& IsaTrialResult() {
  // Run once, by the first caller; the others wait for it (C++11 static
  // initialisation is thread-safe).
  static const IsaTrial trial = RunTrial();
  return trial;
}

std::string IsaTrialSummary() {
  const IsaTrial& t = IsaTrialResult();
  std::string s = "trial GB/s compress/decompress:";
  char buf[96];
  for (int i = 0; i < kIsaCount; i++) {
    if (t.compress_gbs[i] == 0) {
      std::snprintf(buf, sizeof(buf), " %s -", IsaName(static_cast<Isa>(i)));
    } else {
      std::snprintf(buf, sizeof(buf), " %s %.2f/%.2f", IsaName(static_cast<Isa>(i)),
                    t.compress_gbs[i], t.decompress_gbs[i]);
    }
    s += buf;
  }
  std::snprintf(buf, sizeof(buf), " (%.1f ms)", t.seconds * 1e3);
  return s + buf;
}

Isa BestIsa() { return IsaTrialResult().best; }

int ParseIsa(std::string_view name, Isa* isa) {
  for (int i = 0; i < kIsaCount; i++) {
    if (name == IsaName(static_cast<Isa>(i))) {
      *isa = static_cast<Isa>(i);
      return 0;
    }
  }
  return -EINVAL;
}

namespace {

// $HZRAM_ISA: 1 if set (into *isa), 0 if not, or a negative errno.
int EnvIsa(Isa* isa) {
  const char* env = std::getenv("HZRAM_ISA");
  if (!env || !*env) return 0;
  Isa want;
  if (ParseIsa(env, &want)) return -EINVAL;
  if (!IsaSupported(want)) return -ENOTSUP;
  *isa = want;
  return 1;
}

}  // namespace

int DefaultIsa(Isa* isa) {
  const int e = EnvIsa(isa);
  if (e < 0) return e;
  if (e == 0) *isa = BestIsa();
  return 0;
}

int DefaultIsas(IsaChoice* choice, std::string* why) {
  Isa isa;
  const int e = EnvIsa(&isa);
  if (e < 0) return e;
  if (e == 1) {
    *choice = {isa, isa};
    if (why) *why = std::string("HZRAM_ISA=") + IsaName(isa);
    return 0;
  }
  *choice = IsaTrialResult().choice;
  if (why) *why = IsaTrialSummary();
  return 0;
}

const PageKernels& KernelsFor(Isa isa) {
  switch (isa) {
    case Isa::kAvx2: return avx2::kKernels;
    case Isa::kAvx512: return avx512::kKernels;
    case Isa::kScalar: break;
  }
  return scalar::kKernels;
}

}  // namespace hzram
