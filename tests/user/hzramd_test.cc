// SPDX-License-Identifier: GPL-2.0
// hzramd: the command line, the batch encoder and the output slot layout,
// the serving loop against a fake kernel queue, attach errors, the
// daemon's start and stop around fake devices, the io_uring layer on a
// file that has no commands, and --bench.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <lz4.h>
#include <zstd.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <thread>
#include <cstdio>
#include <cstring>
#include <deque>
#include <mutex>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "alloc_count.h"
#include "bench.h"
#include "daemon.h"
#include "encoder.h"
#ifdef HZRAM_HAVE_CUDA
#include "hzram/gpu_codec.h"
#endif
#include "kernel_io.h"
#include "loopback.h"
#include "notify.h"
#include "options.h"
#include "program.h"
#include "slow_backend.h"
#include "test_util.h"

namespace hzramd {
namespace {

using hzram::kPageSize;
using hzram::test::Page;
using hzram::test::PeriodicPage;
using hzram::test::RandomPage;
using hzram::test::TextPage;
using hzram::test::WordPage;

// ---------------------------------------------------------------------
// The command line.

ParseResult Parse(std::vector<const char*> args, Options* o, std::string* error) {
  args.insert(args.begin(), "hzramd");
  return ParseOptions(static_cast<int>(args.size()), args.data(), o, error);
}

// systemd's notifications, hzramd's own: to a path or an abstract
// socket, nothing without $NOTIFY_SOCKET, an error for a bad one; the
// watchdog's interval only for this process and a positive number.
TEST(NotifyTest, SendsToAPathOrAnAbstractSocket) {
  for (const bool abstract : {false, true}) {
    const std::string name = "/tmp/hzramd-notify-test-" + std::to_string(getpid());
    const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ASSERT_LE(0, fd);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::memcpy(a.sun_path, name.data(), name.size());
    socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size());
    if (abstract)
      a.sun_path[0] = 0;  // "@tmp/hzramd-...": the same name, abstract
    else
      unlink(name.c_str()), len++;
    ASSERT_EQ(0, bind(fd, reinterpret_cast<sockaddr*>(&a), len));
    setenv("NOTIFY_SOCKET", (abstract ? "@" + name.substr(1) : name).c_str(), 1);
    EXPECT_EQ(1, hzramd::Notify("READY=1\nSTATUS=serving"));
    char buf[64] = {};
    EXPECT_EQ(22, recv(fd, buf, sizeof(buf), MSG_DONTWAIT));
    EXPECT_STREQ("READY=1\nSTATUS=serving", buf);
    close(fd);
    if (!abstract) unlink(name.c_str());
  }
  setenv("NOTIFY_SOCKET", "relative/path", 1);
  EXPECT_EQ(-EINVAL, hzramd::Notify("READY=1"));
  setenv("NOTIFY_SOCKET", "/nonexistent/hzramd-notify", 1);
  EXPECT_EQ(-ENOENT, hzramd::Notify("READY=1"));
  unsetenv("NOTIFY_SOCKET");
  EXPECT_EQ(0, hzramd::Notify("READY=1"));
}

TEST(NotifyTest, WatchdogForThisProcessOnly) {
  std::uint64_t us = 7;
  unsetenv("WATCHDOG_USEC");
  unsetenv("WATCHDOG_PID");
  EXPECT_FALSE(hzramd::WatchdogEnabled(&us));
  for (const char* bad : {"", "0", "-5", "12x", "x", "18446744073709551615", "9223372036854776"}) {
    setenv("WATCHDOG_USEC", bad, 1);
    EXPECT_FALSE(hzramd::WatchdogEnabled(&us)) << bad;
  }
  EXPECT_EQ(7u, us);
  setenv("WATCHDOG_USEC", "2000000", 1);
  EXPECT_TRUE(hzramd::WatchdogEnabled(&us));
  EXPECT_EQ(2000000u, us);
  setenv("WATCHDOG_PID", std::to_string(getpid()).c_str(), 1);
  EXPECT_TRUE(hzramd::WatchdogEnabled(&us));
  setenv("WATCHDOG_PID", std::to_string(getpid() + 1).c_str(), 1);
  EXPECT_FALSE(hzramd::WatchdogEnabled(&us));
  unsetenv("WATCHDOG_PID");
  unsetenv("WATCHDOG_USEC");
}

TEST(OptionsTest, Defaults) {
  Options o;
  std::string e;
  ASSERT_EQ(ParseResult::kRun, Parse({"--device", "0"}, &o, &e)) << e;
  EXPECT_EQ(std::vector<unsigned>{0}, o.devices);
  EXPECT_EQ(0u, o.threads);
  EXPECT_EQ(Backend::kAuto, o.backend);
  EXPECT_EQ(LogLevel::kInfo, o.log_level);
  EXPECT_TRUE(o.mlock);
  EXPECT_TRUE(o.bench.empty());
}

TEST(OptionsTest, EveryDaemonOption) {
  Options o;
  std::string e;
  ASSERT_EQ(ParseResult::kRun, Parse({"--device", "1,2", "--device=255", "--threads", "3",
                                      "--backend", "cpu", "--log-level=debug", "--no-mlock"},
                                     &o, &e))
      << e;
  EXPECT_EQ((std::vector<unsigned>{1, 2, 255}), o.devices);
  EXPECT_EQ(3u, o.threads);
  EXPECT_EQ(Backend::kCpu, o.backend);
  EXPECT_EQ(LogLevel::kDebug, o.log_level);
  EXPECT_FALSE(o.mlock);

  const std::pair<const char*, Backend> backends[] = {{"cpu", Backend::kCpu},
                                                      {"gpu", Backend::kGpu},
                                                      {"hybrid", Backend::kHybrid},
                                                      {"auto", Backend::kAuto}};
  for (const auto& [name, b] : backends) {
    ASSERT_EQ(ParseResult::kRun, Parse({"--device", "0", "--backend", name}, &o, &e)) << name;
    EXPECT_EQ(b, o.backend);
    EXPECT_STREQ(name, BackendName(b));
  }
  const std::pair<const char*, LogLevel> levels[] = {{"error", LogLevel::kError},
                                                     {"warn", LogLevel::kWarn},
                                                     {"info", LogLevel::kInfo},
                                                     {"debug", LogLevel::kDebug}};
  for (const auto& [name, l] : levels) {
    ASSERT_EQ(ParseResult::kRun, Parse({"--log-level", name, "--device", "0"}, &o, &e)) << name;
    EXPECT_EQ(l, o.log_level);
  }
}

TEST(OptionsTest, BenchOptions) {
  Options o;
  std::string e;
  ASSERT_EQ(ParseResult::kRun, Parse({"--bench", "pages", "--batch-pages", "64", "--seconds", "0.5",
                                      "--json=out.json", "--threads", "2", "--backend", "cpu"},
                                     &o, &e))
      << e;
  EXPECT_EQ("pages", o.bench);
  EXPECT_EQ(64u, o.batch_pages);
  EXPECT_DOUBLE_EQ(0.5, o.seconds);
  EXPECT_EQ("out.json", o.json);
  EXPECT_EQ(2u, o.threads);
  ASSERT_EQ(ParseResult::kRun, Parse({"--bench", "pages"}, &o, &e)) << e;
  EXPECT_EQ(1024u, o.batch_pages);
  EXPECT_DOUBLE_EQ(3, o.seconds);
}

// getopt_long's conventions: an unambiguous abbreviation, "--" ending the
// options.
TEST(OptionsTest, GetoptConventions) {
  Options o;
  std::string e;
  ASSERT_EQ(ParseResult::kRun, Parse({"--dev", "3", "--thr=2", "--"}, &o, &e)) << e;
  EXPECT_EQ(std::vector<unsigned>{3}, o.devices);
  EXPECT_EQ(2u, o.threads);
  // A second parse in one process starts over.
  ASSERT_EQ(ParseResult::kRun, Parse({"--device", "1"}, &o, &e)) << e;
  EXPECT_EQ(std::vector<unsigned>{1}, o.devices);
}

TEST(OptionsTest, HelpAndVersion) {
  Options o;
  std::string e;
  EXPECT_EQ(ParseResult::kHelp, Parse({"--help"}, &o, &e));
  EXPECT_EQ(ParseResult::kHelp, Parse({"--device", "0", "-h"}, &o, &e));
  EXPECT_EQ(ParseResult::kVersion, Parse({"--version"}, &o, &e));
  EXPECT_EQ(ParseResult::kVersion, Parse({"-V"}, &o, &e));
  EXPECT_EQ(0u, VersionText().find("hzramd ")) << VersionText();
  EXPECT_NE(std::string::npos, VersionText().find("helper protocol 1; backends: cpu"))
      << VersionText();
  for (const char* opt : {"--device", "--threads", "--backend", "--log-level", "--no-mlock",
                          "--bench", "--batch-pages", "--seconds", "--json", "--help", "--version"})
    EXPECT_NE(std::string::npos, UsageText().find(opt)) << opt;
}

TEST(OptionsTest, BadArguments) {
  const std::pair<std::vector<const char*>, const char*> cases[] = {
      {{"--device", "x"}, "bad value 'x' for --device"},
      {{"--device", "256"}, "bad value '256' for --device"},
      {{"--device", "-1"}, "bad value '-1' for --device"},
      {{"--device", "1,,2"}, "bad value '1,,2' for --device"},
      {{"--device", "1,"}, "bad value '1,' for --device"},
      {{"--device", ""}, "bad value '' for --device"},
      {{"--device", "1,2", "--device", "2"}, "device given twice"},
      {{"--device"}, "option --device needs a value"},
      {{"--device", "0", "--threads", "0"}, "bad value '0' for --threads"},
      {{"--device", "0", "--threads", "1025"}, "bad value '1025' for --threads"},
      {{"--device", "0", "--threads", "2x"}, "bad value '2x' for --threads"},
      {{"--device", "0", "--backend", "tpu"},
       "bad value 'tpu' for --backend: cpu, gpu, hybrid or auto"},
      {{"--device", "0", "--log-level", "loud"}, "bad value 'loud' for --log-level"},
      {{"--bench", "f", "--batch-pages", "0"}, "bad value '0' for --batch-pages"},
      {{"--bench", "f", "--batch-pages", "4097"}, "bad value '4097' for --batch-pages"},
      {{"--bench", "f", "--seconds", "0"}, "bad value '0' for --seconds"},
      {{"--bench", "f", "--seconds", "-1"}, "bad value '-1' for --seconds"},
      {{"--bench", "f", "--seconds", "nan"}, "bad value 'nan' for --seconds"},
      {{"--bench", "f", "--seconds", "inf"}, "bad value 'inf' for --seconds"},
      {{"--bench", "f", "--seconds", "1s"}, "bad value '1s' for --seconds"},
      {{"--bench", ""}, "bad value '' for --bench"},
      {{"--bench", "f", "--json="}, "bad value '' for --json"},
      {{"--frobnicate"}, "unknown option '--frobnicate'"},
      {{"-d", "0"}, "unknown option '-d'"},
      {{"--device", "0", "stray"}, "unexpected argument 'stray'"},
      {{"--device", "0", "--", "--threads", "2"}, "unexpected argument '--threads'"},
      {{"--", "--device", "0"}, "unexpected argument '--device'"},
      {{"--no-mlock=1", "--device", "0"}, "option --no-mlock takes no value"},
      {{}, "no device to serve: give --device N"},
      {{"--no-mlock"}, "no device to serve"},
      {{"--device", "0", "--json", "x"}, "--json is an option of --bench"},
      {{"--device", "0", "--seconds", "1"}, "--seconds is an option of --bench"},
      {{"--device", "0", "--batch-pages", "8"}, "--batch-pages is an option of --bench"},
      {{"--bench", "f", "--device", "0"}, "--bench runs without devices"},
  };
  for (const auto& [args, message] : cases) {
    Options o;
    std::string e;
    std::string joined;
    for (const char* a : args) joined += std::string(" ") + a;
    EXPECT_EQ(ParseResult::kUsage, Parse(args, &o, &e)) << joined;
    EXPECT_NE(std::string::npos, e.find(message)) << joined << ": " << e;
  }
}

using hzram::test::Ran;

Ran RunHzramd(const std::string& args) {
  return hzram::test::RunProgram(hzram::test::BuiltProgram("hzramd"), args);
}

TEST(HzramdBinaryTest, ExitStatuses) {
  Ran r = RunHzramd("--bogus");
  EXPECT_EQ(2, r.status);
  EXPECT_NE(std::string::npos, r.output.find("hzramd: unknown option '--bogus'")) << r.output;
  EXPECT_NE(std::string::npos, r.output.find("usage: hzramd")) << r.output;
  r = RunHzramd("--device 0 --threads many");
  EXPECT_EQ(2, r.status);
  EXPECT_NE(std::string::npos, r.output.find("bad value 'many' for --threads")) << r.output;
  r = RunHzramd("--help");
  EXPECT_EQ(0, r.status);
  EXPECT_EQ(UsageText(), r.output);
  r = RunHzramd("--version");
  EXPECT_EQ(0, r.status);
  EXPECT_EQ(VersionText(), r.output);
  r = RunHzramd("--bench /nonexistent/pages --seconds 0.01");
  EXPECT_EQ(1, r.status);
  EXPECT_NE(std::string::npos, r.output.find("/nonexistent/pages: No such file or directory"))
      << r.output;
  if (access(HZRAM_CONTROL_PATH, F_OK) == 0) GTEST_SKIP() << "the module is loaded here";
  r = RunHzramd("--device 3 --no-mlock --backend cpu --threads 1");
  EXPECT_EQ(1, r.status);
  EXPECT_NE(std::string::npos, r.output.find("hzramd: hzram module not loaded")) << r.output;
}

// ---------------------------------------------------------------------
// The batch encoder and the output slot layout.

// Regions in memory as the module lays them out: descriptors, then the
// staging arena (@staging_pages pages) in one; output slots in the other,
// filled with 0xcc to see what is written.
struct TestRegions {
  std::vector<std::uint8_t> ro, rw;
  Regions r;

