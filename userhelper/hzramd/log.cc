// SPDX-License-Identifier: GPL-2.0
#include "log.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>

namespace hzramd {
namespace {

std::atomic<int> g_level{static_cast<int>(LogLevel::kInfo)};
std::atomic<LogSink> g_sink{nullptr};

// Whether stderr is the journal's stream: $JOURNAL_STREAM is "dev:inode"
// of it.
bool StderrIsJournal() {
  static const bool journal = [] {
    const char* v = std::getenv("JOURNAL_STREAM");
    unsigned long long dev, ino;
    struct stat st;
    return v && std::sscanf(v, "%llu:%llu", &dev, &ino) == 2 && fstat(STDERR_FILENO, &st) == 0 &&
           st.st_dev == dev && st.st_ino == ino;
  }();
  return journal;
}

}  // namespace

void SetLogLevel(LogLevel level) { g_level.store(static_cast<int>(level)); }

bool LogEnabled(LogLevel level) {
  return static_cast<int>(level) <= g_level.load(std::memory_order_relaxed);
}

void SetLogSink(LogSink sink) { g_sink.store(sink); }

void Log(LogLevel level, const char* fmt, ...) {
  if (!LogEnabled(level)) return;
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(line, sizeof(line), fmt, ap);
  va_end(ap);
  if (LogSink sink = g_sink.load()) {
    sink(level, line);
    return;
  }
  // syslog priorities: err, warning, info, debug.
  static const int kPriority[] = {3, 4, 6, 7};
  if (StderrIsJournal())
    std::fprintf(stderr, "<%d>%s\n", kPriority[static_cast<int>(level)], line);
  else
    std::fprintf(stderr, "hzramd: %s\n", line);
}

}  // namespace hzramd
