// SPDX-License-Identifier: GPL-2.0
#include "options.h"

#include "config.h"
#include "hzram-common/options.h"

#ifndef HZRAM_VERSION
#error "HZRAM_VERSION is defined by CMake, from dkms.conf"
#endif

namespace hzsetup {

std::string UsageText() {
  return "usage: hzram-setup [--dry-run] [--root DIR] [hzramN...]\n"
         "       hzram-setup --reset [--dry-run] [--root DIR] [hzramN...]\n"
         "       hzram-setup --maintain [--dry-run] [--root DIR] [hzramN...]\n"
         "       hzram-setup --help | --version\n"
         "\n"
         "Sets up the hzram devices of hzram.conf (hzram.conf(5)) as swap or file\n"
         "systems, or with --reset undoes that.\n"
         "  --reset       swapoff or unmount the devices and reset them\n"
         "  --maintain    recompress and write back idle pages, as configured\n"
         "  --dry-run     print what would be done, change nothing\n"
         "  --root DIR    read the configuration and /proc/meminfo under DIR\n"
         "  hzramN        only these devices (default: all configured)\n";
}

std::string VersionText() { return "hzram-setup " HZRAM_VERSION "\n"; }

ParseResult ParseOptions(int argc, const char* const* argv, Options* o, std::string* error) {
  enum { kOptReset = 256, kOptRoot, kOptMaintain };
  static const option kLongOptions[] = {
      {"help", no_argument, nullptr, 'h'},
      {"version", no_argument, nullptr, 'V'},
      {"dry-run", no_argument, nullptr, 'n'},
      {"reset", no_argument, nullptr, kOptReset},
      {"maintain", no_argument, nullptr, kOptMaintain},
      {"root", required_argument, nullptr, kOptRoot},
      {nullptr, 0, nullptr, 0},
  };
  *o = Options();
  ParseResult result = ParseResult::kRun;
  *error = hzram::WalkOptions(argc, argv, "hnV", kLongOptions, true,
                              [&](int c, const char* value, std::string* why) {
    switch (c) {
      case 'h':
        result = ParseResult::kHelp;
        return false;
      case 'V':
        result = ParseResult::kVersion;
        return false;
      case 'n':
        o->dry_run = true;
        break;
      case kOptReset:
        if (o->maintain) {
          *why = "--reset and --maintain exclude each other";
          return false;
        }
        o->reset = true;
        break;
      case kOptMaintain:
        if (o->reset) {
          *why = "--reset and --maintain exclude each other";
          return false;
        }
        o->maintain = true;
        break;
      case kOptRoot:
        if (value[0] != '/') {
          *why = std::string("bad value '") + value + "' for --root: an absolute path";
          return false;
        }
        o->root = value;
        break;
      case hzram::kPositional: {
        const std::string arg = value;
        std::string name = arg;
        if (name.rfind("/dev/", 0) == 0) name = name.substr(5);
        unsigned id;
        if (!ParseDeviceName(name, &id)) {
          *why = "'" + arg + "' is not a device: hzramN or /dev/hzramN, N from 0 to 255";
          return false;
        }
        for (unsigned d : o->devices)
          if (d == id) {
            *why = "device " + name + " given twice";
            return false;
          }
        o->devices.push_back(id);
        break;
      }
    }
    return true;
  });
  return error->empty() ? result : ParseResult::kUsage;
}

}  // namespace hzsetup
