// SPDX-License-Identifier: GPL-2.0
// Running the programs the tests are built beside.
#ifndef HZRAM_TESTS_PROGRAM_H_
#define HZRAM_TESTS_PROGRAM_H_

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>

namespace hzram::test {

// Program @name, built beside this test's directory (build/userhelper/NAME,
// the tests in build/userhelper/tests/): found from /proc/self/exe, so
// that no absolute path is compiled in.
inline std::string BuiltProgram(const std::string& name) {
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0) return name;
  std::string dir(self, static_cast<std::size_t>(n));
  dir.resize(dir.rfind('/'));
  return dir + "/../" + name;
}

struct Ran {
  int status = -1;     // exit status; -1 if it did not exit
  std::string output;  // stdout and stderr
};

// Run @program with @args (shell words), stderr into the output.
inline Ran RunProgram(const std::string& program, const std::string& args) {
  Ran r;
  FILE* p = popen((program + " " + args + " 2>&1").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) r.output.append(buf, n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

}  // namespace hzram::test

#endif  // HZRAM_TESTS_PROGRAM_H_
