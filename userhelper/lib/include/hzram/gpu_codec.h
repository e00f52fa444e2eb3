// SPDX-License-Identifier: GPL-2.0
//
// hzram GPU codec: the batch codec's CUDA backend. Built only when nvcc is
// found (HZRAM_HAVE_CUDA); usable only where a CUDA device is present and
// healthy (GpuAvailable()).
//
// Host-only header: every pointer here is host memory; the device buffers
// are the codec's own. Functions return 0 or a negative errno and never
// set errno.
#ifndef HZRAM_GPU_CODEC_H
#define HZRAM_GPU_CODEC_H

#include <cstdint>
#include <memory>
#include <string>

#include "hzram/backend.h"

namespace hzram {

struct GpuOptions {
  // CUDA device index.
  int device = 0;
  // Batches in flight: each slot has its own stream and pinned host and
  // device buffers, so that the copies to the device, the kernels and the
  // copies back of successive batches overlap.
  unsigned slots = 3;
  // Largest batch, in pages.
  std::size_t max_batch = 4096;
  // Warps per thread block; each warp works on one page at a time.
  // Chosen by measurement on an H100 (Documentation/gpu.rst).
  unsigned warps_per_block = 2;
  // Threads that copy pages into and out of the pinned buffers, the
  // calling thread included; 0: one per CPU the caller may run on, at
  // most 8. Batches under 64 pages are copied on the calling thread.
  unsigned staging_threads = 0;
  // The compression kernel's algorithm (Documentation/gpu.rst, The
  // kernels): 1, the stepwise one; 2, the segmented one, 1.6 times as
  // fast on an H100. Both write the LZ4 block format; their blocks differ
  // by a few bytes.
  unsigned compress_kernel = 2;
};

// Totals since creation.
struct GpuStats {
  std::uint64_t batches = 0;
  std::uint64_t pages = 0;
  std::uint64_t bytes_in = 0;   // bytes copied to the device
  std::uint64_t bytes_out = 0;  // bytes copied back
  std::uint64_t direct = 0;     // batches read from registered memory
  std::uint64_t direct_out = 0; // batches written to registered memory
  double host_ms = 0, h2d_ms = 0, kernel_ms = 0, d2h_ms = 0, wait_ms = 0, total_ms = 0;
};

// Whether CUDA device @device can be used: the driver answers, the device
// exists and runs a kernel. If not, *why (if given) says why.
bool GpuAvailable(int device, std::string* why);

class GpuCodec final : public AsyncBackend {
 public:
  // Set the codec up on its device: streams, events, all buffers, and a
  // test batch. Returns nullptr, *err (-ENODEV: no usable device, -ENOMEM,
  // -EINVAL: bad options, -EIO: a CUDA error) and *why on failure.
  static std::unique_ptr<GpuCodec> Create(const GpuOptions& options, int* err = nullptr,
                                          std::string* why = nullptr);
  ~GpuCodec() override;
  GpuCodec(const GpuCodec&) = delete;
  GpuCodec& operator=(const GpuCodec&) = delete;

  // AsyncBackend. At most `slots` batches may be in flight: a submission
  // to a slot whose batch was not waited for returns -EBUSY. Tickets are
  // waited for in order.
  //
  // A compression's pages go to the device from the caller's memory
  // where they are contiguous and registered (RegisterHostMemory), else
  // through a pinned buffer, copied there by the staging threads. Its
  // output is compacted on the device: only the records and the
  // compressed bytes come back, packed from the start of @arena in page
  // order (the records give each page's offset). A decompression's arena
  // likewise goes from registered memory or through the pinned buffer.
  // Outputs are copied from the device once the kernels are done, never
  // before: Ready() starts that copy as soon as it sees them done, Wait()
  // if Ready() did not. They go into the caller's memory directly where
  // it is contiguous and registered, else through the pinned buffers and
  // the staging threads in Wait(). A batch that is abandoned before its
  // kernels are done writes nothing of the caller's; one whose copy back
  // into the caller's memory has started is waited for, by Abandon() and
  // by Wait() (also when the codec failed meanwhile, e.g. through another
  // batch abandoned), so that nothing lands there after either returned.
  // A copy back into the codec's own pinned buffer is waited for only a
  // little (20 ms) by those: a wedged device must not hold the caller
  // without limit; if it has not ended, the slot and its buffers are left
  // to the process's exit, as for an abandoned batch.
  int SubmitCompress(const PageList& pages, std::span<hzram_page_record> records,
                     std::span<std::uint8_t> arena) override;
  int SubmitDecompress(std::span<const hzram_page_record> records,
                       std::span<const std::uint8_t> arena, const MutablePageList& pages,
                       std::span<int> status) override;
  int Wait(int ticket, BatchTiming* timing) override;
  bool Ready(int ticket) override;
  void Abandon(int ticket, const std::string& why) override;
  unsigned max_in_flight() const override;
  bool healthy() const override;
  std::string why() const override;
  std::size_t max_batch() const override;

  // Page-lock @bytes of the caller's memory from @p (cudaHostRegister;
  // with @read_only, memory mapped without write access, which only goes
  // to the device), so that batches in it go to the device without a
  // copy on the host. Returns 0, -EINVAL (null, empty, overlapping a
  // registered range, or memory that cannot be locked), -EOPNOTSUPP
  // (read-only memory, where the platform cannot lock it), -ENOMEM or
  // -EIO.
  // Unregister before the memory is freed, with no batch in flight from
  // it. Once a batch was abandoned, unregistering leaves the range locked
  // until the process exits (the device may still be running that batch,
  // and cudaHostUnregister would wait for it) and returns at once.
  int RegisterHostMemory(void* p, std::size_t bytes, bool read_only = false) override;
  int UnregisterHostMemory(void* p) override;

  // Submit and wait, as Codec::Compress / Decompress.
  int Compress(const PageList& pages, std::span<hzram_page_record> records,
               std::span<std::uint8_t> arena, BatchTiming* timing = nullptr);
  int Decompress(std::span<const hzram_page_record> records, std::span<const std::uint8_t> arena,
                 const MutablePageList& pages, std::span<int> status,
                 BatchTiming* timing = nullptr);

  GpuStats stats() const;
  std::string device_name() const;

 private:
  struct Impl;
  // The tests' fault injection (lib/gpu/gpu_testing.h).
  friend struct GpuCodecTestPeer;
  explicit GpuCodec(std::unique_ptr<Impl> impl);
  int Collect(void* slot);
  std::unique_ptr<Impl> impl_;
};

}  // namespace hzram

#endif  // HZRAM_GPU_CODEC_H
