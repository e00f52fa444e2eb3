// SPDX-License-Identifier: GPL-2.0
#include "daemon.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <future>
#include <system_error>
#include <thread>

#include "log.h"
#include "notify.h"

#ifndef PR_SET_IO_FLUSHER
#define PR_SET_IO_FLUSHER 57
#endif

namespace hzramd {
namespace {

// Completions taken from the queue at a time.
constexpr std::size_t kCompletions = 64;

// How often the daemon's STATUS= line is updated, in milliseconds.
constexpr int kStatusIntervalMs = 10000;

// How often each device's offload_timeout_ms is read again, in
// milliseconds (the main loop wakes at least this often).
constexpr int kTimeoutRefreshMs = 1000;

// The shortest WatchdogSec= hzramd is made for: a loop goes without a
// beat for a batch's CPU work at most (twice after a GPU batch given up,
// and behind other devices' at the CPU codec), and counts as stalled at
// half of WatchdogSec=.
constexpr std::uint64_t kMinWatchdogUs = 2000000;

// The batch handed over by a FETCH: encode it, queue its COMMIT.
int HandleBatch(DeviceIo& io, BatchEncoder& encoder, ServeStats* st, std::uint32_t batch,
                std::uint64_t* commits, std::span<int> status, const BatchTime& time) {
  const Regions& r = io.regions();
  const unsigned dev = io.device();
  if (batch >= r.info.nr_batches) {
    HZ_WARN("hzram%u: FETCH handed over batch %u of %u: ignored", dev, batch, r.info.nr_batches);
    return 0;
  }
  hzram_batch_desc d;
  const BatchResult res = EncodeBatch(encoder, r, batch, &d, status, time);
  switch (res.outcome) {
    case BatchResult::kBadDescriptor:
      HZ_WARN(
          "hzram%u: batch %u: descriptor outside the regions (%u pages at staging %llu, slot at "
          "%llu): not committed",
          dev, batch, d.nr_pages, static_cast<unsigned long long>(d.staging_offset),
          static_cast<unsigned long long>(d.output_offset));
      return 0;
    case BatchResult::kEncoded:
      if (d.op == HZRAM_OP_DECOMPRESS) {
        const auto* rec = reinterpret_cast<const hzram_page_record*>(r.rw + d.output_offset);
        std::uint64_t decoded = 0;
        for (std::uint32_t i = 0; i < d.nr_pages; i++) decoded += rec[i].kind == HZRAM_PAGE_RAW;
        st->read_batches.fetch_add(1, std::memory_order_relaxed);
        st->read_pages.fetch_add(decoded, std::memory_order_relaxed);
        HZ_DEBUG("hzram%u: read batch %u seq %llu: %llu of %u pages decoded", dev, batch,
                 static_cast<unsigned long long>(d.seq), static_cast<unsigned long long>(decoded),
                 d.nr_pages);
      } else if (d.op == HZRAM_OP_RECOMPRESS) {
        const auto* rec = reinterpret_cast<const hzram_page_record*>(r.rw + d.output_offset);
        std::uint64_t encoded = 0;
        for (std::uint32_t i = 0; i < d.nr_pages; i++) encoded += rec[i].kind == HZRAM_PAGE_ZSTD;
        st->recomp_batches.fetch_add(1, std::memory_order_relaxed);
        st->recomp_pages.fetch_add(encoded, std::memory_order_relaxed);
        HZ_DEBUG("hzram%u: recompression batch %u seq %llu: %llu of %u pages in zstd %d", dev,
                 batch, static_cast<unsigned long long>(d.seq),
                 static_cast<unsigned long long>(encoded), d.nr_pages, d.level);
      } else {
        const auto* rec = reinterpret_cast<const hzram_page_record*>(r.rw + d.output_offset);
        std::uint64_t bytes = 0;
        for (std::uint32_t i = 0; i < d.nr_pages; i++) bytes += rec[i].length;
        st->batches.fetch_add(1, std::memory_order_relaxed);
        st->pages.fetch_add(d.nr_pages, std::memory_order_relaxed);
        st->stored_bytes.fetch_add(bytes, std::memory_order_relaxed);
        HZ_DEBUG("hzram%u: batch %u seq %llu: %u pages in %llu bytes", dev, batch,
                 static_cast<unsigned long long>(d.seq), d.nr_pages,
                 static_cast<unsigned long long>(bytes));
      }
      break;
    case BatchResult::kNotEncoded: {
      // The first time at warning level, then at debug: a backend that
      // failed fails every batch.
      const bool first = st->not_encoded.fetch_add(1, std::memory_order_relaxed) == 0;
      Log(first ? LogLevel::kWarn : LogLevel::kDebug,
          "hzram%u: batch %u: not encoded (%s): the kernel compresses it", dev, batch,
          res.err == -EOPNOTSUPP ? "an op this helper does not know" : std::strerror(-res.err));
      break;
    }
  }
  if (int e = io.QueueCommit(batch, d.seq)) return e;
  ++*commits;
  return 0;
}

}  // namespace

int Serve(DeviceIo& io, BatchEncoder& encoder, ServeStats* st, const ServeOptions& o) {
  const unsigned dev = io.device();
  auto failed = [dev](const char* what, int err) {
    HZ_ERR("hzram%u: %s: %s", dev, what, std::strerror(-err));
    return err;
  };
  auto beat = [st] { st->alive_ns.store(MonotonicNs(), std::memory_order_relaxed); };
  // The statuses of a read batch's pages: here, once, not per batch.
  std::array<int, kMaxBatchPages> status;
  int ret;
  beat();
  for (std::uint32_t i = 0; i < io.regions().info.nr_batches; i++)
    if ((ret = io.QueueFetch())) return failed("queuing FETCH", ret);
  if ((ret = io.Submit())) return failed("submitting", ret);

  bool stopping = false;
  std::uint64_t commits = 0;  // queued and not yet answered
  Completion c[kCompletions];
  for (;;) {
    // Stopping: take whatever is already there, then wait for the
    // commits' answers, for a while.
    const int n = io.Wait(c, stopping ? (commits ? o.drain_timeout_ms : 0) : o.idle_wait_ms);
    if (n == -EINTR) {
      beat();  // woken, not stuck
      continue;
    }
    if (n < 0) return failed("waiting for completions", n);
    beat();
    // The batches handed over now: their time counts from here, with the
    // device's offload_timeout_ms of now.
    const BatchTime time = TimeOfBatch(io.offload_timeout_ms(), Clock::now(), &st->alive_ns);
    if (n == 0) {
      if (!stopping) continue;
      if (commits)
        HZ_WARN("hzram%u: %llu commits not answered in %d ms", dev,
                static_cast<unsigned long long>(commits), o.drain_timeout_ms);
      return 0;
    }
    for (int i = 0; i < n; i++) {
      const Completion& x = c[i];
      switch (x.kind) {
        case Completion::kStop:
          if (!stopping) HZ_INFO("hzram%u: stopping: committing the batches in hand", dev);
          stopping = true;
          break;
        case Completion::kCommit:
          commits--;
          if (x.res == -ESTALE) {
            st->stale.fetch_add(1, std::memory_order_relaxed);
            HZ_DEBUG("hzram%u: batch %u: the kernel took it back before the commit (ESTALE)", dev,
                     x.batch);
          } else if (x.res) {
            const bool first = st->commit_errors.fetch_add(1, std::memory_order_relaxed) == 0;
            Log(first ? LogLevel::kWarn : LogLevel::kDebug, "hzram%u: batch %u: COMMIT failed: %s",
                dev, x.batch, std::strerror(-x.res));
          }
          break;
        case Completion::kFetch:
          if (x.res == -ECANCELED || x.res == -ENODEV) {
            HZ_INFO("hzram%u: %s", dev,
                    x.res == -ECANCELED ? "detached by the kernel" : "the device went away");
            return 0;
          }
          if (x.res < 0 && x.res != -EINTR && x.res != -EAGAIN) return failed("FETCH", x.res);
          if (x.res >= 0 && (ret = HandleBatch(io, encoder, st, static_cast<std::uint32_t>(x.res),
                                               &commits, status, time)))
            return failed("queuing COMMIT", ret);
          beat();
          if (!stopping && (ret = io.QueueFetch())) return failed("queuing FETCH", ret);
          // The commit goes now, not after the rest of the completions.
          if ((ret = io.Submit())) return failed("submitting", ret);
          break;
      }
    }
  }
}

int ServeLent(DeviceIo& io, BatchEncoder& encoder, ServeStats* st, const ServeOptions& o) {
  const unsigned dev = io.device();
  // In the encoder's turn, which a hung GPU batch of another device's may
  // hold for its watchdog's time: the loop beats meanwhile.
  st->alive_ns.store(MonotonicNs(), std::memory_order_relaxed);
  const int shared = encoder.ShareMemory(io.regions(), &st->alive_ns);
  if (shared == 0)
    HZ_INFO("hzram%u: its staging is page-locked for the GPU: pages cross without copies", dev);
  else if (shared != -EOPNOTSUPP)
    HZ_INFO("hzram%u: its staging cannot be page-locked for the GPU (%s): pages are copied through "
            "the GPU's buffers",
            dev, std::strerror(-shared));
  const int ret = Serve(io, encoder, st, o);
  if (shared == 0)
    if (const int e = encoder.UnshareMemory(io.regions(), &st->alive_ns))
      HZ_WARN("hzram%u: its staging could not be unlocked for the GPU: %s", dev, std::strerror(-e));
  return ret;
}

std::string AttachErrorMessage(unsigned device, const AttachFailure& f) {
  const std::string dev = "device " + std::to_string(device);
  const std::string why = std::strerror(f.err);
  switch (f.step) {
    case AttachFailure::kOpen:
      if (f.err == ENOENT || f.err == ENODEV || f.err == ENXIO)
        return "hzram module not loaded (" HZRAM_CONTROL_PATH ": " + why + ")";
      if (f.err == EACCES || f.err == EPERM)
        return dev + ": needs CAP_SYS_ADMIN (" HZRAM_CONTROL_PATH ": " + why + ")";
      return dev + ": " HZRAM_CONTROL_PATH ": " + why;
    case AttachFailure::kAttach:
      switch (f.err) {
        case ENODEV:
        case ENOENT:
          return dev + " does not exist (no /dev/" HZRAM_DEVICE_PREFIX + std::to_string(device) +
                 ")";
        case EOPNOTSUPP:
          return dev +
                 " does not use plain lz4 (the helper compresses lz4 devices without a dictionary"
                 " only)";
        case EPROTO:
          return dev + ": the module speaks another version of the helper protocol than hzramd (" +
                 std::to_string(HZRAM_UAPI_VERSION) + ")";
        case EPERM:
        case EACCES:
          return dev + ": needs CAP_SYS_ADMIN (attach: " + why + ")";
        case EBUSY:
          return "another helper serves " + dev;
        case ENOTTY:
          return dev + ": this hzram module has no helper interface (attach: " + why + ")";
      }
      return dev + ": attach failed: " + why;
    case AttachFailure::kFeatures:
      return dev + ": the module does not let helpers compress (features granted: " + f.detail +
             ")";
    case AttachFailure::kGeometry:
      return dev + ": the module's attach reply is not usable: " + f.detail;
    case AttachFailure::kMap:
      return dev + ": cannot map the " + f.detail + ": " + why;
    case AttachFailure::kRing:
      return dev + ": cannot set up io_uring: " + why;
  }
  return dev + ": " + why;
}

namespace {

// A device served on a thread of its own.
struct Served {
  std::unique_ptr<DeviceIo> io;
  ServeStats stats;
  std::future<int> opened;  // its thread's OpenQueue()
  std::atomic<bool> done{false};
  int result = 0;        // Serve()'s, once done
  bool stalled = false;  // its heartbeat was late at the last look
  std::thread thread;
};
using ServedList = std::vector<std::unique_ptr<Served>>;

std::string StatusLine(const ServedList& served) {
  std::string s;
  char buf[200];
  for (const auto& d : served) {
    const std::uint64_t pages = d->stats.pages.load(), bytes = d->stats.stored_bytes.load();
    std::snprintf(buf, sizeof(buf),
                  "%shzram%u: %llu pages compressed, ratio %.2f, %llu stale, %llu decoded, "
                  "%llu recompressed",
                  s.empty() ? "" : "; ", d->io->device(), static_cast<unsigned long long>(pages),
                  bytes ? static_cast<double>(pages) * HZRAM_PAGE_SIZE / bytes : 0.0,
                  static_cast<unsigned long long>(d->stats.stale.load()),
                  static_cast<unsigned long long>(d->stats.read_pages.load()),
                  static_cast<unsigned long long>(d->stats.recomp_pages.load()));
    s += buf;
  }
  return s;
}

// Start-up: memory locked (unless --no-mlock), I/O flusher, OOM score.
// Returns false (logged) if memory cannot be locked.
bool StartUp(const Options& o) {
  if (o.mlock) {
    // Every thread's stack is locked whole: 1 MiB each rather than 8.
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 1 << 20);
    pthread_setattr_default_np(&attr);
    pthread_attr_destroy(&attr);
    if (mlockall(MCL_CURRENT | MCL_FUTURE)) {
      HZ_ERR(
          "mlockall: %s (needs CAP_IPC_LOCK or a larger RLIMIT_MEMLOCK; --no-mlock runs without)",
          std::strerror(errno));
      return false;
    }
  }
  if (prctl(PR_SET_IO_FLUSHER, 1, 0, 0, 0))
    HZ_WARN(
        "prctl(PR_SET_IO_FLUSHER): %s (needs CAP_SYS_RESOURCE): memory reclaim may wait for "
        "hzramd's own I/O",
        std::strerror(errno));
  const int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
  if (fd < 0 || write(fd, "-1000", 5) != 5)
    HZ_WARN("/proc/self/oom_score_adj: %s (needs CAP_SYS_RESOURCE): the OOM killer may pick hzramd",
            std::strerror(errno));
  if (fd >= 0) close(fd);
  if (!o.mlock) HZ_INFO("--no-mlock: memory not locked");
  return true;
}

// The main thread's fds: SIGTERM and SIGINT, read from a signalfd (every
// thread started after Open() has them blocked); the eventfd that tells
// the device loops to stop; the one that counts the loops that ended.
struct ControlFds {
  int sig = -1, stop = -1, done = -1;

