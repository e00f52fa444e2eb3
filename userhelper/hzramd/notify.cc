// SPDX-License-Identifier: GPL-2.0
#include "notify.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace hzramd {
namespace {

// $@name as a positive decimal number, or 0.
std::uint64_t EnvNumber(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return 0;
  std::uint64_t n = 0;
  const char* end = v + std::strlen(v);
  const auto r = std::from_chars(v, end, n);
  return r.ec == std::errc() && r.ptr == end ? n : 0;
}

}  // namespace

int Notify(std::string_view state) {
  const char* path = std::getenv("NOTIFY_SOCKET");
  if (!path || !*path) return 0;
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  const std::size_t len = std::strlen(path);
  // A path, or an abstract name ('@' then the name, a 0 byte first).
  if ((path[0] != '/' && path[0] != '@') || len >= sizeof(a.sun_path)) return -EINVAL;
  std::memcpy(a.sun_path, path, len);
  if (path[0] == '@') a.sun_path[0] = 0;
  const socklen_t alen =
      static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + len + (path[0] == '/'));
  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -errno;
  const ssize_t n = sendto(fd, state.data(), state.size(), MSG_NOSIGNAL,
                           reinterpret_cast<const sockaddr*>(&a), alen);
  const int err = errno;
  close(fd);
  if (n < 0) return -err;
  return static_cast<std::size_t>(n) == state.size() ? 1 : -EMSGSIZE;
}

bool WatchdogEnabled(std::uint64_t* usec) {
  const std::uint64_t us = EnvNumber("WATCHDOG_USEC");
  // systemd's "infinity" and anything whose nanoseconds overflow: none.
  if (!us || us > static_cast<std::uint64_t>(INT64_MAX) / 1000) return false;
  if (const char* pid = std::getenv("WATCHDOG_PID"); pid && *pid) {
    if (EnvNumber("WATCHDOG_PID") != static_cast<std::uint64_t>(getpid())) return false;
  }
  *usec = us;
  return true;
}

}  // namespace hzramd