  TestRegions(std::uint32_t nr_batches, std::uint32_t batch_pages, std::size_t staging_pages) {
    hzram_attach& a = r.info;
    a = LayoutLikeModule(nr_batches, batch_pages, staging_pages);
    ro.assign(a.ro_size, 0);
    rw.assign(a.rw_size, 0xcc);
    r.ro = ro.data();
    r.rw = rw.data();
  }
  hzram_batch_desc& desc(std::uint32_t b) {
    return reinterpret_cast<hzram_batch_desc*>(ro.data())[b];
  }
  std::uint8_t* staging(std::size_t page) {
    return ro.data() + r.info.staging_offset + page * kPageSize;
  }
  // Batch @b: @pages at staging page @first, its output in slot @slot.
  void SetBatch(std::uint32_t b, std::uint64_t seq, const std::vector<Page>& pages,
                std::size_t first, std::uint32_t slot) {
    for (std::size_t i = 0; i < pages.size(); i++)
      std::memcpy(staging(first + i), pages[i].data(), kPageSize);
    desc(b) = {seq,
               static_cast<std::uint32_t>(pages.size()),
               HZRAM_OP_COMPRESS,
               0,
               first * kPageSize,
               slot * SlotBytes(r.info.batch_pages)};
  }
};

// Checks the records that @d's slot holds against its staging pages:
// flags 0, kinds and lengths as the layout says, data inside the data
// area, in page order and not overlapping, SAME words right, RAW pages
// equal, every LZ4 block decoded to its page by liblz4 and by the
// kernel's LZ4; with @not_encoded_ok, records of kind 0 (all zero) pass
// too. Returns the number of bad pages (each also a failure).
int CheckSlot(const Regions& r, const hzram_batch_desc& d, bool not_encoded_ok = false) {
  const std::uint32_t bp = r.info.batch_pages;
  const auto* rec = reinterpret_cast<const hzram_page_record*>(r.rw + d.output_offset);
  const std::uint8_t* data = r.rw + d.output_offset + bp * sizeof(hzram_page_record);
  const std::uint64_t data_bytes = std::uint64_t{bp} * kPageSize;
  std::uint64_t end = 0;  // of the previous page's data
  int bad = 0;
  char out[kPageSize], kout[kPageSize];
  for (std::uint32_t i = 0; i < d.nr_pages; i++) {
    const hzram_page_record& x = rec[i];
    const std::uint8_t* page = r.ro + r.info.staging_offset + d.staging_offset + i * kPageSize;
    std::string why;
    std::uint64_t word;
    std::memcpy(&word, page, 8);
    bool same = true;
    for (std::size_t o = 8; same && o < kPageSize; o += 8) same = !std::memcmp(page + o, &word, 8);
    if (x.flags) {
      why = "flags set";
    } else if (not_encoded_ok && x.kind == 0) {
      if (x.value || x.length) why = "not encoded, but value or length set";
      continue;
    } else if (same) {
      if (x.kind != HZRAM_PAGE_SAME || x.value != word || x.length)
        why = "not the SAME record of its word";
    } else if (x.kind != HZRAM_PAGE_RAW && x.kind != HZRAM_PAGE_LZ4) {
      why = "kind " + std::to_string(x.kind);
    } else if (x.value < end || x.value > data_bytes || x.length > data_bytes - x.value) {
      why = "data at " + std::to_string(x.value) + "+" + std::to_string(x.length) +
            " out of order or outside the data area";
    } else if (x.kind == HZRAM_PAGE_RAW) {
      if (x.length != kPageSize || std::memcmp(data + x.value, page, kPageSize))
        why = "RAW page differs";
    } else if (x.length == 0 || x.length >= kPageSize) {
      why = "LZ4 length " + std::to_string(x.length);
    } else {
      const char* src = reinterpret_cast<const char*>(data + x.value);
      const int len = static_cast<int>(x.length);
      if (LZ4_decompress_safe(src, out, len, kPageSize) != static_cast<int>(kPageSize) ||
          std::memcmp(out, page, kPageSize))
        why = "liblz4 does not decode it to the page";
      else if (hzram::test::kernel_LZ4_decompress_safe(src, kout, len, kPageSize) !=
                   static_cast<int>(kPageSize) ||
               std::memcmp(kout, page, kPageSize))
        why = "the kernel's LZ4 does not decode it to the page";
    }
    if (!same && x.kind != HZRAM_PAGE_SAME) end = x.value + x.length;
    if (!why.empty()) {
      ADD_FAILURE() << "page " << i << " of the batch at staging " << d.staging_offset << ": "
                    << why;
      bad++;
    }
  }
  return bad;
}

// The time of a batch of @r's device fetched now.
BatchTime Now(const Regions& r) { return TimeOfBatch(r.offload_timeout_ms, Clock::now()); }

// EncodeBatch() with a status buffer of the test's, the batch fetched now.
BatchResult Encode(BatchEncoder& encoder, const Regions& r, std::uint32_t batch,
                   hzram_batch_desc* desc) {
  static std::vector<int> status(kMaxBatchPages);
  return EncodeBatch(encoder, r, batch, desc, status, Now(r));
}

std::unique_ptr<BatchEncoder> CpuEncoder(unsigned threads = 2) {
  std::string e;
  auto enc = MakeEncoder(Backend::kCpu, threads, &e);
  EXPECT_TRUE(enc) << e;
  return enc;
}

// Pages of every kind: same-filled, random (RAW), compressible (LZ4).
std::vector<Page> MixedPages(std::size_t n, std::uint64_t seed) {
  std::vector<Page> v;
  for (std::size_t i = 0; i < n; i++) {
    switch ((i + seed) % 5) {
      case 0:
        v.push_back(WordPage(seed * 977 + i));
        break;
      case 1:
        v.push_back(RandomPage(seed * 131 + i));
        break;
      case 2:
        v.push_back(PeriodicPage(1 + i % 100, seed + i));
        break;
      default:
        v.push_back(TextPage(seed * 7 + i));
        break;
    }
  }
  return v;
}

TEST(EncodeBatchTest, WritesTheOutputSlotLayout) {
  auto enc = CpuEncoder();
  ASSERT_TRUE(enc);
  std::vector<Page> pages;
  for (auto& np : hzram::test::BoundaryPages()) pages.push_back(np.page);
  for (auto& p : MixedPages(64 - pages.size(), 1)) pages.push_back(p);
  ASSERT_EQ(64u, pages.size());

  TestRegions t(3, 64, 80);
  t.SetBatch(1, 42, pages, 9, 2);  // batch 1: staging pages 9.., the third slot
  const std::vector<std::uint8_t> before = t.rw;
  hzram_batch_desc d;
  ASSERT_EQ(BatchResult::kEncoded, Encode(*enc, t.r, 1, &d).outcome);
  EXPECT_EQ(42u, d.seq);
  EXPECT_EQ(0, std::memcmp(&d, &t.desc(1), sizeof(d)));
  EXPECT_EQ(0, CheckSlot(t.r, d));

  const auto* rec = reinterpret_cast<const hzram_page_record*>(t.rw.data() + d.output_offset);
  int kinds[4] = {};
  for (std::size_t i = 0; i < pages.size(); i++) kinds[rec[i].kind & 3]++;
  EXPECT_GT(kinds[HZRAM_PAGE_SAME], 0);
  EXPECT_GT(kinds[HZRAM_PAGE_RAW], 0);
  EXPECT_GT(kinds[HZRAM_PAGE_LZ4], 0);
  // Nothing is written outside the slot.
  EXPECT_TRUE(std::equal(t.rw.begin(), t.rw.begin() + d.output_offset, before.begin()));
}

// A read batch as the module lays one out: its pages' LZ4 blocks
// (liblz4's) behind batch_pages records at the batch's staging cells;
// page 3's block cut short. Each decodes into its page of the output data
// area with a RAW record; the corrupt one gets kind 0. A decode batch
// whose input runs past the staging arena is refused.
TEST(EncodeBatchTest, DecodesReadBatches) {
  auto enc = CpuEncoder();
  ASSERT_TRUE(enc);
  constexpr std::uint32_t kBatch = 32, kPages = 20;
  TestRegions t(2, kBatch, 2 * kBatch);
  std::vector<Page> pages;
  for (std::uint32_t i = 0; i < kPages; i++) pages.push_back(TextPage(500 + i));
  std::uint8_t* cells = t.staging(kBatch);  // batch 1's cells
  auto* in = reinterpret_cast<hzram_page_record*>(cells);
  std::uint8_t* data = cells + kBatch * sizeof(hzram_page_record);
  std::uint64_t used = 0;
  for (std::uint32_t i = 0; i < kPages; i++) {
    const int n = LZ4_compress_default(reinterpret_cast<const char*>(pages[i].data()),
                                       reinterpret_cast<char*>(data + used), kPageSize, kPageSize);
    ASSERT_GT(n, 0);
    in[i] = {used, static_cast<std::uint32_t>(n), HZRAM_PAGE_LZ4, 0};
    used += static_cast<std::uint64_t>(n);
  }
  in[3].length /= 2;  // a block cut short: it cannot decode to a page
  t.desc(1) = {77, kPages, HZRAM_OP_DECOMPRESS, 0, kBatch * kPageSize, 0};
  hzram_batch_desc d;
  ASSERT_EQ(BatchResult::kEncoded, Encode(*enc, t.r, 1, &d).outcome);
  EXPECT_EQ(77u, d.seq);
  const auto* rec = reinterpret_cast<const hzram_page_record*>(t.rw.data());
  const std::uint8_t* out = t.rw.data() + kBatch * sizeof(hzram_page_record);
  for (std::uint32_t i = 0; i < kPages; i++) {
    if (i == 3) {
      EXPECT_EQ(0, rec[i].kind);
      EXPECT_EQ(0u, rec[i].length);
      continue;
    }
    ASSERT_EQ(HZRAM_PAGE_RAW, rec[i].kind) << i;
    ASSERT_EQ(kPageSize, rec[i].length);
    ASSERT_LE(rec[i].value, (kBatch - 1) * kPageSize);
    EXPECT_EQ(0, std::memcmp(out + rec[i].value, pages[i].data(), kPageSize)) << i;
  }
  // Batch 1's input would run past the arena from one cell further on.
  t.desc(1).staging_offset = (kBatch + 1) * kPageSize;
  EXPECT_EQ(BatchResult::kBadDescriptor, Encode(*enc, t.r, 1, &d).outcome);
}

// A recompression batch as the module lays one out: pages in its staging
// cells, the zstd level in the descriptor. Each page's record is a zstd
// frame that decodes to it, or kind 0 for a page that does not shrink.
// A level libzstd does not take, or a helper attached without
// HZRAM_FEAT_RECOMPRESS, leaves the whole batch to the kernel.
TEST(EncodeBatchTest, RecompressesWithZstd) {
  auto enc = CpuEncoder(2);
  ASSERT_TRUE(enc);
  constexpr std::uint32_t kBatch = 32, kPages = 24;
  TestRegions t(2, kBatch, 2 * kBatch);
  std::vector<Page> pages;
  for (std::uint32_t i = 0; i < kPages; i++)
    pages.push_back(i % 6 == 5 ? RandomPage(40 + i) : TextPage(40 + i));
  t.SetBatch(1, 91, pages, kBatch, 0);
  t.desc(1).op = HZRAM_OP_RECOMPRESS;
  t.desc(1).level = 12;
  hzram_batch_desc d;
  ASSERT_EQ(BatchResult::kEncoded, Encode(*enc, t.r, 1, &d).outcome);
  EXPECT_EQ(12, d.level);
  const auto* rec = reinterpret_cast<const hzram_page_record*>(t.rw.data());
  const std::uint8_t* out = t.rw.data() + kBatch * sizeof(hzram_page_record);
  Page page(kPageSize);
  for (std::uint32_t i = 0; i < kPages; i++) {
    if (i % 6 == 5) {
      EXPECT_EQ(0, rec[i].kind) << i;
      continue;
    }
    ASSERT_EQ(HZRAM_PAGE_ZSTD, rec[i].kind) << i;
    ASSERT_EQ(HZRAM_RECORD_OK,
              hzram_page_record_check(&rec[i], std::uint64_t{kBatch} * kPageSize));
    ASSERT_EQ(kPageSize, ZSTD_decompress(page.data(), kPageSize, out + rec[i].value,
                                         rec[i].length));
    EXPECT_EQ(0, std::memcmp(page.data(), pages[i].data(), kPageSize)) << i;
  }
  t.desc(1).level = static_cast<std::int16_t>(ZSTD_maxCLevel() + 1);
  BatchResult res = Encode(*enc, t.r, 1, &d);
  EXPECT_EQ(BatchResult::kNotEncoded, res.outcome);
  EXPECT_EQ(-EINVAL, res.err);
  EXPECT_EQ(0, rec[0].kind);
  t.desc(1).level = 3;
  t.r.info.features &= ~HZRAM_FEAT_RECOMPRESS;
  res = Encode(*enc, t.r, 1, &d);
  EXPECT_EQ(BatchResult::kNotEncoded, res.outcome);
  EXPECT_EQ(-EOPNOTSUPP, res.err);
}

TEST(EncodeBatchTest, PartialBatchLeavesTheRestOfTheSlot) {
  auto enc = CpuEncoder();
  ASSERT_TRUE(enc);
  TestRegions t(2, 32, 64);
  t.SetBatch(0, 7, MixedPages(5, 2), 3, 1);
  const std::vector<std::uint8_t> before = t.rw;
  hzram_batch_desc d;
  ASSERT_EQ(BatchResult::kEncoded, Encode(*enc, t.r, 0, &d).outcome);
  EXPECT_EQ(0, CheckSlot(t.r, d));
  // Records 5..31 untouched; slot 0 untouched.
  const std::size_t rec_end = d.output_offset + 5 * sizeof(hzram_page_record);
  const std::size_t data_start = d.output_offset + 32 * sizeof(hzram_page_record);
  EXPECT_TRUE(
      std::equal(t.rw.begin() + rec_end, t.rw.begin() + data_start, before.begin() + rec_end));
  EXPECT_TRUE(std::equal(t.rw.begin(), t.rw.begin() + d.output_offset, before.begin()));
}

TEST(EncodeBatchTest, TheCorpusInFullBatches) {
  HZRAM_CORPUS_OR_SKIP(corpus);
  auto enc = CpuEncoder();
  ASSERT_TRUE(enc);
  const std::size_t n = std::min<std::size_t>(corpus.size() / kPageSize, 4096);
  TestRegions t(2, 1024, n);
  std::memcpy(t.staging(0), corpus.data(), n * kPageSize);
  for (std::size_t first = 0; first < n; first += 1024) {
    const auto count = static_cast<std::uint32_t>(std::min<std::size_t>(1024, n - first));
    const std::uint32_t b = (first / 1024) % 2;
    t.desc(b) = {first, count, HZRAM_OP_COMPRESS, 0, first * kPageSize, b * SlotBytes(1024)};
    hzram_batch_desc d;
    ASSERT_EQ(BatchResult::kEncoded, Encode(*enc, t.r, b, &d).outcome);
    ASSERT_EQ(0, CheckSlot(t.r, d)) << "pages from " << first;
  }
}

TEST(EncodeBatchTest, RefusesDescriptorsOutsideTheRegions) {
  auto enc = CpuEncoder(1);
  ASSERT_TRUE(enc);
  TestRegions t(2, 16, 20);
  const std::uint64_t slot = SlotBytes(16), staging = 20 * kPageSize;
  const hzram_batch_desc bad[] = {
      {1, 0, HZRAM_OP_COMPRESS, 0, 0, 0},                          // no page
      {1, 17, HZRAM_OP_COMPRESS, 0, 0, 0},                         // more than batch_pages
      {1, 16, HZRAM_OP_COMPRESS, 0, staging - 15 * kPageSize, 0},  // past the staging arena
      {1, 1, HZRAM_OP_COMPRESS, 0, staging + kPageSize, 0},        // starts past it
      {1, 1, HZRAM_OP_COMPRESS, 0, ~0ull - 100, 0},                // wraps around
      {1, 1, HZRAM_OP_COMPRESS, 0, 0, slot + 8},                   // slot past the arena
      {1, 1, HZRAM_OP_COMPRESS, 0, 0, 2 * slot},                   // starts at its end
      {1, 1, HZRAM_OP_COMPRESS, 0, 0, ~0ull - 100},                // wraps around
      {1, 1, HZRAM_OP_COMPRESS, 0, 0, 4},                          // records misaligned
  };
  const std::vector<std::uint8_t> before = t.rw;
  for (const auto& d : bad) {
    t.desc(1) = d;
    hzram_batch_desc got;
    EXPECT_EQ(BatchResult::kBadDescriptor, Encode(*enc, t.r, 1, &got).outcome)
        << d.nr_pages << " pages at " << d.staging_offset << ", slot " << d.output_offset;
    EXPECT_TRUE(t.rw == before);
  }
  // The last page of staging and the last slot are in bounds.
  t.desc(1) = {1, 16, HZRAM_OP_COMPRESS, 0, staging - 16 * kPageSize, slot};
  hzram_batch_desc got;
  EXPECT_EQ(BatchResult::kEncoded, Encode(*enc, t.r, 1, &got).outcome);
}

class FailingEncoder final : public BatchEncoder {
 public:
  explicit FailingEncoder(int err = -EIO) : err_(err) {}
  int Encode(const hzram::PageList&, std::span<hzram_page_record> records,
             std::span<std::uint8_t>, const BatchTime&) override {
    for (auto& r : records) r = {1, 2, 3, 4};  // garbage, as a failed device leaves
    return err_;
  }
  int Decode(std::span<const hzram_page_record>, std::span<const std::uint8_t>,
             const hzram::MutablePageList&, std::span<int>, const BatchTime&) override {
    return err_;
  }
  int Recompress(const hzram::PageList&, int, std::span<hzram_page_record> records,
                 std::span<std::uint8_t>) override {
    for (auto& r : records) r = {1, 2, 3, 4};
    return err_;
  }
  std::string Describe() const override { return "failing"; }

