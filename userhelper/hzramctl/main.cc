// SPDX-License-Identifier: GPL-2.0
//
// hzramctl: set up and show hzram devices; zramctl's command line and
// output for hzram (Documentation/man/hzramctl.8).
#include <errno.h>

#include <clocale>

#include "hzramctl.h"

int main(int argc, char** argv) {
  std::setlocale(LC_ALL, "");
  hzramctl::Env env;
  env.prog = program_invocation_short_name;
  const int status = hzramctl::Run(argc, argv, env);
  return hzramctl::CloseStdout(env.prog, status);
}
