// SPDX-License-Identifier: GPL-2.0
//
// hzramctl's command line: zramctl 2.38.1's options, checks and messages,
// and --json and --monitor.
#ifndef HZRAMCTL_OPTIONS_H
#define HZRAMCTL_OPTIONS_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "columns.h"

namespace hzramctl {

enum class Action {
  kStatus,    // list devices, or show one
  kCreate,    // --size: reset, set up and size a device (--find: a free one)
  kFindOnly,  // --find alone: print a free device
  kReset,     // --reset: reset and remove devices
  kMonitor,   // --monitor: print the module's events until a signal
};

struct Options {
  Action action = Action::kStatus;
  bool find = false;
  std::optional<std::string> algorithm;
  std::uintmax_t size = 0;
  std::uint64_t streams = 0;  // 0: not set
  std::vector<Col> columns;   // empty: DefaultColumns()
  bool raw = false;
  bool json = false;
  bool bytes = false;
  bool noheadings = false;
  std::vector<std::string> devices;  // as given
};

// What ParseOptions() decided: run with the options, or exit at once with
// exit_code after writing out to stdout and err to stderr.
struct ParseOutcome {
  bool run = false;
  int exit_code = 0;
  std::string out;
  std::string err;
};

// Parses argv with getopt_long (which permutes argv, and prints its own
// messages for unknown options and missing arguments on stderr, with
// argv[0]); @prog starts the other messages, as util-linux's
// program_invocation_short_name.
ParseOutcome ParseOptions(int argc, char** argv, const std::string& prog, Options* options);

std::string UsageText(const std::string& prog);
std::string VersionText(const std::string& prog);

// util-linux's err() and errx() texts: "prog: message: strerror\n" and
// "prog: message\n".
std::string ErrText(const std::string& prog, const std::string& message, int errnum);
std::string ErrxText(const std::string& prog, const std::string& message);

}  // namespace hzramctl

#endif  // HZRAMCTL_OPTIONS_H