 private:
  int err_;
};

TEST(EncodeBatchTest, UnknownOpsAndEncoderFailuresLeavePagesToTheKernel) {
  auto enc = CpuEncoder(1);
  ASSERT_TRUE(enc);
  FailingEncoder failing;
  TestRegions t(1, 8, 8);
  for (int c = 0; c < 3; c++) {
    t.SetBatch(0, 1, MixedPages(6, 3), 0, 0);
    if (c == 0) t.desc(0).op = 9;
    if (c == 1) t.desc(0).level = 1;
    std::fill(t.rw.begin(), t.rw.end(), 0xcc);
    hzram_batch_desc d;
    const BatchResult res = Encode(c == 2 ? failing : *enc, t.r, 0, &d);
    EXPECT_EQ(BatchResult::kNotEncoded, res.outcome) << c;
    EXPECT_EQ(c == 2 ? -EIO : -EOPNOTSUPP, res.err) << c;
    const auto* rec = reinterpret_cast<const hzram_page_record*>(t.rw.data());
    for (int i = 0; i < 6; i++) {
      EXPECT_EQ(0, rec[i].kind) << c << " " << i;
      EXPECT_EQ(0u, rec[i].value);
      EXPECT_EQ(0u, rec[i].length);
      EXPECT_EQ(0, rec[i].flags);
    }
    EXPECT_EQ(0xcc, t.rw[6 * sizeof(hzram_page_record)]);  // only nr_pages records
  }
}

TEST(EncodeBatchTest, CheckGeometry) {
  TestRegions t(4, 64, 256);
  std::string why;
  EXPECT_TRUE(CheckGeometry(t.r.info, &why)) << why;
  auto bad = [&](const char* what, auto change) {
    hzram_attach a = t.r.info;
    change(a);
    EXPECT_FALSE(CheckGeometry(a, &why)) << what;
    EXPECT_NE(std::string::npos, why.find("nr_batches")) << why;
  };
  bad("no batch", [](hzram_attach& a) { a.nr_batches = 0; });
  bad("too many batches", [](hzram_attach& a) { a.nr_batches = kMaxBatches + 1; });
  bad("no page", [](hzram_attach& a) { a.batch_pages = 0; });
  bad("too many pages", [](hzram_attach& a) { a.batch_pages = kMaxBatchPages + 1; });
  bad("ro offset", [](hzram_attach& a) { a.ro_offset = 100; });
  bad("rw offset", [](hzram_attach& a) { a.rw_offset = 4097; });
  bad("staging over descriptors", [](hzram_attach& a) { a.staging_offset = 64; });
  bad("staging past the region", [](hzram_attach& a) { a.staging_offset = a.ro_size + 1; });
  bad("no slot", [](hzram_attach& a) { a.rw_size = SlotBytes(a.batch_pages) - 1; });
}

TEST(MakeEncoderTest, Backends) {
  std::string e;
  auto cpu = MakeEncoder(Backend::kCpu, 2, &e);
  ASSERT_TRUE(cpu) << e;
  EXPECT_EQ(0u, cpu->Describe().find("cpu, 2 threads, ")) << cpu->Describe();
  bool gpu = false;
#ifdef HZRAM_HAVE_CUDA
  std::string why;
  gpu = hzram::GpuAvailable(0, &why);
#endif
  auto automatic = MakeEncoder(Backend::kAuto, 1, &e);
  ASSERT_TRUE(automatic) << e;
  EXPECT_EQ(0u, automatic->Describe().find(gpu ? "hybrid, " : "cpu, 1 thread, "))
      << automatic->Describe();
  for (Backend b : {Backend::kGpu, Backend::kHybrid}) {
    e.clear();
    auto enc = MakeEncoder(b, 1, &e);
    if (!gpu) {
      EXPECT_FALSE(enc);
      EXPECT_EQ(0u, e.find(std::string("--backend ") + BackendName(b) + ": ")) << e;
      continue;
    }
    // Where a GPU is usable: its batches in the same layout.
    ASSERT_TRUE(enc) << e;
    TestRegions t(1, 512, 512);
    t.SetBatch(0, 1, MixedPages(512, 4), 0, 0);
    hzram_batch_desc d;
    ASSERT_EQ(BatchResult::kEncoded, Encode(*enc, t.r, 0, &d).outcome) << enc->Describe();
    EXPECT_EQ(0, CheckSlot(t.r, d)) << enc->Describe();
  }
}

// ---------------------------------------------------------------------
// The serving loop against a fake kernel queue.

std::vector<std::pair<LogLevel, std::string>> g_log;

void CaptureLog(LogLevel level, const char* line) { g_log.emplace_back(level, line); }

bool Logged(LogLevel level, const std::string& part) {
  for (const auto& [l, s] : g_log)
    if (l == level && s.find(part) != std::string::npos) return true;
  return false;
}

std::string LogText() {
  std::string s;
  for (const auto& [l, line] : g_log) s += std::to_string(static_cast<int>(l)) + " " + line + "\n";
  return s;
}

// A kernel queue in the test's hands. Each Wait() returns the answers to
// the commits queued so far, then the test's next step of completions; a
// FETCH step's batch is written (descriptor and fresh pages) when it is
// delivered. Everything the loop does is logged: "F" a FETCH queued, "C<b>"
// a COMMIT of batch b, "S" a submission. Each commit is checked against
// its batch (seq, and the slot against the pages).
class FakeIo final : public DeviceIo {
 public:
  struct Step {
    Completion c;
    std::uint32_t pages = 0;  // a FETCH of a batch: how many pages it holds
  };
  static Step Fetch(std::uint32_t batch, std::uint32_t pages) {
    return {{Completion::kFetch, 0, static_cast<int>(batch)}, pages};
  }
  static Step FetchError(int err) { return {{Completion::kFetch, 0, err}, 0}; }
  static Step Stop() { return {{Completion::kStop, 0, 1}, 0}; }

  explicit FakeIo(std::uint32_t nr_batches = 4, std::uint32_t batch_pages = 32)
      : t_(nr_batches, batch_pages, std::size_t{nr_batches} * batch_pages) {}

  std::deque<std::vector<Step>> script;
  std::deque<int> commit_results;  // answers to the commits in turn; then 0
  bool answer_commits = true;
  std::vector<std::string> log;
  std::vector<int> timeouts;  // of each Wait()
  int bad_commits = 0;
  std::uint64_t seq = 1000;
  // Wait()s, counted from 1, that return -EINTR (before their step); the
  // time the last of them returned (MonotonicNs()).
  std::vector<std::size_t> interrupted;
  std::int64_t interrupted_ns = 0;
  // What offload_timeout_ms() says from each Wait() on, counted from 1
  // (the last one after; the regions' before the first).
  std::vector<std::uint32_t> timeout_ms;
  // If set, the heartbeat it had at each Wait().
  const std::atomic<std::int64_t>* heartbeat = nullptr;
  std::vector<std::int64_t> beats;

  std::string Trace() const {
    std::string s;
    for (const auto& x : log) s += x + " ";
    return s;
  }
  std::size_t Count(const std::string& what) const {
    return std::count(log.begin(), log.end(), what);
  }
  hzram_batch_desc& desc(std::uint32_t b) { return t_.desc(b); }

  unsigned device() const override { return 5; }
  const Regions& regions() const override { return t_.r; }
  int QueueFetch() override {
    log.push_back("F");
    return 0;
  }
  int QueueCommit(std::uint32_t batch, std::uint64_t s) override {
    log.push_back("C" + std::to_string(batch));
    if (batch >= t_.r.info.nr_batches || s != t_.desc(batch).seq ||
        CheckSlot(t_.r, t_.desc(batch), /*not_encoded_ok=*/true))
      bad_commits++;
    int res = 0;
    if (!commit_results.empty()) res = commit_results.front(), commit_results.pop_front();
    if (answer_commits) answers_.push_back({Completion::kCommit, batch, res});
    return 0;
  }
  int Submit() override {
    log.push_back("S");
    return 0;
  }
  std::uint32_t offload_timeout_ms() const override { return timeout_ms_; }
  int Wait(std::span<Completion> out, int timeout_ms) override {
    timeouts.push_back(timeout_ms);
    const std::size_t w = timeouts.size();
    if (heartbeat) beats.push_back(heartbeat->load());
    if (!this->timeout_ms.empty())
      timeout_ms_ = this->timeout_ms[std::min(w, this->timeout_ms.size()) - 1];
    if (std::find(interrupted.begin(), interrupted.end(), w) != interrupted.end()) {
      interrupted_ns = MonotonicNs();
      return -EINTR;
    }
    std::size_t n = 0;
    for (; n < answers_.size() && n < out.size(); n++) out[n] = answers_[n];
    answers_.erase(answers_.begin(), answers_.begin() + static_cast<long>(n));
    if (!script.empty()) {
      for (const Step& s : script.front()) {
        if (s.c.kind == Completion::kFetch && s.c.res >= 0 && s.pages) {
          const auto b = static_cast<std::uint32_t>(s.c.res);
          seq++;
          t_.SetBatch(b, seq, MixedPages(s.pages, seq), std::size_t{b} * t_.r.info.batch_pages, b);
        }
        out[n++] = s.c;
      }
      script.pop_front();
    }
    if (n == 0 && timeout_ms < 0) return -EDEADLK;  // the loop would wait forever
    return static_cast<int>(n);
  }

 private:
  TestRegions t_;
  std::vector<Completion> answers_;
  std::uint32_t timeout_ms_ = t_.r.offload_timeout_ms;
};

class ServeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g_log.clear();
    SetLogSink(CaptureLog);
    SetLogLevel(LogLevel::kDebug);
    encoder_ = CpuEncoder(2);
    ASSERT_TRUE(encoder_);
  }
  void TearDown() override {
    SetLogSink(nullptr);
    SetLogLevel(LogLevel::kInfo);
  }
  int Serve(FakeIo& io, int drain_ms = kDrainTimeoutMs, int idle_ms = -1) {
    ServeOptions o;
    o.drain_timeout_ms = drain_ms;
    o.idle_wait_ms = idle_ms;
    return hzramd::Serve(io, *encoder_, &stats_, o);
  }
  std::unique_ptr<BatchEncoder> encoder_;
  ServeStats stats_;
};

TEST_F(ServeTest, EncodesCommitsAndFetchesAgainInOrder) {
  FakeIo io(4, 32);
  io.script = {{FakeIo::Fetch(2, 32), FakeIo::Fetch(0, 7)},
               {FakeIo::Fetch(1, 1)},
               {FakeIo::Fetch(2, 20)},
               {FakeIo::FetchError(-ECANCELED)}};
  EXPECT_EQ(0, Serve(io)) << LogText();
  // One FETCH per batch at start; then per batch handed over: its COMMIT
  // and a new FETCH, submitted together before the next batch is encoded.
  EXPECT_EQ("F F F F S C2 F S C0 F S C1 F S C2 F S ", io.Trace());
  EXPECT_EQ(0, io.bad_commits);
  EXPECT_EQ(4u, stats_.batches.load());
  EXPECT_EQ(60u, stats_.pages.load());
  EXPECT_GT(stats_.stored_bytes.load(), 0u);
  EXPECT_LT(stats_.stored_bytes.load(), 60 * kPageSize);
  EXPECT_TRUE(Logged(LogLevel::kInfo, "hzram5: detached by the kernel")) << LogText();
  for (int t : io.timeouts) EXPECT_EQ(-1, t);
}

TEST_F(ServeTest, DeviceGoneEndsTheLoop) {
  FakeIo io(2, 8);
  io.script = {{FakeIo::Fetch(0, 8), FakeIo::FetchError(-ENODEV), FakeIo::Fetch(1, 8)}};
  EXPECT_EQ(0, Serve(io)) << LogText();
  EXPECT_EQ("F F S C0 F S ", io.Trace());  // batch 1, after the error, is left to the kernel
  EXPECT_TRUE(Logged(LogLevel::kInfo, "hzram5: the device went away")) << LogText();
}

TEST_F(ServeTest, StaleCommitIsLoggedAtDebugLevelAndServingGoesOn) {
  FakeIo io(2, 8);
  io.commit_results = {-ESTALE, 0};
  io.script = {{FakeIo::Fetch(0, 8)}, {FakeIo::Fetch(1, 8)}, {FakeIo::FetchError(-ECANCELED)}};
  EXPECT_EQ(0, Serve(io)) << LogText();
  EXPECT_EQ("F F S C0 F S C1 F S ", io.Trace());
  EXPECT_EQ(1u, stats_.stale.load());
  EXPECT_EQ(0u, stats_.commit_errors.load());
  EXPECT_TRUE(Logged(LogLevel::kDebug, "hzram5: batch 0: the kernel took it back")) << LogText();
  for (const auto& [l, s] : g_log) EXPECT_NE(LogLevel::kWarn, l) << s;
}

TEST_F(ServeTest, OtherCommitErrorsAreWarnedOnce) {
  FakeIo io(2, 8);
  io.commit_results = {-EINVAL, -EINVAL};
  io.script = {{FakeIo::Fetch(0, 8)}, {FakeIo::Fetch(1, 8)}, {FakeIo::FetchError(-ECANCELED)}};
  EXPECT_EQ(0, Serve(io)) << LogText();
  EXPECT_EQ(2u, stats_.commit_errors.load());
  EXPECT_TRUE(Logged(LogLevel::kWarn, "hzram5: batch 0: COMMIT failed: Invalid argument"))
      << LogText();
  EXPECT_TRUE(Logged(LogLevel::kDebug, "hzram5: batch 1: COMMIT failed")) << LogText();
}

TEST_F(ServeTest, StopCommitsTheBatchesInHand) {
  FakeIo io(4, 16);
  // Batch 0 before the stop, 1 after it in the same wake-up, 3 handed over
  // while the loop drains: all three encoded and committed; FETCH queued
  // again for batch 0 only.
  io.script = {{FakeIo::Fetch(0, 16), FakeIo::Stop(), FakeIo::Fetch(1, 5)}, {FakeIo::Fetch(3, 9)}};
  EXPECT_EQ(0, Serve(io)) << LogText();
  EXPECT_EQ("F F F F S C0 F S C1 S C3 S ", io.Trace());
  EXPECT_EQ(0, io.bad_commits);
  EXPECT_EQ(3u, stats_.batches.load());
  EXPECT_TRUE(Logged(LogLevel::kInfo, "hzram5: stopping: committing the batches in hand"))
      << LogText();
  // It waited without limit until the stop; then for the answers, with
  // the drain's limit; then only looked.
  ASSERT_GE(io.timeouts.size(), 3u);
  EXPECT_EQ(-1, io.timeouts[0]);
  EXPECT_EQ(kDrainTimeoutMs, io.timeouts[1]);
  EXPECT_EQ(0, io.timeouts.back());
}

TEST_F(ServeTest, StopWithNothingInHandEndsAtOnce) {
  FakeIo io(2, 8);
  io.script = {{FakeIo::Stop()}};
  EXPECT_EQ(0, Serve(io)) << LogText();
  EXPECT_EQ("F F S ", io.Trace());
  EXPECT_EQ((std::vector<int>{-1, 0}), io.timeouts);
}

TEST_F(ServeTest, DrainGivesUpOnCommitsNeverAnswered) {
  FakeIo io(2, 8);
  io.answer_commits = false;
  io.script = {{FakeIo::Fetch(1, 8), FakeIo::Stop()}};
  EXPECT_EQ(0, Serve(io, 30)) << LogText();
  EXPECT_EQ("F F S C1 F S ", io.Trace());  // batch 1 came before the stop
  EXPECT_TRUE(Logged(LogLevel::kWarn, "hzram5: 1 commits not answered in 30 ms")) << LogText();
}

TEST_F(ServeTest, FetchErrors) {
  {
    FakeIo io(2, 8);  // interrupted: asked again
    io.script = {{FakeIo::FetchError(-EINTR)},
                 {FakeIo::FetchError(-EAGAIN)},
                 {FakeIo::Fetch(0, 3)},
                 {FakeIo::FetchError(-ECANCELED)}};
    EXPECT_EQ(0, Serve(io)) << LogText();
    EXPECT_EQ("F F S F S F S C0 F S ", io.Trace());
  }
  {
    FakeIo io(2, 8);  // anything else: the loop fails
    io.script = {{FakeIo::Fetch(0, 3)}, {FakeIo::FetchError(-EIO)}};
    EXPECT_EQ(-EIO, Serve(io)) << LogText();
    EXPECT_EQ("F F S C0 F S ", io.Trace());
    EXPECT_TRUE(Logged(LogLevel::kError, "hzram5: FETCH: Input/output error")) << LogText();
  }
}

