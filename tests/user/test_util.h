// SPDX-License-Identifier: GPL-2.0
// Test pages and the corpus, for the codec tests.
#ifndef HZRAM_TEST_UTIL_H
#define HZRAM_TEST_UTIL_H

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "hzram/page_codec.h"
#include "hzram/pages.h"

namespace hzram::test {

using Page = std::vector<std::uint8_t>;

// The kernel's LZ4, renamed (tests/user/CMakeLists.txt).
extern "C" int kernel_LZ4_decompress_safe(const char* src, char* dst, int src_len, int dst_cap);
extern "C" int kernel_LZ4_compress_default(const char* src, char* dst, int src_len, int dst_cap,
                                           void* wrkmem);
inline constexpr std::size_t kKernelLz4WorkMem = 1 << 15;

// The library's generator (hzram/pages.h) on a state of the test's own:
// each draw seeds it with the last value.
inline std::uint64_t Next(std::uint64_t* s) {
  hzram::PageRng rng(*s);
  *s = rng.Next();
  return *s;
}

// Incompressible and text pages of the library's kinds, from @seed.
inline Page RandomPage(std::uint64_t seed) {
  Page p(kPageSize);
  hzram::PageRng rng(seed);
  hzram::MakePage(hzram::PageKind::kRandom, p.data(), &rng);
  return p;
}

inline Page TextPage(std::uint64_t seed) {
  Page p(kPageSize);
  hzram::PageRng rng(seed);
  hzram::MakePage(hzram::PageKind::kText, p.data(), &rng);
  return p;
}

// A page that repeats a @period-byte random pattern.
inline Page PeriodicPage(std::size_t period, std::uint64_t seed) {
  Page r = RandomPage(seed), p(kPageSize);
  for (std::size_t i = 0; i < kPageSize; i++) p[i] = r[i % period];
  return p;
}

inline Page WordPage(std::uint64_t word) {
  Page p(kPageSize);
  for (std::size_t i = 0; i < kPageSize; i += 8) std::memcpy(&p[i], &word, 8);
  return p;
}

struct NamedPage {
  std::string name;
  Page page;
};

// The boundary pages every codec must round-trip.
inline std::vector<NamedPage> BoundaryPages() {
  std::vector<NamedPage> v;
  v.push_back({"zeros", Page(kPageSize, 0)});
  for (std::size_t pos : {0ul, 1ul, 7ul, 8ul, 2048ul, 4088ul, 4095ul}) {
    Page p(kPageSize, 0);
    p[pos] = 0x5a;
    v.push_back({"one_byte_at_" + std::to_string(pos), p});
  }
  v.push_back({"same_word_ones", WordPage(~0ull)});
  v.push_back({"same_word_pattern", WordPage(0x0123456789abcdefull)});
  v.push_back({"same_word_pointer", WordPage(0x00007f12deadb000ull)});
  for (std::size_t pos : {0ul, 2047ul, 4095ul}) {
    Page p(kPageSize, 0x61);
    p[pos] = 0x9c;
    v.push_back({"repeated_byte_one_other_at_" + std::to_string(pos), p});
  }
  {
    // Same word but for the last byte: not same-filled.
    Page p = WordPage(0x1111111111111111ull);
    p[kPageSize - 1] = 0x12;
    v.push_back({"almost_same_filled", p});
  }
  v.push_back({"random", RandomPage(1)});
  v.push_back({"random_2", RandomPage(2)});
  v.push_back({"text", TextPage(3)});
  for (std::size_t period : {2ul, 3ul, 5ul, 7ul, 13ul, 16ul, 31ul, 33ul, 63ul, 65ul, 100ul, 1000ul})
    v.push_back({"period_" + std::to_string(period), PeriodicPage(period, period)});
  {
    Page p = RandomPage(4);
    std::memset(p.data() + 1000, 0, 2000);
    v.push_back({"random_with_zero_run", p});
  }
  {
    Page p(kPageSize, 0);
    Page r = RandomPage(5);
    std::memcpy(p.data() + kPageSize - 16, r.data(), 16);
    v.push_back({"zeros_then_16_random", p});
  }
  {
    Page p = RandomPage(6);
    std::memset(p.data(), 0, 16);
    v.push_back({"16_zeros_then_random", p});
  }
  return v;
}

// The page corpus (tests/data/procmem-64m.pages.xz decompressed): real
// anonymous memory. Its path is $HZRAM_CORPUS.
inline const std::vector<std::uint8_t>& Corpus() {
  static std::vector<std::uint8_t> data = [] {
    std::vector<std::uint8_t> d;
    const char* path = std::getenv("HZRAM_CORPUS");
    if (!path) return d;
    if (FILE* f = std::fopen(path, "rb")) {
      std::uint8_t buf[1 << 16];
      std::size_t n;
      while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) d.insert(d.end(), buf, buf + n);
      std::fclose(f);
    }
    d.resize(d.size() / kPageSize * kPageSize);
    return d;
  }();
  return data;
}

// Puts $HZRAM_ISA back as it was (a test that changes it must not change
// the ISA of the tests after it: HZRAM_ISA=avx512 runs them on AVX-512).
class SavedIsaEnv {
 public:
  SavedIsaEnv() {
    if (const char* v = std::getenv("HZRAM_ISA")) saved_ = v, had_ = true;
  }
  ~SavedIsaEnv() {
    if (had_) {
      setenv("HZRAM_ISA", saved_.c_str(), 1);
    } else {
      unsetenv("HZRAM_ISA");
    }
  }

 private:
  std::string saved_;
  bool had_ = false;
};

}  // namespace hzram::test

// In a test body: binds @var to the corpus, or skips the test, saying why,
// when $HZRAM_CORPUS is not set. A corpus that is set but holds no pages
// fails the test.
#define HZRAM_CORPUS_OR_SKIP(var)                                                   \
  if (!std::getenv("HZRAM_CORPUS"))                                                 \
    GTEST_SKIP() << "no page corpus: set HZRAM_CORPUS to the decompressed "         \
                    "tests/data/procmem-64m.pages.xz (make corpus)";                \
  const auto& var = ::hzram::test::Corpus();                                        \
  (void)var;                                                                        \
  ASSERT_FALSE(var.empty()) << "HZRAM_CORPUS=" << std::getenv("HZRAM_CORPUS")     \
                            << " holds no pages"

#endif  // HZRAM_TEST_UTIL_H
