// SPDX-License-Identifier: GPL-2.0
// LoopbackIo's check against liblz4 (set_verify()), apart from the device
// (loopback_io.cc) so that hzramd, which links the device, does not link
// liblz4: only the tests do.
#include "loopback.h"

#include <lz4.h>

#include <cstring>

namespace hzramd {
namespace {

constexpr std::size_t kPageSize = HZRAM_PAGE_SIZE;

}  // namespace

void LoopbackIo::set_verify(bool verify) {
  if (verify)
    check_ = [this](std::uint32_t batch) { return Verify(batch); };
  else
    check_ = nullptr;
}

bool LoopbackIo::Verify(std::uint32_t batch) {
  const hzram_batch_desc& d = *desc(batch);
  const std::uint32_t bp = regions_.info.batch_pages;
  const auto* rec = reinterpret_cast<const hzram_page_record*>(rw_ + d.output_offset);
  const std::uint8_t* data = rw_ + d.output_offset + bp * sizeof(hzram_page_record);
  const std::uint64_t data_bytes = std::uint64_t{bp} * kPageSize;
  const std::uint64_t bad_before = bad_pages_;
  for (std::uint32_t i = 0; i < d.nr_pages; i++) {
    const hzram_page_record& r = rec[i];
    const std::uint8_t* page =
        ro_ + regions_.info.staging_offset + d.staging_offset + i * kPageSize;
    // Kind 0 (not encoded) is the kernel's to do.
    bool ok = hzram_page_record_check(&r, data_bytes) == HZRAM_RECORD_OK;
    if (ok && r.kind == HZRAM_PAGE_SAME) {
      for (std::size_t off = 0; ok && off < kPageSize; off += 8)
        ok = !std::memcmp(page + off, &r.value, 8);
    } else if (ok && r.kind == HZRAM_PAGE_RAW) {
      ok = !std::memcmp(data + r.value, page, kPageSize);
    } else if (ok && r.kind == HZRAM_PAGE_LZ4) {
      ok = LZ4_decompress_safe(reinterpret_cast<const char*>(data + r.value),
                               reinterpret_cast<char*>(scratch_.data()),
                               static_cast<int>(r.length),
                               kPageSize) == static_cast<int>(kPageSize) &&
           !std::memcmp(scratch_.data(), page, kPageSize);
    }
    bad_pages_ += !ok;
  }
  return bad_pages_ == bad_before;
}

}  // namespace hzramd
