// SPDX-License-Identifier: GPL-2.0
//
// hzram batch codec: compresses and decompresses batches of 4 KiB pages on
// a pool of pinned threads, to and from the record/arena layout of
// include/uapi/linux/hzram.h (struct hzram_page_record): LZ4 both ways,
// and zstd (libzstd) for the module's recompression.
//
// Host-only header. All pointers are host memory; sizes are in bytes;
// functions return 0 or a negative errno and never set errno.
#ifndef HZRAM_CODEC_H
#define HZRAM_CODEC_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <type_traits>

#include "hzram/page_codec.h"

namespace hzram {

class ThreadPool;
struct CodecWorker;

struct CodecOptions {
  // Threads a batch runs on, the calling thread included; 0: one per CPU
  // the calling thread may run on.
  unsigned threads = 0;
  // Pin each started thread to one CPU (the calling thread is left alone).
  bool pin_threads = true;
  // Instruction sets. force_isa: @isa compresses, and decompresses too
  // unless @decompress_isa is set. Without force_isa: $HZRAM_ISA for
  // both, else the fastest for each direction by the start-up trial.
  bool force_isa = false;
  Isa isa = Isa::kScalar;
  std::optional<Isa> decompress_isa;
  // Largest batch, in pages, that a call accepts.
  std::size_t max_batch = 4096;
};

// A batch's source pages: one contiguous buffer, or an array of pointers.
class PageList {
 public:
  // @n pages laid out one after another from @base.
  PageList(const void* base, std::size_t n)
      : base_(static_cast<const std::uint8_t*>(base)), n_(n) {}
  // @n pages at @pages[0..n-1].
  PageList(const void* const* pages, std::size_t n) : pages_(pages), n_(n) {}
  // An array of typed page pointers would otherwise bind to the contiguous
  // form: convert to const void* const* explicitly.
  template <class T>
    requires(!std::is_void_v<T>)
  PageList(T* const* pages, std::size_t n) = delete;
  template <class T>
    requires(!std::is_void_v<T>)
  PageList(T** pages, std::size_t n) = delete;

  std::size_t size() const { return n_; }
  // The first page of a contiguous list; nullptr for a list of pointers.
  const void* contiguous() const { return pages_ ? nullptr : base_; }
  const void* operator[](std::size_t i) const {
    return pages_ ? pages_[i] : base_ + i * kPageSize;
  }
  // Pages [first, first + n) of this list.
  PageList Sub(std::size_t first, std::size_t n) const {
    return pages_ ? PageList(pages_ + first, n) : PageList(base_ + first * kPageSize, n);
  }

 private:
  const std::uint8_t* base_ = nullptr;
  const void* const* pages_ = nullptr;
  std::size_t n_;
};

// Destination pages of a decompression: contiguous, or pointers.
class MutablePageList {
 public:
  MutablePageList(void* base, std::size_t n)
      : base_(static_cast<std::uint8_t*>(base)), n_(n) {}
  MutablePageList(void* const* pages, std::size_t n) : pages_(pages), n_(n) {}
  template <class T>
    requires(!std::is_void_v<T>)
  MutablePageList(T* const* pages, std::size_t n) = delete;
  template <class T>
    requires(!std::is_void_v<T>)
  MutablePageList(T** pages, std::size_t n) = delete;

  std::size_t size() const { return n_; }
  // The first page of a contiguous list; nullptr for a list of pointers.
  void* contiguous() const { return pages_ ? nullptr : base_; }
  void* operator[](std::size_t i) const {
    return pages_ ? pages_[i] : base_ + i * kPageSize;
  }
  MutablePageList Sub(std::size_t first, std::size_t n) const {
    return pages_ ? MutablePageList(pages_ + first, n)
                  : MutablePageList(base_ + first * kPageSize, n);
  }

 private:
  std::uint8_t* base_ = nullptr;
  void* const* pages_ = nullptr;
  std::size_t n_;
};

// @shared read once, each field once (volatile loads), into a record of
// the caller's: for records in memory that another party may write at any
// time (a mapping shared with the kernel), so that what is checked is
// what is used.
inline hzram_page_record LoadRecord(const hzram_page_record& shared) {
  const volatile hzram_page_record& v = shared;
  hzram_page_record r;
  r.value = v.value;
  r.length = v.length;
  r.kind = v.kind;
  r.flags = v.flags;
  return r;
}

class Codec {
 public:
  // Start a codec: its threads and all its buffers. Returns nullptr and
  // sets *err (if @err) to -EINVAL for bad options, -ENOTSUP when the ISA
  // asked for cannot run on this CPU, or the errno of a failed thread
  // start.
  static std::unique_ptr<Codec> Create(const CodecOptions& options, int* err = nullptr);

