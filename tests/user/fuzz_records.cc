// SPDX-License-Identifier: GPL-2.0
// libFuzzer target: the record path of a batch decompression, under
// AddressSanitizer and UndefinedBehaviorSanitizer, on hostile records and
// data (fuzz_records.h): any kind, flags, length and offset, any arena.
//
// - Codec::Decompress of every ISA this CPU runs, the hybrid codec on the
//   CPU alone (hzramd's cpu encoder), and the hybrid codec with a
//   stand-in device that takes the first pages in parts of four, rebased
//   on their part of the arena (and that fails, for some inputs, so that
//   its part is redone on the CPU) must never read outside the arena nor
//   write outside a page (each is an exact-size heap buffer), and must
//   agree with a model of the layout written here apart: a record's
//   status is 0, -EINVAL (not the layout) or what the single-page decoder
//   says of its block (-EBADMSG); a page that decodes is the SAME word,
//   the RAW page or the decoded block; the count returned is the number
//   of failed pages.
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "fuzz_records.h"
#include "hzram/backend.h"
#include "hzram/codec.h"
#include "page_codec_isa.h"
#include "slow_backend.h"

using namespace hzram;

namespace {

struct Codecs {
  std::vector<std::unique_ptr<Codec>> by_isa;
  std::unique_ptr<Codec> cpu;  // of the hybrid codecs
  Codecs() {
    for (int i = 0; i < kIsaCount; i++) {
      const Isa isa = static_cast<Isa>(i);
      if (!IsaSupported(isa)) continue;
      CodecOptions o;
      o.threads = 1;
      o.pin_threads = false;
      o.force_isa = true;
      o.isa = isa;
      o.max_batch = test::kFuzzMaxPages;
      by_isa.push_back(Codec::Create(o));
    }
    CodecOptions o;
    o.threads = 1;
    o.pin_threads = false;
    o.max_batch = test::kFuzzMaxPages;
    cpu = Codec::Create(o);
  }
};

// Exact-size heap buffers, so that ASan sees a byte too far.
struct Pages {
  std::vector<std::unique_ptr<std::uint8_t[]>> page;
  std::vector<void*> ptr;
  explicit Pages(std::size_t n) {
    for (std::size_t i = 0; i < n; i++) {
      page.emplace_back(new std::uint8_t[kPageSize]);
      std::memset(page.back().get(), 0xa5, kPageSize);
      ptr.push_back(page.back().get());
    }
  }
  MutablePageList list() const { return MutablePageList(ptr.data(), ptr.size()); }
};

// The model: the status of @r over @arena, and the page in @page if 0.
int Model(const hzram_page_record& r, const std::uint8_t* arena, std::size_t size,
          std::uint8_t* page) {
  if (r.flags) return -EINVAL;
  switch (r.kind) {
    case HZRAM_PAGE_SAME:
      if (r.length) return -EINVAL;
      for (std::size_t o = 0; o < kPageSize; o += 8) std::memcpy(page + o, &r.value, 8);
      return 0;
    case HZRAM_PAGE_RAW:
    case HZRAM_PAGE_LZ4: {
      const bool raw = r.kind == HZRAM_PAGE_RAW;
      if (raw ? r.length != kPageSize : r.length == 0 || r.length >= kPageSize) return -EINVAL;
      if (r.value > size || r.length > size - r.value) return -EINVAL;
      if (raw) {
        std::memcpy(page, arena + r.value, kPageSize);
        return 0;
      }
      std::unique_ptr<std::uint8_t[]> block(new std::uint8_t[r.length]);
      std::memcpy(block.get(), arena + r.value, r.length);
      return KernelsFor(Isa::kScalar).decompress(block.get(), r.length, page);
    }
    default:
      return -EINVAL;
  }
}

void Check(const char* what, int ret, const std::vector<int>& status, const Pages& out,
           const std::vector<int>& want, const Pages& model) {
  int failed = 0;
  for (std::size_t i = 0; i < status.size(); i++) {
    if (status[i] != want[i]) {
      std::fprintf(stderr, "%s: page %zu: status %d, the model says %d\n", what, i, status[i],
                   want[i]);
      std::abort();
    }
    failed += status[i] != 0;
    if (status[i] == 0 && std::memcmp(out.page[i].get(), model.page[i].get(), kPageSize)) {
      std::fprintf(stderr, "%s: page %zu: not the model's page\n", what, i);
      std::abort();
    }
  }
  if (ret != failed) {
    std::fprintf(stderr, "%s: returned %d, %d pages failed\n", what, ret, failed);
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Codecs codecs;
  if (size < test::kFuzzHeader) return 0;
  const std::size_t n = 1 + data[0] % test::kFuzzMaxPages;
  const std::uint8_t flags = data[1];
  data += test::kFuzzHeader;
  size -= test::kFuzzHeader;
  std::vector<hzram_page_record> records(n);
  const std::size_t record_bytes = std::min(size, n * sizeof(hzram_page_record));
  std::memcpy(records.data(), data, record_bytes);
  data += record_bytes;
  size -= record_bytes;
  std::unique_ptr<std::uint8_t[]> arena(new std::uint8_t[size ? size : 1]);
  std::memcpy(arena.get(), data, size);
  const std::span<const std::uint8_t> arena_span(arena.get(), size);
  if (flags & test::kFuzzInRange)
    for (auto& r : records)
      if (r.kind == HZRAM_PAGE_RAW || r.kind == HZRAM_PAGE_LZ4) r.value %= size + 1;

  std::vector<int> want(n);
  Pages model(n);
  for (std::size_t i = 0; i < n; i++)
    want[i] = Model(records[i], arena.get(), size, model.page[i].get());

  std::vector<int> status(n);
  for (const auto& c : codecs.by_isa) {
    Pages out(n);
    std::fill(status.begin(), status.end(), 1);
    const int ret = c->Decompress(records, arena_span, out.list(), status);
    Check(IsaName(c->decompress_isa()), ret, status, out, want, model);
  }
  {
    HybridCodec h(codecs.cpu.get(), nullptr);
    Pages out(n);
    std::fill(status.begin(), status.end(), 1);
    Check("hybrid, cpu alone", h.Decompress(records, arena_span, out.list(), status), status, out,
          want, model);
  }
  {
    // The first 12 pages, in parts of 4. A device that fails is one for
    // this input; one that does not stays healthy, and serves them all.
    static test::SlowBackend healthy(3, 4);
    std::unique_ptr<test::SlowBackend> failing;
    test::SlowBackend* device = &healthy;
    if (flags & test::kFuzzBackendFails) {
      failing = std::make_unique<test::SlowBackend>(3, 4);
      failing->fail_at = 1;
      device = failing.get();
    }
    HybridCodec h(codecs.cpu.get(), device, HybridCodec::Split::kBackendFirst);
    Pages out(n);
    std::fill(status.begin(), status.end(), 1);
    const int ret = h.Decompress(records, arena_span, out.list(), status);
    Check("hybrid with a device", ret, status, out, want, model);
    if (h.backend_enabled() != !failing) {
      std::fprintf(stderr, "the device is %s\n", h.backend_enabled() ? "still used" : "dropped");
      std::abort();
    }
  }
  return 0;
}
