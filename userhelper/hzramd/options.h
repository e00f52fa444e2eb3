// SPDX-License-Identifier: GPL-2.0
//
// hzramd's command line.
#ifndef HZRAMD_OPTIONS_H
#define HZRAMD_OPTIONS_H

#include <cstddef>
#include <string>
#include <vector>

#include "log.h"

namespace hzramd {

// What encodes the batches (Documentation/hzramd.rst).
enum class Backend { kAuto, kCpu, kGpu, kHybrid };
const char* BackendName(Backend backend);

struct Options {
  std::vector<unsigned> devices;  // N of /dev/hzramN, in the order given
  unsigned threads = 0;           // codec threads; 0: one per CPU
  Backend backend = Backend::kAuto;
  LogLevel log_level = LogLevel::kInfo;
  bool mlock = true;  // mlockall() at start, a failure fatal
  // --bench: the pipeline fed from a file of pages, without the module.
  std::string bench;
  std::size_t batch_pages = 1024;
  double seconds = 3;
  std::string json;
};

enum class ParseResult {
  kRun,      // *options is complete
  kHelp,     // --help: print UsageText() on stdout, exit 0
  kVersion,  // --version: print VersionText(), exit 0
  kUsage,    // *error says what is wrong: print it and UsageText() on
             // stderr, exit 2
};

// Parse argv[1..argc-1] with getopt_long() (hzram::WalkOptions()):
// options take their value as the next argument or after '='
// (--device=1), long names may be abbreviated, "--" ends the options (and
// hzramd takes no other argument); --device takes a number or a
// comma-separated list and may be repeated. Never prints, never exits.
ParseResult ParseOptions(int argc, const char* const* argv, Options* options, std::string* error);

std::string UsageText();
std::string VersionText();

}  // namespace hzramd

#endif  // HZRAMD_OPTIONS_H
