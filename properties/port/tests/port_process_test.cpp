// port_process: deadlines on every wait, a signal's stop, the whole group ended (grandchildren and orphans
// too), a bounded stderr tail.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "properties/executor/stop.h"
#include "properties/port/orphans.h"
#include "properties/port/port_process.h"

namespace kv = kvconform;
using namespace std::chrono_literals;
using clock_type = kv::port_process::clock;

namespace {
kv::port_process shell(const std::string& script, std::chrono::milliseconds grace = 1000ms) {
  kv::port_process::options o;
  o.command = {"bash", "-c", script};
  o.grace = grace;
  return kv::port_process(o);
}

kv::port_io_error::cause cause_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const kv::port_io_error& e) {
    return e.why;
  }
  ADD_FAILURE() << "no port_io_error";
  return kv::port_io_error::cause::cannot_start;
}

/// A stop requested as SIGTERM would, forgotten at the end of the scope.
struct stop_after {
  std::thread signal;
  explicit stop_after(std::chrono::milliseconds delay)
      : signal([delay] { std::this_thread::sleep_for(delay), kv::request_stop(SIGTERM); }) {}
  ~stop_after() { signal.join(), kv::request_stop(0); }
};

bool gone(pid_t pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

std::string temp_path(const char* name) {
  return (std::filesystem::temp_directory_path() / (std::string(name) + "-" + std::to_string(::getpid()))).string();
}
}  // namespace

TEST(PortProcess, AnswersARequestAndEndsCleanlyOnEndOfInput) {
  const std::string log = temp_path("kvconform-port-eof");
  {
    kv::port_process p = shell("read -r l; echo \"got $l\"; cat >/dev/null; echo eof >" + log);
    p.write_line("hello\n", clock_type::now() + 5s);
    EXPECT_EQ(p.read_line(clock_type::now() + 5s), "got hello");
    const pid_t group = p.group();
    p.close();  // stdin closed first: the port sees its end of input and exits by itself
    EXPECT_FALSE(kv::process_group_alive(group));
  }
  std::ifstream in(log);
  std::string word;
  in >> word;
  EXPECT_EQ(word, "eof");  // it was not killed before it could finish
  std::filesystem::remove(log);
}

TEST(PortProcess, EveryWaitHasADeadline) {
  kv::port_process silent = shell("sleep 1000");
  const auto start = clock_type::now();
  EXPECT_EQ(cause_of([&] { silent.read_line(clock_type::now() + 200ms); }), kv::port_io_error::cause::timeout);
  // A port that does not read: a request larger than the pipe cannot be written.
  EXPECT_EQ(cause_of([&] { silent.write_line(std::string(1 << 20, 'x') + "\n", clock_type::now() + 200ms); }),
            kv::port_io_error::cause::timeout);
  EXPECT_LT(clock_type::now() - start, 5s);
}

TEST(PortProcess, AClosedStdoutIsSeenAtOnceEvenIfThePortRuns) {
  kv::port_process p = shell("exec >&-; sleep 1000");
  const auto start = clock_type::now();
  EXPECT_EQ(cause_of([&] { p.read_line(clock_type::now() + 10s); }), kv::port_io_error::cause::closed);
  EXPECT_LT(clock_type::now() - start, 5s);
  EXPECT_EQ(p.exit_status(50ms), "");  // still running
}

TEST(PortProcess, TheWholeGroupEndsWithTheGrandchildrenThatIgnoreSigterm) {
  kv::port_process p = shell("(trap '' TERM; sleep 1000) & trap '' TERM; sleep 1000", 200ms);
  const pid_t group = p.group();
  std::this_thread::sleep_for(100ms);  // the grandchild is started
  EXPECT_TRUE(kv::process_group_alive(group));
  const auto start = clock_type::now();
  p.kill();
  EXPECT_LT(clock_type::now() - start, 3s);  // TERM, 200 ms of grace, then KILL
  for (int i = 0; i < 100 && kv::process_group_alive(group); ++i) std::this_thread::sleep_for(10ms);
  EXPECT_FALSE(kv::process_group_alive(group));
}

