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
// else what is wrong: "unknown option '--x'" (or '-x'), "option '--x' is
// ambiguous: --xa, --xb", "option --x needs a value", "option --x takes
// no value" (long options by their full names), "unexpected argument
// 'x'", or @take's error. Never prints: getopt_long()'s own messages are
// off. Not reentrant (getopt_long()'s globals), as any getopt caller.
template <class Take>
std::string WalkOptions(int argc, const char* const* argv, const char* shortopts,
                        const option* longopts, bool positional, Take&& take) {
  // '+': stop at the first argument that is not an option (nothing is
  // permuted: argv may be const); '-': return each as kPositional. ':':
  // a missing value returns ':', not '?'.
  const std::string opts = std::string(positional ? "-:" : "+:") + shortopts;
  auto* const av = const_cast<char* const*>(argv);
  int at = 1;  // the argument getopt_long() is scanning (a group of
               // short options keeps optind until its last letter)
  // The option argument @at names: a long one without "=value", the
  // letter @letter of a short one.
  auto name = [&](int letter) {
    std::string n = argv[at];
    if (n.rfind("--", 0) != 0) return std::string("-") + static_cast<char>(letter);
    if (const auto eq = n.find('='); eq != std::string::npos) n.resize(eq);
    return n;
  };
  // The long name of option @id.
  auto long_name = [&](int id) {
    for (const option* o = longopts; o->name; o++)
      if (o->val == id) return std::string("--") + o->name;
    return std::string("?");
  };
  std::string error;
  optind = 0;  // glibc: start over, also for a second walk in one process
  opterr = 0;
  for (;;) {
    at = optind ? optind : 1;
    const int c = getopt_long(argc, av, opts.c_str(), longopts, nullptr);
    if (c == -1) break;
    if (c == ':') {
      const std::string n = name(optopt);
      return "option " + (n.rfind("--", 0) == 0 ? long_name(optopt) : n) + " needs a value";
    }
    if (c == '?') {
      const std::string n = name(optopt);
      const bool is_long = n.rfind("--", 0) == 0;
      // A long option given a value it does not take.
      if (is_long && optopt) return "option " + long_name(optopt) + " takes no value";
      if (is_long) {
        // Unknown, or the beginning of several.
        std::string matches;
        for (const option* o = longopts; o->name; o++)
          if (std::strncmp(o->name, n.c_str() + 2, n.size() - 2) == 0)
            matches += std::string(matches.empty() ? "" : ", ") + "--" + o->name;
        if (matches.find(',') != std::string::npos)
          return "option '" + n + "' is ambiguous: " + matches;
      }
      return "unknown option '" + n + "'";
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
