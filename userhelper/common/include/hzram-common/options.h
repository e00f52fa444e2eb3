// SPDX-License-Identifier: GPL-2.0
// The command lines of hzramd and hzram-setup: getopt_long(), with the
// errors as one sentence for the program to print before its usage.
#ifndef HZRAM_COMMON_OPTIONS_H
#define HZRAM_COMMON_OPTIONS_H

#include <getopt.h>

#include <cstring>
#include <string>

namespace hzram {

// The id WalkOptions() gives an argument that is not an option.
inline constexpr int kPositional = 1;

// Walk argv[1..argc-1] with getopt_long(): @shortopts and @longopts as
// getopt_long() takes them (a value after '=' or as the next argument;
// unambiguous abbreviations of long names). For each option, and for each
// other argument when @positional (id kPositional, the argument as the
// value; options and arguments may mix, "--" ends the options), calls
// @take(id, value or nullptr, &error): it returns false to stop the walk
// (with error set, or not: --help). Without @positional, any argument
// that is not an option is an error.
//
// Return: "" if every argument was taken or @take stopped without error,
// else what is wrong: "unknown option '--x'", "option --x needs a value",
// "option --x takes no value", "unexpected argument 'x'", or @take's
// error. Never prints: getopt_long()'s own messages are off. Not
// reentrant (getopt_long()'s globals), as any getopt caller.
template <class Take>
std::string WalkOptions(int argc, const char* const* argv, const char* shortopts,
                        const option* longopts, bool positional, Take&& take) {
  // '+': stop at the first argument that is not an option (nothing is
  // permuted: argv may be const); '-': return each as kPositional. ':':
  // a missing value returns ':', not '?'.
  const std::string opts = std::string(positional ? "-:" : "+:") + shortopts;
  auto* const av = const_cast<char* const*>(argv);
  // The option argv[optind - 1] names, without "=value".
  auto name = [&] {
    std::string n = argv[optind - 1];
    if (const auto eq = n.find('='); n.rfind("--", 0) == 0 && eq != std::string::npos) n.resize(eq);
    return n;
  };
  std::string error;
  optind = 0;  // glibc: start over, also for a second walk in one process
  opterr = 0;
  for (int c; (c = getopt_long(argc, av, opts.c_str(), longopts, nullptr)) != -1;) {
    if (c == ':') return "option " + name() + " needs a value";
    if (c == '?') {
      // A long option given a value it does not take; else unknown.
      if (optopt && std::strncmp(argv[optind - 1], "--", 2) == 0)
        return "option " + name() + " takes no value";
      return "unknown option '" + (optopt ? std::string("-") + static_cast<char>(optopt) : name()) +
             "'";
    }
    if (!take(c, optarg, &error)) return error;
  }
  for (; optind < argc; optind++) {
    if (!positional) return std::string("unexpected argument '") + argv[optind] + "'";
    if (!take(kPositional, argv[optind], &error)) return error;
  }
  return "";
}

}  // namespace hzram

#endif  // HZRAM_COMMON_OPTIONS_H