  ~ControlFds() {
    for (int fd : {sig, stop, done})
      if (fd >= 0) close(fd);
  }
  // Returns false (logged) on failure.
  bool Open() {
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGTERM);
    sigaddset(&signals, SIGINT);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);
    sig = signalfd(-1, &signals, SFD_CLOEXEC);
    stop = eventfd(0, EFD_CLOEXEC);
    done = eventfd(0, EFD_CLOEXEC);
    if (sig >= 0 && stop >= 0 && done >= 0) return true;
    HZ_ERR("signalfd, eventfd: %s", std::strerror(errno));
    return false;
  }
};

void AddOne(int eventfd) {
  const std::uint64_t one = 1;
  if (write(eventfd, &one, sizeof(one)) < 0) HZ_ERR("eventfd: %s", std::strerror(errno));
}

// Attach: every device of @o with @attach, logged. Returns false (logged)
// when one cannot be; those attached already are in @served.
bool AttachAll(const Options& o, const Attacher& attach, const BatchEncoder& encoder, int stop_fd,
               ServedList* served) {
  for (unsigned device : o.devices) {
    AttachFailure f;
    auto io = attach(device, stop_fd, &f);
    if (!io) {
      HZ_ERR("%s", AttachErrorMessage(device, f).c_str());
      return false;
    }
    const Regions& r = io->regions();
    if (encoder.has_backend())
      HZ_INFO("hzram%u: attached: %u batches of up to %u pages; offload_timeout_ms %u, the "
              "backend's watchdog %.0f ms",
              device, r.info.nr_batches, r.info.batch_pages, r.offload_timeout_ms,
              WatchdogSeconds(r.offload_timeout_ms) * 1e3);
    else
      HZ_INFO("hzram%u: attached: %u batches of up to %u pages; offload_timeout_ms %u", device,
              r.info.nr_batches, r.info.batch_pages, r.offload_timeout_ms);
    served->push_back(std::make_unique<Served>());
    served->back()->io = std::move(io);
  }
  return true;
}

