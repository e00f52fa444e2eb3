// SPDX-License-Identifier: GPL-2.0
//
// hzramd's log: one line per message on stderr, "hzramd: " first, or,
// when stderr is the journal (systemd sets $JOURNAL_STREAM), the
// journal's "<N>" priority prefix instead. Lines are formatted on the
// stack: logging never allocates.
#ifndef HZRAMD_LOG_H
#define HZRAMD_LOG_H

namespace hzramd {

enum class LogLevel { kError = 0, kWarn = 1, kInfo = 2, kDebug = 3 };

void SetLogLevel(LogLevel level);
bool LogEnabled(LogLevel level);

void Log(LogLevel level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

// Where lines go instead of stderr (nullptr: back to stderr), for tests.
// @line has no prefix and no newline.
using LogSink = void (*)(LogLevel level, const char* line);
void SetLogSink(LogSink sink);

}  // namespace hzramd

#define HZ_ERR(...) ::hzramd::Log(::hzramd::LogLevel::kError, __VA_ARGS__)
#define HZ_WARN(...) ::hzramd::Log(::hzramd::LogLevel::kWarn, __VA_ARGS__)
#define HZ_INFO(...) ::hzramd::Log(::hzramd::LogLevel::kInfo, __VA_ARGS__)
#define HZ_DEBUG(...)                                         \
  do {                                                        \
    if (::hzramd::LogEnabled(::hzramd::LogLevel::kDebug))     \
      ::hzramd::Log(::hzramd::LogLevel::kDebug, __VA_ARGS__); \
  } while (0)

#endif  // HZRAMD_LOG_H