TEST_F(ServeTest, BadBatchesAreNotCommitted) {
  FakeIo io(2, 8);
  io.script = {{FakeIo::Fetch(2, 0)}, {FakeIo::Fetch(0, 4)}, {FakeIo::FetchError(-ECANCELED)}};
  // Batch 2 does not exist; batch 0's descriptor is broken once written.
  io.script[1][0].pages = 0;
  io.desc(0) = {77, 4, HZRAM_OP_COMPRESS, 0, 0, 1 << 30};
  EXPECT_EQ(0, Serve(io)) << LogText();
  EXPECT_EQ("F F S F S F S ", io.Trace());
  EXPECT_TRUE(Logged(LogLevel::kWarn, "FETCH handed over batch 2 of 2: ignored")) << LogText();
  EXPECT_TRUE(Logged(LogLevel::kWarn, "batch 0: descriptor outside the regions")) << LogText();
}

TEST_F(ServeTest, EncoderFailureCommitsThePagesAsNotEncoded) {
  FailingEncoder failing;
  FakeIo io(2, 8);
  io.script = {{FakeIo::Fetch(0, 8)}, {FakeIo::Fetch(1, 8)}, {FakeIo::FetchError(-ECANCELED)}};
  EXPECT_EQ(0, hzramd::Serve(io, failing, &stats_)) << LogText();
  EXPECT_EQ("F F S C0 F S C1 F S ", io.Trace());
  EXPECT_EQ(0, io.bad_commits);  // kind 0 records are checked as not encoded
  EXPECT_EQ(2u, stats_.not_encoded.load());
  EXPECT_EQ(0u, stats_.batches.load());
  EXPECT_TRUE(Logged(LogLevel::kWarn, "batch 0: not encoded (Input/output error)")) << LogText();
  EXPECT_TRUE(Logged(LogLevel::kDebug, "batch 1: not encoded")) << LogText();
}

// An encoder that notes the time of each batch it is given, then encodes
// it on the CPU.
class TimedEncoder final : public BatchEncoder {
 public:
  TimedEncoder() : inner_(CpuEncoder(1)) {}
  int Encode(const hzram::PageList& pages, std::span<hzram_page_record> records,
             std::span<std::uint8_t> data, const BatchTime& time) override {
    times.push_back(time);
    seen.push_back(Clock::now());
    return inner_->Encode(pages, records, data, time);
  }
  int Decode(std::span<const hzram_page_record> records, std::span<const std::uint8_t> data,
             const hzram::MutablePageList& pages, std::span<int> status,
             const BatchTime& time) override {
    times.push_back(time);
    seen.push_back(Clock::now());
    return inner_->Decode(records, data, pages, status, time);
  }
  int Recompress(const hzram::PageList& pages, int level, std::span<hzram_page_record> records,
                 std::span<std::uint8_t> data) override {
    seen.push_back(Clock::now());
    return inner_->Recompress(pages, level, records, data);
  }
  std::string Describe() const override { return "timed"; }
  std::vector<BatchTime> times;
  std::vector<Clock::time_point> seen;

 private:
  std::unique_ptr<BatchEncoder> inner_;
};

// Each batch's time counts from the wait that handed it over (not from
// when the loop came to it), with the device's offload_timeout_ms of
// that moment: the module lets it change while the device is attached.
TEST_F(ServeTest, EachBatchGetsTheTimeOfItsFetchAndTheTimeoutOfThen) {
  TimedEncoder timed;
  FakeIo io(4, 8);
  io.timeout_ms = {8000, 8000, 1000};
  io.heartbeat = &stats_.alive_ns;
  io.script = {{FakeIo::Fetch(0, 8), FakeIo::Fetch(1, 8)},
               {FakeIo::Fetch(2, 8)},
               {FakeIo::Fetch(3, 8)},
               {FakeIo::FetchError(-ECANCELED)}};
  EXPECT_EQ(0, hzramd::Serve(io, timed, &stats_)) << LogText();
  EXPECT_EQ(0, io.bad_commits);
  ASSERT_EQ(4u, timed.times.size());
  EXPECT_DOUBLE_EQ(2.0, timed.times[0].watchdog_s);
  EXPECT_DOUBLE_EQ(2.0, timed.times[1].watchdog_s);
  EXPECT_DOUBLE_EQ(2.0, timed.times[2].watchdog_s);
  EXPECT_DOUBLE_EQ(0.25, timed.times[3].watchdog_s);
  // Batches 0 and 1 came in one wait: batch 1's time counts from there,
  // before batch 0 was encoded.
  EXPECT_EQ(timed.times[0].fetched, timed.times[1].fetched);
  EXPECT_GT(timed.seen[1], timed.seen[0]);
  EXPECT_LT(timed.times[1].fetched, timed.seen[0]);
  for (const BatchTime& t : timed.times) EXPECT_EQ(&stats_.alive_ns, t.heartbeat);
}

// A wait cut short by a signal is the loop waking, not stuck: it beats.
TEST_F(ServeTest, AnInterruptedWaitBeats) {
  FakeIo io(2, 8);
  io.interrupted = {1, 2};
  io.heartbeat = &stats_.alive_ns;
  io.script = {{FakeIo::FetchError(-ECANCELED)}};
  EXPECT_EQ(0, Serve(io)) << LogText();
  ASSERT_EQ(3u, io.beats.size());
  EXPECT_GE(io.beats[2], io.interrupted_ns);
}

// ---------------------------------------------------------------------
// The io_uring layer, on a file that has no commands (a memfd): every
// command comes back with -EOPNOTSUPP, through the same SQEs and
// completions.

