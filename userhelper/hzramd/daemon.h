// SPDX-License-Identifier: GPL-2.0
//
// The daemon: the loop that serves one device's batches, behind an
// interface to its queue (DeviceIo) that the kernel's io_uring queue
// (kernel_io.h), the in-memory device of --bench (loopback.h) and the
// tests' fakes implement; attaching devices and what their failures say;
// the process around it all (RunDaemon).
#ifndef HZRAMD_DAEMON_H
#define HZRAMD_DAEMON_H

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "encoder.h"
#include "options.h"

namespace hzramd {

// A completed command of a device's queue.
struct Completion {
  enum Kind : std::uint8_t {
    kFetch,   // res: the batch handed over (>= 0), or a negative errno
    kCommit,  // res: 0 or a negative errno; batch: the batch committed
    kStop,    // the daemon is told to stop
  };
  Kind kind = kFetch;
  std::uint32_t batch = 0;
  int res = 0;
};

// One attached device: its regions and its command queue. Commands are
// queued, then sent by Submit(); their completions come from Wait(). One
// thread drives the queue, the one that opened it (OpenQueue()).
class DeviceIo {
 public:
  virtual ~DeviceIo() = default;
  virtual unsigned device() const = 0;
  virtual const Regions& regions() const = 0;
  // Set up the command queue on the calling thread, which alone queues,
  // submits and waits from then on; once, before anything is queued.
  // Returns 0 or a negative errno. By default: nothing to set up.
  virtual int OpenQueue() { return 0; }
  // Queue a HZRAM_CMD_FETCH, or a HZRAM_CMD_COMMIT of @batch at @seq.
  // Return 0 or a negative errno.
  virtual int QueueFetch() = 0;
  virtual int QueueCommit(std::uint32_t batch, std::uint64_t seq) = 0;
  // Send what is queued. Returns 0 or a negative errno.
  virtual int Submit() = 0;
  // Wait up to @timeout_ms (-1: without limit, 0: not at all) for
  // completions and store up to out.size() of them in @out. Returns how
  // many (0: none came in time), or a negative errno.
  virtual int Wait(std::span<Completion> out, int timeout_ms) = 0;
  // The device's offload_timeout_ms now. The module lets it change while
  // the device is attached, and counts each batch's time with the value
  // of the moment: the loop reads this for every batch it is handed (it
  // must not block). By default the value at attach.
  virtual std::uint32_t offload_timeout_ms() const { return regions().offload_timeout_ms; }
  // Read the device's offload_timeout_ms again (the daemon's main loop,
  // about once a second, beside the device's loop). Returns whether it
  // changed. By default: nothing to read.
  virtual bool RefreshTimeout() { return false; }
};

// What a device's loop has done, read by other threads.
struct ServeStats {
  std::atomic<std::uint64_t> batches{0};        // committed encoded
  std::atomic<std::uint64_t> pages{0};          // their pages
  std::atomic<std::uint64_t> read_batches{0};   // committed decoded
  std::atomic<std::uint64_t> read_pages{0};     // their pages decoded
  std::atomic<std::uint64_t> recomp_batches{0};  // committed recompressed
  std::atomic<std::uint64_t> recomp_pages{0};    // their pages in zstd
  std::atomic<std::uint64_t> stored_bytes{0};   // their data's bytes
  std::atomic<std::uint64_t> not_encoded{0};    // committed as kind 0
  std::atomic<std::uint64_t> stale{0};          // commits answered -ESTALE
  std::atomic<std::uint64_t> commit_errors{0};  // commits answered otherwise
  // The loop's heartbeat: when it last made progress, woke from an idle
  // wait, or, while a batch waited for its turn at the encoder or for the
  // backend's watchdog, checked on it (steady clock, ns; MonotonicNs()).
  // The daemon tells systemd's watchdog it is alive only while every
  // loop's heartbeat is recent.
  std::atomic<std::int64_t> alive_ns{0};
};

// How long the loop waits for its commits to be answered when it stops.
inline constexpr int kDrainTimeoutMs = 2000;

struct ServeOptions {
  // How long the loop waits for its commits' answers when it stops.
  int drain_timeout_ms = kDrainTimeoutMs;
  // The longest it waits for completions while idle before it wakes (and
  // beats its heartbeat); -1: without limit.
  int idle_wait_ms = -1;
};

// Serve @io's batches with @encoder: keep one FETCH queued per batch;
// encode each batch handed over into its slot and COMMIT it; queue a new
// FETCH for each one that completes. Each batch's time (BatchTime) counts
// from when the loop was handed it, with the device's offload_timeout_ms
// of then (io.offload_timeout_ms()). On a kStop completion, stop queuing
// FETCHes, encode and commit every batch in hand or handed over meanwhile,
// and return once the commits are answered (or after drain_timeout_ms
// without an answer). A FETCH that ends with -ECANCELED or -ENODEV (the
// device detached or went away) ends the loop at once. Returns 0 then, or
// the negative errno of a queue that failed (a FETCH failing with
// anything but -EINTR and -EAGAIN, Submit or Wait failing). Beats
// stats->alive_ns after every wait (an interrupted one too) and every
// batch, and lets the encoder beat it while a batch waits (BatchTime).
// Allocates nothing.
int Serve(DeviceIo& io, BatchEncoder& encoder, ServeStats* stats,
          const ServeOptions& options = ServeOptions());

// Serve(), with the device's staging lent to the encoder's backend
// (BatchEncoder::ShareMemory) for as long: the daemon's way. Says at
// info level whether a GPU could lock it, and warns if it could not be
// given back.
int ServeLent(DeviceIo& io, BatchEncoder& encoder, ServeStats* stats,
              const ServeOptions& options = ServeOptions());

// Why a device could not be attached.
struct AttachFailure {
  enum Step {
    kOpen,      // open(HZRAM_CONTROL_PATH)
    kAttach,    // HZRAM_IOC_ATTACH
    kFeatures,  // the module did not grant HZRAM_FEAT_COMPRESS
    kGeometry,  // the reply's regions are unusable (detail says how)
    kMap,       // mmap of a region (detail: which)
    kRing,      // the io_uring queue
  };
  Step step = kOpen;
  int err = 0;  // errno of the failed call
  std::string detail;
};

// The message for a device that could not be attached, without "hzramd: ".
std::string AttachErrorMessage(unsigned device, const AttachFailure& failure);

// Attach device N (the kernel's is KernelIo::Attach); @stop_fd becomes
// readable when the daemon is told to stop, and the device's Wait() then
// returns a kStop completion. nullptr and *failure on failure.
using Attacher =
    std::function<std::unique_ptr<DeviceIo>(unsigned device, int stop_fd, AttachFailure* failure)>;

// Makes the daemon's encoder (MakeEncoder() of the options' backend and
// threads, or the tests' own). nullptr and *error on failure.
using EncoderMaker =
    std::function<std::unique_ptr<BatchEncoder>(const Options& options, std::string* error)>;

// The daemon: start-up (memory locking, I/O flusher, OOM score), signals,
// the encoder (@make, MakeEncoder() by default), every device of @options
// attached with @attach and served on a thread of its own, which opens
// the device's queue (DeviceIo::OpenQueue(); a failure fails the start
// as a failed attach does), sd_notify
// (READY, STATUS, STOPPING, and WATCHDOG=1 while every device's loop is
// alive, when systemd's watchdog is on), each device's offload_timeout_ms
// read again about once a second (DeviceIo::RefreshTimeout; a change is
// logged), and the stop. Returns the exit
// status: 0 after SIGTERM or SIGINT (the batches in hand committed) or
// when every device went away; 1 for an error (logged).
int RunDaemon(const Options& options, const Attacher& attach, const EncoderMaker& make = nullptr);

}  // namespace hzramd

#endif  // HZRAMD_DAEMON_H
