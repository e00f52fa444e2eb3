// SPDX-License-Identifier: GPL-2.0
#include "kernel_io.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bit>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstddef>
#include <cstring>

#include "log.h"

namespace hzramd {
namespace {

static_assert(sizeof(hzram_attach) == HZRAM_ATTACH_SIZE);
static_assert(sizeof(hzram_batch_desc) == HZRAM_BATCH_DESC_SIZE);
static_assert(sizeof(hzram_cmd) == HZRAM_CMD_SIZE);
static_assert(sizeof(hzram_page_record) == HZRAM_PAGE_RECORD_SIZE);
// The command's 16 bytes fill sqe->cmd, the last 16 of a 64-byte SQE.
static_assert(sizeof(io_uring_sqe) == 64 &&
              offsetof(io_uring_sqe, cmd) + sizeof(hzram_cmd) == sizeof(io_uring_sqe));

// user_data: the command in the low byte, the batch of a COMMIT above.
enum Tag : std::uint64_t { kTagFetch = 1, kTagCommit = 2, kTagStop = 3 };

}  // namespace

std::unique_ptr<DeviceIo> KernelIo::Attach(unsigned device, int stop_fd, AttachFailure* f) {
  std::unique_ptr<KernelIo> io(new KernelIo());
  io->device_ = device;
  io->stop_fd_ = stop_fd;
  io->owned_ = true;
  io->fd_ = open(HZRAM_CONTROL_PATH, O_RDWR | O_CLOEXEC);
  if (io->fd_ < 0) {
    *f = {AttachFailure::kOpen, errno, ""};
    return nullptr;
  }
  hzram_attach& a = io->regions_.info;
  a = {};
  a.size = sizeof(a);
  a.version = HZRAM_UAPI_VERSION;
  a.device = device;
  // Decoding reads and recompressing are the kernel's to ask for; a
  // module that does not offer them grants compression alone.
  a.features = HZRAM_FEAT_COMPRESS | HZRAM_FEAT_DECOMPRESS | HZRAM_FEAT_RECOMPRESS;
  if (ioctl(io->fd_, HZRAM_IOC_ATTACH, &a)) {
    *f = {AttachFailure::kAttach, errno, ""};
    return nullptr;
  }
  if (!(a.features & HZRAM_FEAT_COMPRESS)) {
    char granted[16];
    std::snprintf(granted, sizeof(granted), "%#x", a.features);
    *f = {AttachFailure::kFeatures, 0, granted};
    return nullptr;
  }
  std::string why;
  if (!CheckGeometry(a, &why)) {
    *f = {AttachFailure::kGeometry, 0, why};
    return nullptr;
  }
  void* ro =
      mmap(nullptr, a.ro_size, PROT_READ, MAP_SHARED, io->fd_, static_cast<off_t>(a.ro_offset));
  if (ro == MAP_FAILED) {
    *f = {AttachFailure::kMap, errno, "descriptors and staging arena (read-only)"};
    return nullptr;
  }
  io->regions_.ro = static_cast<const std::uint8_t*>(ro);
  void* rw = mmap(nullptr, a.rw_size, PROT_READ | PROT_WRITE, MAP_SHARED, io->fd_,
                  static_cast<off_t>(a.rw_offset));
  if (rw == MAP_FAILED) {
    *f = {AttachFailure::kMap, errno, "output arena (read-write)"};
    return nullptr;
  }
  io->regions_.rw = static_cast<std::uint8_t*>(rw);
  // The module's time for a batch, which the backend's watchdog keeps well
  // within (WatchdogSeconds()); read again by RefreshTimeout().
  char path[64];
  std::snprintf(path, sizeof(path), "/sys/block/" HZRAM_DEVICE_PREFIX "%u/offload_timeout_ms",
                device);
  if (int err = io->timeout_.Open(path))
    HZ_WARN("hzram%u: %s: %s: taking the module's default, %u ms", device, path,
            err == -EINVAL ? "not a time-out in 10..60000 ms" : std::strerror(-err),
            kDefaultOffloadTimeoutMs);
  io->regions_.offload_timeout_ms = io->timeout_.ms();
  return io;
}

std::unique_ptr<KernelIo> KernelIo::ForFile(int fd, const Regions& regions, unsigned device,
                                            int stop_fd, int* err,
                                            const std::string& timeout_path) {
  std::unique_ptr<KernelIo> io(new KernelIo(regions.offload_timeout_ms));
  io->device_ = device;
  io->fd_ = fd;
  io->stop_fd_ = stop_fd;
  io->regions_ = regions;
  if (!timeout_path.empty()) {
    io->timeout_.Open(timeout_path);
    io->regions_.offload_timeout_ms = io->timeout_.ms();
  }
  if ((*err = io->OpenQueue())) return nullptr;
  return io;
}

bool KernelIo::RefreshTimeout() {
  bool changed = false;
  if (int err = timeout_.Refresh(&changed))
    HZ_DEBUG("hzram%u: %s: %s", device_, timeout_.path().c_str(),
             err == -EINVAL ? "not a time-out in 10..60000 ms" : std::strerror(-err));
  return changed;
}

int OffloadTimeout::Open(std::string path) {
  path_ = std::move(path);
  bool changed;
  return Refresh(&changed);
}

int OffloadTimeout::Refresh(bool* changed) {
  *changed = false;
  if (path_.empty()) return 0;
  std::uint32_t ms;
  if (int err = Read(path_.c_str(), &ms)) return err;
  *changed = ms_.exchange(ms, std::memory_order_relaxed) != ms;
  return 0;
}

int OffloadTimeout::Read(const char* path, std::uint32_t* ms) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  char buf[32];
  const ssize_t n = read(fd, buf, sizeof(buf) - 1);
  const int err = errno;
  close(fd);
  if (n < 0) return -err;
  std::size_t len = static_cast<std::size_t>(n);
  if (len && buf[len - 1] == '\n') len--;
  if (len == 0 || len > 5) return -EINVAL;
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < len; i++) {
    if (buf[i] < '0' || buf[i] > '9') return -EINVAL;
    v = v * 10 + static_cast<std::uint32_t>(buf[i] - '0');
  }
  if (v < kMinOffloadTimeoutMs || v > kMaxOffloadTimeoutMs) return -EINVAL;
  *ms = v;
  return 0;
}

