// SPDX-License-Identifier: GPL-2.0
//
// Encoding a batch: the backends that compress pages and decode them (the
// CPU codec, the GPU, both), and the batch descriptors and output slots
// of the helper protocol (include/uapi/linux/hzram.h).
#ifndef HZRAMD_ENCODER_H
#define HZRAMD_ENCODER_H

#include <linux/hzram.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "hzram/codec.h"
#include "options.h"

namespace hzramd {

// Compresses batches of pages into the codec's record layout.
class BatchEncoder {
 public:
  virtual ~BatchEncoder() = default;
  // As hzram::Codec::Compress: records[i] for pages[i], their data in
  // @data (Codec::ArenaBytes(n) bytes). Returns 0 or a negative errno.
  // May be called from several threads (calls are serialised).
  virtual int Encode(const hzram::PageList& pages, std::span<hzram_page_record> records,
                     std::span<std::uint8_t> data) = 0;
  // As hzram::Codec::Decompress: @records (their data in @data) into
  // @pages, a status per page. Returns the number of pages that failed,
  // or a negative errno if the backend did.
  virtual int Decode(std::span<const hzram_page_record> records,
                     std::span<const std::uint8_t> data, const hzram::MutablePageList& pages,
                     std::span<int> status) = 0;
  // What it runs on, e.g. "cpu, 2 threads, avx2".
  virtual std::string Describe() const = 0;
};

// The largest batch an encoder takes, in pages.
inline constexpr std::uint32_t kMaxBatchPages = 4096;

// The encoder of @backend, its threads started and its buffers allocated:
// @threads codec threads (0: one per CPU the caller may run on; for
// --backend gpu, the threads that stage pages for the GPU). auto is
// hybrid where a GPU is usable, else cpu. Returns nullptr and sets
// *error when @backend cannot run here.
std::unique_ptr<BatchEncoder> MakeEncoder(Backend backend, unsigned threads, std::string* error);

// A device's regions: its attach reply and where the two are mapped.
struct Regions {
  hzram_attach info{};
  const std::uint8_t* ro = nullptr;  // info.ro_size bytes: descriptors, then staging
  std::uint8_t* rw = nullptr;        // info.rw_size bytes: output slots
};

// Bytes of an output slot: @batch_pages records, then the data area.
constexpr std::uint64_t SlotBytes(std::uint32_t batch_pages) {
  return batch_pages * (sizeof(hzram_page_record) + std::uint64_t{HZRAM_PAGE_SIZE});
}

// The attach reply of a device laid out as the module lays one out:
// @nr_batches descriptors, then @staging_pages pages of staging from the
// next page boundary; @nr_batches output slots back to back. For helpers
// of the pipeline that stand in for the module (--bench, tests).
hzram_attach LayoutLikeModule(std::uint32_t nr_batches, std::uint32_t batch_pages,
                              std::size_t staging_pages);

// Whether an attach reply describes regions this helper can use (not the
// features: see AttachFailure). If not, *why says what is wrong.
bool CheckGeometry(const hzram_attach& info, std::string* why);

// Do batch @batch of @r as its descriptor says. HZRAM_OP_COMPRESS:
// nr_pages pages read in place from the staging arena, their records and
// data written in place into the batch's output slot. HZRAM_OP_DECOMPRESS:
// nr_pages LZ4 records (and their data) read in place from the staging
// arena, page i decoded into page i of the slot's data area, its record
// HZRAM_PAGE_RAW, or kind 0 if it did not decode. *desc gets the
// descriptor as read (its seq goes into the COMMIT). Returns
//   0             the records are written: commit;
//   -EINVAL       the descriptor lies outside the regions: nothing was
//                 written, do not commit (the kernel takes the batch
//                 back after its timeout);
//   -EOPNOTSUPP   an op or flags this helper does not know,
//   other < 0     the encoder failed: either way the records are written
//                 as not encoded (kind 0): commit, and the kernel
//                 compresses or decodes the pages itself.
// A decoded batch where only some pages failed returns 0.
// @batch must be below info.nr_batches.
int EncodeBatch(BatchEncoder& encoder, const Regions& r, std::uint32_t batch,
                hzram_batch_desc* desc);

}  // namespace hzramd

#endif  // HZRAMD_ENCODER_H