// systemd's watchdog (WatchdogSec= of the unit): WATCHDOG=1 every
// quarter of its time while every device's loop has beaten within half
// of it. A loop beats after each batch and each wait, every 50 ms while
// a batch waits for its turn at the encoder or for the backend (a wait
// the watchdog or the batch's latest start ends), and waits at most an
// eighth of the time while idle; one that hangs (in a batch's CPU work,
// in a call that never returns) stops the pings, and systemd restarts
// the daemon.
struct Watchdog {
  bool on = false;
  std::int64_t ns = 0;              // WatchdogSec=
  int poll_ms = kTimeoutRefreshMs;  // the main loop's longest sleep
  ServeOptions serve;               // the loops' longest idle wait

  Watchdog() {
    std::uint64_t us = 0;
    on = WatchdogEnabled(&us);
    if (!on) return;
    ns = static_cast<std::int64_t>(us) * 1000;
    serve.idle_wait_ms = static_cast<int>(std::clamp<std::uint64_t>(us / 8000, 1, 1000));
    poll_ms = static_cast<int>(std::clamp<std::uint64_t>(us / 4000, 1, kTimeoutRefreshMs));
    HZ_INFO("systemd's watchdog: %.3f s; WATCHDOG=1 while every device's loop is alive", us / 1e6);
    if (us < kMinWatchdogUs)
      HZ_WARN("systemd's watchdog: %.3f s is less than the %.0f s hzramd needs: a device's loop "
              "busy with a batch may be taken for stuck, and hzramd restarted",
              us / 1e6, kMinWatchdogUs / 1e6);
  }
};

