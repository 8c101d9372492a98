// A port's process: a command in its own process group, spoken to over pipes with a deadline on every wait.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace kvconform {

/// Why talking to a port process failed (docs/reliability.md, "Ports").
struct port_io_error : std::runtime_error {
  enum class cause {
    timeout,       ///< no progress before the deadline
    stopped,       ///< a signal asked the run to stop, and no answer came within the time left (stop_fd)
    closed,        ///< the port closed its stdout or its stdin (it exited, or stopped talking)
    too_long,      ///< an answer line past the limit
    cannot_start,  ///< the command could not be run at all
  };
  cause why;
  port_io_error(cause c, const std::string& what) : std::runtime_error(what), why(c) {}
};

/// One running port. It is started by posix_spawn in a process group of its own, with its stdin,
/// stdout and stderr on pipes. Every descriptor is non-blocking and every wait is a poll with a
/// deadline, so no port can block the harness: not one that stops reading its stdin, not one
/// that closes its stdout and keeps running, and a signal to the harness ends every wait within
/// 300 ms (stop_fd). Its stderr is drained during every wait into a tail of fixed size
/// (nothing on disk, no temporary file). The process and every process it started in its group
/// end together: SIGTERM, a grace period, then SIGKILL; then so do the processes it started in a
/// session or group of their own, re-parented to the harness (orphans.h).
class port_process {
 public:
  using clock = std::chrono::steady_clock;
  struct options {
    std::vector<std::string> command;                    ///< program and arguments
    std::size_t max_line_bytes = std::size_t{16} << 20;  ///< one answer line
    std::size_t stderr_tail_bytes = std::size_t{64} << 10;
    std::chrono::milliseconds grace{1000};  ///< between closing stdin, SIGTERM and SIGKILL
  };

  /// Starts the command; throws port_io_error (cannot_start) when it cannot be run.
  explicit port_process(options o);
  /// The clean end (close()).
  ~port_process();
  port_process(const port_process&) = delete;
  port_process& operator=(const port_process&) = delete;

  /// Writes `line` whole before `deadline`; throws port_io_error.
  void write_line(std::string_view line, clock::time_point deadline);
  /// The next line of stdout (without its newline), read before `deadline`; throws port_io_error.
  std::string read_line(clock::time_point deadline);

  /// The clean end: stdin closed, a grace period to exit, then the group gets SIGTERM, a grace
  /// period, then SIGKILL; the process is reaped, then its orphans are ended and reaped. After a
  /// signal's stop all of it takes at most a second. Does nothing the second time.
  void close();
  /// The end after a fault: the group gets SIGTERM at once, a grace period, then SIGKILL; then the orphans.
  void kill();
  /// Waits up to `wait` for the process to exit (without reaping it, so its group id stays its
  /// own); then "exit status N" or "signal N", or "" while it runs.
  std::string exit_status(std::chrono::milliseconds wait);
  /// The end of what the port wrote on its stderr (raw bytes, at most stderr_tail_bytes).
  const std::string& stderr_tail();
  /// The process group (the leader's pid), while the process runs.
  pid_t group() const { return pid_; }

 private:
  void end(bool gentle);
  bool wait_exit(std::chrono::milliseconds wait);
  void drain_stderr();
  /// Polls stdin (for writing), stdout and stderr until one is ready or `deadline`; throws on
  /// the deadline or a stop. Returns the revents of stdin and stdout.
  std::pair<short, short> wait(bool for_write, clock::time_point deadline);

  options options_;
  pid_t pid_ = -1;
  int to_child_ = -1, from_child_ = -1, errors_ = -1;
  std::string buffer_, tail_;
};

/// True while a process of group `group` other than a zombie exists (it reads /proc): the
/// test of a port that left a grandchild behind.
bool process_group_alive(pid_t group);

}  // namespace kvconform