TEST(KernelIoTest, CommandsReachTheFileAndStopIsPolled) {
  const int fd = memfd_create("hzramd-test", MFD_CLOEXEC);
  const int stop = eventfd(0, EFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_GE(stop, 0);
  TestRegions t(2, 4, 8);
  int err = 0;
  auto io = KernelIo::ForFile(fd, t.r, 9, stop, &err);
  if (!io && (err == -ENOSYS || err == -EPERM))
    GTEST_SKIP() << "no io_uring here: " << std::strerror(-err);
  ASSERT_TRUE(io) << std::strerror(-err);
  EXPECT_EQ(9u, io->device());
  ASSERT_EQ(0, io->QueueFetch());
  ASSERT_EQ(0, io->QueueCommit(1, 99));
  ASSERT_EQ(0, io->Submit());
  Completion c[8];
  std::vector<Completion> got;
  while (got.size() < 2) {
    const int n = io->Wait(c, 1000);
    ASSERT_GT(n, 0);
    got.insert(got.end(), c, c + n);
  }
  std::sort(got.begin(), got.end(), [](auto& a, auto& b) { return a.kind < b.kind; });
  EXPECT_EQ(Completion::kFetch, got[0].kind);
  EXPECT_EQ(-EOPNOTSUPP, got[0].res);
  EXPECT_EQ(Completion::kCommit, got[1].kind);
  EXPECT_EQ(1u, got[1].batch);
  EXPECT_EQ(-EOPNOTSUPP, got[1].res);
  EXPECT_EQ(0, io->Wait(c, 0));
  EXPECT_EQ(0, io->Wait(c, 20));
  const std::uint64_t one = 1;
  ASSERT_EQ(8, write(stop, &one, 8));
  ASSERT_EQ(1, io->Wait(c, -1));
  EXPECT_EQ(Completion::kStop, c[0].kind);
  EXPECT_TRUE(c[0].res & POLLIN);
  io.reset();
  close(stop);
  close(fd);
}

// The queue is set up and driven by one thread, with SINGLE_ISSUER and
// DEFER_TASKRUN where the kernel has them (6.1 on): completions come only
// when that thread waits, and a stop from another thread, a write to the
// eventfd the queue polls, still wakes it.
TEST(KernelIoTest, OneThreadDrivesTheQueueAndAStopFromAnotherWakesIt) {
  const int fd = memfd_create("hzramd-test", MFD_CLOEXEC);
  const int stop = eventfd(0, EFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_GE(stop, 0);
  TestRegions t(2, 4, 8);
  std::unique_ptr<KernelIo> io;
  std::atomic<int> state{0};  // 1: the thread waits for the stop; < 0: it gave up
  int waited = 0;
  Completion c[8];
  std::thread loop([&] {
    int err = 0;
    io = KernelIo::ForFile(fd, t.r, 1, stop, &err);
    if (!io) return state.store(err ? err : -EIO);
    Completion fetch[1];
    if (io->QueueFetch() || io->Submit() || io->Wait(fetch, 1000) != 1 ||
        fetch[0].res != -EOPNOTSUPP)
      return state.store(-EPROTO);
    state.store(1);
    waited = io->Wait(c, -1);
  });
  while (state.load() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (state.load() < 0) {
    loop.join();
    const int err = state.load();
    if (err == -ENOSYS || err == -EPERM)
      GTEST_SKIP() << "no io_uring here: " << std::strerror(-err);
    FAIL() << std::strerror(-err);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const std::uint64_t one = 1;
  ASSERT_EQ(8, write(stop, &one, 8));
  loop.join();
  ASSERT_EQ(1, waited);
  EXPECT_EQ(Completion::kStop, c[0].kind);
  if (io->ring_flags() & IORING_SETUP_SINGLE_ISSUER) {
    // Another thread may not submit to it: the kernel refuses.
    EXPECT_EQ(0, io->QueueFetch());
    EXPECT_EQ(-EEXIST, io->Submit());
  }
  io.reset();  // torn down from this thread, as RunDaemon does
  close(stop);
  close(fd);
}

// SINGLE_ISSUER and DEFER_TASKRUN where the kernel has them; a kernel
// that refuses the flags (-EINVAL, before 6.1; here an unknown flag
// stands for them) gets a ring without them, which works.
TEST(KernelIoTest, TheRingFallsBackWhereTheFlagsAreRefused) {
  const KernelIo::RingSize size = KernelIo::RingSizeFor(4);
  io_uring ring;
  unsigned used = 0;
  int err = KernelIo::InitRing(&ring, size, KernelIo::kRingFlags, &used);
  if (err == -ENOSYS || err == -EPERM) GTEST_SKIP() << "no io_uring here: " << std::strerror(-err);
  ASSERT_EQ(0, err) << std::strerror(-err);
  EXPECT_TRUE(used & IORING_SETUP_CQSIZE);
  struct utsname u;
  ASSERT_EQ(0, uname(&u));
  int major = 0, minor = 0;
  std::sscanf(u.release, "%d.%d", &major, &minor);
  if (major > 6 || (major == 6 && minor >= 1)) {
    EXPECT_EQ(KernelIo::kRingFlags, used & KernelIo::kRingFlags) << u.release;
  }
  io_uring_queue_exit(&ring);

  const unsigned refused = 1u << 31;  // no such setup flag
  used = 0;
  ASSERT_EQ(0, KernelIo::InitRing(&ring, size, refused | KernelIo::kRingFlags, &used));
  EXPECT_EQ(unsigned{IORING_SETUP_CQSIZE}, used);
  // The plain ring carries commands as the other does.
  io_uring_sqe* sqe = io_uring_get_sqe(&ring);
  io_uring_prep_nop(sqe);
  io_uring_sqe_set_data64(sqe, 7);
  ASSERT_EQ(1, io_uring_submit(&ring));
  io_uring_cqe* cqe;
  ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
  EXPECT_EQ(7u, io_uring_cqe_get_data64(cqe));
  io_uring_cqe_seen(&ring, cqe);
  io_uring_queue_exit(&ring);
  // What the kernel refuses otherwise stays refused.
  EXPECT_EQ(-EINVAL, KernelIo::InitRing(&ring, {0, 0}, KernelIo::kRingFlags, &used));
}

TEST(KernelIoTest, ServeFailsWhenTheFileRefusesFetch) {
  const int fd = memfd_create("hzramd-test", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  TestRegions t(3, 4, 12);
  int err = 0;
  auto io = KernelIo::ForFile(fd, t.r, 0, -1, &err);
  if (!io && (err == -ENOSYS || err == -EPERM))
    GTEST_SKIP() << "no io_uring here: " << std::strerror(-err);
  ASSERT_TRUE(io);
  auto enc = CpuEncoder(1);
  ServeStats st;
  SetLogSink(CaptureLog);
  EXPECT_EQ(-EOPNOTSUPP, Serve(*io, *enc, &st));
  SetLogSink(nullptr);
  io.reset();
  close(fd);
}

// ---------------------------------------------------------------------
// Attaching.

TEST(AttachTest, ErrorMessages) {
  using F = AttachFailure;
  const std::pair<F, const char*> cases[] = {
      {{F::kOpen, ENOENT, ""},
       "hzram module not loaded (/dev/hzram-control: No such file or directory)"},
      {{F::kOpen, EACCES, ""},
       "device 4: needs CAP_SYS_ADMIN (/dev/hzram-control: Permission denied)"},
      {{F::kOpen, EMFILE, ""}, "device 4: /dev/hzram-control: Too many open files"},
      {{F::kAttach, ENODEV, ""}, "device 4 does not exist (no /dev/hzram4)"},
      {{F::kAttach, ENOENT, ""}, "device 4 does not exist (no /dev/hzram4)"},
      {{F::kAttach, EOPNOTSUPP, ""}, "device 4 does not use plain lz4"},
      {{F::kAttach, EPROTO, ""},
       "device 4: the module speaks another version of the helper protocol than hzramd (1)"},
      {{F::kAttach, ENXIO, ""}, "device 4: attach failed: No such device or address"},
      {{F::kAttach, EPERM, ""}, "device 4: needs CAP_SYS_ADMIN (attach: Operation not permitted)"},
      {{F::kAttach, EACCES, ""}, "device 4: needs CAP_SYS_ADMIN (attach: Permission denied)"},
      {{F::kAttach, EBUSY, ""}, "another helper serves device 4"},
      {{F::kAttach, ENOTTY, ""}, "device 4: this hzram module has no helper interface"},
      {{F::kAttach, EINVAL, ""}, "device 4: attach failed: Invalid argument"},
      {{F::kFeatures, 0, "0"},
       "device 4: the module does not let helpers compress (features granted: 0)"},
      {{F::kGeometry, 0, "batch_pages is not 1..4096"},
       "device 4: the module's attach reply is not usable: batch_pages"},
      {{F::kMap, ENOMEM, "output arena"},
       "device 4: cannot map the output arena: Cannot allocate memory"},
      {{F::kRing, ENOSYS, ""}, "device 4: cannot set up io_uring: Function not implemented"},
  };
  for (const auto& [f, message] : cases) {
    const std::string m = AttachErrorMessage(4, f);
    EXPECT_EQ(0u, m.find(message)) << m;
  }
}

TEST(AttachTest, WithoutTheModule) {
  if (access(HZRAM_CONTROL_PATH, F_OK) == 0) GTEST_SKIP() << "the module is loaded here";
  AttachFailure f;
  EXPECT_FALSE(KernelIo::Attach(0, -1, &f));
  EXPECT_EQ(AttachFailure::kOpen, f.step);
  EXPECT_EQ(ENOENT, f.err);
  EXPECT_EQ(0u, AttachErrorMessage(0, f).find("hzram module not loaded"));
}

// ---------------------------------------------------------------------
// The daemon around fake devices, each run in a child process (it blocks
// signals, takes the process's OOM score and I/O flusher flag).

// The device whose loop runs on this thread, once it has waited on its
// EndlessIo (-1: none): for stand-in backends that treat the devices'
// batches apart.
thread_local int t_device = -1;

// A device for RunDaemon(): batches of the same pages without end, until
// the stop fd is readable. After @kill_after commits it sends SIGTERM to
// its own process, as an administrator would; with @end_with, the FETCH
// after the first commit ends with that errno instead. Its
// offload_timeout_ms is @timeout_ms, or read from a file (WatchTimeout());
// a batch committed later than the value of the moment after it was
// handed over is late. On destruction it says on stderr how many commits
// came, how many were wrong and how many late.
class EndlessIo final : public DeviceIo {
 public:
  EndlessIo(unsigned device, int stop_fd, int kill_after, int end_with = 0,
            std::uint32_t timeout_ms = kDefaultOffloadTimeoutMs, std::uint32_t batch_pages = 16)
      : device_(device),
        stop_fd_(stop_fd),
        kill_after_(kill_after),
        end_with_(end_with),
        t_(4, batch_pages, 4 * batch_pages),
        timeout_(timeout_ms) {
    t_.r.offload_timeout_ms = timeout_ms;
    for (std::uint32_t b = 0; b < 4; b++) {
      t_.SetBatch(b, 0, MixedPages(batch_pages, b + 1), b * batch_pages, b);
      free_.push_back(b);
    }
  }
  ~EndlessIo() override {
    std::fprintf(stderr, "fake hzram%u: %d commits, %d wrong, %d late, %d off its thread\n",
                 device_, commits_, wrong_, late_, foreign_);
  }

  // What OpenQueue() returns; the thread that called it is the only one
  // that may queue and wait (others are counted).
  int open_queue_error = 0;
  int OpenQueue() override {
    queue_thread_ = std::this_thread::get_id();
    return open_queue_error;
  }

  // Its offload_timeout_ms read from the file at @path (RefreshTimeout(),
  // as KernelIo reads the attribute); after @after commits, @text written
  // there, as an administrator would change the attribute.
  void WatchTimeout(const std::string& path, int after, const std::string& text) {
    EXPECT_EQ(0, timeout_.Open(path));
    rewrite_after_ = after;
    rewrite_path_ = path;
    rewrite_with_ = text;
  }
  std::uint32_t offload_timeout_ms() const override { return timeout_.ms(); }
  bool RefreshTimeout() override {
    bool changed = false;
    timeout_.Refresh(&changed);
    return changed;
  }

  unsigned device() const override { return device_; }
  const Regions& regions() const override { return t_.r; }
  int QueueFetch() override {
    foreign_ += std::this_thread::get_id() != queue_thread_;
    fetches_++;
    return 0;
  }
  int QueueCommit(std::uint32_t b, std::uint64_t seq) override {
    foreign_ += std::this_thread::get_id() != queue_thread_;
    wrong_ += seq != t_.desc(b).seq || CheckSlot(t_.r, t_.desc(b)) != 0;
    late_ += std::chrono::steady_clock::now() - handed_[b] >
             std::chrono::milliseconds(timeout_.ms());
    answers_.push_back({Completion::kCommit, b, 0});
    free_.push_back(b);
    if (++commits_ == kill_after_) kill(getpid(), SIGTERM);
    if (commits_ == rewrite_after_) std::ofstream(rewrite_path_, std::ios::trunc) << rewrite_with_;
    return 0;
  }
  int Submit() override { return 0; }
  int Wait(std::span<Completion> out, int timeout_ms) override {
    foreign_ += std::this_thread::get_id() != queue_thread_;
    t_device = static_cast<int>(device_);
    for (;;) {
      std::size_t n = 0;
      for (; n < answers_.size(); n++) out[n] = answers_[n];
      answers_.clear();
      pollfd p{stop_fd_, POLLIN, 0};
      if (!stopped_ && poll(&p, 1, 0) == 1) {
        out[n++] = {Completion::kStop, 0, POLLIN};
        stopped_ = true;
      }
      while (!stopped_ && fetches_ && !free_.empty() && n < out.size()) {
        fetches_--;
        if (end_with_ && commits_) {
          out[n++] = {Completion::kFetch, 0, end_with_};
          continue;
        }
        const std::uint32_t b = free_.front();
        free_.erase(free_.begin());
        t_.desc(b).seq = ++seq_;
        handed_[b] = std::chrono::steady_clock::now();
        out[n++] = {Completion::kFetch, 0, static_cast<int>(b)};
      }
      if (n || timeout_ms == 0) return static_cast<int>(n);
      if (poll(&p, 1, timeout_ms) == 0) return 0;
    }
  }

 private:
  unsigned device_;
  int stop_fd_, kill_after_, end_with_;
  TestRegions t_;
  std::vector<std::uint32_t> free_;
  std::vector<Completion> answers_;
  std::size_t fetches_ = 0;
  std::uint64_t seq_ = 0;
  int commits_ = 0, wrong_ = 0, late_ = 0, foreign_ = 0;
  std::thread::id queue_thread_;
  bool stopped_ = false;
  std::chrono::steady_clock::time_point handed_[4];
  OffloadTimeout timeout_;
  int rewrite_after_ = -1;
  std::string rewrite_path_, rewrite_with_;
};

Options DaemonOptions(std::vector<unsigned> devices) {
  Options o;
  o.devices = std::move(devices);
  o.threads = 2;
  o.backend = Backend::kCpu;
  o.mlock = false;
  return o;
}

// A socket in place of systemd's, for hzramd's notifications. A datagram socket
// queues only a few messages (net.unix.max_dgram_qlen), then the sender
// waits: a thread takes them as they come, each with the time it came.
class NotifySocket {
 public:
  NotifySocket() {
    path_ = "/tmp/hzramd-test-notify-" + std::to_string(getpid());
    unlink(path_.c_str());
    fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::snprintf(a.sun_path, sizeof(a.sun_path), "%s", path_.c_str());
    EXPECT_EQ(0, bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)));
    const int on = 1;
    EXPECT_EQ(0, setsockopt(fd_, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof(on)));
    setenv("NOTIFY_SOCKET", path_.c_str(), 1);
    reader_ = std::thread([this] {
      while (!stop_.load()) {
        pollfd p{fd_, POLLIN, 0};
        if (poll(&p, 1, 20) == 1) Drain();
      }
    });
  }
  ~NotifySocket() {
    stop_.store(true);
    reader_.join();
    unsetenv("NOTIFY_SOCKET");
    close(fd_);
    unlink(path_.c_str());
  }
  // Every message received, one after another.
  std::string Messages() {
    std::string s;
    for (const auto& [t, m] : Timed()) s += m + '\n';
    return s;
  }
  // Every message received, with the time it came (CLOCK_REALTIME, s).
  std::vector<std::pair<double, std::string>> Timed() {
    Drain();
    std::lock_guard<std::mutex> l(mu_);
    return got_;
  }

 private:
  void Drain() {
    std::lock_guard<std::mutex> l(mu_);
    char buf[4096];
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(timespec))];
    for (;;) {
      iovec io{buf, sizeof(buf)};
      msghdr m{};
      m.msg_iov = &io;
      m.msg_iovlen = 1;
      m.msg_control = control;
      m.msg_controllen = sizeof(control);
      const ssize_t n = recvmsg(fd_, &m, MSG_DONTWAIT);
      if (n <= 0) break;
      double t = 0;
      for (cmsghdr* c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
          timespec ts;
          std::memcpy(&ts, CMSG_DATA(c), sizeof(ts));
          t = ts.tv_sec + ts.tv_nsec / 1e9;
        }
      got_.emplace_back(t, std::string(buf, static_cast<std::size_t>(n)));
    }
  }

  std::string path_;
  int fd_ = -1;
  std::mutex mu_;
  std::vector<std::pair<double, std::string>> got_;
  std::atomic<bool> stop_{false};
  std::thread reader_;
};

TEST(DaemonDeathTest, SigtermCommitsTheBatchesInHandAndExitsZero) {
  NotifySocket notify;
  const Attacher attach = [](unsigned device, int stop_fd,
                             AttachFailure*) -> std::unique_ptr<DeviceIo> {
    return std::make_unique<EndlessIo>(device, stop_fd, device == 0 ? 20 : -1);
  };
  EXPECT_EXIT(std::exit(RunDaemon(DaemonOptions({0, 7}), attach)), ::testing::ExitedWithCode(0),
              "encoder: cpu, 2 threads.*hzram0: attached: 4 batches of up to 16 pages.*"
              "Terminated: stopping.*hzram7: stopping: committing the batches in hand.*"
              "hzram0: [0-9]+ batches, [0-9]+ pages.*"
              "fake hzram0: [0-9]+ commits, 0 wrong, 0 late, 0 off its thread.*"
              "fake hzram7: [0-9]+ commits, 0 wrong, 0 late, 0 off its thread");
  const std::string m = notify.Messages();
  EXPECT_NE(std::string::npos, m.find("READY=1\nSTATUS=serving hzram0, hzram7 (cpu, 2 threads"))
      << m;
  EXPECT_NE(std::string::npos, m.find("STOPPING=1")) << m;
}

TEST(DaemonDeathTest, ExitsZeroWhenEveryDeviceDetaches) {
  const Attacher attach = [](unsigned device, int stop_fd,
                             AttachFailure*) -> std::unique_ptr<DeviceIo> {
    return std::make_unique<EndlessIo>(device, stop_fd, -1, -ECANCELED);
  };
  EXPECT_EXIT(std::exit(RunDaemon(DaemonOptions({1, 2}), attach)), ::testing::ExitedWithCode(0),
              "hzram[12]: detached by the kernel.*hzram[12]: detached by the kernel");
}

TEST(DaemonDeathTest, AFailedQueueStopsTheOthersAndExitsOne) {
  const Attacher attach = [](unsigned device, int stop_fd,
                             AttachFailure*) -> std::unique_ptr<DeviceIo> {
    return std::make_unique<EndlessIo>(device, stop_fd, -1, device == 1 ? -EIO : 0);
  };
  EXPECT_EXIT(std::exit(RunDaemon(DaemonOptions({0, 1}), attach)), ::testing::ExitedWithCode(1),
              "hzram1: FETCH: Input/output error.*a device's queue failed: stopping.*"
              "fake hzram0: [0-9]+ commits, 0 wrong");
}

TEST(DaemonDeathTest, AttachFailuresExitOneNamingTheDevice) {
  const std::pair<AttachFailure, const char*> cases[] = {
      {{AttachFailure::kOpen, ENOENT, ""}, "hzramd: hzram module not loaded"},
      {{AttachFailure::kAttach, EBUSY, ""}, "hzramd: another helper serves device 3"},
      {{AttachFailure::kAttach, EOPNOTSUPP, ""}, "hzramd: device 3 does not use plain lz4"},
  };
  for (const auto& [failure, message] : cases) {
    const Attacher attach = [&](unsigned device, int stop_fd,
                                AttachFailure* f) -> std::unique_ptr<DeviceIo> {
      if (device == 3) {
        *f = failure;
        return nullptr;
      }
      return std::make_unique<EndlessIo>(device, stop_fd, -1);
    };
    EXPECT_EXIT(std::exit(RunDaemon(DaemonOptions({0, 3}), attach)), ::testing::ExitedWithCode(1),
                std::string("hzram0: attached.*") + message + ".*fake hzram0: 0 commits");
  }
}

// Each queue is opened on the thread that serves it; one that cannot be
// fails the start as an attach does, before any device is served.
TEST(DaemonDeathTest, AQueueThatCannotBeOpenedExitsOne) {
  const Attacher attach = [](unsigned device, int stop_fd,
                             AttachFailure*) -> std::unique_ptr<DeviceIo> {
    auto io = std::make_unique<EndlessIo>(device, stop_fd, -1);
    if (device == 3) io->open_queue_error = -ENOMEM;
    return io;
  };
  EXPECT_EXIT(std::exit(RunDaemon(DaemonOptions({0, 3}), attach)), ::testing::ExitedWithCode(1),
              "hzram3: attached.*hzramd: device 3: cannot set up io_uring: Cannot allocate memory.*"
              "fake hzram0: 0 commits");
}

TEST(DaemonDeathTest, BackendErrorsExitOne) {
  bool gpu = false;
#ifdef HZRAM_HAVE_CUDA
  std::string why;
  gpu = hzram::GpuAvailable(0, &why);
#endif
  if (gpu) GTEST_SKIP() << "a GPU is usable here";
  const Attacher attach = [](unsigned device, int stop_fd,
                             AttachFailure*) -> std::unique_ptr<DeviceIo> {
    return std::make_unique<EndlessIo>(device, stop_fd, -1);
  };
  Options o = DaemonOptions({0});
  o.backend = Backend::kGpu;
  EXPECT_EXIT(std::exit(RunDaemon(o, attach)), ::testing::ExitedWithCode(1),
              "hzramd: --backend gpu: ");
}

TEST(DaemonDeathTest, LockedMemory) {
  const Attacher attach = [](unsigned device, int stop_fd,
                             AttachFailure*) -> std::unique_ptr<DeviceIo> {
    return std::make_unique<EndlessIo>(device, stop_fd, 10);
  };
  Options o = DaemonOptions({0});
  o.mlock = true;
  if (geteuid() == 0) {
    // Root may lock memory: the daemon runs with it locked.
    EXPECT_EXIT(std::exit(RunDaemon(o, attach)), ::testing::ExitedWithCode(0),
                "fake hzram0: [0-9]+ commits, 0 wrong");
  } else {
    // Without the privilege and with no locked memory allowed, it fails.
    const rlimit none{0, 0};
    EXPECT_EXIT((setrlimit(RLIMIT_MEMLOCK, &none), std::exit(RunDaemon(o, attach))),
                ::testing::ExitedWithCode(1), "hzramd: mlockall: .*--no-mlock runs without");
  }
}

// ---------------------------------------------------------------------
// The in-memory device and --bench.

std::string WritePages(const std::vector<Page>& pages, std::size_t extra_bytes = 0) {
  const std::string path = ::testing::TempDir() + "hzramd-pages-" + std::to_string(getpid());
  std::ofstream f(path, std::ios::binary);
  for (const auto& p : pages) f.write(reinterpret_cast<const char*>(p.data()), kPageSize);
  f.write(std::string(extra_bytes, 'x').data(), static_cast<std::streamsize>(extra_bytes));
  return path;
}

TEST(LoopbackTest, ServesEveryPageInBatchesThroughItsSlots) {
  const auto pages = MixedPages(300, 9);
  const std::string path = WritePages(pages, 100);  // a partial page at the end: left out
  std::string e;
  auto io = LoopbackIo::FromFile(path, 64, 3, &e);
  unlink(path.c_str());
  ASSERT_TRUE(io) << e;
  ASSERT_EQ(300u, io->pages());
  for (std::size_t i = 0; i < 300; i++)
    ASSERT_EQ(0, std::memcmp(io->page(i), pages[i].data(), kPageSize));
  auto enc = CpuEncoder(2);
  io->set_verify(true);
  for (int pass = 0; pass < 2; pass++) {
    ServeStats st;
    io->Rewind();
    EXPECT_EQ(0, Serve(*io, *enc, &st));
    EXPECT_EQ(5u, st.batches.load());  // 4 of 64 pages, then 44
    EXPECT_EQ(300u, st.pages.load());
    EXPECT_EQ(0u, st.commit_errors.load());
  }
  EXPECT_EQ(600u, io->committed_pages());
  EXPECT_EQ(0u, io->bad_pages());
}

// Flips a byte of each batch's first LZ4 block: the check must see it.
class CorruptingEncoder final : public BatchEncoder {
 public:
  explicit CorruptingEncoder(BatchEncoder& inner) : inner_(inner) {}
  int Encode(const hzram::PageList& pages, std::span<hzram_page_record> records,
             std::span<std::uint8_t> data, const BatchTime& time) override {
    const int ret = inner_.Encode(pages, records, data, time);
    for (const auto& r : records)
      if (r.kind == HZRAM_PAGE_LZ4) {
        data[r.value + r.length / 2] ^= 0x40;
        break;
      }
    return ret;
  }
  int Decode(std::span<const hzram_page_record> records, std::span<const std::uint8_t> data,
             const hzram::MutablePageList& pages, std::span<int> status,
             const BatchTime& time) override {
    return inner_.Decode(records, data, pages, status, time);
  }
  // Flips a byte of the first zstd frame, as Encode() does.
  int Recompress(const hzram::PageList& pages, int level, std::span<hzram_page_record> records,
                 std::span<std::uint8_t> data) override {
    const int ret = inner_.Recompress(pages, level, records, data);
    for (const auto& r : records)
      if (r.kind == HZRAM_PAGE_ZSTD) {
        data[r.value + r.length / 2] ^= 0x40;
        break;
      }
    return ret;
  }
  std::string Describe() const override { return "corrupting"; }

 private:
  BatchEncoder& inner_;
};

TEST(LoopbackTest, ItsCheckSeesWrongRecords) {
  std::vector<Page> pages;
  for (int i = 0; i < 40; i++) pages.push_back(TextPage(i));
  std::vector<std::uint8_t> flat;
  for (const auto& p : pages) flat.insert(flat.end(), p.begin(), p.end());
  auto io = LoopbackIo::FromPages(flat.data(), pages.size(), 8, 2);
  ASSERT_TRUE(io);
  auto enc = CpuEncoder(1);
  CorruptingEncoder bad(*enc);
  io->set_verify(true);
  ServeStats st;
  SetLogSink(CaptureLog);
  EXPECT_EQ(0, Serve(*io, bad, &st));
  SetLogSink(nullptr);
  EXPECT_EQ(5u, io->bad_pages());  // one per batch
  EXPECT_EQ(5u, st.commit_errors.load());

  // The same check with the encoder's own decoder (hzramd --bench's).
  io->Rewind();
  io->set_verify(false);
  io->set_decoder(enc.get());
  ServeStats again;
  SetLogSink(CaptureLog);
  EXPECT_EQ(0, Serve(*io, bad, &again));
  SetLogSink(nullptr);
  EXPECT_EQ(10u, io->bad_pages());
  EXPECT_EQ(5u, again.commit_errors.load());
  // And none where nothing is wrong.
  io->Rewind();
  ServeStats good;
  EXPECT_EQ(0, Serve(*io, *enc, &good));
  EXPECT_EQ(10u, io->bad_pages());
  EXPECT_EQ(0u, good.commit_errors.load());
}

TEST(LoopbackTest, FileErrors) {
  std::string e;
  EXPECT_FALSE(LoopbackIo::FromFile("/nonexistent/pages", 64, 4, &e));
  EXPECT_EQ("/nonexistent/pages: No such file or directory", e);
  const std::string path = WritePages({}, 4095);
  EXPECT_FALSE(LoopbackIo::FromFile(path, 64, 4, &e));
  EXPECT_NE(std::string::npos, e.find("holds no 4 KiB page")) << e;
  unlink(path.c_str());
}

TEST(BenchTest, PrintsAndWritesItsFigures) {
  const std::string pages = WritePages(MixedPages(200, 11));
  const std::string path = pages + "\"\t.pages";  // a name JSON must escape
  ASSERT_EQ(0, rename(pages.c_str(), path.c_str()));
  Options o;
  o.bench = path;
  o.batch_pages = 32;
  o.seconds = 0.01;
  o.threads = 2;
  o.backend = Backend::kCpu;
  o.json = path + ".json";
  ::testing::internal::CaptureStdout();
  EXPECT_EQ(0, RunBench(o));
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(std::string::npos, out.find("hzramd --bench: 200 pages (0.8 MiB) of " + path)) << out;
  EXPECT_NE(std::string::npos, out.find("pipeline: cpu, 2 threads, ")) << out;
  EXPECT_NE(std::string::npos, out.find("batches of 32 pages, 4 in flight")) << out;
  EXPECT_NE(std::string::npos, out.find("CPU s/GiB")) << out;
  EXPECT_NE(std::string::npos, out.find("hzramd pipeline")) << out;
  EXPECT_EQ(std::string::npos, out.find("liblz4")) << out;
  std::ifstream j(o.json);
  std::stringstream json;
  json << j.rdbuf();
  for (const char* key : {"\"pages\": 200", "\"batch_pages\": 32", "\"batches_in_flight\": 4",
                          "\"pipeline\": {", "\"passes\": ", "\"cpu_s_per_gib\": "})
    EXPECT_NE(std::string::npos, json.str().find(key)) << key << "\n" << json.str();
  // The file's name, escaped (hzram::JsonString).
  EXPECT_NE(std::string::npos, json.str().find("\"file\": \"" + pages + "\\\"\\t.pages\""))
      << json.str();
  unlink(o.json.c_str());
  unlink(path.c_str());
}

TEST(BenchTest, TheBinaryOnTheCorpus) {
  HZRAM_CORPUS_OR_SKIP(corpus);
  const Ran r = RunHzramd(std::string("--bench ") + std::getenv("HZRAM_CORPUS") +
                          " --seconds 0.01 --backend cpu --batch-pages 256");
  EXPECT_EQ(0, r.status) << r.output;
  EXPECT_NE(std::string::npos, r.output.find("hzramd pipeline")) << r.output;
}

// ---------------------------------------------------------------------
// Distinct results for distinct causes.

// An encoder's own -EINVAL (an argument it refuses) is a batch not
// encoded, committed as such; only a descriptor outside the regions is
// left uncommitted.
TEST(EncodeBatchTest, AnEncoderErrorIsNotABadDescriptor) {
  FailingEncoder einval(-EINVAL);
  TestRegions t(2, 8, 16);
  t.SetBatch(0, 5, MixedPages(8, 1), 0, 0);
  hzram_batch_desc d;
  const BatchResult res = Encode(einval, t.r, 0, &d);
  EXPECT_EQ(BatchResult::kNotEncoded, res.outcome);
  EXPECT_EQ(-EINVAL, res.err);
  const auto* rec = reinterpret_cast<const hzram_page_record*>(t.rw.data());
  for (int i = 0; i < 8; i++) EXPECT_EQ(0, rec[i].kind) << i;
  // A read batch with too small a status buffer: an argument error too.
  auto enc = CpuEncoder(1);
  t.desc(1) = {6, 4, HZRAM_OP_DECOMPRESS, 0, 8 * kPageSize, SlotBytes(8)};
  std::vector<int> status(3);
  const BatchResult small = EncodeBatch(*enc, t.r, 1, &d, status, Now(t.r));
  EXPECT_EQ(BatchResult::kNotEncoded, small.outcome);
  EXPECT_EQ(-EINVAL, small.err);
}

TEST_F(ServeTest, AnEncoderEinvalIsCommittedAsNotEncoded) {
  FailingEncoder einval(-EINVAL);
  FakeIo io(2, 8);
  io.script = {{FakeIo::Fetch(0, 8)}, {FakeIo::FetchError(-ECANCELED)}};
  EXPECT_EQ(0, hzramd::Serve(io, einval, &stats_)) << LogText();
  EXPECT_EQ("F F S C0 F S ", io.Trace());
  EXPECT_EQ(0, io.bad_commits);
  EXPECT_EQ(1u, stats_.not_encoded.load());
  EXPECT_TRUE(Logged(LogLevel::kWarn, "batch 0: not encoded (Invalid argument)")) << LogText();
  EXPECT_FALSE(Logged(LogLevel::kWarn, "descriptor outside")) << LogText();
}

// ---------------------------------------------------------------------
// The module's time for a batch, and the watchdog within it.

TEST(TimeoutTest, ReadAtAttachFromSysfs) {
  const std::string path = ::testing::TempDir() + "hzramd-timeout-" + std::to_string(getpid());
  auto read = [&](const char* text, std::uint32_t* ms) {
    std::ofstream(path, std::ios::trunc) << text;
    return OffloadTimeout::Read(path.c_str(), ms);
  };
  std::uint32_t ms = 0;
  EXPECT_EQ(0, read("1000\n", &ms));
  EXPECT_EQ(1000u, ms);
  EXPECT_EQ(0, read("10", &ms));
  EXPECT_EQ(10u, ms);
  EXPECT_EQ(0, read("60000\n", &ms));
  EXPECT_EQ(60000u, ms);
  ms = 7;
  for (const char* bad : {"9\n", "60001\n", "", "\n", "abc\n", "-5\n", "100 ms\n", "1e3\n",
                          "4294967297\n", "0100000\n"}) {
    EXPECT_EQ(-EINVAL, read(bad, &ms)) << bad;
    EXPECT_EQ(7u, ms) << bad;
  }
  unlink(path.c_str());
  EXPECT_EQ(-ENOENT, OffloadTimeout::Read(path.c_str(), &ms));
}

// The module lets offload_timeout_ms change while a device is attached:
// the reader takes the attribute's new value at each Refresh(), keeps
// the last good one when it cannot be read, and KernelIo's
// offload_timeout_ms() follows its RefreshTimeout().
TEST(TimeoutTest, ReadAgainWhileAttached) {
  const std::string path = ::testing::TempDir() + "hzramd-timeout-" + std::to_string(getpid());
  auto write = [&](const char* text) { std::ofstream(path, std::ios::trunc) << text; };
  write("8000\n");
  OffloadTimeout t;
  EXPECT_EQ(kDefaultOffloadTimeoutMs, t.ms());
  EXPECT_EQ(0, t.Open(path));
  EXPECT_EQ(8000u, t.ms());
  bool changed = true;
  EXPECT_EQ(0, t.Refresh(&changed));
  EXPECT_FALSE(changed);
  write("1000\n");
  EXPECT_EQ(0, t.Refresh(&changed));
  EXPECT_TRUE(changed);
  EXPECT_EQ(1000u, t.ms());
  write("soon\n");
  EXPECT_EQ(-EINVAL, t.Refresh(&changed));
  EXPECT_FALSE(changed);
  EXPECT_EQ(1000u, t.ms());

  write("4000");
  const int fd = memfd_create("hzramd-test", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  TestRegions r(2, 4, 8);
  int err = 0;
  auto io = KernelIo::ForFile(fd, r.r, 3, -1, &err, path);
  if (!io && (err == -ENOSYS || err == -EPERM)) {
    close(fd);
    unlink(path.c_str());
    GTEST_SKIP() << "no io_uring here: " << std::strerror(-err);
  }
  ASSERT_TRUE(io) << std::strerror(-err);
  EXPECT_EQ(4000u, io->offload_timeout_ms());
  EXPECT_EQ(4000u, io->regions().offload_timeout_ms);  // at attach
  EXPECT_FALSE(io->RefreshTimeout());
  write("250\n");
  EXPECT_TRUE(io->RefreshTimeout());
  EXPECT_EQ(250u, io->offload_timeout_ms());
  unlink(path.c_str());
  EXPECT_FALSE(io->RefreshTimeout());
  EXPECT_EQ(250u, io->offload_timeout_ms());
  io.reset();
  close(fd);
  // Without a file: the regions' value, for good.
  r.r.offload_timeout_ms = 3000;
  const int fd2 = memfd_create("hzramd-test", MFD_CLOEXEC);
  io = KernelIo::ForFile(fd2, r.r, 3, -1, &err);
  ASSERT_TRUE(io);
  EXPECT_EQ(3000u, io->offload_timeout_ms());
  EXPECT_FALSE(io->RefreshTimeout());
  io.reset();
  close(fd2);
}

TEST(TimeoutTest, TheWatchdogIsWellWithinTheModulesTime) {
  EXPECT_DOUBLE_EQ(0.25, WatchdogSeconds(kDefaultOffloadTimeoutMs));
  EXPECT_DOUBLE_EQ(0.0025, WatchdogSeconds(kMinOffloadTimeoutMs));
  EXPECT_DOUBLE_EQ(2.0, WatchdogSeconds(kMaxOffloadTimeoutMs));
  for (std::uint32_t ms = kMinOffloadTimeoutMs; ms <= kMaxOffloadTimeoutMs; ms += 7)
    ASSERT_LE(WatchdogSeconds(ms), ms / 4.0 / 1e3 * (1 + 1e-12)) << ms;
  EXPECT_EQ(kDefaultOffloadTimeoutMs, Regions().offload_timeout_ms);
}

// ---------------------------------------------------------------------
// The GPU's place, taken by a stand-in device (slow_backend.h): gpu and
// hybrid encoders watch its batches, redo on the CPU what it does not
// finish in time, drop it when it hangs or fails, and the daemon says so.

std::unique_ptr<BatchEncoder> EncoderWith(Backend b, hzram::test::SlowBackend** dev,
                                          unsigned slots = 3, std::size_t max_batch = 1024) {
  auto d = std::make_unique<hzram::test::SlowBackend>(slots, max_batch);
  *dev = d.get();
  std::string e;
  auto cpu = MakeCodec(2, &e);
  auto enc = MakeEncoderOn(b, std::move(cpu), std::move(d), "stand-in", &e);
  EXPECT_TRUE(enc) << e;
  return enc;
}

// Pages that compress, as the module's stored LZ4 pages do.
std::vector<Page> TextPages(std::size_t n, std::uint64_t seed) {
  std::vector<Page> v;
  for (std::size_t i = 0; i < n; i++)
    v.push_back(i % 3 ? TextPage(seed * 1000 + i) : PeriodicPage(1 + i % 300, seed + i));
  return v;
}

// A read batch of @pages (liblz4's blocks) in batch @b's staging cells,
// its output in slot @b.
void SetReadBatch(TestRegions& t, std::uint32_t b, std::uint64_t seq, const std::vector<Page>& pages) {
  const std::uint32_t bp = t.r.info.batch_pages;
  std::uint8_t* cells = t.staging(std::size_t{b} * bp);
  auto* in = reinterpret_cast<hzram_page_record*>(cells);
  std::uint8_t* data = cells + bp * sizeof(hzram_page_record);
  std::uint64_t used = 0;
  for (std::size_t i = 0; i < pages.size(); i++) {
    const int n = LZ4_compress_default(reinterpret_cast<const char*>(pages[i].data()),
                                       reinterpret_cast<char*>(data + used), kPageSize,
                                       static_cast<int>(std::uint64_t{bp} * kPageSize -
                                                        bp * sizeof(hzram_page_record) - used));
    ASSERT_GT(n, 0);
    in[i] = {used, static_cast<std::uint32_t>(n), HZRAM_PAGE_LZ4, 0};
    used += static_cast<std::uint64_t>(n);
  }
  t.desc(b) = {seq, static_cast<std::uint32_t>(pages.size()), HZRAM_OP_DECOMPRESS, 0,
               std::uint64_t{b} * bp * kPageSize, b * SlotBytes(bp)};
}

// Every page of read batch @b decoded, as @pages.
void CheckReadSlot(const TestRegions& t, std::uint32_t b, const std::vector<Page>& pages) {
  const std::uint32_t bp = t.r.info.batch_pages;
  const std::uint8_t* slot = t.rw.data() + b * SlotBytes(bp);
  const auto* rec = reinterpret_cast<const hzram_page_record*>(slot);
  for (std::size_t i = 0; i < pages.size(); i++) {
    ASSERT_EQ(HZRAM_PAGE_RAW, rec[i].kind) << i;
    ASSERT_EQ(0, std::memcmp(slot + bp * sizeof(hzram_page_record) + rec[i].value,
                             pages[i].data(), kPageSize))
        << i;
  }
}

class BackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g_log.clear();
    SetLogSink(CaptureLog);
  }
  void TearDown() override { SetLogSink(nullptr); }
  int Count(const std::string& part) const {
    int n = 0;
    for (const auto& [l, line] : g_log) n += line.find(part) != std::string::npos;
    return n;
  }
};

