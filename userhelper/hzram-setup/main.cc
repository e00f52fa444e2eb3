// SPDX-License-Identifier: GPL-2.0
//
// hzram-setup: sets the hzram devices of hzram.conf up as swap or file
// systems at boot (hzram-setup.service), and undoes it with --reset. The
// configuration is zram-generator's; see Documentation/man/hzram-setup.8
// and hzram.conf.5.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "config.h"
#include "options.h"
#include "plan.h"
#include "system.h"

namespace {

int Error(const std::string& message) {
  std::fprintf(stderr, "hzram-setup: %s\n", message.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace hzsetup;
  Options options;
  std::string error;
  switch (ParseOptions(argc, argv, &options, &error)) {
    case ParseResult::kHelp:
      std::fputs(UsageText().c_str(), stdout);
      return 0;
    case ParseResult::kVersion:
      std::fputs(VersionText().c_str(), stdout);
      return 0;
    case ParseResult::kUsage:
      std::fprintf(stderr, "hzram-setup: %s\n%s", error.c_str(), UsageText().c_str());
      return 2;
    case ParseResult::kRun:
      break;
  }
  // A line at a time, in order with the errors of the programs it runs
  // (in the journal, where stdout is no terminal).
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  // mkswap, mkfs.* and modprobe live in the sbin directories.
  setenv("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", 0);

  const std::string meminfo_path = UnderRoot(options.root, "/proc/meminfo");
  std::string meminfo;
  std::uint64_t kb;
  if (FILE* f = std::fopen(meminfo_path.c_str(), "r")) {
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) meminfo.append(buf, n);
    std::fclose(f);
  }
  if (!ParseMemTotal(meminfo, &kb)) return Error(meminfo_path + ": no MemTotal");
  const std::uint64_t ram = kb / 1024;

  Config config;
  if (!LoadConfig(options.root, ram, &config, &error)) return Error(error);
  std::vector<std::string> warnings = config.warnings;
  std::vector<Device> devices;
  if (!ResolveDevices(config, ram, &devices, &warnings, &error)) return Error(error);
  for (const std::string& w : warnings)
    std::fprintf(stderr, "hzram-setup: warning: %s\n", w.c_str());

  if (!options.devices.empty()) {
    // Only those, in the order of the configuration.
    for (unsigned id : options.devices) {
      bool found = false;
      for (const Device& d : devices) found |= d.id == id;
      if (!found) return Error("hzram" + std::to_string(id) + " is not in the configuration");
    }
    std::vector<Device> chosen;
    for (const Device& d : devices)
      for (unsigned id : options.devices)
        if (d.id == id) chosen.push_back(d);
    devices = chosen;
  }
  if (options.dry_run) {
    std::fputs(FormatPlan(devices, ram,
                          options.reset      ? PlanKind::kReset
                          : options.maintain ? PlanKind::kMaintain
                                             : PlanKind::kSetUp)
                   .c_str(),
               stdout);
    return 0;
  }
  if (config.files.empty()) {
    std::printf("hzram-setup: no configuration (hzram.conf): nothing to do\n");
    return 0;
  }
  std::vector<Device> enabled;
  for (const Device& d : devices) {
    if (d.enabled)
      enabled.push_back(d);
    else if (!options.reset && !options.maintain)
      std::printf("%s: disabled, %s\n", d.name.c_str(), d.why_disabled.c_str());
  }
  const int failed = options.reset      ? ResetDevices(enabled)
                     : options.maintain ? MaintainDevices(enabled)
                                        : SetUpDevices(enabled);
  return failed ? 1 : 0;
}
