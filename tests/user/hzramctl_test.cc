// SPDX-License-Identifier: GPL-2.0
// hzramctl: sizes and numbers as util-linux formats and parses them, the
// ALGORITHM and OFFLOAD rules, the column table and -o lists, the command
// line and its messages, and the whole command against a fake /sys, /proc
// and /dev tree (listing, JSON, the offload columns, --find, --size,
// --reset, the errors); the generic netlink messages as the module lays
// them out, parsed, the netlink source against a fake family (the same
// table as from sysfs, sysfs where it fails), and the events as --monitor
// prints them; the binary's exit statuses. tests/kselftest/hzramctl.sh
// compares it with zramctl on real devices, and checks --monitor there.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <libsmartcols.h>
#include <linux/hzram.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "columns.h"
#include "device.h"
#include "events.h"
#include "format.h"
#include "hzramctl.h"
#include "netlink.h"
#include "options.h"
#include "table.h"
#include "program.h"

namespace hzramctl {
namespace {

// ---------------------------------------------------------------------
// Sizes and numbers.

TEST(FormatTest, SizeToHumanString) {
  const std::pair<std::uint64_t, const char*> cases[] = {
      {0, "0B"},
      {1, "1B"},
      {1023, "1023B"},
      {1024, "1K"},
      {1075, "1K"},  // 1.0498K: rounds to one decimal, 0 dropped
      {1100, "1.1K"},
      {1536, "1.5K"},
      {2047, "2K"},  // 1.999K rounds up to a whole number
      {1048575, "1024K"},  // as util-linux: rounded up, not carried to 1M
      {1048576, "1M"},
      {2621440, "2.5M"},
      {16ULL << 20, "16M"},
      {(3ULL << 30) + (1ULL << 29), "3.5G"},
      {1ULL << 40, "1T"},
      {1ULL << 50, "1P"},
      {1ULL << 60, "1E"},
      {UINT64_MAX, "16E"},
  };
  for (const auto& [bytes, want] : cases) EXPECT_EQ(want, SizeToHumanString(bytes)) << bytes;
}

TEST(FormatTest, ParseSize) {
  const std::pair<const char*, std::uintmax_t> good[] = {
      {"0", 0},
      {"1", 1},
      {"1K", 1024},
      {"1k", 1024},
      {"1KiB", 1024},
      {"1Kib", 1024},
      {"1KB", 1000},
      {"16M", 16 << 20},
      {"2G", 2ULL << 30},
      {"1T", 1ULL << 40},
      {"0.5M", 512 << 10},
      {"1.5G", (3ULL << 30) / 2},
      {"0.05K", 51},  // 1024 / 20
      {"1.5MB", 1500000},
      {"0x10", 16},  // strtoumax with base 0, as util-linux
      {"010", 8},
      {" 7", 7},
      {"15E", 15ULL << 60},
  };
  for (const auto& [text, want] : good) {
    std::uintmax_t got = 1;
    EXPECT_EQ(0, ParseSize(text, &got)) << text;
    EXPECT_EQ(want, got) << text;
  }
  const std::pair<const char*, int> bad[] = {
      {"", EINVAL},    {"abc", EINVAL},  {"-1", EINVAL},    {" -1", EINVAL},
      {"1x", EINVAL},  {"1KX", EINVAL},  {"1.5", EINVAL},   {"1.", EINVAL},
      {"1 K", EINVAL}, {"K", EINVAL},    {"16E", ERANGE},   {"1Z", ERANGE},
      {"99999999999999999999", ERANGE},
  };
  for (const auto& [text, err] : bad) {
    std::uintmax_t got = 1;
    errno = 0;
    EXPECT_EQ(-err, ParseSize(text, &got)) << text;
    EXPECT_EQ(err, errno) << text;
  }
}

TEST(FormatTest, ParseU64) {
  std::uint64_t n = 0;
  EXPECT_EQ(0, ParseU64("4", &n));
  EXPECT_EQ(4u, n);
  EXPECT_EQ(0, ParseU64("18446744073709551615", &n));
  EXPECT_EQ(UINT64_MAX, n);
  // As util-linux's ul_strtou64(): leading space and a sign; "-0" is 0.
  for (const char* s : {" 4", "+4", "\t+4"}) {
    n = 0;
    EXPECT_EQ(0, ParseU64(s, &n)) << s;
    EXPECT_EQ(4u, n) << s;
  }
  n = 9;
  EXPECT_EQ(0, ParseU64("-0", &n));
  EXPECT_EQ(0u, n);
  for (const char* s : {"", "x", "4x", "0x10", " 4 "}) {
    EXPECT_EQ(-EINVAL, ParseU64(s, &n)) << s;
    EXPECT_NE(ERANGE, errno) << s;
  }
  for (const char* s : {"-1", "18446744073709551616"}) {
    EXPECT_EQ(-EINVAL, ParseU64(s, &n)) << s;
    EXPECT_EQ(ERANGE, errno) << s;
  }
}

TEST(FormatTest, AlgorithmIsTheLastBracketedWord) {
  EXPECT_EQ("lz4", BracketedSelection("lzo lzo-rle [lz4] lz4hc zstd"));
  EXPECT_EQ("zstd", BracketedSelection("lzo lz4 [zstd]"));
  EXPECT_EQ("lz4", BracketedSelection("[lzo] [lz4]"));
  EXPECT_EQ("lzo-rle", BracketedSelection("[lzo-rle]"));
  EXPECT_EQ(std::nullopt, BracketedSelection("lzo lz4 zstd"));
  EXPECT_EQ(std::nullopt, BracketedSelection("lzo [] lz4"));
  EXPECT_EQ(std::nullopt, BracketedSelection("lz4] x ["));
  EXPECT_EQ(std::nullopt, BracketedSelection(""));
}

TEST(FormatTest, SelectedValue) {
  EXPECT_EQ("auto", SelectedValue("auto"));
  EXPECT_EQ("on", SelectedValue(" on \n"));
  EXPECT_EQ("auto", SelectedValue("off [auto] on"));
  EXPECT_EQ(std::nullopt, SelectedValue(""));
  EXPECT_EQ(std::nullopt, SelectedValue("off [] on"));
}

// ---------------------------------------------------------------------
// Columns.

TEST(ColumnsTest, ZramctlsColumnsThenHzramsWithTheirHints) {
  struct Want {
    const char* name;
    double whint;
    int flags;
  };
  const Want want[] = {
      {"NAME", 0.25, 0},
      {"DISKSIZE", 5, SCOLS_FL_RIGHT},
      {"DATA", 5, SCOLS_FL_RIGHT},
      {"COMPR", 5, SCOLS_FL_RIGHT},
      {"ALGORITHM", 3, 0},
      {"STREAMS", 3, SCOLS_FL_RIGHT},
      {"ZERO-PAGES", 3, SCOLS_FL_RIGHT},
      {"TOTAL", 5, SCOLS_FL_RIGHT},
      {"MEM-LIMIT", 5, SCOLS_FL_RIGHT},
      {"MEM-USED", 5, SCOLS_FL_RIGHT},
      {"MIGRATED", 5, SCOLS_FL_RIGHT},
      {"MOUNTPOINT", 0.10, SCOLS_FL_TRUNC},
      {"OFFLOAD", 4, 0},
      {"HELPER", 1, SCOLS_FL_RIGHT},
      {"HELPER-PAGES", 5, SCOLS_FL_RIGHT},
      {"FALLBACKS", 5, SCOLS_FL_RIGHT},
      {"WRITTEN-BACK", 5, SCOLS_FL_RIGHT},
      {"RECOMPRESSED", 5, SCOLS_FL_RIGHT},
  };
  ASSERT_EQ(std::size(want), AllColumns().size());
  for (std::size_t i = 0; i < std::size(want); i++) {
    const ColumnInfo& c = AllColumns()[i];
    EXPECT_STREQ(want[i].name, c.name);
    EXPECT_EQ(want[i].whint, c.whint) << c.name;
    EXPECT_EQ(want[i].flags, c.flags) << c.name;
    EXPECT_EQ(static_cast<std::size_t>(c.id), i) << c.name;
    EXPECT_EQ(&c, &InfoOf(c.id));
  }
  const std::vector<Col> defaults = {Col::kName,  Col::kAlgorithm, Col::kDisksize, Col::kData,
                                     Col::kCompr, Col::kTotal,     Col::kStreams,  Col::kMountpoint};
  EXPECT_EQ(defaults, DefaultColumns());
}

TEST(ColumnsTest, ParseColumnList) {
  std::vector<Col> cols;
  std::string warning;
  EXPECT_EQ(3, ParseColumnList("NAME,disksize,Zero-Pages", &cols, &warning));
  EXPECT_EQ((std::vector<Col>{Col::kName, Col::kDisksize, Col::kZeroPages}), cols);
  EXPECT_EQ(1, ParseColumnList("helper-pages", &cols, &warning));
  EXPECT_EQ(std::vector<Col>{Col::kHelperPages}, cols);
  EXPECT_EQ(2, ParseColumnList("NAME,NAME", &cols, &warning));
  EXPECT_EQ("", warning);

  // An unknown name: the message shows the list from it on, as zramctl's.
  EXPECT_EQ(-1, ParseColumnList("NAME,FOO,DATA", &cols, &warning));
  EXPECT_EQ("unknown column: FOO,DATA", warning);
  warning.clear();
  EXPECT_EQ(-1, ParseColumnList("NAM", &cols, &warning));
  EXPECT_EQ("unknown column: NAM", warning);
  warning.clear();
  EXPECT_EQ(-1, ParseColumnList("NAMES", &cols, &warning));
  EXPECT_EQ("unknown column: NAMES", warning);

  // Empty names and lists fail without a message; too many, too.
  for (const char* list : {"", "NAME,,DATA", ",NAME"}) {
    warning.clear();
    EXPECT_EQ(-1, ParseColumnList(list, &cols, &warning)) << list;
    EXPECT_EQ("", warning) << list;
  }
  std::string many = "NAME";
  for (std::size_t i = 1; i < kMaxColumns; i++) many += ",DATA";
  EXPECT_EQ(static_cast<int>(kMaxColumns), ParseColumnList(many.c_str(), &cols, &warning));
  many += ",DATA";
  EXPECT_EQ(-2, ParseColumnList(many.c_str(), &cols, &warning));
}

// ---------------------------------------------------------------------
// The command line.

struct Parsed {
  ParseOutcome outcome;
  Options options;
};

Parsed Parse(std::vector<std::string> args) {
  args.insert(args.begin(), "hzramctl");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  Parsed p;
  p.outcome = ParseOptions(static_cast<int>(args.size()), argv.data(), "hzramctl", &p.options);
  return p;
}

// A parse that fails with exit status 1 and @err on stderr.
void ExpectParseError(const std::vector<std::string>& args, const std::string& err) {
  const Parsed p = Parse(args);
  std::string joined;
  for (const std::string& a : args) joined += a + " ";
  EXPECT_FALSE(p.outcome.run) << joined;
  EXPECT_EQ(1, p.outcome.exit_code) << joined;
  EXPECT_EQ("", p.outcome.out) << joined;
  EXPECT_EQ(err, p.outcome.err) << joined;
}

TEST(OptionsTest, Actions) {
  Parsed p = Parse({});
  ASSERT_TRUE(p.outcome.run);
  EXPECT_EQ(Action::kStatus, p.options.action);
  EXPECT_TRUE(p.options.columns.empty());
  EXPECT_TRUE(p.options.devices.empty());

  p = Parse({"/dev/hzram3", "--raw", "-n", "-b", "-o", "name,data"});
  ASSERT_TRUE(p.outcome.run);
  EXPECT_EQ(Action::kStatus, p.options.action);
  EXPECT_EQ(std::vector<std::string>{"/dev/hzram3"}, p.options.devices);
  EXPECT_TRUE(p.options.raw && p.options.noheadings && p.options.bytes);
  EXPECT_FALSE(p.options.json);
  EXPECT_EQ((std::vector<Col>{Col::kName, Col::kData}), p.options.columns);

  p = Parse({"--json", "--output-all"});
  ASSERT_TRUE(p.outcome.run);
  EXPECT_TRUE(p.options.json);
  EXPECT_EQ(AllColumns().size(), p.options.columns.size());

  p = Parse({"-f"});
  ASSERT_TRUE(p.outcome.run);
  EXPECT_EQ(Action::kFindOnly, p.options.action);

  p = Parse({"--find", "--size", "1.5G", "--algorithm", "zstd", "--streams", "4"});
  ASSERT_TRUE(p.outcome.run);
  EXPECT_EQ(Action::kCreate, p.options.action);
  EXPECT_TRUE(p.options.find);
  EXPECT_EQ((3ULL << 30) / 2, p.options.size);
  EXPECT_EQ("zstd", p.options.algorithm);
  EXPECT_EQ(4u, p.options.streams);

  p = Parse({"-s", "0", "-a", "", "/dev/hzram0"});
  ASSERT_TRUE(p.outcome.run);
  EXPECT_EQ(Action::kCreate, p.options.action);
  EXPECT_EQ(0u, p.options.size);
  EXPECT_EQ("", p.options.algorithm);  // given, if empty: written

  p = Parse({"-r", "/dev/hzram0", "hzram1", "/dev/hzram2"});
  ASSERT_TRUE(p.outcome.run);
  EXPECT_EQ(Action::kReset, p.options.action);
  EXPECT_EQ(3u, p.options.devices.size());

  // --streams 0 sets nothing, so it is allowed without --size.
  p = Parse({"-t", "0"});
  ASSERT_TRUE(p.outcome.run);
  EXPECT_EQ(Action::kStatus, p.options.action);
}

TEST(OptionsTest, HelpAndVersion) {
  Parsed p = Parse({"-b", "--help", "--bogus"});
  EXPECT_FALSE(p.outcome.run);
  EXPECT_EQ(0, p.outcome.exit_code);
  EXPECT_EQ(UsageText("hzramctl"), p.outcome.out);
  EXPECT_EQ("", p.outcome.err);
  p = Parse({"-V"});
  EXPECT_FALSE(p.outcome.run);
  EXPECT_EQ(0, p.outcome.exit_code);
  EXPECT_EQ(VersionText("hzramctl"), p.outcome.out);
  EXPECT_EQ(0u, p.outcome.out.find("hzramctl from hzram "));

  const std::string usage = UsageText("hzramctl");
  EXPECT_EQ(0u, usage.find("\nUsage:\n hzramctl [options] <device>\n"));
  EXPECT_NE(std::string::npos, usage.find(" -J, --json                use JSON output format\n"));
  EXPECT_NE(std::string::npos, usage.find("\n         NAME  hzram device name\n"));
  EXPECT_NE(std::string::npos, usage.find("\n HELPER-PAGES  "));
  EXPECT_NE(std::string::npos, usage.find("\nFor more details see hzramctl(8).\n"));
}

TEST(OptionsTest, ZramctlsErrors) {
  const std::string try_help = "Try 'hzramctl --help' for more information.\n";
  ExpectParseError({"--bogus"}, try_help);
  ExpectParseError({"-x"}, try_help);
  ExpectParseError({"-s"}, try_help);
  ExpectParseError({"-o", "NAME,FOO"}, "hzramctl: unknown column: FOO\n");
  ExpectParseError({"-o", "NAME,,DATA"}, "");
  ExpectParseError({"-s", "abc", "/dev/hzram0"},
                   "hzramctl: failed to parse size: 'abc': Invalid argument\n");
  ExpectParseError({"-s", "-1", "/dev/hzram0"},
                   "hzramctl: failed to parse size: '-1': Invalid argument\n");
  ExpectParseError({"-s", "64E", "/dev/hzram0"},
                   "hzramctl: failed to parse size: '64E': Numerical result out of range\n");
  ExpectParseError({"-t", "x", "-s", "1M", "/dev/hzram0"},
                   "hzramctl: failed to parse streams: 'x'\n");
  ExpectParseError({"-t", "-2", "-s", "1M", "/dev/hzram0"},
                   "hzramctl: failed to parse streams: '-2': Numerical result out of range\n");
  ExpectParseError({"-f", "-r"}, "hzramctl: mutually exclusive arguments: --find --output --reset\n");
  ExpectParseError({"-o", "NAME", "-f"},
                   "hzramctl: mutually exclusive arguments: --find --output --reset\n");
  ExpectParseError({"-s", "1M", "-o", "NAME"},
                   "hzramctl: mutually exclusive arguments: --output --reset --size\n");
  ExpectParseError({"-r", "-s", "1M"},
                   "hzramctl: mutually exclusive arguments: --output --reset --size\n");
  ExpectParseError({"--raw", "-J"}, "hzramctl: mutually exclusive arguments: --json --raw\n");
  ExpectParseError({"-f", "/dev/hzram0"},
                   "hzramctl: option --find is mutually exclusive with <device>\n");
  ExpectParseError({"/dev/hzram0", "/dev/hzram1"},
                   "hzramctl: only one <device> at a time is allowed\n");
  ExpectParseError({"-s", "1M", "/dev/hzram0", "/dev/hzram1"},
                   "hzramctl: only one <device> at a time is allowed\n");
  ExpectParseError({"-a", "lz4"},
                   "hzramctl: options --algorithm and --streams must be combined with --size\n");
  ExpectParseError({"-f", "-t", "2"},
                   "hzramctl: options --algorithm and --streams must be combined with --size\n");
  ExpectParseError({"-r"}, "hzramctl: no device specified\n");
  ExpectParseError({"-s", "1M"}, "hzramctl: no device specified\n");
  // The same option twice is no conflict.
  EXPECT_TRUE(Parse({"-o", "NAME", "-o", "DATA"}).outcome.run);
  EXPECT_TRUE(Parse({"-r", "-r", "/dev/hzram0"}).outcome.run);
}

TEST(OptionsTest, Monitor) {
  Parsed p = Parse({"--monitor"});
  ASSERT_TRUE(p.outcome.run);
  EXPECT_EQ(Action::kMonitor, p.options.action);
  EXPECT_FALSE(p.options.json);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--monitor", "--json"}, {"-J", "--monitor"}}) {
    p = Parse(args);
    ASSERT_TRUE(p.outcome.run);
    EXPECT_EQ(Action::kMonitor, p.options.action);
    EXPECT_TRUE(p.options.json);
  }
  // Nothing else goes with it: the first other option given is named.
  const std::pair<std::vector<std::string>, const char*> bad[] = {
      {{"--monitor", "-s", "1M", "/dev/hzram0"}, "--size"},
      {{"-r", "/dev/hzram0", "--monitor"}, "--reset"},
      {{"--monitor", "-f"}, "--find"},
      {{"--monitor", "-a", "lz4"}, "--algorithm"},
      {{"--monitor", "-t", "2"}, "--streams"},
      {{"-o", "NAME", "--monitor"}, "--output"},
      {{"--monitor", "--output-all"}, "--output-all"},
      {{"--monitor", "--raw"}, "--raw"},
      {{"--monitor", "-J", "-b", "-n"}, "--bytes"},
      {{"--monitor", "/dev/hzram0"}, "<device>"},
  };
  for (const auto& [args, with] : bad)
    ExpectParseError(args,
                     std::string("hzramctl: option --monitor is mutually exclusive with ") + with +
                         "\n");
  // zramctl's own conflicts are found first, as they are met.
  ExpectParseError({"--monitor", "--raw", "-J"},
                   "hzramctl: mutually exclusive arguments: --json --raw\n");
  const std::string usage = UsageText("hzramctl");
  EXPECT_NE(std::string::npos, usage.find("\n hzramctl --monitor [--json]\n"));
  EXPECT_NE(std::string::npos,
            usage.find("\n     --monitor             print the module's events as they happen\n"));
}

// ---------------------------------------------------------------------
// The whole command, against a fake tree: /sys/block/hzramN with the
// attributes as regular files, /sys/dev/block links, the control class,
// /proc/swaps and /proc/self/mountinfo.

constexpr int kMajor = 251;

class FakeTree {
 public:
  FakeTree() {
    char dir[] = "/tmp/hzramctl-test.XXXXXX";
    root_ = mkdtemp(dir);
    Mkdir("/sys/block");
    Mkdir("/sys/dev/block");
    Mkdir("/sys/class/hzram-control");
    Mkdir("/proc/self");
    Mkdir("/dev");
    Put("/sys/class/hzram-control/hot_remove", "");
    Put("/proc/swaps", "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n");
    Put("/proc/self/mountinfo",
        "22 1 0:21 / /proc rw,nosuid - proc proc rw\n"
        "23 1 0:22 / /sys rw,nosuid - sysfs sysfs rw\n");
  }
  ~FakeTree() { std::filesystem::remove_all(root_); }