// Start each device's loop on a thread of its own, which opens the
// device's queue (DeviceIo::OpenQueue(): the queue is driven by the
// thread that set it up), then serves it once every queue is open.
// Returns false (logged) if a queue cannot be opened: then no loop
// serves, and every thread has ended.
bool StartLoops(const ServedList& served, BatchEncoder& encoder, int done_fd,
                const ServeOptions& so) {
  std::promise<bool> go;
  const std::shared_future<bool> serve = go.get_future().share();
  bool ok = true;
  for (const auto& d : served) {
    Served* s = d.get();
    std::promise<int> opened;
    s->opened = opened.get_future();
    s->stats.alive_ns.store(MonotonicNs());
    try {
      s->thread = std::thread([s, &encoder, done_fd, so, serve, p = std::move(opened)]() mutable {
        p.set_value(s->io->OpenQueue());
        if (!serve.get()) return;
        s->result = ServeLent(*s->io, encoder, &s->stats, so);
        s->done.store(true);
        AddOne(done_fd);
      });
    } catch (const std::system_error& e) {
      // No thread (its stack, under mlockall, or a limit): those started
      // end without serving.
      HZ_ERR("device %u: cannot start its thread: %s", s->io->device(), e.what());
      ok = false;
      break;
    }
  }
  for (const auto& d : served) {
    if (!d->thread.joinable()) continue;
    const int err = d->opened.get();
    if (err) {
      HZ_ERR("%s", AttachErrorMessage(d->io->device(), {AttachFailure::kRing, -err, ""}).c_str());
      ok = false;
    }
  }
  go.set_value(ok);
  if (!ok)
    for (const auto& d : served)
      if (d->thread.joinable()) d->thread.join();
  return ok;
}

