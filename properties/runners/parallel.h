// Splitting the gate: worker processes on one machine (-j N) and shards across CI runners (--shard I/N).
#pragma once

#include <cstddef>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "properties/runners/gate.h"

namespace kvconform {

/// One cell of the matrix: a property of the implementation at `impl_index` of the selection.
struct gate_cell {
  std::size_t impl_index = 0;
  const implementation* impl = nullptr;
  const property* prop = nullptr;
};

/// Runs `run(cell, log)` for every cell, up to `jobs` at once, each in a forked worker process
/// (RapidCheck keeps its state in globals, so two properties cannot share a process), and returns
/// the reports in the cells' order, exactly as running them one by one gives. A worker's progress
/// lines reach `log` when its cell ends. A worker killed by a signal or exiting without a report
/// is its cell's failure; an exception in a worker is rethrown here. The stop rules of
/// properties/executor/stop.h hold in the workers: a SIGINT or SIGTERM this process gets is passed
/// on to every worker (each stops at its next op boundary: INTERRUPTED), and no cell starts once a
/// cell stopped for a signal or the run's deadline; the reports then end at the last cell started.
/// `cell_done`, if set, is called here (never in a worker) as each cell's report arrives.
using cell_runner = std::function<property_report(const gate_cell&, std::ostream&)>;
std::vector<property_report> run_cells_parallel(const std::vector<gate_cell>& cells, int jobs, const cell_runner& run,
                                                std::ostream& log, const std::function<void()>& cell_done = {});

/// CPUs this process may run on: the default of `gate -j`.
int available_cpus();

/// "I/N" with 0 <= I < N; nullopt for anything else.
std::optional<shard_spec> parse_shard(const std::string& text);
/// The shard GoogleTest's variables name (GTEST_SHARD_INDEX of GTEST_TOTAL_SHARDS), if both are
/// set; throws std::invalid_argument when they are malformed. Creates GTEST_SHARD_STATUS_FILE, if
/// set, to tell the runner that sharding is honoured.
std::optional<shard_spec> shard_from_environment();

/// A property report as text and back, exactly (doubles travel as their bits): what a worker sends.
std::string encode_report(const property_report& r);
property_report decode_report(const std::string& text);

}  // namespace kvconform
