// Worker processes for the gate's cells, the shard convention, and the report encoding between them.
#include "properties/runners/parallel.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "properties/executor/stop.h"
#include "properties/trace/trace_json.h"

namespace kvconform {

namespace {
using json = nlohmann::json;

std::uint64_t bits(double x) { return std::bit_cast<std::uint64_t>(x); }
double from_bits(const json& j) { return std::bit_cast<double>(j.get<std::uint64_t>()); }

/// Every figure of the stats, doubles by their bits, so that -j N reports what -j 1 does.
json encode_stats(const decode_stats& s) {
  return {s.decodes, s.numeric, bits(s.worst_ratio), s.end_to_end, bits(s.worst_end_to_end), s.ratios.counts};
}
decode_stats decode_stats_of(const json& j) {
  decode_stats s;
  s.decodes = j[0], s.numeric = j[1], s.worst_ratio = from_bits(j[2]), s.end_to_end = j[3];
  s.worst_end_to_end = from_bits(j[4]), s.ratios.counts = j[5];
  return s;
}

/// A worker: its cell, its pipe, what it has written so far.
struct worker {
  std::size_t cell = 0;
  pid_t pid = -1;
  int fd = -1;
  std::string received;
};

/// Writes all of `text` to `fd`, retrying short writes.
void write_all(int fd, const std::string& text) {
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

/// In the child: runs the cell and sends {"report", "log"} or {"error"}; never returns. The worker
/// leads its own process group, so that a terminal's Ctrl-C reaches only the parent, which passes
/// it on once (twice would end the worker at once); it gets SIGTERM when the parent dies, so that
/// it stops at its next op boundary, or at once after a signal the parent passed on.
[[noreturn]] void work(const gate_cell& cell, int fd, const cell_runner& run, pid_t parent) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != parent) std::_Exit(1);  // the parent died before PR_SET_PDEATHSIG took effect
  std::ostringstream log;
  json out;
  try {
    out = {{"report", encode_report(run(cell, log))}};
  } catch (const std::exception& e) {
    out = {{"error", e.what()}};
  }
  out["log"] = log.str();
  write_all(fd, out.dump());
  ::close(fd);
  std::_Exit(0);  // no destructors or atexit handlers: they belong to the parent
}

worker start(std::size_t index, const gate_cell& cell, const cell_runner& run) {
  int fds[2];  // close-on-exec: a port the worker starts must not hold the pipe open
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("gate -j: pipe: ") + std::strerror(errno));
  std::cout.flush(), std::cerr.flush();  // the child must not inherit pending output and print it twice
  const pid_t parent = ::getpid(), pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("gate -j: fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::close(fds[0]);
    work(cell, fds[1], run, parent);
  }
  ::close(fds[1]);
  return {index, pid, fds[0], {}};
}

/// The report of a worker that ended: its own; INTERRUPTED if a signal the run was stopped by
/// ended it first; otherwise a failure saying how it died.
property_report finish(worker& w, const gate_cell& cell, std::ostream& log) {
  int how = 0;
  while (::waitpid(w.pid, &how, 0) < 0 && errno == EINTR) {}
  ::close(w.fd);
  json got;
  try {
    got = json::parse(w.received);
  } catch (const std::exception&) {
    property_report died;
    died.property = cell.prop->name;
    const int sig = WIFSIGNALED(how) ? WTERMSIG(how) : 0;
    if (stop_signal() != 0) {  // ended by the signal passed on (a second one ends a worker at once)
      died.result = status::interrupted, died.message = died.stopped = describe(stop_reason::signal);
    } else {
      died.result = status::fail;
      died.message =
          sig ? "the worker running this property died of signal " + std::to_string(sig) + " (" + strsignal(sig) + ")"
              : "the worker running this property exited without a report";
    }
    log << "  " << cell.impl->name << " / " << died.property << ": " << died.message << "\n";
    return died;
  }
  log << got.value("log", "");
  if (got.contains("error")) throw std::runtime_error(got["error"].get<std::string>());
  return decode_report(got["report"].get<std::string>());
}

/// Reads what is ready on each worker's pipe, waiting at most a tenth of a second (or until a
/// signal) so that a stop request is seen; returns the workers that reached end of file.
std::vector<std::size_t> drain(std::vector<worker>& running) {
  std::vector<pollfd> fds;
  for (const worker& w : running) fds.push_back({w.fd, POLLIN, 0});
  if (::poll(fds.data(), fds.size(), 100) < 0) {
    if (errno == EINTR) return {};
    throw std::runtime_error(std::string("gate -j: poll: ") + std::strerror(errno));
  }
  std::vector<std::size_t> ended;
  for (std::size_t i = 0; i < running.size(); ++i) {
    if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    char buf[65536];
    const ssize_t n = ::read(running[i].fd, buf, sizeof buf);
    if (n > 0)
      running[i].received.append(buf, static_cast<std::size_t>(n));
    else if (n == 0 || errno != EINTR)
      ended.push_back(i);
  }
  return ended;
}
}  // namespace

