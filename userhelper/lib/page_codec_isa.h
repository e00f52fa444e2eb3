// SPDX-License-Identifier: GPL-2.0
//
// The page codec's instruction sets, private to the library, its tests
// and hzbench: which ones this CPU runs, the start-up trial that chooses
// between them, and the single-page functions of each
// (hzram/page_codec.h's PageKernels).
//
// Host-only header. Every pointer is host memory; sizes are in bytes.
#ifndef HZRAM_PAGE_CODEC_ISA_H
#define HZRAM_PAGE_CODEC_ISA_H

#include <string>
#include <string_view>

#include "hzram/page_codec.h"

namespace hzram {

inline constexpr int kIsaCount = 3;

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

// The functions of @isa, whether or not this CPU can run them.
const PageKernels& KernelsFor(Isa isa);

}  // namespace hzram

#endif  // HZRAM_PAGE_CODEC_ISA_H