// While it serves a device, hzramd lends the device's staging to the GPU
// (page-locked there, so that batches' pages cross without host copies),
// read-only, and takes it back when the device's loop ends; not the
// output slots (a copy back into them could not be given up). A backend
// that cannot take it still gets every batch, and hzramd says so once;
// the CPU backend is not asked.
TEST_F(BackendTest, TheDevicesStagingIsLentToTheGpuWhileItIsServed) {
  SetLogLevel(LogLevel::kInfo);  // as the daemon's default; --bench lowers it
  const auto pages = MixedPages(300, 12);
  // The in-memory device of --bench, over the pages.
  auto device = [&pages] {
    const std::string path = WritePages(pages, 0);
    std::string e;
    auto io = LoopbackIo::FromFile(path, 64, 3, &e);
    unlink(path.c_str());
    EXPECT_TRUE(io) << e;
    return io;
  };
  for (const int answer : {0, -EINVAL}) {
    g_log.clear();
    auto io = device();
    ASSERT_TRUE(io);
    hzram::test::SlowBackend* dev;
    auto enc = EncoderWith(Backend::kGpu, &dev);
    dev->register_result = answer;
    io->set_verify(true);
    ServeStats st;
    ASSERT_EQ(0, ServeLent(*io, *enc, &st));
    EXPECT_EQ(300u, st.pages.load());
    EXPECT_EQ(300u, io->committed_pages());
    EXPECT_EQ(0u, io->bad_pages());
    EXPECT_EQ(1, dev->registers);
    EXPECT_TRUE(dev->lent.empty()) << "taken back when the loop ended";
    EXPECT_GT(dev->submitted, 0);
    if (answer == 0) {
      EXPECT_EQ(1, dev->unregisters);
      EXPECT_EQ(1u, dev->lent_at_last_submit) << "lent while batches went to it";
      EXPECT_EQ(1, Count("its staging is page-locked for the GPU"));
    } else {
      EXPECT_EQ(0, dev->unregisters) << "nothing to give back";
      EXPECT_EQ(0u, dev->lent_at_last_submit);
      EXPECT_EQ(1, Count("its staging cannot be page-locked for the GPU (Invalid argument)"));
    }
  }
  // What is lent: the read-only region, read-only.
  auto io = device();
  ASSERT_TRUE(io);
  std::string e;
  hzram::test::SlowBackend* dev;
  auto enc = EncoderWith(Backend::kHybrid, &dev);
  ASSERT_EQ(0, enc->ShareMemory(io->regions()));
  ASSERT_EQ(1u, dev->lent.size());
  EXPECT_EQ(io->regions().ro, dev->lent[0].p);
  EXPECT_EQ(io->regions().info.ro_size, dev->lent[0].bytes);
  EXPECT_TRUE(dev->lent[0].read_only);
  EXPECT_EQ(0, enc->UnshareMemory(io->regions()));
  EXPECT_TRUE(dev->lent.empty());
  auto cpu = MakeEncoderOn(Backend::kCpu, MakeCodec(2, &e), nullptr, "", &e);
  ASSERT_TRUE(cpu) << e;
  EXPECT_EQ(-EOPNOTSUPP, cpu->ShareMemory(io->regions()));
  EXPECT_EQ(-EOPNOTSUPP, cpu->UnshareMemory(io->regions()));
}

