// SPDX-License-Identifier: GPL-2.0
//
// hzramd --bench: the daemon's batch pipeline (Serve(), the encoder and
// its threads, the output slot layout) fed from a file of pages by a
// LoopbackIo instead of the module, timed end to end, with the host CPU
// time it takes (getrusage). hzram's own codec only: hzbench compares it
// with liblz4.
#ifndef HZRAMD_BENCH_H
#define HZRAMD_BENCH_H

#include "options.h"

namespace hzramd {

// Batches in flight in the bench's in-memory device.
inline constexpr unsigned kBenchBatches = 4;

// Run the bench of @options (options.bench is the file) and print its
// table on stdout (and the JSON to options.json). Every batch of a first,
// untimed pass is decoded again by the encoder and compared with its
// pages. Returns the exit status.
int RunBench(const Options& options);

}  // namespace hzramd

#endif  // HZRAMD_BENCH_H