  const std::string& root() const { return root_; }

  void Mkdir(const std::string& path) { std::filesystem::create_directories(root_ + path); }
  void Put(const std::string& path, const std::string& text) {
    std::ofstream(root_ + path, std::ios::trunc) << text;
  }
  std::string Get(const std::string& path) const {
    std::ifstream in(root_ + path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }

  // A device as the module shows it: disksize, lz4 selected, 2 streams,
  // mm_stat's nine fields, offload auto, offload_stat's 27 (with
  // @offload), reset and the rest writable.
  void AddDevice(int id, std::uint64_t disksize, const std::string& mm_stat = "0 0 0 0 0 0 0 0 0",
                 bool offload = true) {
    const std::string dir = "/sys/block/hzram" + std::to_string(id);
    Mkdir(dir);
    Put(dir + "/dev", std::to_string(kMajor) + ":" + std::to_string(id) + "\n");
    Put(dir + "/disksize", std::to_string(disksize) + "\n");
    Put(dir + "/comp_algorithm", "lzo lzo-rle [lz4] lz4hc zstd \n");
    Put(dir + "/max_comp_streams", "2\n");
    Put(dir + "/mm_stat", mm_stat + "\n");
    Put(dir + "/reset", "");
    if (offload) {
      Put(dir + "/offload", "auto\n");
      Put(dir + "/offload_stat",
          "0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n");
    }
    std::filesystem::create_symlink(
        "../../block/hzram" + std::to_string(id),
        root_ + "/sys/dev/block/" + std::to_string(kMajor) + ":" + std::to_string(id));
  }

 private:
  std::string root_;
};

struct Ran {
  int status = -1;
  std::string out, err;
};

Ran RunIn(const FakeTree& tree, std::vector<std::string> args) {
  args.insert(args.begin(), "hzramctl");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  char *obuf = nullptr, *ebuf = nullptr;
  std::size_t olen = 0, elen = 0;
  Env env;
  env.root = tree.root();
  env.prog = "hzramctl";
  env.out = open_memstream(&obuf, &olen);
  env.err = open_memstream(&ebuf, &elen);
  Ran r;
  r.status = Run(static_cast<int>(args.size()), argv.data(), env);
  std::fclose(env.out);
  std::fclose(env.err);
  r.out.assign(obuf, olen);
  r.err.assign(ebuf, elen);
  std::free(obuf);
  std::free(ebuf);
  return r;
}

// 8 MiB of data in 2.5 MiB, 2.6 MiB of memory (1 MiB limit), 100 zero pages.
constexpr char kMmStat[] = "8388608 2621440 2726297 1048576 2800000 100 3 5 7";

class CommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tree_.AddDevice(0, 16 << 20, kMmStat);
    tree_.AddDevice(1, 0);  // not set up: not listed
    tree_.AddDevice(2, 1ULL << 30);
  }
  FakeTree tree_;
};