std::vector<property_report> run_cells_parallel(const std::vector<gate_cell>& cells, int jobs, const cell_runner& run,
                                                std::ostream& log, const std::function<void()>& cell_done) {
  std::vector<property_report> reports(cells.size());
  std::vector<worker> running;
  std::size_t next = 0;
  bool stopping = false, passed_on = false;  // no cell starts once a signal or the run's deadline stops one
  try {
    while ((!stopping && next < cells.size()) || !running.empty()) {
      while (!stopping && next < cells.size() && running.size() < static_cast<std::size_t>(jobs))
        running.push_back(start(next, cells[next], run)), ++next;
      const std::vector<std::size_t> ended = drain(running);
      if (const int sig = stop_signal(); sig != 0 && !passed_on) {
        for (const worker& w : running) ::kill(w.pid, sig);
        stopping = passed_on = true;
      }
      for (auto it = ended.rbegin(); it != ended.rend(); ++it) {
        worker w = std::move(running[*it]);
        running.erase(running.begin() + static_cast<std::ptrdiff_t>(*it));
        reports[w.cell] = finish(w, cells[w.cell], log);
        if (cell_done) cell_done();
        stopping = stopping || !reports[w.cell].stopped.empty();
      }
    }
  } catch (...) {
    for (worker& w : running) ::kill(w.pid, SIGKILL), ::waitpid(w.pid, nullptr, 0), ::close(w.fd);
    throw;
  }
  reports.resize(next);  // the cells never started are not in the matrix
  return reports;
}

int available_cpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

std::optional<shard_spec> parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  auto number = [](const std::string& s) -> std::optional<std::size_t> {
    if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
    return std::stoul(s);
  };
  if (slash == std::string::npos) return std::nullopt;
  const auto index = number(text.substr(0, slash)), count = number(text.substr(slash + 1));
  if (!index || !count || *count == 0 || *index >= *count) return std::nullopt;
  return shard_spec{*index, *count};
}

std::optional<shard_spec> shard_from_environment() {
  const char* total = std::getenv("GTEST_TOTAL_SHARDS");
  const char* index = std::getenv("GTEST_SHARD_INDEX");
  if (!total || !index) return std::nullopt;
  const auto shard = parse_shard(std::string(index) + "/" + total);
  if (!shard)
    throw std::invalid_argument(std::string("GTEST_SHARD_INDEX=") + index + " and GTEST_TOTAL_SHARDS=" + total +
                                " do not name a shard (0 <= index < total)");
  if (const char* status = std::getenv("GTEST_SHARD_STATUS_FILE"); status && *status) std::ofstream{status};
  return shard;
}

std::string encode_report(const property_report& r) {
  json j = {{"property", r.property},
            {"result", static_cast<int>(r.result)},
            {"cases", r.cases},
            {"stats", encode_stats(r.stats)},
            {"message", r.message},
            {"saved_path", r.saved_path},
            {"replay", r.replay},
            {"source", r.source},
            {"save_error", r.save_error},
            {"stopped", r.stopped},
            {"seconds", bits(r.seconds)},
            {"search_cases", r.search_cases},
            {"search_stats", encode_stats(r.search_stats)},
            {"skipped", r.skipped}};
  j["coverage"] = {{"traces", r.coverage.traces}, {"hits", r.coverage.hits}};
  j["ratios"] = json::object();
  for (const auto& [label, h] : r.ratios) j["ratios"][label] = h.counts;
  if (r.fail)
    j["fail"] = {{"op_index", r.fail->op_index},
                 {"op_name", r.fail->op_name},
                 {"check", r.fail->check},
                 {"message", r.fail->message}};
  if (r.counterexample) j["counterexample"] = to_json(*r.counterexample, -1);
  return j.dump();
}

property_report decode_report(const std::string& text) {
  const json j = json::parse(text);
  property_report r;
  r.property = j["property"], r.result = static_cast<status>(j["result"].get<int>()), r.cases = j["cases"];
  r.stats = decode_stats_of(j["stats"]), r.search_cases = j["search_cases"],
  r.search_stats = decode_stats_of(j["search_stats"]);
  r.message = j["message"], r.saved_path = j["saved_path"], r.replay = j["replay"], r.source = j["source"];
  r.save_error = j["save_error"], r.stopped = j["stopped"], r.skipped = j["skipped"];
  r.seconds = from_bits(j["seconds"]);
  r.coverage.traces = j["coverage"]["traces"], r.coverage.hits = j["coverage"]["hits"].get<std::vector<std::size_t>>();
  for (const auto& [label, counts] : j["ratios"].items()) r.ratios[label].counts = counts;
  if (j.contains("fail"))
    r.fail = failure{j["fail"]["op_index"], j["fail"]["op_name"], j["fail"]["check"], j["fail"]["message"]};
  if (j.contains("counterexample")) r.counterexample = trace_from_json(j["counterexample"].get<std::string>());
  return r;
}

}  // namespace kvconform