TEST(PortProcess, StderrIsKeptAsABoundedTail) {
  kv::port_process p = shell("head -c 10000000 /dev/zero >&2; echo the end >&2; echo done; sleep 1000", 100ms);
  EXPECT_EQ(p.read_line(clock_type::now() + 30s), "done");
  std::this_thread::sleep_for(50ms);
  const std::string& tail = p.stderr_tail();
  EXPECT_LE(tail.size(), std::size_t{64} << 10);
  EXPECT_EQ(tail.substr(tail.size() - 8), "the end\n");
}

TEST(PortProcess, ExitStatusAndACommandThatCannotRun) {
  kv::port_process p = shell("exit 3");
  EXPECT_EQ(cause_of([&] { p.read_line(clock_type::now() + 5s); }), kv::port_io_error::cause::closed);
  EXPECT_EQ(p.exit_status(2000ms), "exit status 3");
  kv::port_process::options o;
  o.command = {"/nonexistent/port"};
  EXPECT_EQ(cause_of([&] { kv::port_process q(o); }), kv::port_io_error::cause::cannot_start);
}

TEST(PortProcess, ASignalEndsAWaitWithinItsShareOfTheSecond) {
  kv::port_process p = shell("sleep 1000", 1000ms);
  const auto start = clock_type::now();
  {
    stop_after stop(100ms);
    EXPECT_EQ(cause_of([&] { p.read_line(clock_type::now() + 60s); }), kv::port_io_error::cause::stopped);
    EXPECT_LT(clock_type::now() - start, 2s);  // 100 ms, then 300 ms for an answer in flight (a loaded machine: more)
  }
}

TEST(PortProcess, AnAnswerInFlightIsStillReadAfterTheSignal) {
  kv::port_process p = shell("read -r l; sleep 0.1; echo late; sleep 1000", 200ms);
  p.write_line("go\n", clock_type::now() + 5s);
  stop_after stop(0ms);
  EXPECT_EQ(p.read_line(clock_type::now() + 60s), "late");
}

TEST(PortProcess, AfterASignalAPortThatIgnoresSigtermEndsWithinTheSecond) {
  kv::port_process p = shell("trap '' TERM; sleep 1000", 5000ms);
  std::this_thread::sleep_for(100ms);  // the trap is set
  stop_after stop(0ms);
  std::this_thread::sleep_for(50ms);
  const auto start = clock_type::now();
  p.close();  // 600 ms; a grace of 5 s twice without the signal
  EXPECT_LT(clock_type::now() - start, 3s);
}

TEST(PortProcess, ProcessesInSessionsOfTheirOwnAreEndedAndReaped) {
  // One in a session of its own that the port is the parent of, one double-forked away (setsid -f)
  // that ignores SIGTERM: both are re-parented to the harness and ended after the port.
  kv::port_process p = shell(
      "setsid bash -c 'echo $$; exec sleep 1000' & "
      "setsid -f bash -c 'trap \"\" TERM; echo $$; exec sleep 1000'; exec sleep 1000",
      200ms);
  std::set<pid_t> escaped;
  for (int i = 0; i < 2; ++i) escaped.insert(std::stoi(p.read_line(clock_type::now() + 5s)));
  for (pid_t pid : escaped) {
    EXPECT_FALSE(gone(pid));
    EXPECT_NE(::getpgid(pid), p.group());  // out of reach of the group's signals
  }
  p.kill();
  for (pid_t pid : escaped) EXPECT_TRUE(gone(pid)) << pid;  // ended and reaped: not even a zombie
  bool child_left = false;
  kv::for_each_process([&](const kv::process_entry& e) { child_left = child_left || e.parent == ::getpid(); });
  EXPECT_FALSE(child_left);
}