TEST_F(CommandTest, ListsTheDevicesThatAreSetUp) {
  const Ran r = RunIn(tree_, {});
  EXPECT_EQ(0, r.status) << r.err;
  EXPECT_EQ("", r.err);
  EXPECT_EQ(
      "NAME        ALGORITHM DISKSIZE DATA COMPR TOTAL STREAMS MOUNTPOINT\n"
      "/dev/hzram0 lz4            16M   8M  2.5M  2.6M       2 \n"
      "/dev/hzram2 lz4             1G   0B    0B    0B       2 \n",
      r.out);
}

TEST_F(CommandTest, RawBytesNoHeadings) {
  Ran r = RunIn(tree_, {"--raw", "--bytes", "--noheadings", "-o",
                        "name,disksize,data,compr,algorithm,streams,zero-pages,total,mem-limit,"
                        "mem-used,migrated,mountpoint"});
  EXPECT_EQ(0, r.status) << r.err;
  EXPECT_EQ(
      "/dev/hzram0 16777216 8388608 2621440 lz4 2 100 2726297 1048576 2800000 3 \n"
      "/dev/hzram2 1073741824 0 0 lz4 2 0 0 0 0 0 \n",
      r.out);
  // Without --bytes, MIGRATED is written as a size (zramctl's), ZERO-PAGES not.
  r = RunIn(tree_, {"--raw", "-o", "MEM-LIMIT,MEM-USED,MIGRATED,ZERO-PAGES", "/dev/hzram0"});
  EXPECT_EQ("MEM-LIMIT MEM-USED MIGRATED ZERO-PAGES\n1M 2.7M 3B 100\n", r.out);
}

TEST_F(CommandTest, OneDeviceEvenIfNotSetUp) {
  Ran r = RunIn(tree_, {"--raw", "/dev/hzram1"});
  EXPECT_EQ(0, r.status) << r.err;
  EXPECT_EQ(
      "NAME ALGORITHM DISKSIZE DATA COMPR TOTAL STREAMS MOUNTPOINT\n"
      "/dev/hzram1 lz4 0B 0B 0B 0B 2 \n",
      r.out);
  // A kernel name is shown as given when /dev has no such node.
  r = RunIn(tree_, {"--raw", "-n", "-o", "NAME,DISKSIZE", "hzram2"});
  EXPECT_EQ(0, r.status) << r.err;
  EXPECT_EQ("hzram2 1G\n", r.out);
}

TEST_F(CommandTest, Json) {
  Ran r = RunIn(tree_, {"--json", "/dev/hzram0"});
  EXPECT_EQ(0, r.status) << r.err;
  EXPECT_EQ(
      "{\n"
      "   \"hzramdevices\": [\n"
      "      {\n"
      "         \"name\": \"/dev/hzram0\",\n"
      "         \"algorithm\": \"lz4\",\n"
      "         \"disksize\": \"16M\",\n"
      "         \"data\": \"8M\",\n"
      "         \"compr\": \"2.5M\",\n"
      "         \"total\": \"2.6M\",\n"
      "         \"streams\": 2,\n"
      "         \"mountpoint\": null\n"
      "      }\n"
      "   ]\n"
      "}\n",
      r.out);
  // Sizes are numbers with --bytes; HELPER a boolean; counts numbers.
  r = RunIn(tree_, {"-J", "-b", "-o", "NAME,DISKSIZE,ZERO-PAGES,MIGRATED,OFFLOAD,HELPER,FALLBACKS"});
  EXPECT_EQ(0, r.status) << r.err;
  EXPECT_EQ(
      "{\n"
      "   \"hzramdevices\": [\n"
      "      {\n"
      "         \"name\": \"/dev/hzram0\",\n"
      "         \"disksize\": 16777216,\n"
      "         \"zero-pages\": 100,\n"
      "         \"migrated\": 3,\n"
      "         \"offload\": \"auto\",\n"
      "         \"helper\": false,\n"
      "         \"fallbacks\": 0\n"
      "      },{\n"
      "         \"name\": \"/dev/hzram2\",\n"
      "         \"disksize\": 1073741824,\n"
      "         \"zero-pages\": 0,\n"
      "         \"migrated\": 0,\n"
      "         \"offload\": \"auto\",\n"
      "         \"helper\": false,\n"
      "         \"fallbacks\": 0\n"
      "      }\n"
      "   ]\n"
      "}\n",
      r.out);
  // No device: an empty array (libsmartcols leaves an empty line in it).
  FakeTree empty;
  r = RunIn(empty, {"-J"});
  EXPECT_EQ(0, r.status) << r.err;
  EXPECT_EQ("{\n   \"hzramdevices\": [\n\n   ]\n}\n", r.out);
}

