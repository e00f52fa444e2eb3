// SPDX-License-Identifier: GPL-2.0
//
// Faults injected into a GpuCodec, for its tests: a real CUDA fault and
// hung batches, which the codec's error paths, its drains and the hybrid
// codec's watchdog must survive. Private to the library and its tests.
//
// Host-only header, as hzram/gpu_codec.h.
#ifndef HZRAM_GPU_TESTING_H
#define HZRAM_GPU_TESTING_H

#include <cstdint>
#include <memory>
#include <string>

#include "hzram/gpu_codec.h"

namespace hzram {

struct GpuFaults {
  // The number (from 1) of the batch whose compression kernel is given
  // an invalid device pointer, a real CUDA fault. 0: none.
  std::uint64_t fault_at_batch = 0;
  // The number (from 1) of the batch that a kernel holds up for hang_ms
  // before it starts, a hung device as far as the host can tell. 0: none.
  std::uint64_t hang_at_batch = 0;
  unsigned hang_ms = 0;
  // The number (from 1) of the compression batch whose copy back, once
  // its kernels are done, waits behind a kernel spinning for hang_ms: a
  // device that wedges after the kernels. 0: none.
  std::uint64_t hang_copy_back_at_batch = 0;
};

struct GpuCodecTestPeer {
  // GpuCodec::Create() with @faults. Returns as Create(); -EINVAL also
  // for a hang without its length (hang_ms 0).
  static std::unique_ptr<GpuCodec> Create(const GpuOptions& options, const GpuFaults& faults,
                                          int* err = nullptr, std::string* why = nullptr);
};

}  // namespace hzram

#endif  // HZRAM_GPU_TESTING_H
