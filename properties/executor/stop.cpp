// Stop requests from signals and deadlines, read at every op boundary; the second signal ends the process at once.
#include "properties/executor/stop.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <utility>

#include "properties/executor/executor.h"
#include "properties/trace/file_io.h"

namespace kvconform {

namespace {
std::atomic<int> signal_seen{0};
std::atomic<deadline_clock::rep> run_deadline{0};  // 0: none
thread_local std::optional<deadline_clock::time_point> property_deadline;
thread_local bool stop_seen = false;
std::atomic<deadline_clock::rep> noticed_at{0};  // 0: not yet
std::array<std::atomic<pid_t>, 64> groups{};     // 0: a free slot
std::atomic<int> wake_read{-1}, wake_write{-1};  // the self-pipe stop_fd() reads

/// Makes the self-pipe once (non-blocking, close-on-exec: no port inherits it).
void make_wake_pipe() {
  static const bool made = [] {
    int p[2];
    if (::pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0) return false;
    wake_read = p[0], wake_write = p[1];
    return true;
  }();
  (void)made;
}

/// One byte on the self-pipe; only async-signal-safe calls (the handler makes it).
void wake() {
  static const char byte = 's';
  if (const int fd = wake_write.load(); fd >= 0) {
    [[maybe_unused]] const auto n = ::write(fd, &byte, 1);
  }
}

void on_signal(int sig) {
  int none = 0;
  if (signal_seen.compare_exchange_strong(none, sig)) {
    wake();
    static const char note[] = "\nkvconform: stopping at the next op boundary (signal again to stop at once)\n";
    [[maybe_unused]] const auto n = ::write(2, note, sizeof note - 1);
    return;
  }
  for (auto& g : groups)
    if (const pid_t p = g.load(); p > 0) ::kill(-p, SIGKILL);
  remove_pending_temporary();
  ::_exit(128 + sig);
}
}  // namespace

void install_stop_handlers() {
  make_wake_pipe();  // before the handlers: a signal right after them must find it
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a wait for a port returns EINTR and sees the request
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
}

int stop_signal() { return signal_seen.load(); }

void request_stop(int sig) {
  make_wake_pipe();
  signal_seen = sig;
  if (sig != 0) return wake();
  noticed_at = 0;
  char drained[64];
  if (const int fd = wake_read.load(); fd >= 0)
    while (::read(fd, drained, sizeof drained) > 0) {}
}

int stop_fd() {
  make_wake_pipe();
  return wake_read.load();
}

std::optional<deadline_clock::time_point> stop_noticed() {
  if (signal_seen.load() == 0) return std::nullopt;
  auto at = noticed_at.load();
  if (at == 0) {
    const auto now = std::max<deadline_clock::rep>(1, deadline_clock::now().time_since_epoch().count());
    if (noticed_at.compare_exchange_strong(at, now)) at = now;  // else `at` is the first caller's
  }
  return deadline_clock::time_point{deadline_clock::duration(at)};
}

void set_run_deadline(std::optional<deadline_clock::time_point> at) {
  run_deadline = at ? std::max<deadline_clock::rep>(1, at->time_since_epoch().count()) : 0;
}
void set_property_deadline(std::optional<deadline_clock::time_point> at) { property_deadline = at; }

std::optional<deadline_clock::time_point> next_deadline() {
  std::optional<deadline_clock::time_point> at = property_deadline;
  if (const auto r = run_deadline.load(); r != 0) {
    const deadline_clock::time_point run{deadline_clock::duration(r)};
    if (!at || run < *at) at = run;
  }
  return at;
}

stop_reason stop_requested() {
  if (signal_seen.load() != 0) {
    stop_noticed();  // the one second to end the ports starts here at the latest
    return stop_reason::signal;
  }
  const auto now = deadline_clock::now();
  if (const auto r = run_deadline.load(); r != 0 && now >= deadline_clock::time_point{deadline_clock::duration(r)})
    return stop_reason::run_deadline;
  if (property_deadline && now >= *property_deadline) return stop_reason::property_deadline;
  return stop_reason::none;
}

const char* stop_check(stop_reason r) { return r == stop_reason::signal ? "interrupted" : "deadline"; }

std::string describe(stop_reason r) {
  switch (r) {
    case stop_reason::none: return "";
    case stop_reason::signal: return std::string("interrupted by ") + (stop_signal() == SIGINT ? "SIGINT" : "SIGTERM");
    case stop_reason::property_deadline: return "the property's deadline passed (--deadline-s)";
    case stop_reason::run_deadline: return "the run's deadline passed (--run-deadline-s)";
  }
  return "";
}

bool stopped_early(const failure& f) {
  return f.check == "interrupted" || f.check == "deadline" || f.check == "repeated";
}
bool take_stop_seen() { return std::exchange(stop_seen, false); }
void note_stop_seen() { stop_seen = true; }

void register_process_group(pid_t group) {
  for (auto& g : groups) {
    pid_t free = 0;
    if (g.compare_exchange_strong(free, group)) return;
  }
}

void unregister_process_group(pid_t group) {
  for (auto& g : groups) {
    pid_t mine = group;
    if (g.compare_exchange_strong(mine, 0)) return;
  }
}

bool registered_process_group(pid_t group) {
  return std::any_of(groups.begin(), groups.end(), [group](const std::atomic<pid_t>& g) { return g.load() == group; });
}

}  // namespace kvconform
