// port_process: deadlines on every wait, the whole group ended (grandchildren too), a bounded stderr tail.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

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