TEST_F(CommandTest, OffloadColumns) {
  // offload_stat: helper attached, 1000 pages from the helper, 40 in
  // small batches (not fallbacks), 3 timed out, 5 taken back, 7 refused.
  std::string stat = "1 1 0 1000 55 9 0 2 1 4 1 0 1 0 40 3 5 7";
  for (int i = 18; i < 27; i++) stat += " 11";
  tree_.Put("/sys/block/hzram0/offload_stat", stat + "\n");
  tree_.Put("/sys/block/hzram0/offload", "on\n");
  // An older module: offload_stat without the fields by reason.
  tree_.Put("/sys/block/hzram2/offload_stat", "0 0 0 12 0\n");
  tree_.AddDevice(3, 4096, "0 0 0 0 0 0 0 0 0", /*offload=*/false);

  Ran r = RunIn(tree_, {"-o", "NAME,OFFLOAD,HELPER,HELPER-PAGES,FALLBACKS"});
  EXPECT_EQ(0, r.status) << r.err;
  EXPECT_EQ(
      "NAME        OFFLOAD HELPER HELPER-PAGES FALLBACKS\n"
      "/dev/hzram0 on           1         1000        15\n"
      "/dev/hzram2 auto         0           12 \n"
      "/dev/hzram3                             \n",
      r.out);
  r = RunIn(tree_, {"-J", "-o", "HELPER,FALLBACKS", "/dev/hzram3"});
  EXPECT_EQ(0, r.status) << r.err;
  EXPECT_EQ(
      "{\n   \"hzramdevices\": [\n      {\n"
      "         \"helper\": null,\n"
      "         \"fallbacks\": null\n"
      "      }\n   ]\n}\n",
      r.out);
}

TEST_F(CommandTest, OutputAllIsZramctlsColumnsThenHzrams) {
  tree_.Put("/sys/block/hzram2/bd_stat", "     256        3      300\n");
  tree_.Put("/sys/block/hzram2/recomp_stat", "      12        4       20\n");
  const Ran r = RunIn(tree_, {"--output-all", "--raw", "/dev/hzram2"});
  EXPECT_EQ(0, r.status) << r.err;
  EXPECT_EQ(
      "NAME DISKSIZE DATA COMPR ALGORITHM STREAMS ZERO-PAGES TOTAL MEM-LIMIT MEM-USED MIGRATED "
      "MOUNTPOINT OFFLOAD HELPER HELPER-PAGES FALLBACKS WRITTEN-BACK RECOMPRESSED\n"
      "/dev/hzram2 1G 0B 0B lz4 2 0 0B 0B 0B 0B  auto 0 0 0 1M 12\n",
      r.out);
}

// The second tier's columns: from bd_stat (4 KiB pages, shown as a size)
// and recomp_stat (pages); empty for a module without them.
TEST_F(CommandTest, SecondTierColumns) {
  tree_.Put("/sys/block/hzram0/bd_stat", "   25600       10    25610\n");
  tree_.Put("/sys/block/hzram0/recomp_stat", "    1000       30     2000\n");
  Ran r = RunIn(tree_, {"-o", "NAME,WRITTEN-BACK,RECOMPRESSED"});
  EXPECT_EQ(0, r.status) << r.err;
  EXPECT_EQ(
      "NAME        WRITTEN-BACK RECOMPRESSED\n"
      "/dev/hzram0         100M         1000\n"
      "/dev/hzram2              \n",
      r.out);
  r = RunIn(tree_, {"-J", "-b", "-o", "WRITTEN-BACK,RECOMPRESSED", "/dev/hzram0"});
  EXPECT_EQ(0, r.status) << r.err;
  EXPECT_EQ(
      "{\n   \"hzramdevices\": [\n      {\n"
      "         \"written-back\": 104857600,\n"
      "         \"recompressed\": 1000\n"
      "      }\n   ]\n}\n",
      r.out);
}

TEST_F(CommandTest, MountPoints) {
  tree_.Put("/proc/swaps",
            "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
            "/dev/hzram0                             partition\t16380\t\t0\t\t100\n");
  tree_.Put("/proc/self/mountinfo",
            "22 1 0:21 / /proc rw,nosuid - proc proc rw\n"
            "40 1 251:2 / /mnt/a\\040b rw,relatime shared:1 - ext4 /dev/hzram2 rw\n"
            "41 1 251:2 / /mnt/second rw,relatime - ext4 /dev/hzram2 rw\n");
  Ran r = RunIn(tree_, {"--raw", "-n", "-o", "NAME,MOUNTPOINT"});
  EXPECT_EQ(0, r.status) << r.err;
  EXPECT_EQ("/dev/hzram0 [SWAP]\n/dev/hzram2 /mnt/a\\x20b\n", r.out);  // raw escapes the space
  r = RunIn(tree_, {"-n", "-o", "MOUNTPOINT", "/dev/hzram2"});
  EXPECT_EQ("/mnt/a b\n", r.out);
  // Matched by the source's name when the numbers differ (btrfs, ...).
  tree_.Put("/proc/self/mountinfo", "40 1 0:45 / /srv rw - btrfs /dev/hzram2 rw\n");
  r = RunIn(tree_, {"-n", "-o", "MOUNTPOINT", "/dev/hzram2"});
  EXPECT_EQ("/srv\n", r.out);
}

TEST_F(CommandTest, Errors) {
  // No such device, or not an hzram one.
  Ran r = RunIn(tree_, {"/dev/hzram7"});
  EXPECT_EQ(1, r.status);
  EXPECT_EQ("", r.out);
  EXPECT_EQ("hzramctl: /dev/hzram7: No such device\n", r.err);
  tree_.Mkdir("/sys/block/sda");
  tree_.Put("/sys/block/sda/dev", "8:0\n");
  std::filesystem::create_symlink("../../block/sda", tree_.root() + "/sys/dev/block/8:0");
  r = RunIn(tree_, {"sda"});
  EXPECT_EQ(1, r.status);
  EXPECT_EQ("hzramctl: sda: No such device\n", r.err);
  r = RunIn(tree_, {"-s", "1M", "/dev/zram0"});
  EXPECT_EQ(1, r.status);
  EXPECT_EQ("hzramctl: /dev/zram0: No such device\n", r.err);
  tree_.Put("/dev/hzram0", "not a device node\n");
  r = RunIn(tree_, {"/dev/hzram0"});
  EXPECT_EQ(1, r.status);
  EXPECT_EQ("hzramctl: /dev/hzram0: No such device\n", r.err);

  // The module refuses a value: its errno (a directory stands in for it).
  std::filesystem::remove(tree_.root() + "/sys/block/hzram2/disksize");
  tree_.Mkdir("/sys/block/hzram2/disksize");
  r = RunIn(tree_, {"-s", "1M", "/dev/hzram2"});
  EXPECT_EQ(1, r.status);
  EXPECT_EQ("hzramctl: /dev/hzram2: failed to set disksize (1048576 bytes): Is a directory\n",
            r.err);
  std::filesystem::remove(tree_.root() + "/sys/block/hzram2/reset");
  r = RunIn(tree_, {"-s", "1M", "/dev/hzram2"});
  EXPECT_EQ(1, r.status);
  EXPECT_EQ("hzramctl: /dev/hzram2: failed to reset: No such file or directory\n", r.err);
}

TEST_F(CommandTest, ModuleNotLoaded) {
  std::filesystem::remove_all(tree_.root() + "/sys/class/hzram-control");
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {}, {"/dev/hzram0"}, {"-f"}, {"-r", "/dev/hzram0"}, {"-s", "1M", "/dev/hzram0"}}) {
    const Ran r = RunIn(tree_, args);
    EXPECT_EQ(1, r.status);
    EXPECT_EQ("", r.out);
    EXPECT_EQ(
        "hzramctl: hzram module not loaded (/sys/class/hzram-control: No such file or "
        "directory)\n",
        r.err);
  }
  // Option errors come first, as they would with the module.
  const Ran r = RunIn(tree_, {"-r"});
  EXPECT_EQ("hzramctl: no device specified\n", r.err);
}

