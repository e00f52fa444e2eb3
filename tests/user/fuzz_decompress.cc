// SPDX-License-Identifier: GPL-2.0
// libFuzzer target: the page decompressor of every ISA this CPU runs, on
// any input, under AddressSanitizer and UndefinedBehaviorSanitizer.
//
// - It must never read outside the input nor write outside the page (the
//   page is an exact-size heap buffer, so ASan sees any overrun).
// - It must agree with liblz4: what it accepts liblz4 decodes to the same
//   page, and what liblz4 decodes to exactly one page it accepts, unless
//   the block has a zero offset, which the LZ4 format forbids and liblz4
//   lets through.
// - The input, cut or repeated to a page, must round-trip through the
//   compressor of every ISA.
#include <lz4.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "hzram/page_codec.h"
#include "lz4_format.h"
#include "page_codec_isa.h"

using namespace hzram;

// Whether the block's sequences, read as far as they go, hold a zero
// offset.
static bool HasZeroOffset(const std::uint8_t* ip, std::size_t size) {
  const std::uint8_t* const end = ip + size;
  while (ip < end) {
    const unsigned token = *ip++;
    std::size_t lit = token >> lz4::kMlBits;
    if (lit == lz4::kRunMask) {
      unsigned s;
      do {
        if (ip >= end) return false;
        s = *ip++;
        lit += s;
      } while (s == 255);
    }
    if (lit >= static_cast<std::size_t>(end - ip)) return false;
    ip += lit;
    if (end - ip < 2) return false;
    if (ip[0] == 0 && ip[1] == 0) return true;
    ip += 2;
    if ((token & lz4::kMlMask) == lz4::kMlMask) {
      unsigned s;
      do {
        if (ip >= end) return false;
        s = *ip++;
      } while (s == 255);
    }
  }
  return false;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Exact-size copies: any read past the input is an overrun.
  std::unique_ptr<std::uint8_t[]> in(new std::uint8_t[size ? size : 1]);
  std::memcpy(in.get(), data, size);
  std::unique_ptr<std::uint8_t[]> page(new std::uint8_t[kPageSize]);
  std::unique_ptr<std::uint8_t[]> ref(new std::uint8_t[kPageSize]);

  const int lib = size ? LZ4_decompress_safe(reinterpret_cast<const char*>(in.get()),
                                             reinterpret_cast<char*>(ref.get()),
                                             static_cast<int>(size), kPageSize)
                       : -1;
  for (int i = 0; i < kIsaCount; i++) {
    const Isa isa = static_cast<Isa>(i);
    if (!IsaSupported(isa)) continue;
    const PageKernels& k = KernelsFor(isa);
    const int ret = k.decompress(in.get(), size, page.get());
    if (ret != 0 && ret != -EBADMSG) std::abort();
    if (ret == 0 && (lib != static_cast<int>(kPageSize) || std::memcmp(page.get(), ref.get(), kPageSize)))
      std::abort();
    if (ret != 0 && lib == static_cast<int>(kPageSize) && !HasZeroOffset(in.get(), size))
      std::abort();
  }

  // The input as a page, through the compressor and back.
  if (size) {
    std::unique_ptr<std::uint8_t[]> src(new std::uint8_t[kPageSize]);
    for (std::size_t i = 0; i < kPageSize; i++) src[i] = data[i % size];
    std::unique_ptr<std::uint8_t[]> out(new std::uint8_t[kCompressBufferSize]);
    std::unique_ptr<Lz4Table> table(new Lz4Table);
    for (int i = 0; i < kIsaCount; i++) {
      const Isa isa = static_cast<Isa>(i);
      if (!IsaSupported(isa)) continue;
      const PageKernels& k = KernelsFor(isa);
      const std::size_t len = k.compress(src.get(), out.get(), kPageSize, table.get());
      if (len == 0) continue;
      if (k.decompress(out.get(), len, page.get()) != 0 ||
          std::memcmp(page.get(), src.get(), kPageSize))
        std::abort();
    }
  }
  return 0;
}
