// SPDX-License-Identifier: GPL-2.0
//
// A device in memory, for --bench and the tests: a buffer of pages serves
// as its staging arena and is handed out in batches, in order, through
// nr_batches descriptors and output slots laid out as the module lays
// them out. Once every page has been handed out and every batch
// committed, the next FETCH ends with -ECANCELED, as a detach would.
#ifndef HZRAMD_LOOPBACK_H
#define HZRAMD_LOOPBACK_H

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "daemon.h"

namespace hzramd {

class LoopbackIo final : public DeviceIo {
 public:
  // The whole 4 KiB pages of the file at @path (a partial last page is
  // left out), read once straight into the staging arena. nullptr and
  // *error when it cannot be read or holds no page.
  static std::unique_ptr<LoopbackIo> FromFile(const std::string& path, std::uint32_t batch_pages,
                                              std::uint32_t nr_batches, std::string* error);
  // A copy of @n pages at @pages.
  static std::unique_ptr<LoopbackIo> FromPages(const void* pages, std::size_t n,
                                               std::uint32_t batch_pages, std::uint32_t nr_batches);
  ~LoopbackIo() override;

  // Hand out the pages again, from the first.
  void Rewind();
  // Check every committed batch's records against its pages, decoding
  // LZ4 with liblz4 (loopback.cc: the tests link it, hzramd does not);
  // a batch with a page that does not match is answered -EBADMSG, the
  // page counted in bad_pages().
  void set_verify(bool verify);
  // The same check with @decoder's Decode() (nullptr: none): hzramd
  // --bench, which checks the pipeline with its own decoder.
  void set_decoder(BatchEncoder* decoder);
  std::uint64_t bad_pages() const { return bad_pages_; }
  std::uint64_t committed_pages() const { return committed_pages_; }
  std::size_t pages() const { return pages_; }
  const std::uint8_t* page(std::size_t i) const;

  unsigned device() const override { return 0; }
  const Regions& regions() const override { return regions_; }
  int QueueFetch() override;
  int QueueCommit(std::uint32_t batch, std::uint64_t seq) override;
  int Submit() override { return 0; }
  // Never waits: what can complete has completed. With nothing to give,
  // returns -EDEADLK (a loop waiting for a FETCH it did not queue).
  int Wait(std::span<Completion> out, int timeout_ms) override;

 private:
  LoopbackIo(std::size_t pages, std::uint32_t batch_pages, std::uint32_t nr_batches);
  bool Allocated() const { return ro_ && rw_; }
  hzram_batch_desc* desc(std::uint32_t b) { return reinterpret_cast<hzram_batch_desc*>(ro_) + b; }
  bool Verify(std::uint32_t batch);
  bool Decode(std::uint32_t batch, BatchEncoder& decoder);

  Regions regions_;
  std::uint8_t* ro_ = nullptr;  // regions_.ro, writable here
  std::uint8_t* rw_ = nullptr;
  std::size_t pages_ = 0, next_page_ = 0;
  std::uint64_t seq_ = 0;
  std::vector<std::uint32_t> free_;  // batches not handed out
  std::vector<bool> held_;           // handed out, not committed
  std::vector<Completion> answers_;  // commits answered, not yet waited for
  std::size_t fetches_ = 0;          // FETCHes queued
  std::function<bool(std::uint32_t batch)> check_;  // of each commit; none if empty
  std::uint64_t bad_pages_ = 0, committed_pages_ = 0;
  std::vector<std::uint8_t> scratch_;               // Verify()'s page
  std::vector<std::uint8_t> decoded_;               // Decode()'s batch
  std::vector<int> status_;
};

}  // namespace hzramd

#endif  // HZRAMD_LOOPBACK_H
