// SPDX-License-Identifier: GPL-2.0
//
// hzram-setup's command line.
#ifndef HZRAM_SETUP_OPTIONS_H
#define HZRAM_SETUP_OPTIONS_H

#include <string>
#include <vector>

namespace hzsetup {

struct Options {
  bool reset = false;             // --reset: undo the setup
  bool maintain = false;          // --maintain: recompress and write back idle pages
  bool dry_run = false;           // --dry-run: print the steps, change nothing
  std::string root = "/";         // --root: where hzram.conf* and /proc/meminfo are read
  std::vector<unsigned> devices;  // hzramN arguments; empty: every configured device
};

enum class ParseResult {
  kRun,      // *options is complete
  kHelp,     // print UsageText() on stdout, exit 0
  kVersion,  // print VersionText() on stdout, exit 0
  kUsage,    // print *error and UsageText() on stderr, exit 2
};

// argv[1..argc-1], with getopt_long() (hzram::WalkOptions()): options and
// device names in any order, "--" ending the options. Never prints,
// never exits.
ParseResult ParseOptions(int argc, const char* const* argv, Options* options, std::string* error);

std::string UsageText();
std::string VersionText();

}  // namespace hzsetup

#endif  // HZRAM_SETUP_OPTIONS_H
