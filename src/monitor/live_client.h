// The monitor's side of the live channel (layout and protocol:
// src/sdk/live_channel.h, docs/monitor.md): creates the segment of a pid,
// waits for the process's SDK to map it, reads its records, sends commands.
#ifndef AIPROF_SRC_MONITOR_LIVE_CLIENT_H_
#define AIPROF_SRC_MONITOR_LIVE_CLIENT_H_

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "src/base/status.h"
#include "src/sdk/live_channel.h"

namespace aiprof {

// Why `pid`'s SDK did not attach, from what /proc shows of it: its
// environment (AIPROF_LIVE=0, ...), which of aiprof's files it mapped,
// whether it is a Python process. For the attach time-out's message.
std::string WhyNotAttached(int pid);

class LiveClient {
 public:
  // Creates /dev/shm/aiprof-live-<pid> (a segment left by a monitor that
  // died is replaced; one of a live monitor is an error).
  static StatusOr<std::unique_ptr<LiveClient>> Create(int pid);
  ~LiveClient();  // tells the SDK to detach and removes the segment
  LiveClient(const LiveClient&) = delete;
  LiveClient& operator=(const LiveClient&) = delete;

  // Waits until the SDK maps the segment; `alive` false stops waiting.
  Status WaitAttached(int64_t timeout_ns, const std::function<bool()>& alive);
  bool attached() const;

  // Reads the records published since the last call.
  template <typename F>
  uint64_t Drain(F&& on_record) {
    return live::Drain(header_, &reader_, on_record);
  }
  uint64_t lost() const { return reader_.lost; }
  // The counter name of a record's aux index ("" when unknown). A name the
  // SDK had to cut (longer than 59 bytes) is its first 59 bytes and
  // "~<index>", so that two names that differ past the cut stay apart.
  std::string CounterName(uint32_t index) const;
  // Whether the name at `index` was cut.
  bool CounterNameCut(uint32_t index) const;
  // Counter samples the SDK could not send: their name found no slot.
  uint64_t counter_samples_dropped() const;
  // Tells the SDK the monitor is alive (every interval).
  void Heartbeat();
  // Runs `command` (with `path`) in the process and waits for its answer,
  // at most `timeout_ns` and while `cancelled` (if given) says false.
  // Thread-safe: one command at a time.
  Status RunCommand(live::Command command, const std::string& path, int64_t timeout_ns,
                    const std::function<bool()>& cancelled = nullptr);
  std::string sdk_mode() const;
  // Whether the process registered a framework layer (the Python SDK).
  bool framework_available() const;
  std::string sdk_output_path() const;
  // The signal the SDK saw killing the process (0: none), live_channel.h.
  int fatal_signal() const;
  const std::string& segment_path() const { return path_; }
  // Whether the segment's file is gone from /dev/shm or is another one (a
  // cleaner, or systemd's RemoveIPC=, removed it): the SDK then detaches,
  // and this channel hears nothing more. A new LiveClient restores it.
  bool SegmentGone() const;

 private:
  LiveClient(int pid, std::string path, live::Header* header, ino_t ino)
      : pid_(pid), path_(std::move(path)), header_(header), ino_(ino) {}
  int pid_;
  std::string path_;
  live::Header* header_;
  ino_t ino_;  // the segment file's
  live::ReaderState reader_;
  std::mutex command_mu_;
};

}  // namespace aiprof

#endif  // AIPROF_SRC_MONITOR_LIVE_CLIENT_H_
