// SPDX-License-Identifier: GPL-2.0
//
// The hybrid codec's speed model (HybridCodec of hzram/backend.h): what
// Calibrate() measures and every batch updates, and the split it gives.
// Private to the library, its tests and hzbench.
//
// Host-only header.
#ifndef HZRAM_HYBRID_MODEL_H
#define HZRAM_HYBRID_MODEL_H

#include <cstddef>

#include "hzram/backend.h"

namespace hzram {

// One direction's speeds. Calibration bounds the backend's cost per page
// between what the largest sample's copies to and from the device took
// per page (they grow with the batch) and that batch's whole time per
// page (no fixed cost at all), so that noise can never make the device
// look free.
struct HybridRates {
  double cpu_pages_per_s = 0;
  double backend_pages_per_s = 0;  // the device's part, beside the CPU
  double backend_fixed_s = 0;      // per batch, whatever its size
  double backend_host_s_per_page = 0;  // the backend's host copies, which
                                       // the calling thread makes before
                                       // and after the CPU's part
};

// The link to the backend as calibration measured it (bytes per second
// each way, from the largest calibration batches); 0 if not measured.
struct HybridLink {
  double h2d_bytes_per_s = 0;
  double d2h_bytes_per_s = 0;
};

// A hybrid codec's model (HybridCodec::model()): the rates as every batch
// updates them, and as Calibrate() measured them (a probe's share comes
// from those).
struct HybridModel {
  HybridRates compress, decompress;
  HybridRates calibrated_compress, calibrated_decompress;
  HybridLink link;
};

// How many of @n pages go to the backend under @r.
std::size_t BackendShare(const HybridRates& r, std::size_t n);

// How many of @n pages a probe gives a backend that @r gives none
// (HybridCodec::kReprobe): a quarter of its share at its @calibrated
// speed (with the host's cost and the CPU's speed in @r), no more than
// it does in @max_s at its speed in @r.
std::size_t ProbeShare(const HybridRates& r, const HybridRates& calibrated, std::size_t n,
                       double max_s);

}  // namespace hzram

#endif  // HZRAM_HYBRID_MODEL_H
