// SPDX-License-Identifier: GPL-2.0
#include "columns.h"

#include <libsmartcols.h>
#include <strings.h>

#include <cstring>

namespace hzramctl {
namespace {

constexpr ColumnInfo kColumns[] = {
    {Col::kName, "NAME", 0.25, 0, JsonKind::kString, "hzram device name"},
    {Col::kDisksize, "DISKSIZE", 5, SCOLS_FL_RIGHT, JsonKind::kSize,
     "limit on the uncompressed amount of data"},
    {Col::kData, "DATA", 5, SCOLS_FL_RIGHT, JsonKind::kSize, "uncompressed size of stored data"},
    {Col::kCompr, "COMPR", 5, SCOLS_FL_RIGHT, JsonKind::kSize, "compressed size of stored data"},
    {Col::kAlgorithm, "ALGORITHM", 3, 0, JsonKind::kString, "the selected compression algorithm"},
    {Col::kStreams, "STREAMS", 3, SCOLS_FL_RIGHT, JsonKind::kNumber,
     "number of concurrent compress operations"},
    {Col::kZeroPages, "ZERO-PAGES", 3, SCOLS_FL_RIGHT, JsonKind::kNumber,
     "empty pages with no allocated memory"},
    {Col::kTotal, "TOTAL", 5, SCOLS_FL_RIGHT, JsonKind::kSize,
     "all memory including allocator fragmentation and metadata overhead"},
    {Col::kMemLimit, "MEM-LIMIT", 5, SCOLS_FL_RIGHT, JsonKind::kSize,
     "memory limit used to store compressed data"},
    {Col::kMemUsed, "MEM-USED", 5, SCOLS_FL_RIGHT, JsonKind::kSize,
     "memory hzram has consumed to store compressed data"},
    {Col::kMigrated, "MIGRATED", 5, SCOLS_FL_RIGHT, JsonKind::kSize,
     "pages freed by compaction"},
    {Col::kMountpoint, "MOUNTPOINT", 0.10, SCOLS_FL_TRUNC, JsonKind::kString,
     "where the device is mounted"},
    {Col::kOffload, "OFFLOAD", 4, 0, JsonKind::kString, "helper offload mode: off, auto or on"},
    {Col::kHelper, "HELPER", 1, SCOLS_FL_RIGHT, JsonKind::kBoolean,
     "whether a helper (hzramd) is attached"},
    {Col::kHelperPages, "HELPER-PAGES", 5, SCOLS_FL_RIGHT, JsonKind::kNumber,
     "pages stored as the helper compressed them"},
    {Col::kFallbacks, "FALLBACKS", 5, SCOLS_FL_RIGHT, JsonKind::kNumber,
     "pages the kernel compressed after the helper timed out, went away or was refused"},
    {Col::kWrittenBack, "WRITTEN-BACK", 5, SCOLS_FL_RIGHT, JsonKind::kSize,
     "data written back to the backing device"},
    {Col::kRecompressed, "RECOMPRESSED", 5, SCOLS_FL_RIGHT, JsonKind::kNumber,
     "pages held compressed by a recompression algorithm"},
};

static_assert(std::size(kColumns) * 2 == kMaxColumns);

constexpr bool InEnumOrder() {
  for (std::size_t i = 0; i < std::size(kColumns); i++)
    if (static_cast<std::size_t>(kColumns[i].id) != i) return false;
  return true;
}
static_assert(InEnumOrder(), "kColumns[i] describes Col i");

// zramctl's column_name_to_id(): the name is the @n characters at @name.
const ColumnInfo* Lookup(const char* name, std::size_t n) {
  for (const ColumnInfo& c : kColumns)
    if (!strncasecmp(name, c.name, n) && !c.name[n]) return &c;
  return nullptr;
}

}  // namespace

std::span<const ColumnInfo> AllColumns() { return kColumns; }

const ColumnInfo& InfoOf(Col col) { return kColumns[static_cast<std::size_t>(col)]; }

std::vector<Col> DefaultColumns() {
  return {Col::kName,  Col::kAlgorithm, Col::kDisksize, Col::kData,
          Col::kCompr, Col::kTotal,     Col::kStreams,  Col::kMountpoint};
}

int ParseColumnList(const char* list, std::vector<Col>* out, std::string* warning) {
  out->clear();
  if (!list || !*list) return -1;
  const char* begin = nullptr;
  for (const char* p = list; *p; p++) {
    const char* end = nullptr;
    if (out->size() >= kMaxColumns) return -2;
    if (!begin) begin = p;
    if (*p == ',') end = p;
    if (*(p + 1) == '\0') end = p + 1;
    if (!end) continue;
    if (end <= begin) return -1;
    const ColumnInfo* c = Lookup(begin, static_cast<std::size_t>(end - begin));
    if (!c) {
      *warning = std::string("unknown column: ") + begin;
      return -1;
    }
    out->push_back(c->id);
    begin = nullptr;
    if (!*end) break;
  }
  return static_cast<int>(out->size());
}

}  // namespace hzramctl
