// SPDX-License-Identifier: GPL-2.0
//
// hzramd --bench: the daemon's batch pipeline (Serve(), the encoder and
// its threads, the output slot layout) fed from a file of pages by a
// LoopbackIo instead of the module, timed end to end, beside liblz4's
// LZ4_compress_default on one thread over the same pages.
#ifndef HZRAMD_BENCH_H
#define HZRAMD_BENCH_H

#include "options.h"

namespace hzramd {

// Batches in flight in the bench's in-memory device.
inline constexpr unsigned kBenchBatches = 4;

// Run the bench of @options (options.bench is the file) and print its
// table on stdout (and the JSON to options.json). Every record of a first,
// untimed pass is checked against its page. Returns the exit status.
int RunBench(const Options& options);

}  // namespace hzramd

#endif  // HZRAMD_BENCH_H
