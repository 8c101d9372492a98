// Stopping a run early: the harness's own SIGINT/SIGTERM and the deadlines per property and per run.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>

namespace kvconform {

struct failure;

/// Why a run stops before its end (docs/reliability.md, "Signals" and "Deadlines").
enum class stop_reason { none, signal, property_deadline, run_deadline };

/// Installs SIGINT and SIGTERM handlers. The first signal asks the run to stop at the next op
/// boundary (every session step and every case's generation checks) and wakes every wait for a
/// port (stop_fd); a second one ends the process at once with 128 + the signal, after killing
/// every registered process group and removing the temporary file a write in progress holds.
void install_stop_handlers();
/// The signal that asked the run to stop (SIGINT, SIGTERM), or 0.
int stop_signal();
/// Asks the run to stop as the signal `sig` would (tests), or forgets the request (0).
void request_stop(int sig);

using deadline_clock = std::chrono::steady_clock;
/// A descriptor that becomes readable when a signal asks the run to stop (a pipe the handler
/// writes to) and stays so: a wait for a port polls it beside the port's pipes, so the stop is seen
/// at once, not at the end of the wait. -1 where no pipe can be made. A byte on it without
/// stop_signal() (a forked worker shares the pipe and got a signal of its own) asks nothing.
int stop_fd();
/// When this process first noticed that a signal asked the run to stop, or none: the start of the
/// one second within which a port is ended (docs/reliability.md §5).
std::optional<deadline_clock::time_point> stop_noticed();

/// The whole run's deadline (every thread), or none.
void set_run_deadline(std::optional<deadline_clock::time_point> at);
/// The deadline of the property the calling thread runs (a parallel gate sets one per worker), or none.
void set_property_deadline(std::optional<deadline_clock::time_point> at);
/// The earliest deadline in force for the calling thread.
std::optional<deadline_clock::time_point> next_deadline();

/// Why the calling thread should stop now, if it should.
stop_reason stop_requested();
/// The check name a session fails with when it stops for `r` ("interrupted", "deadline").
const char* stop_check(stop_reason r);
/// A message saying why, e.g. "interrupted by SIGTERM".
std::string describe(stop_reason r);
/// True for a failure that only records a stop: never a finding, never saved, never a kill. Also
/// "repeated": a port that failed the same way twice is not restarted again for the same property
/// (docs/port-protocol.md §10), so the failure found stands and shrinking ends.
bool stopped_early(const failure& f);
/// Whether a session of the calling thread stopped early since the last call; resets it (the gate
/// asks after each property, so a property that ended just as its deadline passed is not cut).
bool take_stop_seen();
/// Records that a session of the calling thread stopped early (the executor calls it).
void note_stop_seen();

/// Process groups (ports) to kill with SIGKILL if a second signal ends the process at once.
void register_process_group(pid_t group);
void unregister_process_group(pid_t group);
/// Whether `group` is registered: the leader of a port that runs.
bool registered_process_group(pid_t group);

}  // namespace kvconform