// A batch the device never finishes (write or read, gpu or hybrid) is
// given up at its deadline, the watchdog's time of the device's
// offload_timeout_ms after its fetch (4000 ms here: 1 s, so that a loaded
// machine keeps to it), redone on the CPU and committed before the
// module's deadline, every page right; the device is not used again, and
// the daemon (not the library) says so once.
TEST_F(BackendTest, AHungBatchIsRedoneWithinTheModulesTime) {
  for (const Backend b : {Backend::kGpu, Backend::kHybrid}) {
    for (const bool read : {false, true}) {
      g_log.clear();
      hzram::test::SlowBackend* dev;
      auto enc = EncoderWith(b, &dev);
      ASSERT_TRUE(enc);
      ASSERT_TRUE(enc->has_backend());
      TestRegions t(2, 256, 512);
      t.r.offload_timeout_ms = 4000;
      const auto pages = read ? TextPages(256, 20) : MixedPages(256, 20);
      if (read)
        SetReadBatch(t, 0, 9, pages);
      else
        t.SetBatch(0, 9, pages, 0, 0);
      dev->hang_at = dev->submitted + 1;
      hzram_batch_desc d;
      const auto start = std::chrono::steady_clock::now();
      ASSERT_EQ(BatchResult::kEncoded, Encode(*enc, t.r, 0, &d).outcome);
      const auto took = std::chrono::steady_clock::now() - start;
      if (read)
        CheckReadSlot(t, 0, pages);
      else
        EXPECT_EQ(0, CheckSlot(t.r, d));
      EXPECT_EQ(1, dev->abandoned);
      // Given up at the deadline, not before: the device had (nearly) all
      // of the watchdog's second, the fetch being just before.
      EXPECT_GT(dev->abandon_after_s, 0.9);
      EXPECT_GE(took, std::chrono::milliseconds(1000));
      EXPECT_LT(took, std::chrono::milliseconds(4000)) << "later than the module's deadline";
      EXPECT_FALSE(enc->has_backend());
      EXPECT_EQ(1, Count("stand-in dropped, the CPU encodes and decodes from now on: a batch of"))
          << LogText();
      EXPECT_EQ(1, Count("did not finish by its deadline, ")) << LogText();
      EXPECT_TRUE(Logged(LogLevel::kWarn, std::string("--backend ") + BackendName(b)));
      EXPECT_NE(std::string::npos, enc->Describe().find("(gpu dropped: ")) << enc->Describe();
      // The next batches go to the CPU alone, and nothing more is logged.
      const int submitted = dev->submitted;
      t.SetBatch(1, 10, MixedPages(200, 22), 256, 1);
      ASSERT_EQ(BatchResult::kEncoded, Encode(*enc, t.r, 1, &d).outcome);
      EXPECT_EQ(0, CheckSlot(t.r, d));
      EXPECT_EQ(submitted, dev->submitted);
      EXPECT_EQ(1, Count("dropped")) << LogText();
    }
  }
}

// A GPU that fails cleanly (every batch -EIO from then on) does not leave
// every batch to the module, forever: the failed batch is redone on the
// CPU, and so is every later one.
TEST_F(BackendTest, AFailedDeviceIsDroppedForTheCpu) {
  hzram::test::SlowBackend* dev;
  auto enc = EncoderWith(Backend::kGpu, &dev);
  ASSERT_TRUE(enc);
  TestRegions t(2, 256, 512);
  dev->fail_at = dev->submitted + 2;
  for (int i = 0; i < 6; i++) {
    const std::uint32_t b = i % 2;
    t.SetBatch(b, i, MixedPages(256, 30 + i), b * 256, b);
    hzram_batch_desc d;
    ASSERT_EQ(BatchResult::kEncoded, Encode(*enc, t.r, b, &d).outcome) << i;
    EXPECT_EQ(0, CheckSlot(t.r, d)) << i;
  }
  EXPECT_FALSE(enc->has_backend());
  EXPECT_EQ(1, Count("stand-in dropped")) << LogText();
  EXPECT_TRUE(Logged(LogLevel::kWarn, "the stand-in device failed at batch")) << LogText();
}

// Two devices' batches at the shared encoder. hzram0's (offload_timeout_ms
// 8000: the watchdog 2 s) hangs on the GPU and holds the turn for 2 s;
// hzram1's (1000 ms: 250 ms), waiting for the turn, leaves the queue at
// its latest start (half its watchdog after its fetch) and is encoded on
// the CPU at once, within its 1 s, while the hung batch still holds the
// turn. Both beat their loops' heartbeats meanwhile: the batch waiting
// for its turn, and the one whose backend part is polled.
std::atomic<bool> g_hung_polled{false};
void NoteHungPoll() { g_hung_polled.store(true); }

TEST_F(BackendTest, ABatchWaitingForItsTurnGoesToTheCpuAtItsLatestStart) {
  hzram::test::SlowBackend* dev;
  auto enc = EncoderWith(Backend::kGpu, &dev);
  ASSERT_TRUE(enc);
  dev->hang_at = dev->submitted + 1;
  dev->on_first_hung_poll = NoteHungPoll;
  g_hung_polled.store(false);
  TestRegions t(2, 64, 128);
  t.SetBatch(0, 1, MixedPages(64, 50), 0, 0);
  t.SetBatch(1, 2, MixedPages(64, 51), 64, 1);
  std::atomic<std::int64_t> beat0{0}, beat1{0};
  std::vector<int> status0(kMaxBatchPages), status1(kMaxBatchPages);
  hzram_batch_desc d0, d1;
  BatchResult r0;
  std::atomic<bool> done0{false};
  std::thread hung([&] {
    r0 = EncodeBatch(*enc, t.r, 0, &d0, status0, TimeOfBatch(8000, Clock::now(), &beat0));
    done0.store(true);
  });
  while (!g_hung_polled.load()) std::this_thread::yield();
  const auto fetched = Clock::now();
  const std::int64_t fetched_ns = MonotonicNs();
  const BatchResult r1 =
      EncodeBatch(*enc, t.r, 1, &d1, status1, TimeOfBatch(1000, fetched, &beat1));
  const auto took = Clock::now() - fetched;
  const bool still_held = !done0.load();
  EXPECT_EQ(BatchResult::kEncoded, r1.outcome);
  EXPECT_EQ(0, CheckSlot(t.r, d1));
  EXPECT_TRUE(still_held) << "hzram1's batch waited for the hung one";
  EXPECT_GE(took, std::chrono::milliseconds(125)) << "it left the queue before its latest start";
  EXPECT_LT(took, std::chrono::milliseconds(1000)) << "later than the module's deadline";
  EXPECT_GT(beat1.load(), fetched_ns) << "no beat while it waited for its turn";
  // What the daemon's main thread asks does not wait for the turn.
  const bool held = !done0.load();
  const auto asked = Clock::now();
  EXPECT_NE(std::string::npos, enc->Describe().find("gpu, stand-in"));
  EXPECT_TRUE(enc->has_backend());
  if (held) {
    EXPECT_LT(Clock::now() - asked, std::chrono::milliseconds(500)) << "it waited for the turn";
  }
  // The hung batch's loop beats while its backend part is polled.
  const std::int64_t seen = beat0.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  if (!done0.load()) {
    EXPECT_GT(beat0.load(), seen) << "no beat while the backend was polled";
  }
  hung.join();
  EXPECT_EQ(BatchResult::kEncoded, r0.outcome);
  EXPECT_EQ(0, CheckSlot(t.r, d0));
  EXPECT_EQ(1, dev->abandoned);
  EXPECT_EQ(1, dev->submitted) << "hzram1's batch went to the device";
  EXPECT_EQ(1, Count("stand-in dropped")) << LogText();
}

// A batch that comes to the encoder after its latest start (it waited
// too long before) does not go to the device: the CPU does it at once,
// and the device, which did nothing wrong, stays.
TEST_F(BackendTest, ALateBatchGoesToTheCpuAndTheDeviceStays) {
  for (const Backend b : {Backend::kGpu, Backend::kHybrid}) {
    hzram::test::SlowBackend* dev;
    auto enc = EncoderWith(b, &dev);
    ASSERT_TRUE(enc);
    TestRegions t(2, 256, 512);
    t.SetBatch(0, 1, MixedPages(256, 60), 0, 0);
    const int submitted = dev->submitted;
    std::vector<int> status(kMaxBatchPages);
    hzram_batch_desc d;
    // offload_timeout_ms 1000: its latest start 125 ms after the fetch.
    const auto fetched = Clock::now() - std::chrono::milliseconds(130);
    ASSERT_EQ(BatchResult::kEncoded,
              EncodeBatch(*enc, t.r, 0, &d, status, TimeOfBatch(1000, fetched)).outcome);
    EXPECT_EQ(0, CheckSlot(t.r, d));
    EXPECT_EQ(submitted, dev->submitted) << BackendName(b);
    EXPECT_EQ(0, dev->abandoned) << BackendName(b);
    EXPECT_TRUE(enc->has_backend()) << BackendName(b);
    // In time, the device takes its part again.
    t.SetBatch(1, 2, MixedPages(256, 61), 256, 1);
    ASSERT_EQ(BatchResult::kEncoded,
              EncodeBatch(*enc, t.r, 1, &d, status, TimeOfBatch(4000, Clock::now())).outcome);
    EXPECT_EQ(0, CheckSlot(t.r, d));
    EXPECT_GT(dev->submitted, submitted) << BackendName(b);
  }
  EXPECT_EQ(0, Count("dropped")) << LogText();
}

// ---------------------------------------------------------------------
// Nothing is allocated per batch: the steady state of the serving loop
// and of EncodeBatch, writes and reads, on every backend, counted by the
// malloc interposer of alloc_count.cc.

TEST(NoAllocationTest, PerBatch) {
  ASSERT_TRUE(hzram::test::AllocationsAreSeen());
  SetLogLevel(LogLevel::kError);
  std::vector<std::uint8_t> flat;
  for (const auto& p : MixedPages(2048, 40)) flat.insert(flat.end(), p.begin(), p.end());
  const auto reads = TextPages(300, 41);
  std::vector<int> status(kMaxBatchPages);
  for (const Backend b : {Backend::kCpu, Backend::kGpu, Backend::kHybrid}) {
    hzram::test::SlowBackend* dev = nullptr;
    std::string e;
    auto enc = b == Backend::kCpu ? MakeEncoderOn(b, MakeCodec(2, &e), nullptr, "", &e)
                                  : EncoderWith(b, &dev, 2, 256);
    ASSERT_TRUE(enc) << e;
    auto io = LoopbackIo::FromPages(flat.data(), 2048, 512, 4);
    ASSERT_TRUE(io);
    TestRegions t(2, 512, 1024);
    SetReadBatch(t, 1, 1, reads);
    hzram_batch_desc d;
    // Once to warm up, then counted.
    for (int pass = 0; pass < 2; pass++) {
      ServeStats st;
      io->Rewind();
      if (pass) hzram::test::StartCounting();
      const int served = Serve(*io, *enc, &st);
      const BatchResult r1 = EncodeBatch(*enc, t.r, 1, &d, status, Now(t.r));
      const BatchResult r2 = EncodeBatch(*enc, t.r, 1, &d, status, Now(t.r));
      const std::uint64_t allocations = pass ? hzram::test::StopCounting() : 0;
      ASSERT_EQ(0, served);
      ASSERT_EQ(2048u, st.pages.load());
      ASSERT_EQ(BatchResult::kEncoded, r1.outcome);
      ASSERT_EQ(BatchResult::kEncoded, r2.outcome);
      EXPECT_EQ(0u, allocations) << BackendName(b);
    }
    CheckReadSlot(t, 1, reads);
    if (dev) {
      EXPECT_TRUE(enc->has_backend()) << BackendName(b);
      EXPECT_GT(dev->waited, 4) << BackendName(b) << ": the device took part";
    }
  }
  SetLogLevel(LogLevel::kInfo);
}

// ---------------------------------------------------------------------
// io_uring for every geometry the check takes.

