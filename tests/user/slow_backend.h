// SPDX-License-Identifier: GPL-2.0
// A stand-in device for the tests of the watchdog and of falling back to
// the CPU, as hzram::AsyncBackend: a CPU codec of its own does a batch's
// work when it is submitted, into buffers of its own; the batch is
// Ready() delay_s after its submission (never, if it hangs), and Wait()
// copies its outputs into the caller's spans, as a device's copy back
// would. No thread, and nothing allocated per batch: every buffer is made
// by the constructor.
#ifndef HZRAM_TEST_SLOW_BACKEND_H
#define HZRAM_TEST_SLOW_BACKEND_H

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "hzram/backend.h"

namespace hzram::test {

class SlowBackend final : public AsyncBackend {
 public:
  using Clock = std::chrono::steady_clock;

  explicit SlowBackend(unsigned slots = 2, std::size_t max_batch = 1024)
      : max_batch_(max_batch), slots_(slots) {
    CodecOptions o;
    o.threads = 1;
    o.max_batch = max_batch;
    codec_ = Codec::Create(o);
    for (auto& s : slots_) {
      s.records.resize(max_batch);
      s.bytes.resize(Codec::ArenaBytes(max_batch));
      s.status.resize(max_batch);
    }
  }

  // How it behaves; batches are numbered from 1 in submission order.
  double delay_s = 0;        // from submission to Ready()
  double us_per_page = 1;    // the time each batch reports (its "device" time)
  int hang_at = 0;           // this batch never finishes (0: none)
  bool hang_all = false;     // no batch ever finishes
  int fail_at = 0;           // this batch's Wait() fails, and the device with it
  int refuse_from = 0;       // from this batch on, every submission: -EBUSY
  int refuse_count = 0;      // ... this many of them (0: all)
  // Also hang the batch being submitted when this says so (e.g. for the
  // batches of one device of several: a test's own rule).
  bool (*hang_if)() = nullptr;
  // Called at the first Ready() on a batch that hangs (e.g. to stop a
  // daemon in the middle of the hang).
  void (*on_first_hung_poll)() = nullptr;

  // What it saw.
  int submitted = 0;       // batches taken
  int refused = 0;         // submissions refused
  int abandoned = 0;       // batches given up by the caller
  int waited = 0;          // Wait()s that gave outputs
  int hung_polls = 0;      // Ready() calls on batches that hang
  int polls = 0;           // Ready() calls
  double abandon_after_s = -1;    // the last abandoned batch: from its submission
  double first_poll_after_s = -1;  // the last abandoned batch's first Ready()

  // Memory lent to it (RegisterHostMemory): what it answers, and what it
  // holds now and held at each submission.
  struct Lent {
    const void* p;
    std::size_t bytes;
    bool read_only;
  };
  int register_result = 0;
  std::vector<Lent> lent;      // held now, in the order lent
  int registers = 0, unregisters = 0;
  std::size_t lent_at_last_submit = 0;
  int RegisterHostMemory(void* p, std::size_t bytes, bool read_only) override {
    registers++;
    if (register_result) return register_result;
    lent.push_back({p, bytes, read_only});
    return 0;
  }
  int UnregisterHostMemory(void* p) override {
    unregisters++;
    for (auto it = lent.begin(); it != lent.end(); ++it)
      if (it->p == p) {
        lent.erase(it);
        return 0;
      }
    return -EINVAL;
  }