KernelIo::RingSize KernelIo::RingSizeFor(std::uint32_t nr_batches) {
  // io_uring takes at most 32768 submission entries and twice as many
  // completion entries: kMaxBatches (16384) batches need 65536 of the
  // latter. A full submission queue is sent (Sqe()), so it need not hold
  // every command at once.
  static_assert(2 * kMaxBatches + 1 <= 65536);
  const unsigned cq = std::bit_ceil(2 * std::min(nr_batches, kMaxBatches) + 1);
  return {std::min(cq, 4096u), cq};
}

int KernelIo::InitRing(io_uring* ring, RingSize size, unsigned flags, unsigned* used) {
  io_uring_params params{};
  params.flags = IORING_SETUP_CQSIZE | flags;
  params.cq_entries = size.cq_entries;
  int err = io_uring_queue_init_params(size.sq_entries, ring, &params);
  if (err == -EINVAL && flags) {
    params = {};
    params.flags = IORING_SETUP_CQSIZE;
    params.cq_entries = size.cq_entries;
    err = io_uring_queue_init_params(size.sq_entries, ring, &params);
  }
  if (err) return err;
  *used = params.flags;
  return 0;
}

int KernelIo::OpenQueue() {
  if (ring_) return -EBUSY;
  // Room for a FETCH and a COMMIT per batch, and the stop's poll, among
  // the completions.
  if (regions_.info.nr_batches == 0 || regions_.info.nr_batches > kMaxBatches) return -EINVAL;
  if (int err = InitRing(&uring_, RingSizeFor(regions_.info.nr_batches), kRingFlags, &ring_flags_))
    return err;
  ring_ = true;
  if (!(ring_flags_ & IORING_SETUP_DEFER_TASKRUN))
    HZ_DEBUG("hzram%u: io_uring without SINGLE_ISSUER and DEFER_TASKRUN (a kernel before 6.1)",
             device_);
  // The stop comes from another thread as a write to an eventfd, which
  // this poll sees: never as a submission to this queue.
  if (stop_fd_ >= 0) {
    io_uring_sqe* sqe = Sqe();
    io_uring_prep_poll_add(sqe, stop_fd_, POLLIN);
    io_uring_sqe_set_data64(sqe, kTagStop);
  }
  return 0;
}