TEST_F(CommandTest, SizeWritesResetStreamsAlgorithmDisksizeInOrder) {
  const std::string dir = "/sys/block/hzram1/";
  for (const char* attr : {"max_comp_streams", "comp_algorithm", "disksize"}) tree_.Put(dir + attr, "");
  Ran r = RunIn(tree_, {"-s", "64M", "-a", "zstd", "-t", "3", "/dev/hzram1"});
  EXPECT_EQ(0, r.status) << r.err;
  EXPECT_EQ("", r.out);  // only --find prints the device
  EXPECT_EQ("1", tree_.Get(dir + "reset"));
  EXPECT_EQ("3", tree_.Get(dir + "max_comp_streams"));
  EXPECT_EQ("zstd", tree_.Get(dir + "comp_algorithm"));
  EXPECT_EQ("67108864", tree_.Get(dir + "disksize"));

  // Without -a and -t, those are left alone.
  for (const char* attr : {"reset", "max_comp_streams", "comp_algorithm", "disksize"})
    tree_.Put(dir + attr, "");
  r = RunIn(tree_, {"--size", "1.5K", "hzram1"});
  EXPECT_EQ(0, r.status) << r.err;
  EXPECT_EQ("1", tree_.Get(dir + "reset"));
  EXPECT_EQ("", tree_.Get(dir + "max_comp_streams"));
  EXPECT_EQ("", tree_.Get(dir + "comp_algorithm"));
  EXPECT_EQ("1536", tree_.Get(dir + "disksize"));

  // Each write's failure, by name.
  std::filesystem::remove(tree_.root() + dir + "max_comp_streams");
  r = RunIn(tree_, {"-s", "1M", "-t", "2", "/dev/hzram1"});
  EXPECT_EQ("hzramctl: /dev/hzram1: failed to set number of streams: No such file or directory\n",
            r.err);
  std::filesystem::remove(tree_.root() + dir + "comp_algorithm");
  r = RunIn(tree_, {"-s", "1M", "-a", "lz4", "/dev/hzram1"});
  EXPECT_EQ(1, r.status);
  EXPECT_EQ("hzramctl: /dev/hzram1: failed to set algorithm: No such file or directory\n", r.err);
}

TEST_F(CommandTest, FindTakesTheFirstDeviceNotSetUpElseHotAdd) {
  Ran r = RunIn(tree_, {"-f"});
  EXPECT_EQ(0, r.status) << r.err;
  EXPECT_EQ("/dev/hzram1\n", r.out);
  EXPECT_EQ("", tree_.Get("/sys/block/hzram1/reset"));  // --find alone changes nothing

  r = RunIn(tree_, {"-f", "-s", "2M", "-a", "lz4"});
  EXPECT_EQ(0, r.status) << r.err;
  EXPECT_EQ("/dev/hzram1\n", r.out);
  EXPECT_EQ("2097152", tree_.Get("/sys/block/hzram1/disksize"));

  // 0, 1 and 2 set up, 3 missing: hot_add, which answers 5.
  tree_.AddDevice(5, 0);
  tree_.Put("/sys/class/hzram-control/hot_add", "5\n");
  r = RunIn(tree_, {"--find"});
  EXPECT_EQ(0, r.status) << r.err;
  EXPECT_EQ("/dev/hzram5\n", r.out);

  // hot_add fails (no more devices): none found.
  std::filesystem::remove(tree_.root() + "/sys/class/hzram-control/hot_add");
  r = RunIn(tree_, {"-f", "-s", "1M"});
  EXPECT_EQ(1, r.status);
  EXPECT_EQ("", r.out);
  EXPECT_EQ("hzramctl: no free hzram device found\n", r.err);
}

TEST_F(CommandTest, ResetResetsAndRemovesEachDevice) {
  Ran r = RunIn(tree_, {"-r", "/dev/hzram0", "/dev/hzram9", "hzram2"});
  EXPECT_EQ(1, r.status);  // hzram9 does not exist; the others are done
  EXPECT_EQ("", r.out);
  EXPECT_EQ("hzramctl: /dev/hzram9: failed to reset: No such device\n", r.err);
  EXPECT_EQ("1", tree_.Get("/sys/block/hzram0/reset"));
  EXPECT_EQ("1", tree_.Get("/sys/block/hzram2/reset"));
  // hot_remove written for each (a regular file here: the last id stays).
  EXPECT_EQ("2", tree_.Get("/sys/class/hzram-control/hot_remove"));

  std::filesystem::remove(tree_.root() + "/sys/block/hzram0/reset");
  tree_.Mkdir("/sys/block/hzram0/reset");
  r = RunIn(tree_, {"--reset", "/dev/hzram0"});
  EXPECT_EQ(1, r.status);
  EXPECT_EQ("hzramctl: /dev/hzram0: failed to reset: Is a directory\n", r.err);
}

// ---------------------------------------------------------------------
// DeviceInfo from sysfs.

TEST(DeviceTest, ParseStats) {
  std::optional<MemStat> m = ParseMemStat("1 2 3 4 5 6 7 8 9");
  ASSERT_TRUE(m);
  EXPECT_EQ(1u, m->orig_data_size);
  EXPECT_EQ(2u, m->compr_data_size);
  EXPECT_EQ(3u, m->mem_used_total);
  EXPECT_EQ(4u, m->mem_limit);
  EXPECT_EQ(5u, m->mem_used_max);
  EXPECT_EQ(6u, m->same_pages);
  EXPECT_EQ(7u, m->pages_compacted);
  EXPECT_TRUE(ParseMemStat("1 2 3 4 5 6 7"));
  EXPECT_FALSE(ParseMemStat("1 2 3 4 5 6"));
  EXPECT_FALSE(ParseMemStat("1 2 3 x 5 6 7 8 9"));

  std::optional<OffloadStat> o = ParseOffloadStat("1 1 0 42");
  ASSERT_TRUE(o);
  EXPECT_TRUE(o->helper);
  EXPECT_EQ(42u, o->pages_helper);
  EXPECT_FALSE(o->fallbacks);
  EXPECT_FALSE(ParseOffloadStat("1 1 0"));
  o = ParseOffloadStat("0 0 0 1 2 3 4 5 6 7 8 9 10 11 100 20 30 40");
  ASSERT_TRUE(o);
  EXPECT_FALSE(o->helper);
  EXPECT_EQ(90u, o->fallbacks);  // 20 + 30 + 40; the 100 small-batch pages are not

  EXPECT_EQ("/mnt/a b\\c\t", UnescapeMountPath("/mnt/a\\040b\\134c\\011"));
  EXPECT_EQ("/x\\0", UnescapeMountPath("/x\\0"));
}

TEST(DeviceTest, SourceReadsOnlyTheFieldsAsked) {
  FakeTree tree;
  tree.AddDevice(4, 8192, kMmStat);
  Sysfs sysfs(tree.root());
  const std::optional<DeviceRef> dev = sysfs.ById(4);
  ASSERT_TRUE(dev);
  EXPECT_EQ("/dev/hzram4", dev->name);
  EXPECT_EQ("hzram4", dev->kname);
  EXPECT_EQ(4, dev->id);
  SysfsInfoSource source(sysfs);
  DeviceInfo info = source.Get(*dev, kFieldDisksize | kFieldOffload);
  EXPECT_EQ(8192u, info.disksize);
  EXPECT_EQ("auto", info.offload);
  EXPECT_FALSE(info.algorithm);
  EXPECT_FALSE(info.mm);
  EXPECT_FALSE(info.offload_stat);
  info = source.Get(*dev, ~0u);
  EXPECT_EQ("lz4", info.algorithm);
  EXPECT_EQ(2u, info.streams);
  ASSERT_TRUE(info.mm);
  EXPECT_EQ(100u, info.mm->same_pages);
  ASSERT_TRUE(info.offload_stat);
  EXPECT_EQ(0u, info.offload_stat->fallbacks);
  EXPECT_FALSE(info.mountpoint);
  EXPECT_EQ(std::vector<int>{4}, sysfs.DeviceIds());
  EXPECT_EQ(1u, source.ListUsed(0).size());
}

// ---------------------------------------------------------------------
// The generic netlink family: its messages as the module builds them
// (kmod/netlink.c: genlmsg_put, then nla_put_u32, nla_put_string,
// nla_put_u64_64bit with HZRAM_NL_A_PAD, and nests whose attribute
// HZRAM_NL_STAT_FIRST + i is field i), built here with libnl.

constexpr int kFamily = 0x1d;  // any id: the parsers take the message as given

class NlMessage {
 public:
  explicit NlMessage(std::uint8_t cmd) : msg_(nlmsg_alloc()) {
    genlmsg_put(msg_, 0, 0, kFamily, 0, 0, cmd, HZRAM_GENL_VERSION);
  }
  ~NlMessage() { nlmsg_free(msg_); }
  NlMessage(const NlMessage&) = delete;
  NlMessage& operator=(const NlMessage&) = delete;

