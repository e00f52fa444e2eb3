// SPDX-License-Identifier: GPL-2.0
//
// hzram page codec: LZ4 (block format) for single 4 KiB pages, with a
// scalar, an AVX2 and an AVX-512 implementation chosen at run time.
//
// Host-only header. Every pointer is host memory; sizes are in bytes.
#ifndef HZRAM_PAGE_CODEC_H
#define HZRAM_PAGE_CODEC_H

#include <linux/hzram.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

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
inline constexpr int kIsaCount = 3;

// "scalar", "avx2" or "avx512".
const char* IsaName(Isa isa);

// Whether this CPU (and OS) can run @isa.
bool IsaSupported(Isa isa);

// The ISAs a codec runs: one to compress, one to decompress. They are
// interchangeable (all emit the same bytes and read any LZ4 block), so
// each direction can take the one fastest at it.
struct IsaChoice {
  Isa compress = Isa::kScalar;
  Isa decompress = Isa::kScalar;
};

// The start-up trial: each ISA this CPU supports compresses and
// decompresses a dozen built-in pages (text, arrays of records, sparse
// tables and random bytes, generated from a fixed seed), a few rounds in
// turn, best round counted; a few milliseconds in all. It runs once per
// process, on the first call that needs it (thread-safe: later callers
// wait for it and then share its result).
struct IsaTrial {
  // GB/s of page data, by Isa; 0 for an ISA this CPU cannot run.
  double compress_gbs[kIsaCount];
  double decompress_gbs[kIsaCount];
  // The fastest for each direction; a wider ISA must beat a narrower one
  // by 2% to be taken (a closer result is within the noise).
  IsaChoice choice;
  // One ISA for both: the least time to compress and decompress a page.
  Isa best;
  // How long the trial took, page generation included.
  double seconds;
};
const IsaTrial& IsaTrialResult();

// The trial's figures and its time, in one line, e.g. "trial GB/s
// compress/decompress: scalar 0.52/1.90 avx2 0.95/3.40 avx512 - (2.1 ms)".
std::string IsaTrialSummary();

// The one ISA the trial found fastest for compression and decompression
// together (IsaTrial::best); always one this CPU supports.
Isa BestIsa();

// Parse an ISA name as IsaName() prints it. Returns 0, or -EINVAL for an
// unknown name.
int ParseIsa(std::string_view name, Isa* isa);

// The ISA to use by default: $HZRAM_ISA when set (a name for ParseIsa),
// else BestIsa(). Returns 0, -EINVAL for an unknown name, or -ENOTSUP
// when this CPU cannot run the ISA named.
int DefaultIsa(Isa* isa);

// The ISAs to use by default: $HZRAM_ISA for both when set, else the
// trial's choice for each direction (IsaTrial::choice). *why (if @why)
// says which: "HZRAM_ISA=avx2", or IsaTrialSummary(). Returns as
// DefaultIsa().
int DefaultIsas(IsaChoice* choice, std::string* why = nullptr);

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

// The functions of @isa, whether or not this CPU can run them.
const PageKernels& KernelsFor(Isa isa);

}  // namespace hzram

#endif  // HZRAM_PAGE_CODEC_H