KernelIo::~KernelIo() {
  // Detach: the module takes back what is still held and completes the
  // queued FETCHes (-ECANCELED), which hold the file. Without that it
  // would detach only when it saw this process exit, and count a death.
  if (owned_ && fd_ >= 0 && ioctl(fd_, HZRAM_IOC_DETACH) && errno != ENXIO && errno != ENODEV)
    HZ_WARN("hzram%u: detach: %s", device_, std::strerror(errno));
  if (owned_) {
    if (regions_.ro) munmap(const_cast<std::uint8_t*>(regions_.ro), regions_.info.ro_size);
    if (regions_.rw) munmap(regions_.rw, regions_.info.rw_size);
    if (fd_ >= 0) close(fd_);
  }
  if (ring_) io_uring_queue_exit(&uring_);
}

io_uring_sqe* KernelIo::Sqe() {
  io_uring_sqe* sqe = io_uring_get_sqe(&uring_);
  if (!sqe && io_uring_submit(&uring_) >= 0) sqe = io_uring_get_sqe(&uring_);
  return sqe;
}

int KernelIo::QueueCmd(std::uint32_t op, const hzram_cmd& cmd, std::uint64_t user_data) {
  if (!ring_) return -EBADFD;  // OpenQueue() first
  io_uring_sqe* sqe = Sqe();
  if (!sqe) return -EBUSY;
  io_uring_prep_rw(IORING_OP_URING_CMD, sqe, fd_, nullptr, 0, 0);
  sqe->cmd_op = op;
  std::memcpy(sqe->cmd, &cmd, sizeof(cmd));
  io_uring_sqe_set_data64(sqe, user_data);
  return 0;
}

int KernelIo::QueueFetch() { return QueueCmd(HZRAM_CMD_FETCH, hzram_cmd{}, kTagFetch); }

int KernelIo::QueueCommit(std::uint32_t batch, std::uint64_t seq) {
  return QueueCmd(HZRAM_CMD_COMMIT, hzram_cmd{batch, 0, seq},
                  kTagCommit | std::uint64_t{batch} << 8);
}

int KernelIo::Submit() {
  if (!ring_) return -EBADFD;
  const int ret = io_uring_submit(&uring_);
  return ret < 0 ? ret : 0;
}

int KernelIo::Wait(std::span<Completion> out, int timeout_ms) {
  io_uring_cqe* cqe;
  int ret;
  if (!ring_) return -EBADFD;
  // With DEFER_TASKRUN, completions are posted only when this thread
  // enters the kernel to wait for them (IORING_ENTER_GETEVENTS): the
  // waits below do when nothing is posted yet; a look without waiting
  // has to ask.
  if (timeout_ms < 0) {
    ret = io_uring_wait_cqe(&uring_, &cqe);
  } else if (timeout_ms == 0) {
    ret = ring_flags_ & IORING_SETUP_DEFER_TASKRUN ? io_uring_get_events(&uring_) : 0;
    if (ret == 0) ret = io_uring_peek_cqe(&uring_, &cqe);
  } else {
    __kernel_timespec ts{timeout_ms / 1000, (timeout_ms % 1000) * 1000000ll};
    ret = io_uring_wait_cqe_timeout(&uring_, &cqe, &ts);
  }
  if (ret == -ETIME || ret == -EAGAIN) return 0;
  if (ret < 0) return ret;
  unsigned head, n = 0;
  io_uring_for_each_cqe(&uring_, head, cqe) {
    if (n == out.size()) break;
    const std::uint64_t data = io_uring_cqe_get_data64(cqe);
    Completion& c = out[n++];
    c.res = cqe->res;
    c.batch = static_cast<std::uint32_t>(data >> 8);
    switch (data & 0xff) {
      case kTagFetch:
        c.kind = Completion::kFetch;
        break;
      case kTagCommit:
        c.kind = Completion::kCommit;
        break;
      default:
        c.kind = Completion::kStop;
        break;
    }
  }
  io_uring_cq_advance(&uring_, n);
  return static_cast<int>(n);
}

}  // namespace hzramd
