// SPDX-License-Identifier: GPL-2.0
#include "hzramctl.h"

#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <climits>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>

#include "device.h"
#include "events.h"
#include "netlink.h"
#include "options.h"
#include "table.h"

namespace hzramctl {
namespace {

class Command {
 public:
  Command(const Env& env, const Options& options) : env_(env), o_(options), sysfs_(env.root) {}

  int Run() {
    const int rc = sysfs_.ControlClass();
    if (rc != 0)
      return Fail(ErrxText(env_.prog, std::string("hzram module not loaded (") + kControlClass +
                                          ": " + std::strerror(-rc) + ")"));
    switch (o_.action) {
      case Action::kStatus:
        return Status();
      case Action::kReset:
        return Reset();
      case Action::kFindOnly:
        return FindOnly();
      case Action::kCreate:
        return Create();
      case Action::kMonitor:
        return Monitor();
    }
    return 1;
  }

 private:
  int Fail(const std::string& message) {
    std::fputs(message.c_str(), env_.err);
    return 1;
  }
  int Err(const std::string& message, int errnum) {
    return Fail(ErrText(env_.prog, message, errnum));
  }

  // zramctl's find_free_zram(): the first device from hzram0 up that is
  // not set up; where one is missing, a new one from hot_add.
  std::optional<DeviceRef> FindFree() {
    for (int i = 0; i < INT_MAX; i++) {
      std::optional<DeviceRef> dev = sysfs_.ById(i);
      if (!dev) {
        int id;
        if (sysfs_.HotAdd(&id) != 0) return std::nullopt;
        dev = sysfs_.ById(id);
        if (!dev) return std::nullopt;
      }
      if (!sysfs_.Used(*dev)) return dev;
    }
    return std::nullopt;
  }

  int Status() {
    const std::vector<Col> cols = o_.columns.empty() ? DefaultColumns() : o_.columns;
    const unsigned fields = FieldsFor(cols);
    // The module's netlink family on the real system, where it has one;
    // sysfs otherwise, and under a test's root.
    const std::unique_ptr<DeviceInfoSource> source =
        env_.root.empty() ? OpenInfoSource(sysfs_) : std::make_unique<SysfsInfoSource>(sysfs_);
    std::vector<DeviceInfo> rows;
    if (!o_.devices.empty()) {
      const std::optional<DeviceRef> dev = sysfs_.Resolve(o_.devices[0]);
      if (!dev) return Err(o_.devices[0], ENODEV);
      rows.push_back(source->Get(*dev, fields));
    } else {
      rows = source->ListUsed(fields);
    }
    TableFormat format;
    format.raw = o_.raw;
    format.json = o_.json;
    format.noheadings = o_.noheadings;
    format.bytes = o_.bytes;
    std::string what;
    const int rc = PrintTable(env_.out, rows, cols, format, &what);
    return rc ? Err(what, -rc) : 0;
  }

  // Reset each device and remove it (hot_remove), as zramctl does; a
  // device that cannot be reset is reported, and the others still done.
  int Reset() {
    int rc = 0;
    for (const std::string& arg : o_.devices) {
      const std::optional<DeviceRef> dev = sysfs_.Resolve(arg);
      if (!dev) {
        std::fputs(ErrText(env_.prog, arg + ": failed to reset", ENODEV).c_str(), env_.err);
        rc = 1;
        continue;
      }
      if (sysfs_.Write(*dev, "reset", "1") != 0) {
        std::fputs(ErrText(env_.prog, dev->name + ": failed to reset", errno).c_str(), env_.err);
        rc = 1;
      }
      sysfs_.HotRemove(dev->id);  // fails while the device is open: zramctl ignores it too
    }
    return rc;
  }

  int FindOnly() {
    const std::optional<DeviceRef> dev = FindFree();
    if (!dev) return Fail(ErrxText(env_.prog, "no free hzram device found"));
    std::fprintf(env_.out, "%s\n", dev->name.c_str());
    return 0;
  }

