// SPDX-License-Identifier: GPL-2.0
// fuzz_seeds PAGES DIR COUNT: write COUNT seed inputs for the decompressor
// fuzz target into DIR: pages of the file PAGES (every n-th), each
// compressed by liblz4 and by the codec, so that fuzzing starts from real
// LZ4 blocks of real memory pages.
// fuzz_seeds --records PAGES DIR COUNT: seeds for the record-path target
// (fuzz_records.h): batches of 1 to 16 such pages, compressed by the batch
// codec, their records and arena.
#include <lz4.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_records.h"
#include "hzram/codec.h"
#include "hzram/page_codec.h"
#include "page_codec_isa.h"

namespace {

bool Write(const std::string& path, const void* p, std::size_t n) {
  FILE* o = std::fopen(path.c_str(), "wb");
  const bool ok = o && std::fwrite(p, 1, n, o) == n;
  if (o) std::fclose(o);
  return ok;
}

int RecordSeeds(const std::vector<unsigned char>& data, std::size_t pages, const char* dir,
                long count) {
  hzram::CodecOptions o;
  o.threads = 1;
  o.pin_threads = false;
  auto codec = hzram::Codec::Create(o);
  if (!codec) return 1;
  constexpr std::size_t kMax = hzram::test::kFuzzMaxPages;
  std::vector<const void*> batch(kMax);
  std::vector<hzram_page_record> rec(kMax);
  std::vector<std::uint8_t> arena(hzram::Codec::ArenaBytes(kMax));
  for (long i = 0; i < count; i++) {
    const std::size_t n = 1 + static_cast<std::size_t>(i) % kMax;
    for (std::size_t j = 0; j < n; j++)
      batch[j] = &data[((static_cast<std::size_t>(i) * 7919 + j * 104729) % pages) * hzram::kPageSize];
    if (codec->Compress(hzram::PageList(batch.data(), n), std::span(rec.data(), n), arena)) return 1;
    std::uint64_t used = 0;
    for (std::size_t j = 0; j < n; j++)
      if (rec[j].kind != HZRAM_PAGE_SAME) used = std::max<std::uint64_t>(used, rec[j].value + rec[j].length);
    std::vector<std::uint8_t> in{static_cast<std::uint8_t>(n - 1), static_cast<std::uint8_t>(i % 4)};
    const auto* r = reinterpret_cast<const std::uint8_t*>(rec.data());
    in.insert(in.end(), r, r + n * sizeof(hzram_page_record));
    in.insert(in.end(), arena.begin(), arena.begin() + static_cast<std::ptrdiff_t>(used));
    if (!Write(std::string(dir) + "/seed-" + std::to_string(i), in.data(), in.size())) return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const bool records = argc > 1 && std::strcmp(argv[1], "--records") == 0;
  if (records) argc--, argv++;
  if (argc != 4) {
    std::fprintf(stderr, "usage: fuzz_seeds [--records] PAGES DIR COUNT\n");
    return 2;
  }
  FILE* f = std::fopen(argv[1], "rb");
  if (!f) {
    std::perror(argv[1]);
    return 1;
  }
  std::vector<unsigned char> data;
  unsigned char buf[1 << 16];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) data.insert(data.end(), buf, buf + n);
  std::fclose(f);
  const std::size_t pages = data.size() / hzram::kPageSize;
  const long count = std::atol(argv[3]);
  if (!pages || count < 1) return 2;
  if (records) return RecordSeeds(data, pages, argv[2], count);
  const hzram::PageKernels& k = hzram::KernelsFor(hzram::Isa::kScalar);
  hzram::Lz4Table table;
  std::vector<char> out(hzram::kCompressBufferSize);
  for (long i = 0; i < count; i++) {
    const unsigned char* page = &data[(i * 7919 % pages) * hzram::kPageSize];
    int len = i % 2 ? LZ4_compress_default(reinterpret_cast<const char*>(page), out.data(),
                                           hzram::kPageSize, out.size())
                    : static_cast<int>(k.compress(page, out.data(), hzram::kPageSize, &table));
    if (len <= 0) continue;
    const std::string path = std::string(argv[2]) + "/seed-" + std::to_string(i);
    FILE* o = std::fopen(path.c_str(), "wb");
    if (!o || std::fwrite(out.data(), 1, len, o) != static_cast<std::size_t>(len)) return 1;
    std::fclose(o);
  }
  return 0;
}
