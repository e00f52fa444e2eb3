// SPDX-License-Identifier: GPL-2.0
//
// hzramd: the userspace helper of the hzram module. It compresses the
// write batches of hzram devices on all CPUs (or a GPU) over io_uring;
// see Documentation/hzramd.rst.
#include <cstdio>

#include "bench.h"
#include "daemon.h"
#include "kernel_io.h"
#include "options.h"

int main(int argc, char** argv) {
  hzramd::Options options;
  std::string error;
  switch (hzramd::ParseOptions(argc, argv, &options, &error)) {
    case hzramd::ParseResult::kHelp:
      std::fputs(hzramd::UsageText().c_str(), stdout);
      return 0;
    case hzramd::ParseResult::kVersion:
      std::fputs(hzramd::VersionText().c_str(), stdout);
      return 0;
    case hzramd::ParseResult::kUsage:
      std::fprintf(stderr, "hzramd: %s\n%s", error.c_str(), hzramd::UsageText().c_str());
      return 2;
    case hzramd::ParseResult::kRun:
      break;
  }
  if (!options.bench.empty()) return hzramd::RunBench(options);
  return hzramd::RunDaemon(options, hzramd::KernelIo::Attach);
}