  int Create() {
    std::optional<DeviceRef> dev;
    if (o_.find) {
      dev = FindFree();
      if (!dev) return Fail(ErrxText(env_.prog, "no free hzram device found"));
    } else {
      dev = sysfs_.Resolve(o_.devices[0]);
      if (!dev) return Err(o_.devices[0], ENODEV);
    }
    if (sysfs_.Write(*dev, "reset", "1") != 0) return Err(dev->name + ": failed to reset", errno);
    if (o_.streams && sysfs_.Write(*dev, "max_comp_streams", std::to_string(o_.streams)) != 0)
      return Err(dev->name + ": failed to set number of streams", errno);
    if (o_.algorithm && sysfs_.Write(*dev, "comp_algorithm", *o_.algorithm) != 0)
      return Err(dev->name + ": failed to set algorithm", errno);
    if (sysfs_.Write(*dev, "disksize", std::to_string(o_.size)) != 0) {
      const int err = errno;
      char what[64];
      std::snprintf(what, sizeof(what), ": failed to set disksize (%ju bytes)", o_.size);
      return Err(dev->name + what, err);
    }
    if (o_.find) std::fprintf(env_.out, "%s\n", dev->name.c_str());
    return 0;
  }

  // Print each event of the "events" group as a line, flushed, until
  // SIGINT or SIGTERM (0), or until the module goes away or anything
  // fails (1).
  int Monitor() {
    EventSocket events;
    std::string what;
    if (events.Open(&what) != 0) return Fail(ErrxText(env_.prog, what));

    // The signals through a descriptor, polled with the socket.
    sigset_t mask, old;
    sigemptyset(&mask);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    if (sigprocmask(SIG_BLOCK, &mask, &old) != 0) return Err("failed to block signals", errno);
    const int sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
    if (sfd < 0) {
      const int err = errno;
      sigprocmask(SIG_SETMASK, &old, nullptr);
      return Err("failed to create a signalfd", err);
    }

    bool write_failed = false;
    const std::function<void(const Event&)> print = [&](const Event& e) {
      if (write_failed) return;
      const std::string line = (o_.json ? EventJson(e) : EventText(e)) + "\n";
      if (std::fputs(line.c_str(), env_.out) == EOF || std::fflush(env_.out) != 0)
        write_failed = true;
    };
    int rc = -1;
    while (rc < 0) {
      pollfd fds[2] = {{events.fd(), POLLIN, 0}, {sfd, POLLIN, 0}};
      if (poll(fds, 2, -1) < 0) {
        if (errno == EINTR) continue;
        rc = Err("failed to wait for events", errno);
        break;
      }
      if (fds[0].revents) {
        switch (events.Receive(print, &what)) {
          case EventSocket::Got::kDrained:
            break;
          case EventSocket::Got::kOverrun:
            std::fputs(
                ErrxText(env_.prog, "events lost: the socket's receive buffer overflowed").c_str(),
                env_.err);
            break;
          case EventSocket::Got::kUnloaded:
            rc = Fail(ErrxText(env_.prog, "hzram module unloaded"));
            break;
          case EventSocket::Got::kError:
            rc = Fail(ErrxText(env_.prog, what));
            break;
        }
      }
      if (write_failed) rc = 1;  // CloseStdout() says why
      if (rc < 0 && fds[1].revents) rc = 0;
    }
    // Take the signals that ended it, so that unblocking them does not
    // deliver them.
    signalfd_siginfo info;
    while (read(sfd, &info, sizeof(info)) == static_cast<ssize_t>(sizeof(info))) {
    }
    close(sfd);
    sigprocmask(SIG_SETMASK, &old, nullptr);
    return rc;
  }

  const Env& env_;
  const Options& o_;
  Sysfs sysfs_;
};

}  // namespace

int Run(int argc, char** argv, const Env& env) {
  Options options;
  const ParseOutcome parsed = ParseOptions(argc, argv, env.prog, &options);
  if (!parsed.run) {
    std::fputs(parsed.out.c_str(), env.out);
    std::fputs(parsed.err.c_str(), env.err);
    return parsed.exit_code;
  }
  return Command(env, options).Run();
}

int CloseStdout(const std::string& prog, int status) {
  // util-linux flush_standard_stream(): 0, or EOF with errno (0 if the
  // stream had failed before); a closed descriptor (EBADF) is no failure.
  auto flush = [](std::FILE* f) {
    errno = 0;
    int fd;
    if (std::ferror(f) != 0 || std::fflush(f) != 0 || (fd = fileno(f)) < 0 || (fd = dup(fd)) < 0 ||
        close(fd) != 0)
      return errno == EBADF ? 0 : EOF;
    return 0;
  };
  if (flush(stdout) != 0 && errno != EPIPE) {
    if (errno)
      std::fprintf(stderr, "%s: write error: %s\n", prog.c_str(), std::strerror(errno));
    else
      std::fprintf(stderr, "%s: write error\n", prog.c_str());
    return 1;
  }
  if (flush(stderr) != 0) return 1;
  return status;
}

}  // namespace hzramctl
