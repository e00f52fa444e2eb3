// SPDX-License-Identifier: GPL-2.0
#include "encoder.h"

#include <cerrno>
#include <cstring>
#include <mutex>
#include <vector>

#include "hzram/backend.h"
#ifdef HZRAM_HAVE_CUDA
#include "hzram/gpu_codec.h"
#endif
#include "log.h"

namespace hzramd {
namespace {

using hzram::kPageSize;

std::unique_ptr<hzram::Codec> MakeCodec(unsigned threads, std::string* error) {
  hzram::CodecOptions opt;
  opt.threads = threads;
  opt.max_batch = kMaxBatchPages;
  int err = 0;
  auto codec = hzram::Codec::Create(opt, &err);
  if (!codec) *error = std::string("cannot start the codec: ") + std::strerror(-err);
  return codec;
}

std::string CodecName(const hzram::Codec& c) {
  return std::to_string(c.threads()) + (c.threads() > 1 ? " threads, " : " thread, ") +
         hzram::IsaName(c.isa());
}

class CpuEncoder final : public BatchEncoder {
 public:
  explicit CpuEncoder(std::unique_ptr<hzram::Codec> codec) : codec_(std::move(codec)) {}
  int Encode(const hzram::PageList& pages, std::span<hzram_page_record> records,
             std::span<std::uint8_t> data) override {
    return codec_->Compress(pages, records, data);  // serialised by the codec
  }
  int Decode(std::span<const hzram_page_record> records, std::span<const std::uint8_t> data,
             const hzram::MutablePageList& pages, std::span<int> status) override {
    return codec_->Decompress(records, data, pages, status);
  }
  std::string Describe() const override { return "cpu, " + CodecName(*codec_); }

 private:
  std::unique_ptr<hzram::Codec> codec_;
};

#ifdef HZRAM_HAVE_CUDA
class GpuEncoder final : public BatchEncoder {
 public:
  explicit GpuEncoder(std::unique_ptr<hzram::GpuCodec> gpu) : gpu_(std::move(gpu)) {}
  int Encode(const hzram::PageList& pages, std::span<hzram_page_record> records,
             std::span<std::uint8_t> data) override {
    std::lock_guard<std::mutex> lock(mutex_);
    return gpu_->Compress(pages, records, data);
  }
  int Decode(std::span<const hzram_page_record> records, std::span<const std::uint8_t> data,
             const hzram::MutablePageList& pages, std::span<int> status) override {
    std::lock_guard<std::mutex> lock(mutex_);
    return gpu_->Decompress(records, data, pages, status);
  }
  std::string Describe() const override { return "gpu, " + gpu_->device_name(); }

 private:
  std::mutex mutex_;
  std::unique_ptr<hzram::GpuCodec> gpu_;
};

class HybridEncoder final : public BatchEncoder {
 public:
  HybridEncoder(std::unique_ptr<hzram::Codec> cpu, std::unique_ptr<hzram::GpuCodec> gpu)
      : cpu_(std::move(cpu)), gpu_(std::move(gpu)), hybrid_(cpu_.get(), gpu_.get()) {}
  // Calibrate on built-in pages (records of small numbers beside random
  // words, about 2:1): every batch updates the speeds afterwards.
  int Calibrate() {
    std::vector<std::uint8_t> pages(512 * kPageSize);
    std::uint64_t s = 0x9e3779b97f4a7c15ull;
    for (std::size_t i = 0; i < pages.size(); i += 8) {
      s ^= s << 13, s ^= s >> 7, s ^= s << 17;
      const std::uint64_t w = (i / 8) % 4 ? s & 0x3ff : s;
      std::memcpy(&pages[i], &w, 8);
    }
    return hybrid_.Calibrate(hzram::PageList(pages.data(), pages.size() / kPageSize));
  }
  int Encode(const hzram::PageList& pages, std::span<hzram_page_record> records,
             std::span<std::uint8_t> data) override {
    std::lock_guard<std::mutex> lock(mutex_);
    return hybrid_.Compress(pages, records, data);
  }
  int Decode(std::span<const hzram_page_record> records, std::span<const std::uint8_t> data,
             const hzram::MutablePageList& pages, std::span<int> status) override {
    std::lock_guard<std::mutex> lock(mutex_);
    return hybrid_.Decompress(records, data, pages, status);
  }
  std::string Describe() const override {
    return "hybrid, cpu " + CodecName(*cpu_) + " and gpu " + gpu_->device_name();
  }