  int SubmitCompress(const PageList& pages, std::span<hzram_page_record> records,
                     std::span<std::uint8_t> arena) override {
    const std::size_t n = pages.size();
    if (n == 0 || n > max_batch_ || records.size() < n || arena.size() < Codec::ArenaBytes(n))
      return -EINVAL;
    Slot* s = Take();
    if (!s) return Refuse();
    lent_at_last_submit = lent.size();
    s->compress = true;
    s->n = n;
    s->out_records = records;
    s->out_arena = arena;
    s->result = codec_->Compress(pages, std::span(s->records.data(), n),
                                 std::span(s->bytes.data(), Codec::ArenaBytes(n)));
    return s->ticket;
  }
  int SubmitDecompress(std::span<const hzram_page_record> records,
                       std::span<const std::uint8_t> arena, const MutablePageList& pages,
                       std::span<int> status) override {
    const std::size_t n = records.size();
    if (n == 0 || n > max_batch_ || pages.size() != n || status.size() != n) return -EINVAL;
    Slot* s = Take();
    if (!s) return Refuse();
    s->compress = false;
    s->n = n;
    s->out_pages = pages;
    s->out_status = status;
    s->result = codec_->Decompress(records, arena, MutablePageList(s->bytes.data(), n),
                                   std::span(s->status.data(), n));
    return s->ticket;
  }
  int Wait(int ticket, BatchTiming* t) override {
    Slot* s = Find(ticket);
    if (!s) return -EINVAL;
    s->busy = false;
    if (s->number == fail_at) {
      healthy_ = false;
      why_ = "the stand-in device failed at batch " + std::to_string(fail_at);
    }
    if (!healthy_) return -EIO;
    if (s->compress) {
      std::copy_n(s->records.data(), s->n, s->out_records.data());
      std::memcpy(s->out_arena.data(), s->bytes.data(), Codec::ArenaBytes(s->n));
    } else {
      for (std::size_t i = 0; i < s->n; i++) {
        s->out_status[i] = s->status[i];
        std::memcpy(s->out_pages[i], &s->bytes[i * kPageSize], kPageSize);
      }
    }
    waited++;
    if (t) {
      *t = BatchTiming();
      t->total_ms = us_per_page * s->n / 1e3;
    }
    return s->result;
  }
  bool Ready(int ticket) override {
    polls++;
    Slot* s = Find(ticket);
    if (!s || !healthy_) return true;
    if (s->hang) {
      if (hung_polls++ == 0) {
        first_poll_after_s = Since(s->submitted);
        if (on_first_hung_poll) on_first_hung_poll();
      }
      return false;
    }
    return Since(s->submitted) >= delay_s;
  }
  void Abandon(int ticket, const std::string& why) override {
    Slot* s = Find(ticket);
    if (!s) return;
    s->busy = false;
    abandoned++;
    abandon_after_s = Since(s->submitted);
    if (healthy_) why_ = why;
    healthy_ = false;
  }
  unsigned max_in_flight() const override { return static_cast<unsigned>(slots_.size()); }
  bool healthy() const override { return healthy_; }
  std::string why() const override { return healthy_ ? "" : why_; }
  std::size_t max_batch() const override { return max_batch_; }

 private:
  struct Slot {
    bool busy = false, compress = false, hang = false;
    int ticket = -1, number = 0, result = 0;
    std::size_t n = 0;
    Clock::time_point submitted;
    std::vector<hzram_page_record> records;
    std::vector<std::uint8_t> bytes;
    std::vector<int> status;
    std::span<hzram_page_record> out_records;
    std::span<std::uint8_t> out_arena;
    MutablePageList out_pages{static_cast<void*>(nullptr), 0};
    std::span<int> out_status;
  };

  static double Since(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
  }
  // A free slot for the next batch, or null: refused.
  Slot* Take() {
    if (!healthy_) return nullptr;
    const int number = submitted + refused + 1;
    if (refuse_from && number >= refuse_from && (refuse_count == 0 || refused < refuse_count))
      return nullptr;
    for (auto& s : slots_) {
      if (s.busy) continue;
      s.busy = true;
      s.number = number;
      s.ticket = next_ticket_++;
      s.hang = hang_all || number == hang_at || (hang_if && hang_if());
      s.submitted = Clock::now();
      submitted++;
      return &s;
    }
    return nullptr;
  }
  int Refuse() {
    if (!healthy_) return -EIO;
    refused++;
    return -EBUSY;
  }
  Slot* Find(int ticket) {
    for (auto& s : slots_)
      if (s.busy && s.ticket == ticket) return &s;
    return nullptr;
  }

  std::size_t max_batch_;
  std::unique_ptr<Codec> codec_;
  std::vector<Slot> slots_;
  int next_ticket_ = 0;
  bool healthy_ = true;
  std::string why_;
};

}  // namespace hzram::test

#endif  // HZRAM_TEST_SLOW_BACKEND_H
