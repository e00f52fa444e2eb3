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

// The trial's pages: what memory holds, in miniature. Generated from a
// fixed seed, so every process measures the same bytes.
constexpr std::size_t kTrialPages = 12;
// Rounds of the trial: each ISA runs once per round, the ISAs in turn
// (so that a disturbance hits them alike); the best round counts.
constexpr int kTrialRounds = 8;
// A wider ISA is taken only when it beats the narrower one by this much:
// a tie is noise, and the narrower one is the safer bet (no wider
// registers to power up, nothing shared with other code to slow down).
constexpr double kWiderMargin = 1.02;

std::uint64_t Next(std::uint64_t* s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

// Text: words, spaces, line breaks and numbers, as in a file cache or a
// heap of strings.
void TextPage(std::uint8_t* p, std::uint64_t* s) {
  static const char* const kWords[] = {
      "the ",     "memory ",  "page ",  "kernel ", "of ",      "swap ",   "and ",
      "to ",      "a ",       "in ",    "block ",  "return ",  "struct ", "int ",
      "const ",   "if (",     ") {\n",  "}\n",     "error: ",  "value ", "= ",
      "compress ", "<div class=\"", "\">", "\n    ", "http://", ".com/", "; "};
  constexpr std::size_t kCount = sizeof(kWords) / sizeof(kWords[0]);
  std::size_t i = 0;
  while (i < kPageSize) {
    const std::uint64_t r = Next(s);
    if (r % 9 == 0) {
      // A number: a few random digits.
      for (unsigned d = 0; d < 1 + (r >> 8) % 6 && i < kPageSize; d++)
        p[i++] = static_cast<std::uint8_t>('0' + (r >> (12 + 4 * d)) % 10);
      if (i < kPageSize) p[i++] = ' ';
      continue;
    }
    const char* w = kWords[(r >> 8) % kCount];
    for (std::size_t j = 0; w[j] && i < kPageSize; j++) p[i++] = static_cast<std::uint8_t>(w[j]);
  }
}

// An array of records of @size bytes, as a heap or a slab holds them:
// each record is one template (a type pointer, pointers into one region,
// small counts and flags, zero padding) with some fields changed: a link
// to the next record, a counter, and now and then a pointer or a hash.
void RecordPage(std::uint8_t* p, std::uint64_t* s, std::size_t size) {
  const std::uint64_t heap = 0x00005581c2000000ull + (Next(s) & 0xfffff0);
  std::uint64_t tmpl[32] = {};
  const std::size_t words = size / 8;
  for (std::size_t w = 0; w < words; w++) {
    const std::uint64_t r = Next(s);
    switch (r % 5) {
      case 0: tmpl[w] = heap + (r >> 8) % 0x100000 * 16; break;  // a pointer
      case 1: tmpl[w] = (r >> 8) % 16; break;                    // a small number
      case 2: tmpl[w] = (r >> 8) & 0xffffffff00000000ull; break; // a flag word
      default: tmpl[w] = 0; break;                               // padding
    }
  }
  for (std::size_t off = 0, i = 0; off + size <= kPageSize; off += size, i++) {
    std::uint64_t rec[32];
    std::memcpy(rec, tmpl, size);
    const std::uint64_t r = Next(s);
    rec[0] = heap + (i + 1) * size;                  // the next record
    rec[words / 2] = i + (r >> 32) % 4;              // a counter
    if (r % 3 == 0) rec[words - 1] = Next(s);        // a hash or a key
    if (r % 5 == 0) rec[1] = heap + (r >> 8) % 0x100000 * 16;
    std::memcpy(p + off, rec, size);
  }
  std::memset(p + kPageSize / size * size, 0, kPageSize % size);
}

// Short strings and numbers between pointers, as a heap of small objects.
void StringPage(std::uint8_t* p, std::uint64_t* s) {
  const std::uint64_t heap = 0x0000115a2ac80000ull + (Next(s) & 0xfff0);
  for (std::size_t off = 0; off < kPageSize; off += 16) {
    const std::uint64_t r = Next(s);
    const std::uint64_t ptr = heap + (r & 0xfff) * 16;
    char text[9];
    std::snprintf(text, sizeof(text), "%c%06u", r % 4 ? '5' : 'k', static_cast<unsigned>((r >> 20) % 1000000));
    std::memcpy(p + off, &ptr, 8);
    std::memcpy(p + off + 8, text, 8);
  }
}

// Mostly zeros with a few scattered values: a sparse table, a stack.
void SparsePage(std::uint8_t* p, std::uint64_t* s) {
  std::memset(p, 0, kPageSize);
  for (int i = 0; i < 40; i++) {
    const std::uint64_t r = Next(s);
    const std::uint64_t v = r % 2 ? r >> 40 : 0x00007ffd00000000ull + (r & 0xffffff);
    std::memcpy(p + (r >> 20) % (kPageSize / 8) * 8, &v, 8);
  }
}

// A page barely used: a header of a few words, and zeros but for a
// value or two (a fresh allocation, a stack's far end).
void EmptyPage(std::uint8_t* p, std::uint64_t* s) {
  std::memset(p, 0, kPageSize);
  const std::uint64_t head[6] = {0x40000, Next(s) % 64, ~0ull, 0, 0, 0x00003cb4cb200000ull};
  std::memcpy(p, head, sizeof(head));
  for (int i = 0; i < 2; i++) {
    const std::uint64_t r = Next(s);
    std::memcpy(p + 256 + (r >> 16) % ((kPageSize - 512) / 8) * 8, &r, 8);
  }
}

// Incompressible: already compressed or encrypted data.
void RandomPage(std::uint8_t* p, std::uint64_t* s) {
  for (std::size_t i = 0; i < kPageSize; i += 8) {
    const std::uint64_t v = Next(s);
    std::memcpy(p + i, &v, 8);
  }
}

struct TrialData {
  alignas(64) std::uint8_t pages[kTrialPages][kPageSize];
  alignas(64) std::uint8_t packed[kTrialPages][kCompressBufferSize];
  std::size_t packed_len[kTrialPages];
  alignas(64) std::uint8_t scratch[kCompressBufferSize];
  alignas(64) std::uint8_t out[kPageSize];
  Lz4Table table;
};

// The trial's pages: one of text, of short strings, sparse, nearly empty
// and random, and arrays of records of these sizes, as a heap mostly is.
constexpr std::size_t kRecordSizes[] = {24, 32, 48, 64, 96, 128, 256};
static_assert(5 + sizeof(kRecordSizes) / sizeof(kRecordSizes[0]) == kTrialPages);

void MakeTrialPages(TrialData* d) {
  std::uint64_t s = 0x9e3779b97f4a7c15ull;
  for (std::size_t i = 0; i < kTrialPages; i++) {
    std::uint8_t* p = d->pages[i];
    switch (i) {
      case 0: TextPage(p, &s); break;
      case 1: StringPage(p, &s); break;
      case 2: SparsePage(p, &s); break;
      case 3: EmptyPage(p, &s); break;
      case 4: RandomPage(p, &s); break;
      default: RecordPage(p, &s, kRecordSizes[i - 5]); break;
    }
  }
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