 private:
  std::mutex mutex_;
  std::unique_ptr<hzram::Codec> cpu_;
  std::unique_ptr<hzram::GpuCodec> gpu_;
  hzram::HybridCodec hybrid_;
};
#endif

}  // namespace

std::unique_ptr<BatchEncoder> MakeEncoder(Backend backend, unsigned threads, std::string* error) {
  const char* asked = BackendName(backend);
#ifdef HZRAM_HAVE_CUDA
  std::string why;
  if (backend == Backend::kAuto) {
    if (hzram::GpuAvailable(0, &why)) {
      backend = Backend::kHybrid;
    } else {
      HZ_INFO("--backend auto: no usable GPU (%s): cpu", why.c_str());
      backend = Backend::kCpu;
    }
  }
  std::unique_ptr<hzram::GpuCodec> gpu;
  if (backend == Backend::kGpu || backend == Backend::kHybrid) {
    hzram::GpuOptions go;
    go.max_batch = kMaxBatchPages;
    if (backend == Backend::kGpu) go.staging_threads = threads;
    int err = 0;
    gpu = hzram::GpuCodec::Create(go, &err, &why);
    if (!gpu) {
      *error = std::string("--backend ") + asked + ": no usable GPU: " + why;
      return nullptr;
    }
  }
  if (backend == Backend::kGpu) return std::make_unique<GpuEncoder>(std::move(gpu));
#else
  if (backend == Backend::kAuto) backend = Backend::kCpu;
  if (backend != Backend::kCpu) {
    *error = std::string("--backend ") + asked +
             ": this hzramd was built without the CUDA backend (nvcc was not found)";
    return nullptr;
  }
#endif
  auto codec = MakeCodec(threads, error);
  if (!codec) return nullptr;
#ifdef HZRAM_HAVE_CUDA
  if (backend == Backend::kHybrid) {
    auto h = std::make_unique<HybridEncoder>(std::move(codec), std::move(gpu));
    if (int err = h->Calibrate()) {
      *error = std::string("--backend ") + asked + ": calibration failed: " + std::strerror(-err);
      return nullptr;
    }
    return h;
  }
#endif
  return std::make_unique<CpuEncoder>(std::move(codec));
}

hzram_attach LayoutLikeModule(std::uint32_t nr_batches, std::uint32_t batch_pages,
                              std::size_t staging_pages) {
  hzram_attach a{};
  a.size = sizeof(a);
  a.version = HZRAM_UAPI_VERSION;
  a.features = HZRAM_FEAT_COMPRESS | HZRAM_FEAT_DECOMPRESS;
  a.nr_batches = nr_batches;
  a.batch_pages = batch_pages;
  a.staging_offset =
      (nr_batches * sizeof(hzram_batch_desc) + kPageSize - 1) / kPageSize * kPageSize;
  a.ro_size = a.staging_offset + staging_pages * kPageSize;
  a.rw_size = nr_batches * SlotBytes(batch_pages);
  return a;
}

bool CheckGeometry(const hzram_attach& a, std::string* why) {
  char buf[160];
  auto fail = [&](const char* what) {
    std::snprintf(
        buf, sizeof(buf),
        "%s (nr_batches %u, batch_pages %u, ro_size %llu, staging_offset %llu, rw_size %llu)", what,
        a.nr_batches, a.batch_pages, static_cast<unsigned long long>(a.ro_size),
        static_cast<unsigned long long>(a.staging_offset),
        static_cast<unsigned long long>(a.rw_size));
    *why = buf;
    return false;
  };
  if (a.nr_batches == 0 || a.nr_batches > 65536) return fail("nr_batches is not 1..65536");
  if (a.batch_pages == 0 || a.batch_pages > kMaxBatchPages)
    return fail("batch_pages is not 1..4096");
  if (a.ro_offset % HZRAM_PAGE_SIZE || a.rw_offset % HZRAM_PAGE_SIZE)
    return fail("a region's mmap offset is not page-aligned");
  const std::uint64_t descs = std::uint64_t{a.nr_batches} * sizeof(hzram_batch_desc);
  if (a.staging_offset < descs || a.staging_offset > a.ro_size)
    return fail("the staging arena overlaps the descriptors or lies past the region");
  if (a.rw_size < SlotBytes(a.batch_pages)) return fail("the output arena holds no slot");
  return true;
}

int EncodeBatch(BatchEncoder& encoder, const Regions& r, std::uint32_t batch, hzram_batch_desc* d) {
  const hzram_attach& a = r.info;
  // One read of the descriptor: the checks and the work use this copy.
  std::memcpy(d, r.ro + std::size_t{batch} * sizeof(*d), sizeof(*d));
  const std::uint64_t staging = a.ro_size - a.staging_offset;
  const std::uint64_t pages = d->nr_pages;
  if (pages == 0 || pages > a.batch_pages || d->staging_offset > staging ||
      pages * kPageSize > staging - d->staging_offset || d->output_offset > a.rw_size ||
      SlotBytes(a.batch_pages) > a.rw_size - d->output_offset ||
      d->output_offset % alignof(hzram_page_record))
    return -EINVAL;

  std::uint8_t* const slot = r.rw + d->output_offset;
  std::uint8_t* const out = slot + a.batch_pages * sizeof(hzram_page_record);
  const std::uint8_t* const in = r.ro + a.staging_offset + d->staging_offset;
  const std::span<hzram_page_record> records(reinterpret_cast<hzram_page_record*>(slot), pages);
  int ret = -EOPNOTSUPP;
  if (d->op == HZRAM_OP_COMPRESS && d->flags == 0) {
    ret = encoder.Encode(hzram::PageList(in, pages), records,
                         std::span<std::uint8_t>(out, hzram::Codec::ArenaBytes(pages)));
  } else if (d->op == HZRAM_OP_DECOMPRESS && d->flags == 0 &&
             (a.features & HZRAM_FEAT_DECOMPRESS)) {
    // The input: records from the start of the batch's staging cells,
    // batch_pages of them, then the data. One status per page, allocated
    // once per thread.
    static thread_local std::vector<int> status(kMaxBatchPages);
    const std::uint64_t in_records = std::uint64_t{a.batch_pages} * sizeof(hzram_page_record);
    if (std::uint64_t{a.batch_pages} * kPageSize > staging - d->staging_offset) return -EINVAL;
    ret = encoder.Decode(
        std::span<const hzram_page_record>(reinterpret_cast<const hzram_page_record*>(in), pages),
        std::span<const std::uint8_t>(in + in_records,
                                      std::uint64_t{a.batch_pages} * kPageSize - in_records),
        hzram::MutablePageList(out, pages), std::span<int>(status.data(), pages));
    if (ret >= 0) {
      for (std::uint64_t i = 0; i < pages; i++) {
        hzram_page_record rec{};
        if (status[i] == 0) {
          rec.value = i * kPageSize;
          rec.length = HZRAM_PAGE_SIZE;
          rec.kind = HZRAM_PAGE_RAW;
        }
        records[i] = rec;
      }
      ret = 0;
    }
  }
  if (ret) std::memset(records.data(), 0, records.size_bytes());  // kind 0: not encoded
  return ret;
}

}  // namespace hzramd