  NlMessage& U32(int type, std::uint32_t v) {
    EXPECT_EQ(0, nla_put_u32(msg_, type, v));
    return *this;
  }
  // A u64 after a HZRAM_NL_A_PAD, as nla_put_u64_64bit() aligns it where
  // the architecture wants it (x86 does not: both must read the same).
  NlMessage& U64(int type, std::uint64_t v, bool pad = false) {
    if (pad) {
      EXPECT_EQ(0, nla_put(msg_, HZRAM_NL_A_PAD, 0, nullptr));
    }
    EXPECT_EQ(0, nla_put_u64(msg_, type, v));
    return *this;
  }
  NlMessage& Str(int type, const char* s) {
    EXPECT_EQ(0, nla_put_string(msg_, type, s));
    return *this;
  }
  // A statistics nest: field i as attribute HZRAM_NL_STAT_FIRST + i; a
  // padded one gets the zero-length HZRAM_NL_STAT_PAD before field 2.
  NlMessage& Nest(int type, const std::vector<std::uint64_t>& fields, bool pad = false) {
    nlattr* nest = nla_nest_start(msg_, type);
    for (std::size_t i = 0; i < fields.size(); i++) {
      if (pad && i == 2) {
        EXPECT_EQ(0, nla_put(msg_, HZRAM_NL_STAT_PAD, 0, nullptr));
      }
      EXPECT_EQ(0, nla_put_u64(msg_, static_cast<int>(HZRAM_NL_STAT_FIRST + i), fields[i]));
    }
    nla_nest_end(msg_, nest);
    return *this;
  }
  NlMessage& Raw(int type, const void* data, int len) {
    EXPECT_EQ(0, nla_put(msg_, type, len, data));
    return *this;
  }
  nlmsghdr* hdr() const { return nlmsg_hdr(msg_); }
  std::vector<char> Bytes() const {
    const char* p = reinterpret_cast<const char*>(hdr());
    return std::vector<char>(p, p + hdr()->nlmsg_len);
  }

 private:
  nl_msg* msg_;
};

// A device's GET_DEVICE message, as the module sends it.
std::vector<char> DeviceMessage(int id, std::uint64_t disksize, const char* alg,
                                const std::vector<std::uint64_t>& mm,
                                const std::vector<std::uint64_t>& off,
                                const char* offload = "auto") {
  NlMessage m(HZRAM_NL_CMD_GET_DEVICE);
  const std::string name = "hzram" + std::to_string(id);
  m.U32(HZRAM_NL_A_ID, static_cast<std::uint32_t>(id))
      .Str(HZRAM_NL_A_NAME, name.c_str())
      .U64(HZRAM_NL_A_DISKSIZE, disksize)
      .Str(HZRAM_NL_A_COMP_ALGORITHM, alg)
      .U32(HZRAM_NL_A_MAX_COMP_STREAMS, 2)
      .U64(HZRAM_NL_A_MEM_LIMIT, mm.size() > 3 ? mm[3] : 0)
      .Nest(HZRAM_NL_A_MM_STAT, mm)
      .Nest(HZRAM_NL_A_IO_STAT, {0, 0, 0, 0})
      .Nest(HZRAM_NL_A_DEBUG_STAT, {0, 0})
      .Str(HZRAM_NL_A_OFFLOAD, offload)
      .Nest(HZRAM_NL_A_OFFLOAD_STAT, off);
  return m.Bytes();
}

std::vector<std::uint64_t> Numbers(const std::string& text) {
  std::vector<std::uint64_t> v;
  std::istringstream in(text);
  std::uint64_t n;
  while (in >> n) v.push_back(n);
  return v;
}

const std::vector<std::uint64_t> kNoOffload(HZRAM_OFF_NR_FIELDS, 0);

TEST(NetlinkTest, ParseDeviceMessage) {
  // Every field, 64-bit values padded, an attribute and a statistics field
  // of a newer module (ignored).
  NlMessage m(HZRAM_NL_CMD_GET_DEVICE);
  std::vector<std::uint64_t> off(HZRAM_OFF_NR_FIELDS + 3, 0);
  off[HZRAM_OFF_HELPER] = 1;
  off[HZRAM_OFF_PAGES_HELPER] = 1000;
  off[HZRAM_OFF_KERNEL_SMALL] = 40;
  off[HZRAM_OFF_KERNEL_TIMEOUT] = 3;
  off[HZRAM_OFF_KERNEL_GONE] = 5;
  off[HZRAM_OFF_KERNEL_REFUSED] = 7;
  m.U32(HZRAM_NL_A_ID, 7)
      .Str(HZRAM_NL_A_NAME, "hzram7")
      .U64(HZRAM_NL_A_DISKSIZE, 16 << 20, true)
      .Str(HZRAM_NL_A_COMP_ALGORITHM, "zstd")
      .U32(HZRAM_NL_A_MAX_COMP_STREAMS, 12)
      .U64(HZRAM_NL_A_MEM_LIMIT, 1 << 20, true)
      .Nest(HZRAM_NL_A_MM_STAT, {8388608, 2621440, 2726297, 1048576, 2800000, 100, 3, 5, 7, 99},
            true)
      .Nest(HZRAM_NL_A_IO_STAT, {1, 2, 3, 4}, true)
      .Nest(HZRAM_NL_A_DEBUG_STAT, {0, 0})
      .Str(HZRAM_NL_A_OFFLOAD, "on")
      .Nest(HZRAM_NL_A_OFFLOAD_STAT, off, true)
      .Nest(HZRAM_NL_A_BD_STAT, {256, 3, 300}, true)
      .Nest(HZRAM_NL_A_RECOMP_STAT, {12, 4, 20, 99}, true)
      .U64(HZRAM_NL_A_MAX + 3, 42);
  std::optional<NlDevice> d = ParseDeviceMessage(m.hdr());
  ASSERT_TRUE(d);
  EXPECT_EQ(7, d->id);
  EXPECT_EQ(7, d->info.id);
  EXPECT_EQ(16u << 20, d->info.disksize);
  EXPECT_EQ("zstd", d->info.algorithm);
  EXPECT_EQ(12u, d->info.streams);
  ASSERT_TRUE(d->info.mm);
  EXPECT_EQ(8388608u, d->info.mm->orig_data_size);
  EXPECT_EQ(2621440u, d->info.mm->compr_data_size);
  EXPECT_EQ(2726297u, d->info.mm->mem_used_total);
  EXPECT_EQ(1048576u, d->info.mm->mem_limit);
  EXPECT_EQ(2800000u, d->info.mm->mem_used_max);
  EXPECT_EQ(100u, d->info.mm->same_pages);
  EXPECT_EQ(3u, d->info.mm->pages_compacted);
  EXPECT_EQ("on", d->info.offload);
  ASSERT_TRUE(d->info.offload_stat);
  EXPECT_TRUE(d->info.offload_stat->helper);
  EXPECT_EQ(1000u, d->info.offload_stat->pages_helper);
  EXPECT_EQ(15u, d->info.offload_stat->fallbacks);  // 3 + 5 + 7, not the 40 small
  EXPECT_EQ(1048576u, d->info.written_back);
  EXPECT_EQ(12u, d->info.recompressed);
  EXPECT_FALSE(d->info.mountpoint);

  // Short nests, as a short sysfs file: what they cannot say stays empty.
  NlMessage s(HZRAM_NL_CMD_GET_DEVICE);
  s.U32(HZRAM_NL_A_ID, 1)
      .Nest(HZRAM_NL_A_MM_STAT, {1, 2, 3, 4, 5, 6})
      .Nest(HZRAM_NL_A_OFFLOAD_STAT, {0, 0, 0, 12, 0});
  d = ParseDeviceMessage(s.hdr());
  ASSERT_TRUE(d);
  EXPECT_FALSE(d->info.disksize);
  EXPECT_FALSE(d->info.algorithm);
  EXPECT_FALSE(d->info.streams);
  EXPECT_FALSE(d->info.mm);
  EXPECT_FALSE(d->info.offload);
  ASSERT_TRUE(d->info.offload_stat);
  EXPECT_EQ(12u, d->info.offload_stat->pages_helper);
  EXPECT_FALSE(d->info.offload_stat->fallbacks);
  EXPECT_FALSE(d->info.written_back);
  EXPECT_FALSE(d->info.recompressed);

  // Not a device: no id, another command, a malformed attribute.
  NlMessage noid(HZRAM_NL_CMD_GET_DEVICE);
  noid.U64(HZRAM_NL_A_DISKSIZE, 4096);
  EXPECT_FALSE(ParseDeviceMessage(noid.hdr()));
  NlMessage event(HZRAM_NL_CMD_EVENT);
  event.U32(HZRAM_NL_A_ID, 1).U32(HZRAM_NL_A_EVENT, HZRAM_NL_EV_RESET);
  EXPECT_FALSE(ParseDeviceMessage(event.hdr()));
  const std::uint16_t short_value = 3;
  NlMessage bad(HZRAM_NL_CMD_GET_DEVICE);
  bad.U32(HZRAM_NL_A_ID, 1).Raw(HZRAM_NL_A_DISKSIZE, &short_value, sizeof(short_value));
  EXPECT_FALSE(ParseDeviceMessage(bad.hdr()));
  NlMessage unended(HZRAM_NL_CMD_GET_DEVICE);
  unended.U32(HZRAM_NL_A_ID, 1).Raw(HZRAM_NL_A_COMP_ALGORITHM, "lz4", 3);
  EXPECT_FALSE(ParseDeviceMessage(unended.hdr()));
}

