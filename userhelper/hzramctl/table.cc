// SPDX-License-Identifier: GPL-2.0
#include "table.h"

#include <libsmartcols.h>

#include <cerrno>
#include <memory>

#include "format.h"

namespace hzramctl {
namespace {

std::string Size(std::uint64_t n, bool bytes) {
  return bytes ? std::to_string(n) : SizeToHumanString(n);
}

template <class T, class F>
std::optional<std::string> Map(const std::optional<T>& v, F f) {
  if (!v) return std::nullopt;
  return f(*v);
}

struct TableDeleter {
  void operator()(libscols_table* tb) const { scols_unref_table(tb); }
};

}  // namespace

unsigned FieldsFor(const std::vector<Col>& cols) {
  unsigned fields = 0;
  for (Col c : cols) {
    switch (c) {
      case Col::kName:
        break;
      case Col::kDisksize:
        fields |= kFieldDisksize;
        break;
      case Col::kAlgorithm:
        fields |= kFieldAlgorithm;
        break;
      case Col::kStreams:
        fields |= kFieldStreams;
        break;
      case Col::kData:
      case Col::kCompr:
      case Col::kZeroPages:
      case Col::kTotal:
      case Col::kMemLimit:
      case Col::kMemUsed:
      case Col::kMigrated:
        fields |= kFieldMemStat;
        break;
      case Col::kMountpoint:
        fields |= kFieldMountpoint;
        break;
      case Col::kOffload:
        fields |= kFieldOffload;
        break;
      case Col::kHelper:
      case Col::kHelperPages:
      case Col::kFallbacks:
        fields |= kFieldOffloadStat;
        break;
      case Col::kWrittenBack:
        fields |= kFieldBdStat;
        break;
      case Col::kRecompressed:
        fields |= kFieldRecompStat;
        break;
    }
  }
  return fields;
}

std::optional<std::string> CellText(const DeviceInfo& info, Col col, bool bytes) {
  auto size = [bytes](std::uint64_t n) { return Size(n, bytes); };
  auto number = [](std::uint64_t n) { return std::to_string(n); };
  switch (col) {
    case Col::kName:
      return info.name;
    case Col::kDisksize:
      return Map(info.disksize, size);
    case Col::kData:
      return Map(info.mm, [&](const MemStat& m) { return size(m.orig_data_size); });
    case Col::kCompr:
      return Map(info.mm, [&](const MemStat& m) { return size(m.compr_data_size); });
    case Col::kAlgorithm:
      return info.algorithm;
    case Col::kStreams:
      return Map(info.streams, number);
    case Col::kZeroPages:  // a count: in any case as a number (zramctl)
      return Map(info.mm, [&](const MemStat& m) { return number(m.same_pages); });
    case Col::kTotal:
      return Map(info.mm, [&](const MemStat& m) { return size(m.mem_used_total); });
    case Col::kMemLimit:
      return Map(info.mm, [&](const MemStat& m) { return size(m.mem_limit); });
    case Col::kMemUsed:
      return Map(info.mm, [&](const MemStat& m) { return size(m.mem_used_max); });
    case Col::kMigrated:  // a count, but written as a size unless --bytes (zramctl)
      return Map(info.mm, [&](const MemStat& m) { return size(m.pages_compacted); });
    case Col::kMountpoint:
      return info.mountpoint;
    case Col::kOffload:
      return info.offload;
    case Col::kHelper:
      return Map(info.offload_stat,
                 [](const OffloadStat& o) { return std::string(o.helper ? "1" : "0"); });
    case Col::kHelperPages:
      return Map(info.offload_stat, [&](const OffloadStat& o) { return number(o.pages_helper); });
    case Col::kFallbacks:
      if (!info.offload_stat) return std::nullopt;
      return Map(info.offload_stat->fallbacks, number);
    case Col::kWrittenBack:
      return Map(info.written_back, size);
    case Col::kRecompressed:
      return Map(info.recompressed, number);
  }
  return std::nullopt;
}

int PrintTable(std::FILE* out, const std::vector<DeviceInfo>& rows, const std::vector<Col>& cols,
               const TableFormat& format, std::string* what) {
  scols_init_debug(0);
  std::unique_ptr<libscols_table, TableDeleter> tb(scols_new_table());
  if (!tb) {
    *what = "failed to allocate output table";
    return -errno;
  }
  scols_table_set_stream(tb.get(), out);
  scols_table_enable_raw(tb.get(), format.raw);
  scols_table_enable_noheadings(tb.get(), format.noheadings);
  if (format.json) {
    scols_table_enable_json(tb.get(), 1);
    scols_table_set_name(tb.get(), kJsonName);
  }

  for (Col c : cols) {
    const ColumnInfo& info = InfoOf(c);
    libscols_column* cl = scols_table_new_column(tb.get(), info.name, info.whint, info.flags);
    if (!cl) {
      *what = "failed to initialize output column";
      return -errno;
    }
    int type = SCOLS_JSON_STRING;
    switch (info.json) {
      case JsonKind::kString:
        break;
      case JsonKind::kSize:
        if (format.bytes) type = SCOLS_JSON_NUMBER;
        break;
      case JsonKind::kNumber:
        type = SCOLS_JSON_NUMBER;
        break;
      case JsonKind::kBoolean:
        type = SCOLS_JSON_BOOLEAN_OPTIONAL;
        break;
    }
    scols_column_set_json_type(cl, type);
  }

  for (const DeviceInfo& row : rows) {
    libscols_line* ln = scols_table_new_line(tb.get(), nullptr);
    if (!ln) {
      *what = "failed to allocate output line";
      return -errno;
    }
    for (std::size_t i = 0; i < cols.size(); i++) {
      const std::optional<std::string> text = CellText(row, cols[i], format.bytes);
      if (text && scols_line_set_data(ln, i, text->c_str()) != 0) {
        *what = "failed to add output data";
        return -errno;
      }
    }
  }
  scols_print_table(tb.get());
  return 0;
}

}  // namespace hzramctl
