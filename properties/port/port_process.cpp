// The port's process: spawned in its own group, non-blocking pipes polled with deadlines, ended TERM, grace, KILL.
#include "properties/port/port_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "properties/executor/stop.h"  // register_process_group, stop_fd
#include "properties/port/orphans.h"

extern char** environ;

namespace kvconform {

namespace {
using std::chrono::milliseconds;

/// A pipe whose ends are at descriptor 3 or above (so that dup2 onto 0, 1 or 2 always moves
/// them) and close on exec.
std::pair<int, int> make_pipe() {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) throw port_io_error(port_io_error::cause::cannot_start, "cannot create pipes");
  for (int& fd : p)
    if (fd < 3) {
      const int high = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
      ::close(fd);
      fd = high;
    }
  return {p[0], p[1]};
}

void non_blocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

/// Once a signal asks the run to stop, a port's waits end within one second of it, whatever
/// --timeout-ms (docs/reliability.md §5): an answer in flight and the `close` requests get until
/// 300 ms after it, the exit at end of input until 400 ms, the group's and its orphans' end after
/// SIGTERM until 600 ms; then SIGKILL.
constexpr milliseconds stop_requests{300}, stop_exit{400}, stop_term{600};

/// `t`, or `after` past the stop's notice when that comes first.
port_process::clock::time_point stop_limit(port_process::clock::time_point t, milliseconds after) {
  const auto noticed = stop_noticed();
  return noticed && *noticed + after < t ? *noticed + after : t;
}

/// Milliseconds to `deadline`, rounded up so that a poll never wakes before it.
int millis_until(port_process::clock::time_point deadline) {
  const auto left = std::chrono::ceil<milliseconds>(deadline - port_process::clock::now()).count();
  return left <= 0 ? 0 : left > 1000000 ? 1000000 : static_cast<int>(left);
}

/// posix_spawn with the port's process group, default signal dispositions and its pipes.
pid_t spawn(const std::vector<std::string>& command, int in, int out, int err) {
  posix_spawn_file_actions_t files;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_adddup2(&files, in, 0);
  posix_spawn_file_actions_adddup2(&files, out, 1);
  posix_spawn_file_actions_adddup2(&files, err, 2);
  posix_spawnattr_init(&attr);
  sigset_t defaults, none;
  sigemptyset(&defaults), sigemptyset(&none);
  for (int sig : {SIGPIPE, SIGXFSZ, SIGINT, SIGTERM}) sigaddset(&defaults, sig);  // the harness ignores or catches them
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  std::vector<char*> argv;
  for (const std::string& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  adopt_orphans();  // before the port starts: whatever it leaves in a session of its own comes back to us
  const int e = posix_spawnp(&pid, argv[0], &files, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&files);
  posix_spawnattr_destroy(&attr);
  if (e != 0)
    throw port_io_error(port_io_error::cause::cannot_start, "cannot run " + command[0] + ": " + std::strerror(e));
  return pid;
}
}  // namespace

port_process::port_process(options o) : options_(std::move(o)) {
  if (options_.command.empty()) throw port_io_error(port_io_error::cause::cannot_start, "no command to run");
  const auto [in_read, in_write] = make_pipe();
  const auto [out_read, out_write] = make_pipe();
  const auto [err_read, err_write] = make_pipe();
  try {
    pid_ = spawn(options_.command, in_read, out_write, err_write);
  } catch (...) {
    for (int fd : {in_read, in_write, out_read, out_write, err_read, err_write}) ::close(fd);
    throw;
  }
  register_process_group(pid_);
  for (int fd : {in_read, out_write, err_write}) ::close(fd);
  to_child_ = in_write, from_child_ = out_read, errors_ = err_read;
  for (int fd : {to_child_, from_child_, errors_}) non_blocking(fd);
}

port_process::~port_process() { close(); }

std::pair<short, short> port_process::wait(bool for_write, clock::time_point deadline) {
  int stop = stop_fd();
  for (;;) {
    // A signal to the harness wakes the poll through stop_fd: the wait then ends within
    // stop_requests of it, so an answer already on its way is still read and the port can be
    // ended cleanly, and one that is not comes no later than that.
    const clock::time_point until = stop_limit(deadline, stop_requests);
    pollfd p[4] = {{for_write ? to_child_ : -1, POLLOUT, 0},
                   {for_write ? -1 : from_child_, POLLIN, 0},
                   {errors_, POLLIN, 0},
                   {stop, POLLIN, 0}};
    const int ready = ::poll(p, 4, millis_until(until));
    if (ready < 0 && errno != EINTR) throw port_io_error(port_io_error::cause::closed, std::strerror(errno));
    if (ready == 0 && clock::now() >= until)  // a poll waits 1000 s at most: a longer limit polls again
      throw port_io_error(until < deadline ? port_io_error::cause::stopped : port_io_error::cause::timeout,
                          for_write ? "did not read the request" : "did not answer");
    if (ready <= 0) continue;
    if (p[3].revents) stop = -1;  // seen: stop_limit has it from now on (a byte with no stop asks nothing)
    if (p[2].revents) drain_stderr();
    if (p[0].revents || p[1].revents) return {p[0].revents, p[1].revents};
  }
}

void port_process::write_line(std::string_view line, clock::time_point deadline) {
  for (std::size_t at = 0; at < line.size();) {
    if (to_child_ < 0) throw port_io_error(port_io_error::cause::closed, "the port's stdin is closed");
    const ssize_t n = ::write(to_child_, line.data() + at, line.size() - at);
    if (n > 0) {
      at += static_cast<std::size_t>(n);
    } else if (n < 0 && errno == EAGAIN) {
      if (wait(true, deadline).first & (POLLERR | POLLHUP))
        throw port_io_error(port_io_error::cause::closed, "the port closed its stdin");
    } else if (!(n < 0 && errno == EINTR)) {
      throw port_io_error(port_io_error::cause::closed, "the port closed its stdin");
    }
  }
}

std::string port_process::read_line(clock::time_point deadline) {
  char chunk[65536];
  for (;;) {
    if (const auto nl = buffer_.find('\n'); nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return line;
    }
    if (buffer_.size() > options_.max_line_bytes)
      throw port_io_error(port_io_error::cause::too_long,
                          "an answer longer than " + std::to_string(options_.max_line_bytes) + " bytes");
    const ssize_t n = from_child_ < 0 ? 0 : ::read(from_child_, chunk, sizeof chunk);
    if (n > 0)
      buffer_.append(chunk, static_cast<std::size_t>(n));
    else if (n == 0)
      throw port_io_error(port_io_error::cause::closed, "the port closed its stdout");
    else if (errno == EAGAIN)
      wait(false, deadline);
    else if (errno != EINTR)
      throw port_io_error(port_io_error::cause::closed, std::strerror(errno));
  }
}

void port_process::drain_stderr() {
  char chunk[65536];
  // A bounded number of reads: a grandchild that writes forever cannot keep the harness here.
  for (int reads = 0; errors_ >= 0 && reads < 64; ++reads) {
    const ssize_t n = ::read(errors_, chunk, sizeof chunk);
    if (n == 0) return close_fd(errors_);
    if (n < 0) return;
    tail_.append(chunk, static_cast<std::size_t>(n));
    if (tail_.size() > 2 * options_.stderr_tail_bytes) tail_.erase(0, tail_.size() - options_.stderr_tail_bytes);
  }
}

const std::string& port_process::stderr_tail() {
  drain_stderr();
  if (tail_.size() > options_.stderr_tail_bytes) tail_.erase(0, tail_.size() - options_.stderr_tail_bytes);
  return tail_;
}

bool port_process::wait_exit(milliseconds wait) {
  const auto until = clock::now() + wait;
  for (;;) {
    const auto limit = stop_limit(until, stop_exit);
    siginfo_t info{};
    // WNOWAIT: the exited leader stays a zombie, so its group id is not reused while it is signalled.
    if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid_)
      return true;
    if (clock::now() >= limit) return false;
    std::this_thread::sleep_for(milliseconds(5));
  }
}

