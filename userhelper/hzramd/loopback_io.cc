// SPDX-License-Identifier: GPL-2.0
// LoopbackIo, the device in memory; its check against liblz4 is in
// loopback.cc, which only the tests link.
#include "loopback.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace hzramd {
namespace {

constexpr std::size_t kPageSize = HZRAM_PAGE_SIZE;

void* MapAnon(std::size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

}  // namespace

LoopbackIo::LoopbackIo(std::size_t pages, std::uint32_t batch_pages, std::uint32_t nr_batches)
    : pages_(pages), held_(nr_batches), scratch_(kPageSize) {
  hzram_attach& a = regions_.info;
  a = LayoutLikeModule(nr_batches, batch_pages, pages);
  ro_ = static_cast<std::uint8_t*>(MapAnon(a.ro_size));
  rw_ = static_cast<std::uint8_t*>(MapAnon(a.rw_size));
  regions_.ro = ro_;
  regions_.rw = rw_;
  free_.reserve(nr_batches);
  answers_.reserve(nr_batches);
  Rewind();
}

LoopbackIo::~LoopbackIo() {
  if (ro_) munmap(ro_, regions_.info.ro_size);
  if (rw_) munmap(rw_, regions_.info.rw_size);
}

std::unique_ptr<LoopbackIo> LoopbackIo::FromFile(const std::string& path, std::uint32_t batch_pages,
                                                 std::uint32_t nr_batches, std::string* error) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st)) {
    *error = path + ": " + std::strerror(errno);
    if (fd >= 0) close(fd);
    return nullptr;
  }
  const std::size_t pages = static_cast<std::size_t>(st.st_size) / kPageSize;
  std::unique_ptr<LoopbackIo> io;
  if (pages == 0) {
    *error = path + ": holds no 4 KiB page";
  } else {
    io.reset(new LoopbackIo(pages, batch_pages, nr_batches));
    if (!io->Allocated()) {
      *error = path + ": " + std::strerror(ENOMEM);
      io.reset();
    }
  }
  std::size_t done = 0;
  while (io && done < pages * kPageSize) {
    const ssize_t n =
        read(fd, io->ro_ + io->regions_.info.staging_offset + done, pages * kPageSize - done);
    if (n <= 0) {
      *error = path + ": " + (n ? std::strerror(errno) : "shorter than it was");
      io.reset();
    } else {
      done += static_cast<std::size_t>(n);
    }
  }
  close(fd);
  return io;
}

std::unique_ptr<LoopbackIo> LoopbackIo::FromPages(const void* pages, std::size_t n,
                                                  std::uint32_t batch_pages,
                                                  std::uint32_t nr_batches) {
  std::unique_ptr<LoopbackIo> io(new LoopbackIo(n, batch_pages, nr_batches));
  if (!io->Allocated()) return nullptr;
  std::memcpy(io->ro_ + io->regions_.info.staging_offset, pages, n * kPageSize);
  return io;
}

const std::uint8_t* LoopbackIo::page(std::size_t i) const {
  return ro_ + regions_.info.staging_offset + i * kPageSize;
}

void LoopbackIo::Rewind() {
  next_page_ = 0;
  fetches_ = 0;
  answers_.clear();
  free_.clear();
  for (std::uint32_t b = regions_.info.nr_batches; b-- > 0;) free_.push_back(b);
  held_.assign(held_.size(), false);
}

int LoopbackIo::QueueFetch() {
  fetches_++;
  return 0;
}

int LoopbackIo::QueueCommit(std::uint32_t batch, std::uint64_t seq) {
  int res = 0;
  if (batch >= regions_.info.nr_batches || !held_[batch]) {
    res = -EINVAL;
  } else if (seq != desc(batch)->seq) {
    res = -ESTALE;
  } else {
    if (check_ && !check_(batch)) res = -EBADMSG;
    committed_pages_ += desc(batch)->nr_pages;
    held_[batch] = false;
    free_.push_back(batch);
  }
  answers_.push_back({Completion::kCommit, batch, res});
  return 0;
}

int LoopbackIo::Wait(std::span<Completion> out, int timeout_ms) {
  std::size_t n = std::min(out.size(), answers_.size());
  std::copy(answers_.begin(), answers_.begin() + n, out.begin());
  answers_.erase(answers_.begin(), answers_.begin() + n);
  const hzram_attach& a = regions_.info;
  while (n < out.size() && fetches_ && !free_.empty() && next_page_ < pages_) {
    const std::uint32_t b = free_.back();
    free_.pop_back();
    held_[b] = true;
    const auto count =
        static_cast<std::uint32_t>(std::min<std::size_t>(a.batch_pages, pages_ - next_page_));
    *desc(b) = {
        ++seq_, count, HZRAM_OP_COMPRESS, 0, next_page_ * kPageSize, b * SlotBytes(a.batch_pages)};
    next_page_ += count;
    fetches_--;
    out[n++] = {Completion::kFetch, 0, static_cast<int>(b)};
  }
  if (n == 0 && fetches_ && next_page_ == pages_ && free_.size() == a.nr_batches) {
    fetches_--;
    out[n++] = {Completion::kFetch, 0, -ECANCELED};
  }
  if (n == 0 && timeout_ms < 0) return -EDEADLK;
  return static_cast<int>(n);
}

void LoopbackIo::set_decoder(BatchEncoder* decoder) {
  if (!decoder) {
    check_ = nullptr;
    return;
  }
  decoded_.resize(std::size_t{regions_.info.batch_pages} * kPageSize);
  status_.resize(regions_.info.batch_pages);
  check_ = [this, decoder](std::uint32_t batch) { return Decode(batch, *decoder); };
}

bool LoopbackIo::Decode(std::uint32_t batch, BatchEncoder& decoder) {
  const hzram_batch_desc& d = *desc(batch);
  const std::uint32_t bp = regions_.info.batch_pages;
  const auto* rec = reinterpret_cast<const hzram_page_record*>(rw_ + d.output_offset);
  const std::span<const std::uint8_t> data(rw_ + d.output_offset + bp * sizeof(hzram_page_record),
                                           std::size_t{bp} * kPageSize);
  const std::span<int> status(status_.data(), d.nr_pages);
  // Timed as a fetched batch, so that a hybrid decoder gives its backend
  // its share of the pages rather than finding the batch already late.
  if (decoder.Decode({rec, d.nr_pages}, data, {decoded_.data(), d.nr_pages}, status,
                     TimeOfBatch(kDefaultOffloadTimeoutMs, Clock::now())) < 0) {
    bad_pages_ += d.nr_pages;
    return false;
  }
  const std::uint8_t* pages = ro_ + regions_.info.staging_offset + d.staging_offset;
  const std::uint64_t bad_before = bad_pages_;
  for (std::uint32_t i = 0; i < d.nr_pages; i++) {
    // A page not encoded is the kernel's to do: nothing to compare.
    if (rec[i].kind == 0 && rec[i].flags == 0) continue;
    bad_pages_ += status[i] != 0 ||
                  std::memcmp(decoded_.data() + i * kPageSize, pages + i * kPageSize, kPageSize);
  }
  return bad_pages_ == bad_before;
}

}  // namespace hzramd