// Each device's offload_timeout_ms again: the module lets it change, and
// the device's loop takes the new value for its next batches.
void RefreshTimeouts(const ServedList& served, const BatchEncoder& encoder) {
  for (const auto& d : served) {
    if (d->done.load() || !d->io->RefreshTimeout()) continue;
    const std::uint32_t ms = d->io->offload_timeout_ms();
    if (encoder.has_backend())
      HZ_INFO("hzram%u: offload_timeout_ms is now %u, the backend's watchdog %.0f ms",
              d->io->device(), ms, WatchdogSeconds(ms) * 1e3);
    else
      HZ_INFO("hzram%u: offload_timeout_ms is now %u", d->io->device(), ms);
  }
}

// Whether every running loop beat within half of @watchdog_ns; a late one
// is named, once, and one that beats again too.
bool LoopsAlive(const ServedList& served, std::int64_t now, std::int64_t watchdog_ns) {
  bool alive = true;
  for (const auto& d : served) {
    if (d->done.load()) continue;
    const std::int64_t quiet = now - d->stats.alive_ns.load(std::memory_order_relaxed);
    if (quiet > watchdog_ns / 2) {
      alive = false;
      if (!d->stalled)
        HZ_WARN("hzram%u: its loop made no progress for %.1f s: systemd's watchdog is not told "
                "hzramd is alive",
                d->io->device(), quiet / 1e9);
      d->stalled = true;
    } else if (d->stalled) {
      d->stalled = false;
      HZ_INFO("hzram%u: its loop makes progress again", d->io->device());
    }
  }
  return alive;
}