std::string port_process::exit_status(milliseconds wait) {
  if (pid_ <= 0 || !wait_exit(wait)) return "";
  siginfo_t info{};
  ::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT);
  return info.si_code == CLD_EXITED ? "exit status " + std::to_string(info.si_status)
                                    : "signal " + std::to_string(info.si_status);
}

void port_process::end(bool gentle) {
  if (pid_ <= 0) return;
  close_fd(to_child_);  // end of input: a well-behaved port exits on it
  if (gentle) wait_exit(options_.grace);
  ::kill(-pid_, SIGTERM);  // the whole group: the port and whatever it started
  const auto term_until = clock::now() + options_.grace;
  while (process_group_alive(pid_) && clock::now() < stop_limit(term_until, stop_term))
    std::this_thread::sleep_for(milliseconds(5));
  ::kill(-pid_, SIGKILL);
  drain_stderr();
  ::waitpid(pid_, nullptr, 0);
  unregister_process_group(pid_);
  pid_ = -1;
  close_fd(from_child_), close_fd(errors_);
  // What it started in a session or group of its own was re-parented to the harness when its
  // parent ended (orphans.h): SIGTERM, the grace period, SIGKILL, as for the group.
  end_orphans(stop_limit(clock::now() + options_.grace, stop_term), options_.grace);
}

void port_process::close() { end(true); }
void port_process::kill() { end(false); }

bool process_group_alive(pid_t group) {
  bool alive = false;
  for_each_process([&](const process_entry& e) { alive = alive || (e.group == group && !e.exited); });
  return alive;
}

}  // namespace kvconform
