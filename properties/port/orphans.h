// The processes a port leaves outside its process group: re-parented to the harness, then ended and reaped.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>

namespace kvconform {

/// What the harness reads of a process in /proc/PID/stat.
struct process_entry {
  pid_t pid = 0, parent = 0, group = 0;
  bool exited = false;  ///< a zombie (or dead): nothing left to signal, only to reap
};
/// Calls `f` for every process /proc lists.
void for_each_process(const std::function<void(const process_entry&)>& f);

/// Makes this process a child subreaper (prctl PR_SET_CHILD_SUBREAPER), once: a process a port
/// started in a session or process group of its own is re-parented to the harness, not to init,
/// when its parent ends, so end_orphans can reach it (docs/reliability.md §3). Returns whether the
/// system allows it.
bool adopt_orphans();

/// Ends and reaps the processes re-parented to this process: its children that no running port
/// leads (a port is registered with register_process_group while it runs). Each gets SIGTERM (its
/// process group too, when it leads one), and from `term_until` on SIGKILL, until none is left or
/// `kill_wait` has passed since the first SIGKILL (a process in an uninterruptible sleep may
/// outlast it). Every child is waited for by its own pid, never with waitpid(-1). Does nothing
/// unless adopt_orphans() succeeded: a process that starts no port (the gate and its workers) is
/// never a subreaper, and only a process that runs ports calls this.
void end_orphans(std::chrono::steady_clock::time_point term_until, std::chrono::milliseconds kill_wait);

}  // namespace kvconform