TEST(KernelIoTest, EveryGeometryTheCheckTakesGetsItsQueue) {
  EXPECT_EQ(4u, KernelIo::RingSizeFor(1).cq_entries);
  EXPECT_EQ(32u, KernelIo::RingSizeFor(8).cq_entries);
  EXPECT_EQ(32u, KernelIo::RingSizeFor(8).sq_entries);
  EXPECT_EQ(65536u, KernelIo::RingSizeFor(kMaxBatches).cq_entries);
  EXPECT_EQ(4096u, KernelIo::RingSizeFor(kMaxBatches).sq_entries);
  std::string why;
  hzram_attach a = LayoutLikeModule(kMaxBatches, 1, 1);
  EXPECT_TRUE(CheckGeometry(a, &why)) << why;
  a = LayoutLikeModule(kMaxBatches + 1, 1, 1);
  EXPECT_FALSE(CheckGeometry(a, &why));

  const int fd = memfd_create("hzramd-test", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  for (const std::uint32_t nr : {1u, 8u, 8191u, 8192u, kMaxBatches}) {
    Regions r;
    r.info = LayoutLikeModule(nr, 1, 1);
    int err = 0;
    auto io = KernelIo::ForFile(fd, r, 0, -1, &err);
    if (!io && (err == -ENOSYS || err == -EPERM))
      GTEST_SKIP() << "no io_uring here: " << std::strerror(-err);
    ASSERT_TRUE(io) << nr << " batches: " << std::strerror(-err);
    if (nr != kMaxBatches) continue;
    // Every command the loop may have queued at once: a FETCH and a
    // COMMIT per batch, all completing together (the file answers each
    // at once, -EOPNOTSUPP); none is lost.
    for (std::uint32_t b = 0; b < nr; b++) {
      ASSERT_EQ(0, io->QueueFetch());
      ASSERT_EQ(0, io->QueueCommit(b, b));
    }
    ASSERT_EQ(0, io->Submit());
    Completion c[256];
    std::size_t got = 0, fetches = 0;
    while (got < 2 * nr) {
      const int n = io->Wait(c, 2000);
      ASSERT_GT(n, 0) << got << " of " << 2 * nr;
      for (int i = 0; i < n; i++) {
        EXPECT_EQ(-EOPNOTSUPP, c[i].res);
        fetches += c[i].kind == Completion::kFetch;
      }
      got += static_cast<std::size_t>(n);
    }
    EXPECT_EQ(nr, fetches);
  }
  Regions r;
  r.info = LayoutLikeModule(kMaxBatches + 1, 1, 1);
  int err = 0;
  EXPECT_FALSE(KernelIo::ForFile(fd, r, 0, -1, &err));
  EXPECT_EQ(-EINVAL, err);
  close(fd);
}

// ---------------------------------------------------------------------
// The serving loop's heartbeat and systemd's watchdog.

// While idle, the loop wakes every idle_wait_ms, and beats.
TEST_F(ServeTest, IdleWaitsBeat) {
  FakeIo io(2, 8);
  io.script = {{}, {}, {FakeIo::Fetch(0, 4)}, {}, {FakeIo::FetchError(-ECANCELED)}};
  const std::int64_t before = MonotonicNs();
  EXPECT_EQ(0, Serve(io, kDrainTimeoutMs, 25)) << LogText();
  EXPECT_EQ("F F S C0 F S ", io.Trace());
  EXPECT_EQ(std::vector<int>(5, 25), io.timeouts);
  EXPECT_GE(stats_.alive_ns.load(), before);
  EXPECT_LE(stats_.alive_ns.load(), MonotonicNs());
}

// An encoder that takes @ms per batch, and @wedge_ms once, at batch
// @wedge_at (a loop that hangs for a while, as far as the daemon sees).
class SleepyEncoder final : public BatchEncoder {
 public:
  SleepyEncoder(int ms, int wedge_at, int wedge_ms)
      : inner_(CpuEncoder(1)), ms_(ms), wedge_at_(wedge_at), wedge_ms_(wedge_ms) {}
  int Encode(const hzram::PageList& pages, std::span<hzram_page_record> records,
             std::span<std::uint8_t> data, const BatchTime& time) override {
    const int n = ++batches_;
    std::this_thread::sleep_for(std::chrono::milliseconds(n == wedge_at_ ? wedge_ms_ : ms_));
    return inner_->Encode(pages, records, data, time);
  }
  int Decode(std::span<const hzram_page_record> records, std::span<const std::uint8_t> data,
             const hzram::MutablePageList& pages, std::span<int> status,
             const BatchTime& time) override {
    return inner_->Decode(records, data, pages, status, time);
  }
  int Recompress(const hzram::PageList& pages, int level, std::span<hzram_page_record> records,
                 std::span<std::uint8_t> data) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms_));
    return inner_->Recompress(pages, level, records, data);
  }
  std::string Describe() const override { return "sleepy"; }

 private:
  std::unique_ptr<BatchEncoder> inner_;
  int ms_, wedge_at_, wedge_ms_;
  std::atomic<int> batches_{0};
};

// The WATCHDOG=1 messages among @m, by time.
std::vector<double> Pings(const std::vector<std::pair<double, std::string>>& m) {
  std::vector<double> v;
  for (const auto& [t, s] : m)
    if (s.find("WATCHDOG=1") != std::string::npos) v.push_back(t);
  return v;
}

TEST(DaemonDeathTest, TellsSystemdsWatchdogWhileItsLoopsLive) {
  NotifySocket notify;
  setenv("WATCHDOG_USEC", "2000000", 1);
  const Attacher attach = [](unsigned device, int stop_fd,
                             AttachFailure*) -> std::unique_ptr<DeviceIo> {
    return std::make_unique<EndlessIo>(device, stop_fd, device == 0 ? 120 : -1);
  };
  const EncoderMaker sleepy = [](const Options&, std::string*) -> std::unique_ptr<BatchEncoder> {
    return std::make_unique<SleepyEncoder>(20, 0, 0);
  };
  EXPECT_EXIT(std::exit(RunDaemon(DaemonOptions({0, 1}), attach, sleepy)),
              ::testing::ExitedWithCode(0),
              "systemd's watchdog: 2.000 s.*Terminated: stopping.*fake hzram0: [0-9]+ commits, 0 wrong");
  unsetenv("WATCHDOG_USEC");
  const auto pings = Pings(notify.Timed());
  // 120 batches of device 0 of 20 ms each: 2.4 s or more, a ping every
  // 500 ms; never the watchdog's time without one.
  ASSERT_GE(pings.size(), 4u);
  for (std::size_t i = 1; i < pings.size(); i++) EXPECT_LT(pings[i] - pings[i - 1], 2.0) << i;
}

TEST(DaemonDeathTest, AWedgedLoopStopsThePings) {
  NotifySocket notify;
  setenv("WATCHDOG_USEC", "200000", 1);
  const Attacher attach = [](unsigned device, int stop_fd,
                             AttachFailure*) -> std::unique_ptr<DeviceIo> {
    return std::make_unique<EndlessIo>(device, stop_fd, 80);
  };
  // Batch 40 takes 1.2 s: six watchdog times.
  const EncoderMaker wedging = [](const Options&, std::string*) -> std::unique_ptr<BatchEncoder> {
    return std::make_unique<SleepyEncoder>(5, 40, 1200);
  };
  EXPECT_EXIT(std::exit(RunDaemon(DaemonOptions({0}), attach, wedging)),
              ::testing::ExitedWithCode(0),
              "systemd's watchdog: 0.200 s is less than the 2 s hzramd needs.*"
              "hzram0: its loop made no progress for [0-9.]+ s: systemd's watchdog is not told "
              "hzramd is alive.*hzram0: its loop makes progress again.*Terminated: stopping");
  unsetenv("WATCHDOG_USEC");
  const auto pings = Pings(notify.Timed());
  ASSERT_GE(pings.size(), 4u);
  double longest = 0;
  std::size_t at = 0;
  for (std::size_t i = 1; i < pings.size(); i++)
    if (pings[i] - pings[i - 1] > longest) longest = pings[i] - pings[i - 1], at = i;
  // No ping for most of the wedge: the loop's last beat was before it,
  // and pings stop once that is half the watchdog's time old.
  EXPECT_GT(longest, 0.9);
  EXPECT_GE(at, 2u) << "pings before the wedge";
  EXPECT_LT(at, pings.size() - 1) << "pings after it";
}

// A device that hangs, under --backend gpu, two devices: the daemon's
// watchdog gives the hung batch up, the CPU redoes it, every batch of
// both devices is committed right and within its offload_timeout_ms,
// the device is dropped (said once), and SIGTERM, sent at the first poll
// of the hung batch, stops the daemon within the watchdog's time (1 s)
// and a margin for a loaded machine.
// (The log sink is called from every thread.)
std::atomic<int> g_dropped{0};
void CountDrops(LogLevel level, const char* line) {
  g_dropped += std::strstr(line, "dropped, the CPU") != nullptr;
  std::fprintf(stderr, "hzramd: %d %s\n", static_cast<int>(level), line);
}
std::chrono::steady_clock::time_point g_term_sent;
void TermAtTheHang() {
  g_term_sent = std::chrono::steady_clock::now();
  kill(getpid(), SIGTERM);
}

TEST(DaemonDeathTest, AHungGpuBlocksNeitherTheOtherDevicesNorSigterm) {
  const Attacher attach = [](unsigned device, int stop_fd,
                             AttachFailure*) -> std::unique_ptr<DeviceIo> {
    return std::make_unique<EndlessIo>(device, stop_fd, -1, 0, 4000, 64);
  };
  const EncoderMaker gpu = [](const Options&, std::string* e) -> std::unique_ptr<BatchEncoder> {
    auto dev = std::make_unique<hzram::test::SlowBackend>(3, 1024);
    dev->hang_at = 5;
    dev->on_first_hung_poll = TermAtTheHang;
    return MakeEncoderOn(Backend::kGpu, MakeCodec(2, e), std::move(dev), "stand-in", e);
  };
  EXPECT_EXIT(
      {
        SetLogSink(CountDrops);
        const int status = RunDaemon(DaemonOptions({0, 1}), attach, gpu);
        const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                                          g_term_sent)
                                .count();
        std::fprintf(stderr, "dropped %d times; stopped %.3f s after SIGTERM\n", g_dropped.load(),
                     took);
        std::exit(status ? status : took < 1.0 + 1.5 ? 0 : 3);
      },
      ::testing::ExitedWithCode(0),
      "encoder: gpu, stand-in.*hzram0: attached: .*offload_timeout_ms 4000, the backend's watchdog "
      "1000 ms.*Terminated: stopping.*--backend gpu: stand-in dropped, the CPU encodes and decodes "
      "from now on: a batch of [0-9]+ pages did not finish by its deadline.*fake hzram[01]: [0-9]+ "
      "commits, 0 wrong, 0 late.*fake hzram[01]: [0-9]+ commits, 0 wrong, 0 late.*dropped 1 "
      "times; stopped");
}

// Two devices with different times (hzram0: offload_timeout_ms 8000, its
// watchdog 2 s; hzram1: 1000, 250 ms): a batch of hzram0 that hangs on
// the GPU holds the encoder for 2 s, and hzram1's batches, waiting for
// their turn, must still be committed within hzram1's own time. (Each
// batch's time counts from its FETCH, not from when its turn came.)
int g_dev0_batches = 0;
bool HangDeviceZerosThirdBatch() { return t_device == 0 && ++g_dev0_batches == 3; }

TEST(DaemonDeathTest, OneDevicesHungBatchMakesNoOtherDeviceLate) {
  const Attacher attach = [](unsigned device, int stop_fd,
                             AttachFailure*) -> std::unique_ptr<DeviceIo> {
    return std::make_unique<EndlessIo>(device, stop_fd, device == 0 ? 12 : -1, 0,
                                       device == 0 ? 8000 : 1000, 64);
  };
  const EncoderMaker gpu = [](const Options&, std::string* e) -> std::unique_ptr<BatchEncoder> {
    auto dev = std::make_unique<hzram::test::SlowBackend>(3, 1024);
    dev->hang_if = HangDeviceZerosThirdBatch;
    return MakeEncoderOn(Backend::kGpu, MakeCodec(2, e), std::move(dev), "stand-in", e);
  };
  EXPECT_EXIT(std::exit(RunDaemon(DaemonOptions({0, 1}), attach, gpu)),
              ::testing::ExitedWithCode(0),
              "hzram0: attached: .*the backend's watchdog 2000 ms.*hzram1: attached: .*the "
              "backend's watchdog 250 ms.*stand-in dropped, the CPU encodes and decodes from now "
              "on: a batch of 64 pages did not finish by its deadline.*Terminated: stopping.*fake hzram0: "
              "[0-9]+ commits, 0 wrong, 0 late.*fake hzram1: [0-9]+ commits, 0 wrong, 0 late");
}

// systemd's watchdog through a GPU hang: two devices (offload_timeout_ms
// 8000, the backend's watchdog 2 s) and WatchdogSec 2 s, under which a
// loop quiet for 1 s counts as stalled. The loop that polls the hung
// batch and the one waiting for its turn meanwhile both beat: no loop is
// reported stalled and the pings go on.
std::atomic<int> g_stalls{0};
void CountStalls(LogLevel level, const char* line) {
  g_stalls += std::strstr(line, "made no progress") != nullptr;
  std::fprintf(stderr, "hzramd: %d %s\n", static_cast<int>(level), line);
}

TEST(DaemonDeathTest, AGpuHangStallsNoLoopForSystemdsWatchdog) {
  NotifySocket notify;
  setenv("WATCHDOG_USEC", "2000000", 1);
  const Attacher attach = [](unsigned device, int stop_fd,
                             AttachFailure*) -> std::unique_ptr<DeviceIo> {
    return std::make_unique<EndlessIo>(device, stop_fd, device == 0 ? 30 : -1, 0, 8000, 64);
  };
  const EncoderMaker gpu = [](const Options&, std::string* e) -> std::unique_ptr<BatchEncoder> {
    auto dev = std::make_unique<hzram::test::SlowBackend>(3, 1024);
    dev->hang_at = 5;
    return MakeEncoderOn(Backend::kGpu, MakeCodec(2, e), std::move(dev), "stand-in", e);
  };
  EXPECT_EXIT(
      {
        SetLogSink(CountStalls);
        const int status = RunDaemon(DaemonOptions({0, 1}), attach, gpu);
        std::fprintf(stderr, "%d stalls\n", g_stalls.load());
        std::exit(status ? status : g_stalls ? 3 : 0);
      },
      ::testing::ExitedWithCode(0),
      "systemd's watchdog: 2.000 s.*stand-in dropped.*Terminated: stopping.*0 stalls");
  unsetenv("WATCHDOG_USEC");
  const auto pings = Pings(notify.Timed());
  ASSERT_GE(pings.size(), 3u) << notify.Messages();
  for (std::size_t i = 1; i < pings.size(); i++) EXPECT_LT(pings[i] - pings[i - 1], 2.0) << i;
}

// The module lets offload_timeout_ms change while the device is attached:
// the daemon reads it again about once a second, says so, and the
// device's next batches get the new watchdog. Here 8000 ms (the watchdog
// 2 s) becomes 1000 (250 ms) after hzram0's 5th commit; the stand-in GPU
// hangs on a batch fetched once the daemon has the new value, which is
// given up by its deadline, less than 250 ms after its submission (not
// 2 s); SIGTERM, sent from that hang, stops the daemon. (A fallback
// SIGTERM after 10 s ends a daemon that never took the new value.)
EndlessIo* g_timed_io = nullptr;
int g_after_change = 0;
bool HangOnceTheNewTimeoutIsIn() {
  // The 5th submission since the new value was seen: hzram0 has 4
  // batches, so the first four may have been fetched before, never the
  // 5th.
  return g_timed_io && g_timed_io->offload_timeout_ms() == 1000 && ++g_after_change == 5;
}
void TermNow() { kill(getpid(), SIGTERM); }

TEST(DaemonDeathTest, FollowsOffloadTimeoutMsWhileAttached) {
  static std::string path;
  path = ::testing::TempDir() + "hzramd-timeout-daemon-" + std::to_string(getpid());
  std::ofstream(path, std::ios::trunc) << "8000\n";
  const Attacher attach = [](unsigned device, int stop_fd,
                             AttachFailure*) -> std::unique_ptr<DeviceIo> {
    auto io = std::make_unique<EndlessIo>(device, stop_fd, -1, 0, 8000, 16);
    io->WatchTimeout(path, 5, "1000\n");
    g_timed_io = io.get();
    return io;
  };
  const EncoderMaker gpu = [](const Options&, std::string* e) -> std::unique_ptr<BatchEncoder> {
    auto dev = std::make_unique<hzram::test::SlowBackend>(3, 1024);
    dev->hang_if = HangOnceTheNewTimeoutIsIn;
    dev->on_first_hung_poll = TermNow;
    return MakeEncoderOn(Backend::kGpu, MakeCodec(2, e), std::move(dev), "stand-in", e);
  };
  EXPECT_EXIT(
      {
        // The fallback's thread with SIGTERM blocked, as the daemon's own
        // (else the signal could be delivered to it, and kill the process).
        sigset_t term;
        sigemptyset(&term);
        sigaddset(&term, SIGTERM);
        pthread_sigmask(SIG_BLOCK, &term, nullptr);
        std::thread([] {
          std::this_thread::sleep_for(std::chrono::seconds(10));
          kill(getpid(), SIGTERM);
        }).detach();
        std::exit(RunDaemon(DaemonOptions({0}), attach, gpu));
      },
      ::testing::ExitedWithCode(0),
      "hzram0: attached: .*offload_timeout_ms 8000, the backend's watchdog 2000 ms.*hzram0: "
      "offload_timeout_ms is now 1000, the backend's watchdog 250 ms.*Terminated: stopping.*"
      "stand-in dropped, the CPU encodes and decodes from now on: a batch of 16 pages did not "
      "finish by its deadline, 0\\.[0-2][0-9]* s after its submission.*fake hzram0: [0-9]+ "
      "commits, 0 wrong, 0 late");
  unlink(path.c_str());
}

}  // namespace
}  // namespace hzramd
