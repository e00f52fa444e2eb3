// SPDX-License-Identifier: GPL-2.0
// fuzz_seeds PAGES DIR COUNT: write COUNT seed inputs for the decompressor
// fuzz target into DIR: pages of the file PAGES (every n-th), each
// compressed by liblz4 and by the codec, so that fuzzing starts from real
// LZ4 blocks of real memory pages.
#include <lz4.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "hzram/page_codec.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: fuzz_seeds PAGES DIR COUNT\n");
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