TEST(NetlinkTest, ParseEventMessage) {
  NlMessage init(HZRAM_NL_CMD_EVENT);
  init.U32(HZRAM_NL_A_EVENT, HZRAM_NL_EV_INITIALISED)
      .U32(HZRAM_NL_A_ID, 3)
      .Str(HZRAM_NL_A_NAME, "hzram3")
      .U64(HZRAM_NL_A_DISKSIZE, 8 << 20, true)
      .Str(HZRAM_NL_A_COMP_ALGORITHM, "lzo-rle");
  std::optional<Event> e = ParseEventMessage(init.hdr());
  ASSERT_TRUE(e);
  EXPECT_EQ(static_cast<std::uint32_t>(HZRAM_NL_EV_INITIALISED), e->type);
  EXPECT_EQ("hzram3", e->device);
  EXPECT_EQ(8u << 20, e->disksize);
  EXPECT_EQ("lzo-rle", e->algorithm);
  EXPECT_FALSE(e->mem_limit || e->failed_writes || e->pid);

  NlMessage failed(HZRAM_NL_CMD_EVENT);
  failed.U32(HZRAM_NL_A_EVENT, HZRAM_NL_EV_WRITE_FAILED)
      .U32(HZRAM_NL_A_ID, 3)
      .Str(HZRAM_NL_A_NAME, "hzram3")
      .Nest(HZRAM_NL_A_IO_STAT, {0, 17, 0, 2}, true);
  e = ParseEventMessage(failed.hdr());
  ASSERT_TRUE(e);
  EXPECT_EQ(17u, e->failed_writes);
  EXPECT_FALSE(e->disksize || e->algorithm);

  // A newer module's event, with an attribute unknown here: kept as a
  // number, the attribute ignored; the name from the id if it has none.
  NlMessage newer(HZRAM_NL_CMD_EVENT);
  newer.U32(HZRAM_NL_A_EVENT, 42).U32(HZRAM_NL_A_ID, 12).U32(HZRAM_NL_A_MAX + 1, 5);
  e = ParseEventMessage(newer.hdr());
  ASSERT_TRUE(e);
  EXPECT_EQ(42u, e->type);
  EXPECT_EQ("hzram12", e->device);

  NlMessage pid(HZRAM_NL_CMD_EVENT);
  pid.U32(HZRAM_NL_A_EVENT, HZRAM_NL_EV_HELPER_DIED)
      .U32(HZRAM_NL_A_ID, 0)
      .Str(HZRAM_NL_A_NAME, "hzram0")
      .U32(HZRAM_NL_A_HELPER_PID, 4321);
  e = ParseEventMessage(pid.hdr());
  ASSERT_TRUE(e);
  EXPECT_EQ(4321u, e->pid);

  // No event, no device, another command: nothing.
  NlMessage noevent(HZRAM_NL_CMD_EVENT);
  noevent.U32(HZRAM_NL_A_ID, 0).Str(HZRAM_NL_A_NAME, "hzram0");
  EXPECT_FALSE(ParseEventMessage(noevent.hdr()));
  NlMessage nodev(HZRAM_NL_CMD_EVENT);
  nodev.U32(HZRAM_NL_A_EVENT, HZRAM_NL_EV_RESET);
  EXPECT_FALSE(ParseEventMessage(nodev.hdr()));
  NlMessage get(HZRAM_NL_CMD_GET_DEVICE);
  get.U32(HZRAM_NL_A_EVENT, HZRAM_NL_EV_RESET).U32(HZRAM_NL_A_ID, 0);
  EXPECT_FALSE(ParseEventMessage(get.hdr()));
}

// The family as a list of GET_DEVICE messages.
class FakeGenl : public GenlTransport {
 public:
  struct State {
    std::vector<std::pair<int, std::vector<char>>> devices;  // id, message
    std::vector<int> requests;                                // ids asked for; -1: dumps
    int fail = 0;                                             // an errno to answer with
  };
  explicit FakeGenl(State* state) : s_(state) {}
  int GetDevice(int id, const std::function<void(nlmsghdr*)>& on) override {
    s_->requests.push_back(id);
    if (s_->fail) return -s_->fail;
    bool found = false;
    for (auto& [dev, bytes] : s_->devices) {
      if (id >= 0 && dev != id) continue;
      found = true;
      on(reinterpret_cast<nlmsghdr*>(bytes.data()));
    }
    return id >= 0 && !found ? -ENODEV : 0;
  }

 private:
  State* s_;
};

class NetlinkSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // sysfs and the family agree on hzram0 and hzram2 (which the dump
    // gives out of order); hzram1 is not set up.
    tree_.AddDevice(0, 16 << 20, kMmStat);
    tree_.AddDevice(1, 0);
    tree_.AddDevice(2, 1ULL << 30);
    state_.devices.emplace_back(2, DeviceMessage(2, 1ULL << 30, "lz4", Numbers("0 0 0 0 0 0 0 0 0"),
                                                 kNoOffload));
    state_.devices.emplace_back(0, DeviceMessage(0, 16 << 20, "lz4", Numbers(kMmStat), kNoOffload));
    state_.devices.emplace_back(1, DeviceMessage(1, 0, "lz4", Numbers("0 0 0 0 0 0 0 0 0"),
                                                 kNoOffload));
    tree_.Put("/proc/swaps",
              "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
              "/dev/hzram2                             partition\t16380\t\t0\t\t100\n");
  }

  std::string Table(DeviceInfoSource& source, const std::vector<Col>& cols, bool raw,
                    const std::string& device = "") {
    std::vector<DeviceInfo> rows;
    const unsigned fields = FieldsFor(cols);
    if (device.empty()) {
      rows = source.ListUsed(fields);
    } else {
      const std::optional<DeviceRef> dev = sysfs_.Resolve(device);
      EXPECT_TRUE(dev) << device;
      if (dev) rows.push_back(source.Get(*dev, fields));
    }
    char* buf = nullptr;
    std::size_t len = 0;
    std::FILE* out = open_memstream(&buf, &len);
    TableFormat format;
    format.raw = raw;
    std::string what;
    EXPECT_EQ(0, PrintTable(out, rows, cols, format, &what)) << what;
    std::fclose(out);
    std::string text(buf, len);
    std::free(buf);
    return text;
  }

  FakeTree tree_;
  Sysfs sysfs_{tree_.root()};
  FakeGenl::State state_;
};

TEST_F(NetlinkSourceTest, SameTablesAsFromSysfs) {
  SysfsInfoSource from_sysfs(sysfs_);
  NetlinkInfoSource from_netlink(sysfs_, std::make_unique<FakeGenl>(&state_));
  std::vector<Col> all;
  for (const ColumnInfo& c : AllColumns()) all.push_back(c.id);
  for (const char* dev : {"", "/dev/hzram0", "hzram1", "/dev/hzram2"}) {
    const std::string want = Table(from_sysfs, DefaultColumns(), false, dev);
    EXPECT_EQ(want, Table(from_netlink, DefaultColumns(), false, dev)) << dev;
    EXPECT_EQ(Table(from_sysfs, all, true, dev), Table(from_netlink, all, true, dev)) << dev;
  }
  EXPECT_EQ(
      "NAME        ALGORITHM DISKSIZE DATA COMPR TOTAL STREAMS MOUNTPOINT\n"
      "/dev/hzram0 lz4            16M   8M  2.5M  2.6M       2 \n"
      "/dev/hzram2 lz4             1G   0B    0B    0B       2 [SWAP]\n",
      Table(from_netlink, DefaultColumns(), false));
  // One dump for a list, one request by id for a device.
  EXPECT_EQ((std::vector<int>{-1, -1, 0, 0, 1, 1, 2, 2, -1}), state_.requests);
}

TEST_F(NetlinkSourceTest, ValuesFromTheFamilyNotSysfs) {
  // The family says otherwise than the files: its values are shown, and
  // MOUNTPOINT and a device's name still come from /proc and the path.
  std::vector<std::uint64_t> off = kNoOffload;
  off[HZRAM_OFF_HELPER] = 1;
  off[HZRAM_OFF_PAGES_HELPER] = 77;
  state_.devices[0].second =
      DeviceMessage(2, 2ULL << 30, "zstd", Numbers("4096 1024 8192 0 8192 0 0 0 0"), off, "on");
  NetlinkInfoSource source(sysfs_, std::make_unique<FakeGenl>(&state_));
  const std::vector<Col> cols = {Col::kName,   Col::kAlgorithm,  Col::kDisksize,
                                 Col::kData,   Col::kMountpoint, Col::kOffload,
                                 Col::kHelper, Col::kHelperPages};
  EXPECT_EQ(
      "NAME ALGORITHM DISKSIZE DATA MOUNTPOINT OFFLOAD HELPER HELPER-PAGES\n"
      "/dev/hzram0 lz4 16M 8M  auto 0 0\n"
      "/dev/hzram2 zstd 2G 4K [SWAP] on 1 77\n",
      Table(source, cols, true));
  EXPECT_EQ(
      "NAME ALGORITHM DISKSIZE DATA MOUNTPOINT OFFLOAD HELPER HELPER-PAGES\n"
      "hzram2 zstd 2G 4K [SWAP] on 1 77\n",
      Table(source, cols, true, "hzram2"));

  // A device set up since the dump is listed; one not in the dump is not.
  state_.devices[2].second =
      DeviceMessage(1, 4096, "lz4", Numbers("0 0 0 0 0 0 0 0 0"), kNoOffload);
  state_.devices.erase(state_.devices.begin());
  EXPECT_EQ("NAME\n/dev/hzram0\n/dev/hzram1\n", Table(source, {Col::kName}, true));
}