// Supervise until every loop has ended: systemd's watchdog and STATUS=,
// the devices' offload_timeout_ms, and the stop (SIGTERM, SIGINT, or a
// loop that failed), which every loop is told of through @fds.stop.
void Supervise(const ServedList& served, const BatchEncoder& encoder, const ControlFds& fds,
               const Watchdog& watchdog) {
  bool stopping = false;
  auto stop = [&](const char* why) {
    if (stopping) return;
    stopping = true;
    HZ_INFO("%s: stopping", why);
    Notify("STOPPING=1\nSTATUS=stopping: committing the batches in hand");
    AddOne(fds.stop);
  };
  std::size_t running = served.size();
  std::int64_t last_status = MonotonicNs(), last_ping = 0, last_refresh = MonotonicNs();
  while (running) {
    pollfd p[2] = {{fds.sig, POLLIN, 0}, {fds.done, POLLIN, 0}};
    const int n = poll(p, 2, watchdog.poll_ms);
    if (n < 0 && errno != EINTR) {
      HZ_ERR("poll: %s", std::strerror(errno));
      stop("poll failed");
      break;
    }
    const std::int64_t now = MonotonicNs();
    if (watchdog.on && now - last_ping >= watchdog.ns / 4 && LoopsAlive(served, now, watchdog.ns)) {
      Notify("WATCHDOG=1");
      last_ping = now;
    }
    if (now - last_refresh >= std::int64_t{kTimeoutRefreshMs} * 1000000) {
      RefreshTimeouts(served, encoder);
      last_refresh = now;
    }
    if (!stopping && now - last_status >= std::int64_t{kStatusIntervalMs} * 1000000) {
      Notify("STATUS=" + StatusLine(served));
      last_status = now;
    }
    if (p[0].revents & POLLIN) {
      signalfd_siginfo si;
      if (read(fds.sig, &si, sizeof(si)) == sizeof(si))
        stop(strsignal(static_cast<int>(si.ssi_signo)));
    }
    if (p[1].revents & POLLIN) {
      std::uint64_t ended = 0;
      if (read(fds.done, &ended, sizeof(ended)) == sizeof(ended)) running -= ended;
      // A device whose queue failed stops them all: the daemon exits 1
      // and systemd starts it again.
      for (const auto& d : served)
        if (d->done.load() && d->result) stop("a device's queue failed");
    }
  }
}

// The summary: each loop joined, its figures logged and its device
// detached. Returns the exit status: 1 if a loop failed.
int Summary(const ServedList& served) {
  int status = 0;
  for (auto& d : served) {
    d->thread.join();
    status |= d->result != 0;
    const ServeStats& s = d->stats;
    HZ_INFO(
        "hzram%u: %llu batches, %llu pages, %llu bytes stored, %llu read batches, %llu pages "
        "decoded, %llu recompression batches, %llu pages recompressed, %llu not encoded, %llu "
        "stale, %llu commit errors",
        d->io->device(), static_cast<unsigned long long>(s.batches.load()),
        static_cast<unsigned long long>(s.pages.load()),
        static_cast<unsigned long long>(s.stored_bytes.load()),
        static_cast<unsigned long long>(s.read_batches.load()),
        static_cast<unsigned long long>(s.read_pages.load()),
        static_cast<unsigned long long>(s.recomp_batches.load()),
        static_cast<unsigned long long>(s.recomp_pages.load()),
        static_cast<unsigned long long>(s.not_encoded.load()),
        static_cast<unsigned long long>(s.stale.load()),
        static_cast<unsigned long long>(s.commit_errors.load()));
    d->io.reset();  // detaches: the kernel takes back what is still held
  }
  return status;
}

}  // namespace

int RunDaemon(const Options& o, const Attacher& attach, const EncoderMaker& make) {
  SetLogLevel(o.log_level);
  if (!StartUp(o)) return 1;
  ControlFds fds;
  if (!fds.Open()) return 1;

  std::string error;
  auto encoder = make ? make(o, &error) : MakeEncoder(o.backend, o.threads, &error);
  if (!encoder) {
    HZ_ERR("%s", error.c_str());
    return 1;
  }
  HZ_INFO("encoder: %s", encoder->Describe().c_str());

  ServedList served;
  if (!AttachAll(o, attach, *encoder, fds.stop, &served)) return 1;
  const Watchdog watchdog;
  if (!StartLoops(served, *encoder, fds.done, watchdog.serve)) return 1;

  std::string names;
  for (unsigned device : o.devices)
    names += (names.empty() ? "hzram" : ", hzram") + std::to_string(device);
  Notify("READY=1\nSTATUS=serving " + names + " (" + encoder->Describe() + ")");
  Supervise(served, *encoder, fds, watchdog);
  return Summary(served);
}

}  // namespace hzramd