  ~Codec();
  Codec(const Codec&) = delete;
  Codec& operator=(const Codec&) = delete;

  // Compress @pages into @records (one per page, in order) and @arena.
  // The arena needs ArenaBytes(n) bytes; each page's data lies within
  // [i * kPageSize, (i + 1) * kPageSize) of it in the worst case, but
  // callers must use the records' offsets. Same-filled pages become
  // HZRAM_PAGE_SAME records, pages whose LZ4 block would not be smaller
  // than a page HZRAM_PAGE_RAW ones, the rest HZRAM_PAGE_LZ4. Returns 0,
  // or -EINVAL for a batch larger than max_batch, too few records or too
  // small an arena. Calls on one Codec are serialised.
  int Compress(const PageList& pages, std::span<hzram_page_record> records,
               std::span<std::uint8_t> arena);

  // Decode @records (with their data in @arena) into @pages. @status gets
  // one entry per page: 0, -EINVAL for a record that does not fit the
  // layout (unknown kind, flags set, length or offset out of range), or
  // -EBADMSG for LZ4 data that does not decode to exactly one page. A
  // failed page leaves its destination undefined and its neighbours
  // untouched. Returns the number of failed pages, or -EINVAL for a batch
  // larger than max_batch or spans of different lengths. The records and
  // the arena may lie in memory another party writes meanwhile: each
  // record is read once (LoadRecord) and each LZ4 block copied once into
  // the thread's own buffer before it is decoded, so that nothing is read
  // twice (a page may then decode wrong, never out of bounds).
  int Decompress(std::span<const hzram_page_record> records,
                 std::span<const std::uint8_t> arena, const MutablePageList& pages,
                 std::span<int> status);

  // Compress @pages with zstd at @level (ZstdLevelValid()), each into one
  // zstd frame, as the module's recompression takes them
  // (HZRAM_OP_RECOMPRESS): records[i] HZRAM_PAGE_ZSTD for pages[i], its
  // frame in @arena, or kind 0 (not encoded) for a page whose frame
  // would not be smaller than a page. The arena needs ArenaBytes(n)
  // bytes; each page's data lies within [i * kPageSize, (i + 1) *
  // kPageSize). Each thread keeps one zstd context, made at its first
  // such batch. Returns 0, -EINVAL for a batch larger than max_batch, too
  // few records, too small an arena or a level out of range, or -ENOMEM
  // if a context cannot be made (no page is encoded then). Calls on one
  // Codec are serialised.
  int CompressZstd(const PageList& pages, int level, std::span<hzram_page_record> records,
                   std::span<std::uint8_t> arena);
  // Whether libzstd takes @level (ZSTD_minCLevel() to ZSTD_maxCLevel()).
  static bool ZstdLevelValid(int level);

  // Arena bytes a batch of @n pages may need.
  static constexpr std::size_t ArenaBytes(std::size_t n) { return n * kPageSize; }

  unsigned threads() const;
  // The ISA that compresses, and the one that decompresses.
  Isa isa() const { return compress_kernels_->isa; }
  Isa decompress_isa() const { return decompress_kernels_->isa; }
  std::size_t max_batch() const { return options_.max_batch; }
  // How many batches ran on the thread pool rather than on the caller
  // alone (small ones do not wake it).
  std::uint64_t pool_runs() const;

 private:
  Codec() = default;
  template <class Job>
  void Dispatch(std::size_t n, Job& job);

  CodecOptions options_;
  const PageKernels* compress_kernels_ = nullptr;
  const PageKernels* decompress_kernels_ = nullptr;
  std::unique_ptr<ThreadPool> pool_;
  // One per worker; the calling thread is worker 0.
  std::unique_ptr<CodecWorker[]> workers_;
  std::mutex call_mutex_;
};

}  // namespace hzram

#endif  // HZRAM_CODEC_H
