// SPDX-License-Identifier: GPL-2.0
//
// hzram page codec: LZ4 (block format) for single 4 KiB pages, with a
// scalar, an AVX2 and an AVX-512 implementation chosen at run time. The
// choice and each ISA's functions are private to the library, its tests
// and hzbench (lib/page_codec_isa.h).
//
// Host-only header. Every pointer is host memory; sizes are in bytes.
#ifndef HZRAM_PAGE_CODEC_H
#define HZRAM_PAGE_CODEC_H

#include <linux/hzram.h>

#include <cstddef>
#include <cstdint>

namespace hzram {

inline constexpr std::size_t kPageSize = HZRAM_PAGE_SIZE;

// Room a compressor output buffer needs: LZ4's worst case for a page
// (kPageSize + kPageSize / 255 + 16) plus slack for the wide copies.
inline constexpr std::size_t kCompressBufferSize = kPageSize + 256;

// Hash table of the compressor: 4096 16-bit positions (8 KiB, in L1; half
// of liblz4's), cleared for each page. One per thread.
inline constexpr int kLz4HashLog = 12;
struct Lz4Table {
  alignas(64) std::uint16_t slot[1u << kLz4HashLog];
};

enum class Isa : int { kScalar = 0, kAvx2 = 1, kAvx512 = 2 };

// "scalar", "avx2" or "avx512".
const char* IsaName(Isa isa);

// The single-page functions of one ISA.
struct PageKernels {
  Isa isa;

  // True if the page is one 8-byte word repeated; stores it in *word.
  bool (*same_filled)(const void* page, std::uint64_t* word);

  // Fill a page with @word.
  void (*fill)(void* page, std::uint64_t word);

  // Compress one page (kPageSize bytes at @page) into @dst, which has
  // kCompressBufferSize bytes. Returns the length of the LZ4 block, or 0
  // when it would take @limit bytes or more (then store the page raw).
  // @limit is at most kPageSize. @table is scratch, of any content.
  std::size_t (*compress)(const void* page, void* dst, std::size_t limit,
                          Lz4Table* table);

  // Decompress an LZ4 block of @len bytes into one page (kPageSize bytes
  // at @page). Returns 0, or -EBADMSG when the block is malformed or does
  // not decode to exactly one page; it never reads outside the block nor
  // writes outside the page.
  int (*decompress)(const void* src, std::size_t len, void* page);
};

}  // namespace hzram

#endif  // HZRAM_PAGE_CODEC_H
