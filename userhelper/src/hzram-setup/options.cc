// SPDX-License-Identifier: GPL-2.0
#include "options.h"

#include "config.h"

#ifndef HZRAM_VERSION
#error "HZRAM_VERSION is defined by CMake, from dkms.conf"
#endif

namespace hzsetup {

std::string UsageText() {
  return "usage: hzram-setup [--dry-run] [--root DIR] [hzramN...]\n"
         "       hzram-setup --reset [--dry-run] [--root DIR] [hzramN...]\n"
         "       hzram-setup --help | --version\n"
         "\n"
         "Sets up the hzram devices of hzram.conf (hzram.conf(5)) as swap or file\n"
         "systems, or with --reset undoes that.\n"
         "  --reset       swapoff or unmount the devices and reset them\n"
         "  --dry-run     print what would be done, change nothing\n"
         "  --root DIR    read the configuration and /proc/meminfo under DIR\n"
         "  hzramN        only these devices (default: all configured)\n";
}

std::string VersionText() { return "hzram-setup " HZRAM_VERSION "\n"; }

ParseResult ParseOptions(int argc, const char* const* argv, Options* o, std::string* error) {
  *o = Options();
  bool options_done = false;
  for (int i = 1; i < argc; i++) {
    std::string arg = argv[i];
    if (!options_done && arg == "--") {
      options_done = true;
      continue;
    }
    if (options_done || arg.empty() || arg[0] != '-') {
      std::string name = arg;
      if (name.rfind("/dev/", 0) == 0) name = name.substr(5);
      unsigned id;
      if (!ParseDeviceName(name, &id)) {
        *error = "'" + arg + "' is not a device: hzramN or /dev/hzramN, N from 0 to 255";
        return ParseResult::kUsage;
      }
      for (unsigned d : o->devices)
        if (d == id) {
          *error = "device " + name + " given twice";
          return ParseResult::kUsage;
        }
      o->devices.push_back(id);
      continue;
    }
    std::string value;
    bool has_value = false;
    if (arg.rfind("--", 0) == 0) {
      if (const auto eq = arg.find('='); eq != std::string::npos) {
        value = arg.substr(eq + 1);
        arg.resize(eq);
        has_value = true;
      }
    }
    if (arg == "-h") arg = "--help";
    if (arg == "-n") arg = "--dry-run";
    if (arg == "-V") arg = "--version";
    if (arg == "--root") {
      if (!has_value) {
        if (i + 1 >= argc) {
          *error = "option --root needs a value";
          return ParseResult::kUsage;
        }
        value = argv[++i];
      }
      if (value.empty() || value[0] != '/') {
        *error = "bad value '" + value + "' for --root: an absolute path";
        return ParseResult::kUsage;
      }
      o->root = value;
      continue;
    }
    if (arg != "--help" && arg != "--version" && arg != "--reset" && arg != "--dry-run") {
      *error = "unknown option '" + arg + "'";
      return ParseResult::kUsage;
    }
    if (has_value) {
      *error = "option " + arg + " takes no value";
      return ParseResult::kUsage;
    }
    if (arg == "--help") return ParseResult::kHelp;
    if (arg == "--version") return ParseResult::kVersion;
    if (arg == "--reset") o->reset = true;
    if (arg == "--dry-run") o->dry_run = true;
  }
  return ParseResult::kRun;
}

}  // namespace hzsetup
