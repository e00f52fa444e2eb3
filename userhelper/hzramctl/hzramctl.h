// SPDX-License-Identifier: GPL-2.0
//
// hzramctl: set up and show hzram devices, as util-linux's zramctl does
// zram devices (Documentation/man/hzramctl.8).
#ifndef HZRAMCTL_HZRAMCTL_H
#define HZRAMCTL_HZRAMCTL_H

#include <cstdio>
#include <string>

namespace hzramctl {

struct Env {
  // Prefix of /sys, /proc and /dev; "" for the real ones. Only with the
  // real ones does the listing come from the module's netlink family.
  std::string root;
  std::string prog;         // the name that starts messages
  std::FILE* out = stdout;  // the table, --find's device, --monitor's events, --help
  std::FILE* err = stderr;  // messages
};

// The whole command: its exit status (0, or 1 on any error).
int Run(int argc, char** argv, const Env& env);

// util-linux close_stdout(): flush stdout and stderr at exit; 1 (with
// "write error" on stderr, unless stdout is a closed pipe) if that fails,
// else @status.
int CloseStdout(const std::string& prog, int status);

}  // namespace hzramctl

#endif  // HZRAMCTL_HZRAMCTL_H