TEST_F(NetlinkSourceTest, SysfsWhereTheFamilyFails) {
  state_.devices[0].second =
      DeviceMessage(2, 2ULL << 30, "zstd", Numbers("1 2 3 4 5 6 7 8 9"), kNoOffload);
  NetlinkInfoSource source(sysfs_, std::make_unique<FakeGenl>(&state_));
  SysfsInfoSource sysfs_source(sysfs_);
  const std::string from_sysfs = Table(sysfs_source, DefaultColumns(), true);
  EXPECT_NE(from_sysfs, Table(source, DefaultColumns(), true));  // the family's hzram2
  state_.fail = EIO;
  EXPECT_EQ(from_sysfs, Table(source, DefaultColumns(), true));
  const std::string hzram2 =
      "NAME ALGORITHM DISKSIZE DATA COMPR TOTAL STREAMS MOUNTPOINT\n"
      "/dev/hzram2 lz4 1G 0B 0B 0B 2 [SWAP]\n";
  EXPECT_EQ(hzram2, Table(source, DefaultColumns(), true, "/dev/hzram2"));
  // No such device in the family (gone since): sysfs too.
  state_.fail = 0;
  state_.devices.clear();
  EXPECT_EQ(hzram2, Table(source, DefaultColumns(), true, "/dev/hzram2"));
}

TEST(NetlinkTest, NoFamilyMeansSysfs) {
  // A family that no module registers: hzramctl lists from sysfs, and
  // --monitor has nothing to listen to.
  FakeTree tree;
  Sysfs sysfs(tree.root());
  const std::unique_ptr<DeviceInfoSource> source = OpenInfoSource(sysfs, "hzram-none");
  EXPECT_NE(nullptr, dynamic_cast<SysfsInfoSource*>(source.get()));
  EXPECT_EQ(nullptr, OpenGenl("hzram-none"));
  EventSocket events;
  std::string what;
  EXPECT_EQ(-1, events.Open(&what, "hzram-none"));
  EXPECT_NE(std::string::npos, what.find("netlink")) << what;
}

TEST_F(CommandTest, MonitorWithoutTheFamily) {
  if (OpenGenl()) GTEST_SKIP() << "the module's family is here";
  const Ran r = RunIn(tree_, {"--monitor"});
  EXPECT_EQ(1, r.status);
  EXPECT_EQ("", r.out);
  EXPECT_EQ(0u, r.err.find("hzramctl: ")) << r.err;
  EXPECT_NE(std::string::npos, r.err.find("netlink")) << r.err;
}

// ---------------------------------------------------------------------
// Events as --monitor prints them.

Event MakeEvent(std::uint32_t type, const char* device = "hzram0") {
  Event e;
  e.type = type;
  e.device = device;
  return e;
}

TEST(EventsTest, Names) {
  const std::pair<std::uint32_t, const char*> names[] = {
      {HZRAM_NL_EV_DEVICE_ADDED, "added"},
      {HZRAM_NL_EV_DEVICE_REMOVED, "removed"},
      {HZRAM_NL_EV_INITIALISED, "initialised"},
      {HZRAM_NL_EV_RESET, "reset"},
      {HZRAM_NL_EV_MEM_LIMIT, "mem-limit"},
      {HZRAM_NL_EV_WRITE_FAILED, "write-failed"},
      {HZRAM_NL_EV_HELPER_ATTACHED, "helper-attached"},
      {HZRAM_NL_EV_HELPER_DETACHED, "helper-detached"},
      {HZRAM_NL_EV_HELPER_DIED, "helper-died"},
      {HZRAM_NL_EV_UNSPEC, "event-0"},
      {HZRAM_NL_EV_MAX + 1, "event-10"},
      {4000000000u, "event-4000000000"},
  };
  for (const auto& [type, name] : names) EXPECT_EQ(name, EventName(type)) << type;
}

TEST(EventsTest, TextAndJson) {
  Event init = MakeEvent(HZRAM_NL_EV_INITIALISED);
  init.disksize = 8388608;
  init.algorithm = "lz4";
  Event limit = MakeEvent(HZRAM_NL_EV_MEM_LIMIT, "hzram12");
  limit.mem_limit = 65536;
  Event failed = MakeEvent(HZRAM_NL_EV_WRITE_FAILED);
  failed.failed_writes = 3;
  Event attached = MakeEvent(HZRAM_NL_EV_HELPER_ATTACHED);
  attached.pid = 123;
  Event died = MakeEvent(HZRAM_NL_EV_HELPER_DIED);
  died.pid = 123;
  // A newer module's event with attributes known here: all printed.
  Event newer = MakeEvent(11, "hzram1");
  newer.disksize = 4096;
  newer.pid = 9;

  const std::tuple<Event, const char*, const char*> cases[] = {
      {MakeEvent(HZRAM_NL_EV_DEVICE_ADDED, "hzram1"), "hzram1 added",
       R"({"device":"hzram1","event":"added"})"},
      {init, "hzram0 initialised disksize=8388608 algorithm=lz4",
       R"({"device":"hzram0","event":"initialised","disksize":8388608,"algorithm":"lz4"})"},
      {MakeEvent(HZRAM_NL_EV_RESET), "hzram0 reset", R"({"device":"hzram0","event":"reset"})"},
      {limit, "hzram12 mem-limit mem_limit=65536",
       R"({"device":"hzram12","event":"mem-limit","mem_limit":65536})"},
      {failed, "hzram0 write-failed failed_writes=3",
       R"({"device":"hzram0","event":"write-failed","failed_writes":3})"},
      {attached, "hzram0 helper-attached pid=123",
       R"({"device":"hzram0","event":"helper-attached","pid":123})"},
      {died, "hzram0 helper-died pid=123",
       R"({"device":"hzram0","event":"helper-died","pid":123})"},
      {MakeEvent(HZRAM_NL_EV_DEVICE_REMOVED), "hzram0 removed",
       R"({"device":"hzram0","event":"removed"})"},
      {newer, "hzram1 event-11 disksize=4096 pid=9",
       R"({"device":"hzram1","event":"event-11","disksize":4096,"pid":9})"},
  };
  for (const auto& [event, text, json] : cases) {
    EXPECT_EQ(text, EventText(event));
    EXPECT_EQ(json, EventJson(event));
  }
}

TEST(EventsTest, JsonStrings) {
  Event e = MakeEvent(HZRAM_NL_EV_INITIALISED, "hzram\"0");
  e.algorithm = "x\\y";
  EXPECT_EQ(R"({"device":"hzram\"0","event":"initialised","algorithm":"x\\y"})", EventJson(e));
}

// ---------------------------------------------------------------------
// The binary.

// Run hzramctl with @args, its stdout to @out (a file; by default one
// read back into Ran::out).
Ran RunBinary(const std::string& args, const std::string& to = "") {
  Ran r;
  const std::string out = to.empty() ? testing::TempDir() + "hzramctl.out" : to;
  const std::string err = testing::TempDir() + "hzramctl.err";
  const int st =
      std::system(("exec " + hzram::test::BuiltProgram("hzramctl") + " " + args + " >" + out + " 2>" + err).c_str());
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  std::ostringstream os, es;
  if (to.empty()) os << std::ifstream(out).rdbuf();
  es << std::ifstream(err).rdbuf();
  r.out = os.str();
  r.err = es.str();
  return r;
}

TEST(HzramctlBinaryTest, ExitStatuses) {
  Ran r = RunBinary("--help");
  EXPECT_EQ(0, r.status);
  EXPECT_EQ(UsageText("hzramctl"), r.out);
  r = RunBinary("-V");
  EXPECT_EQ(0, r.status);
  EXPECT_EQ(VersionText("hzramctl"), r.out);
  r = RunBinary("--bogus");
  EXPECT_EQ(1, r.status);
  EXPECT_NE(std::string::npos, r.err.find("unrecognized option '--bogus'\n")) << r.err;
  EXPECT_NE(std::string::npos, r.err.find("Try 'hzramctl --help' for more information.\n"))
      << r.err;
  r = RunBinary("-o NAME,BOGUS");
  EXPECT_EQ(1, r.status);
  EXPECT_EQ("hzramctl: unknown column: BOGUS\n", r.err);
  // A failed write to stdout is an error, as in util-linux.
  r = RunBinary("--help", "/dev/full");
  EXPECT_EQ(1, r.status);
  EXPECT_EQ("hzramctl: write error: No space left on device\n", r.err);
  if (access(kControlClass, F_OK) == 0) GTEST_SKIP() << "the module is loaded here";
  r = RunBinary("");
  EXPECT_EQ(1, r.status);
  EXPECT_EQ("", r.out);
  EXPECT_EQ(
      "hzramctl: hzram module not loaded (/sys/class/hzram-control: No such file or directory)\n",
      r.err);
}

}  // namespace
}  // namespace hzramctl
