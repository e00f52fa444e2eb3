// SPDX-License-Identifier: GPL-2.0
#include "options.h"

#include <getopt.h>

#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <iterator>

#include "format.h"

#ifndef HZRAM_VERSION
#error "HZRAM_VERSION is defined by CMake, from dkms.conf"
#endif

namespace hzramctl {
namespace {

enum { kOptRaw = CHAR_MAX + 1, kOptOutputAll, kOptMonitor };

const option kLongOptions[] = {
    {"algorithm", required_argument, nullptr, 'a'},
    {"bytes", no_argument, nullptr, 'b'},
    {"find", no_argument, nullptr, 'f'},
    {"help", no_argument, nullptr, 'h'},
    {"json", no_argument, nullptr, 'J'},
    {"monitor", no_argument, nullptr, kOptMonitor},
    {"output", required_argument, nullptr, 'o'},
    {"output-all", no_argument, nullptr, kOptOutputAll},
    {"noheadings", no_argument, nullptr, 'n'},
    {"reset", no_argument, nullptr, 'r'},
    {"raw", no_argument, nullptr, kOptRaw},
    {"size", required_argument, nullptr, 's'},
    {"streams", required_argument, nullptr, 't'},
    {"version", no_argument, nullptr, 'V'},
    {nullptr, 0, nullptr, 0},
};

// Groups of options that exclude each other (util-linux's ul_excl_t): each
// group in ascending order, the groups in ascending order of their first.
// zramctl's two, and --json against --raw.
const int kExclusive[][4] = {
    {'J', kOptRaw, 0},
    {'f', 'o', 'r', 0},
    {'o', 'r', 's', 0},
};
constexpr std::size_t kGroups = std::size(kExclusive);

const char* LongName(int c) {
  for (const option* o = kLongOptions; o->name; o++)
    if (o->val == c) return o->name;
  return nullptr;
}

// util-linux err_exclusive_options(): false, with *message, when @c
// conflicts with an option seen before.
bool CheckExclusive(int c, int status[kGroups], const std::string& prog, std::string* message) {
  for (std::size_t e = 0; e < kGroups && kExclusive[e][0] <= c; e++) {
    for (const int* op = kExclusive[e]; *op && *op <= c; op++) {
      if (*op != c) continue;
      if (status[e] == 0) {
        status[e] = c;
      } else if (status[e] != c) {
        *message = prog + ": mutually exclusive arguments:";
        for (const int* o = kExclusive[e]; *o; o++) {
          if (const char* n = LongName(*o))
            *message += std::string(" --") + n;
          else if (std::isgraph(*o))
            *message += std::string(" -") + static_cast<char>(*o);
        }
        *message += "\n";
        return false;
      }
      break;
    }
  }
  return true;
}

ParseOutcome Exit(int code, std::string out, std::string err) {
  ParseOutcome r;
  r.exit_code = code;
  r.out = std::move(out);
  r.err = std::move(err);
  return r;
}

}  // namespace

std::string ErrText(const std::string& prog, const std::string& message, int errnum) {
  return prog + ": " + message + ": " + std::strerror(errnum) + "\n";
}

std::string ErrxText(const std::string& prog, const std::string& message) {
  return prog + ": " + message + "\n";
}

ParseOutcome ParseOptions(int argc, char** argv, const std::string& prog, Options* o) {
  *o = Options();
  bool have_action = false;
  bool monitor = false;
  // The first option given that --monitor does not take (all but --json).
  const char* not_with_monitor = nullptr;
  int status[kGroups] = {};
  int c;

  optind = 0;  // glibc: start over, also for a second parse in one process
  opterr = 1;
  while ((c = getopt_long(argc, argv, "a:bfhJo:nrs:t:V", kLongOptions, nullptr)) != -1) {
    std::string message;
    if (!CheckExclusive(c, status, prog, &message)) return Exit(1, "", message);
    if (c == kOptMonitor)
      monitor = true;
    else if (c != 'J' && !not_with_monitor)
      not_with_monitor = LongName(c);

    switch (c) {
      case 'a':
        o->algorithm = optarg;
        break;
      case 'b':
        o->bytes = true;
        break;
      case 'f':
        o->find = true;
        break;
      case 'J':
        o->json = true;
        break;
      case 'o': {
        std::string warning;
        if (ParseColumnList(optarg, &o->columns, &warning) < 0)
          return Exit(1, "", warning.empty() ? "" : ErrxText(prog, warning));
        break;
      }
      case kOptOutputAll:
        o->columns.clear();
        for (const ColumnInfo& info : AllColumns()) o->columns.push_back(info.id);
        break;
      case 's':
        if (ParseSize(optarg, &o->size) != 0) {
          const std::string what = std::string("failed to parse size: '") + optarg + "'";
          return Exit(1, "", errno ? ErrText(prog, what, errno) : ErrxText(prog, what));
        }
        o->action = Action::kCreate;
        have_action = true;
        break;
      case 't':
        if (ParseU64(optarg, &o->streams) != 0) {
          const std::string what = std::string("failed to parse streams: '") + optarg + "'";
          return Exit(1, "", errno == ERANGE ? ErrText(prog, what, errno) : ErrxText(prog, what));
        }
        break;
      case 'r':
        o->action = Action::kReset;
        have_action = true;
        break;
      case kOptRaw:
        o->raw = true;
        break;
      case 'n':
        o->noheadings = true;
        break;
      case kOptMonitor:
        break;
      case 'V':
        return Exit(0, VersionText(prog), "");
      case 'h':
        return Exit(0, UsageText(prog), "");
      default:
        return Exit(1, "", "Try '" + prog + " --help' for more information.\n");
    }
  }
  for (int i = optind; i < argc; i++) o->devices.emplace_back(argv[i]);

  if (monitor) {
    if (not_with_monitor)
      return Exit(1, "",
                  ErrxText(prog, std::string("option --monitor is mutually exclusive with --") +
                                     not_with_monitor));
    if (!o->devices.empty())
      return Exit(1, "", ErrxText(prog, "option --monitor is mutually exclusive with <device>"));
    o->action = Action::kMonitor;
    ParseOutcome r;
    r.run = true;
    return r;
  }

  if (o->find && !o->devices.empty())
    return Exit(1, "", ErrxText(prog, "option --find is mutually exclusive with <device>"));
  if (!have_action) o->action = o->find ? Action::kFindOnly : Action::kStatus;
  if (o->action != Action::kReset && o->devices.size() > 1)
    return Exit(1, "", ErrxText(prog, "only one <device> at a time is allowed"));
  if ((o->action == Action::kStatus || o->action == Action::kFindOnly) &&
      (o->algorithm || o->streams))
    return Exit(1, "",
                ErrxText(prog, "options --algorithm and --streams must be combined with --size"));
  if ((o->action == Action::kReset || (o->action == Action::kCreate && !o->find)) &&
      o->devices.empty())
    return Exit(1, "", ErrxText(prog, "no device specified"));

  ParseOutcome r;
  r.run = true;
  return r;
}

std::string UsageText(const std::string& prog) {
  std::string s;
  s += "\nUsage:\n";
  s += " " + prog + " [options] <device>\n";
  s += " " + prog + " -r <device> [...]\n";
  s += " " + prog + " [options] -f | <device> -s <size>\n";
  s += " " + prog + " --monitor [--json]\n";
  s += "\nSet up and control hzram devices.\n";
  s += "\nOptions:\n";
  s += " -a, --algorithm <alg>     compression algorithm to use\n";
  s += " -b, --bytes               print sizes in bytes rather than in human readable format\n";
  s += " -f, --find                find a free device\n";
  s += " -J, --json                use JSON output format\n";
  s += "     --monitor             print the module's events as they happen\n";
  s += " -n, --noheadings          don't print headings\n";
  s += " -o, --output <list>       columns to use for status output\n";
  s += "     --output-all          output all columns\n";
  s += "     --raw                 use raw status output format\n";
  s += " -r, --reset               reset all specified devices\n";
  s += " -s, --size <size>         device size\n";
  s += " -t, --streams <number>    number of compression streams\n";
  s += "\n";
  s += " -h, --help                display this help\n";
  s += " -V, --version             display version\n";
  s += "\nArguments:\n";
  s += " <size> arguments may be followed by the suffixes for\n";
  s += "   GiB, TiB, PiB, EiB, ZiB, and YiB (the \"iB\" is optional)\n";
  s += " <alg> specify algorithm, supported are:\n";
  s += "   lzo, lzo-rle, lz4, lz4hc and zstd\n";
  s += "\nAvailable output columns:\n";
  for (const ColumnInfo& c : AllColumns()) {
    char line[160];
    std::snprintf(line, sizeof(line), " %12s  %s\n", c.name, c.help);
    s += line;
  }
  s += "\nFor more details see hzramctl(8).\n";
  return s;
}

std::string VersionText(const std::string& prog) {
  return prog + " from hzram " HZRAM_VERSION "\n";
}

}  // namespace hzramctl
