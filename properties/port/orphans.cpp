// The harness as a child subreaper: the processes a port moved out of its group are re-parented to it, then ended.
#include "properties/port/orphans.h"

#include <dirent.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "properties/executor/stop.h"  // registered_process_group

namespace kvconform {

namespace {
std::atomic<bool> subreaper{false};
}  // namespace

void for_each_process(const std::function<void(const process_entry&)>& f) {
  DIR* proc = ::opendir("/proc");
  if (!proc) return;
  while (const dirent* e = ::readdir(proc)) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
    std::ifstream stat(std::string("/proc/") + e->d_name + "/stat");
    std::string line;
    std::getline(stat, line);
    const auto paren = line.rfind(')');  // the command name may hold spaces and parentheses
    if (paren == std::string::npos) continue;
    char state = 0;
    long pid = 0, parent = 0, group = 0;
    if (std::sscanf(line.c_str(), "%ld", &pid) != 1 ||
        std::sscanf(line.c_str() + paren + 1, " %c %ld %ld", &state, &parent, &group) != 3)
      continue;
    f({static_cast<pid_t>(pid), static_cast<pid_t>(parent), static_cast<pid_t>(group), state == 'Z' || state == 'X'});
  }
  ::closedir(proc);
}

bool adopt_orphans() {
  if (!subreaper.load() && ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0) subreaper = true;
  return subreaper.load();
}

void end_orphans(std::chrono::steady_clock::time_point term_until, std::chrono::milliseconds kill_wait) {
  if (!subreaper.load()) return;
  using clock = std::chrono::steady_clock;
  const pid_t self = ::getpid();
  std::set<pid_t> termed;
  std::optional<clock::time_point> give_up;  // kill_wait after the first SIGKILL
  for (;;) {
    std::vector<process_entry> orphans;
    for_each_process([&](const process_entry& e) {
      if (e.parent == self && !registered_process_group(e.pid)) orphans.push_back(e);
    });
    if (orphans.empty()) return;
    const auto now = clock::now();
    if (give_up && now >= *give_up) return;
    const bool kill = now >= term_until;
    if (kill && !give_up) give_up = now + kill_wait;
    for (const process_entry& o : orphans) {
      if (o.exited) {
        ::waitpid(o.pid, nullptr, WNOHANG);  // our own child: its pid cannot be reused before this
        continue;
      }
      if (!kill && !termed.insert(o.pid).second) continue;  // SIGTERM once, SIGKILL until it goes
      const int sig = kill ? SIGKILL : SIGTERM;
      if (o.group == o.pid) ::kill(-o.pid, sig);  // what it started in its own group or session
      ::kill(o.pid, sig);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace kvconform
