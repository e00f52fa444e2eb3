// SPDX-License-Identifier: GPL-2.0
//
// The kernel's side of a device: the control fd, its two mapped regions
// and an io_uring queue of HZRAM_CMD_FETCH and HZRAM_CMD_COMMIT commands
// (IORING_OP_URING_CMD) on it. The only code that talks to the module.
#ifndef HZRAMD_KERNEL_IO_H
#define HZRAMD_KERNEL_IO_H

#include <liburing.h>

#include <atomic>
#include <memory>
#include <string>

#include "daemon.h"

namespace hzramd {

// A device's offload_timeout_ms, from its sysfs attribute
// (/sys/block/hzramN/offload_timeout_ms): read when the device is
// attached, and again by Refresh() (the daemon's main loop, about once a
// second), since the module lets it change while the device is attached.
// Any thread may read ms(); reading never blocks nor allocates.
class OffloadTimeout {
 public:
  // @ms until the attribute is read.
  explicit OffloadTimeout(std::uint32_t ms = kDefaultOffloadTimeoutMs) : ms_(ms) {}

  // Read the attribute at @path from now on: now (0, or the negative
  // errno of Read(): ms() stays as it was) and at each Refresh().
  int Open(std::string path);
  // Read it again: 0 (*changed: whether it changed), or the negative
  // errno of Read() (ms() stays as it was); 0 with no path.
  int Refresh(bool* changed);

  std::uint32_t ms() const { return ms_.load(std::memory_order_relaxed); }
  const std::string& path() const { return path_; }

  // The attribute at @path: a whole number of milliseconds in the
  // module's range (10..60000), a newline after it or not. Returns 0 and
  // *ms, -errno if it cannot be read, or -EINVAL for anything else.
  static int Read(const char* path, std::uint32_t* ms);

 private:
  std::string path_;
  std::atomic<std::uint32_t> ms_;
};

class KernelIo final : public DeviceIo {
 public:
  // Open HZRAM_CONTROL_PATH, attach device @device and map its regions;
  // its queue, with a poll of @stop_fd (if >= 0), is set up by
  // OpenQueue() on the thread that drives it. Its offload_timeout_ms is
  // read from sysfs (the module's default, with a warning, if it cannot
  // be), and again by RefreshTimeout(). nullptr and *failure on failure.
  // An Attacher.
  static std::unique_ptr<DeviceIo> Attach(unsigned device, int stop_fd, AttachFailure* failure);

  // The io_uring queue of a device of @nr_batches batches (1..
  // kMaxBatches): completion queue entries for a FETCH and a COMMIT of
  // every batch and the stop's poll, submission queue entries for as many
  // or at most 4096 (commands are sent whenever the queue is full).
  struct RingSize {
    unsigned sq_entries, cq_entries;
  };
  static RingSize RingSizeFor(std::uint32_t nr_batches);

  // The setup flags a queue asks for: one thread submits and waits
  // (SINGLE_ISSUER), and completions are run when it waits
  // (DEFER_TASKRUN), both since 6.1.
  static constexpr unsigned kRingFlags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;

  // Set up @ring for @size (IORING_SETUP_CQSIZE) with @flags on the
  // calling thread; where the kernel refuses them (-EINVAL: before 6.1),
  // without. Returns 0 and *used, the setup flags the ring has, or a
  // negative errno.
  static int InitRing(io_uring* ring, RingSize size, unsigned flags, unsigned* used);

  // A queue of commands on @fd, any open file (the tests use one that
  // answers every command with -EOPNOTSUPP), with @regions; none of them
  // is owned. The queue is set up at once, as OpenQueue() would: the
  // calling thread drives it. Its offload_timeout_ms is
  // regions.offload_timeout_ms, or read from @timeout_path (if not empty)
  // as Attach() reads the attribute. nullptr and *err (a negative errno)
  // on failure.
  static std::unique_ptr<KernelIo> ForFile(int fd, const Regions& regions, unsigned device,
                                           int stop_fd, int* err,
                                           const std::string& timeout_path = "");

  // Detaches, unmaps the regions and closes the control fd, then the
  // queue; any thread may, once the one that drove the queue is done.
  ~KernelIo() override;

  unsigned device() const override { return device_; }
  const Regions& regions() const override { return regions_; }
  // Set up the io_uring queue (InitRing() with kRingFlags) and queue the
  // stop's poll: the calling thread is the one that submits and waits
  // from now on. 0, or a negative errno (AttachFailure::kRing).
  int OpenQueue() override;
  int QueueFetch() override;
  int QueueCommit(std::uint32_t batch, std::uint64_t seq) override;
  int Submit() override;
  int Wait(std::span<Completion> out, int timeout_ms) override;
  std::uint32_t offload_timeout_ms() const override { return timeout_.ms(); }
  bool RefreshTimeout() override;
  // The setup flags of its queue (0 before OpenQueue()).
  unsigned ring_flags() const { return ring_flags_; }

 private:
  explicit KernelIo(std::uint32_t timeout_ms = kDefaultOffloadTimeoutMs) : timeout_(timeout_ms) {}
  io_uring_sqe* Sqe();
  int QueueCmd(std::uint32_t op, const hzram_cmd& cmd, std::uint64_t user_data);

  unsigned device_ = 0;
  Regions regions_;
  OffloadTimeout timeout_;
  int fd_ = -1;
  int stop_fd_ = -1;
  bool owned_ = false;  // fd_ and the mappings are ours
  bool ring_ = false;
  unsigned ring_flags_ = 0;
  io_uring uring_{};
};

}  // namespace hzramd

#endif  // HZRAMD_KERNEL_IO_H
