// The executor: runs each op on the model and the implementation and compares everything.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "oracle/models/model.h"
#include "properties/executor/coverage.h"
#include "properties/executor/format_check.h"
#include "properties/executor/ratio_histogram.h"
#include "properties/executor/subject.h"
#include "properties/trace/trace.h"

namespace kvconform {

/// Where and how a run diverged. `check` is a stable name (outcome, state, input-modified,
/// stray-write, exception, not-supported, preemption, decode-shape, decode-finite, decode-bound, decode-weights,
/// decode-masked, pinned) so that equal bugs give equal signatures.
struct failure {
  std::size_t op_index = 0;
  std::string op_name;
  std::string check, message;
  std::string signature() const { return check + " at " + op_name; }
};

/// Decode accounting over a run.
struct decode_stats {
  std::size_t decodes = 0, numeric = 0;
  /// Decodes a long case's sampling left to their shape check (docs/design.md §4.4), not judged.
  std::size_t unjudged = 0;
  double worst_ratio = 0;  ///< worst err/bound seen (the bound with F = 2; > 1 fails)
  /// The op of one session whose decode gave worst_ratio (the targeted search starts from it).
  std::size_t worst_op = 0;
  /// Reported, never judged: the worst end-to-end error over its bound (docs/numerics.md §6.4), for
  /// decodes of a cache whose storage rounds (`end_to_end` of them had a figure).
  std::size_t end_to_end = 0;
  double worst_end_to_end = 0;
  ratio_histogram ratios;  ///< every numeric problem's err/bound (`numeric` of them)
  void merge(const decode_stats& o);
};

/// One cache under test driven op by op: the model decides, the implementation answers,
/// and after every op the executor compares outcome, caller inputs, state and decode results.
class session {
 public:
  session(const cache_config& c, const implementation& impl);
  ~session();

  /// Runs one op; false when it diverged (see failed()). Ops after a failure are ignored. A run
  /// asked to stop (a signal, a deadline; properties/executor/stop.h) fails the op unrun, with
  /// the check "interrupted" or "deadline", which is never a finding.
  bool step(const op& o);
  const std::optional<failure>& failed() const { return failure_; }
  const decode_stats& stats() const { return stats_; }
  const std::vector<op>& ops() const { return ops_; }
  /// What the implementation answered to the last op (a generation loop feeds on it).
  const op_outcome& last() const { return last_; }
  /// The implementation's state now (for metamorphic comparisons): what the last op's check
  /// observed, so that a long window is not read again, else a fresh observation.
  const snapshot& observe();
  /// The implementation under test, for a driver that compares with fresh caches of the same type.
  const implementation& impl() const { return impl_; }
  /// The model's state after the last op, for a driver that sizes its next op from it.
  const model& expected() const { return *model_; }
  /// Judges only a sample of the decodes against the oracle, for a long case of the quick profile
  /// (docs/design.md §4.4): the first, about one in four of the others (chosen by `seed`) and the
  /// last, which finish_decodes() judges; the others get their shape checked only.
  void sample_decodes(std::uint64_t seed) { sample_seed_ = seed; }
  /// Judges the last decode, when sampling left it unjudged; false when it diverged (then failed()
  /// names that decode's op).
  bool finish_decodes();
  /// Records a divergence a driver found outside the executor's own checks (a cached generation
  /// against a recompute) at the last op, so it is reported and saved like any other failure.
  bool report(std::string check, std::string message);
  /// The boundary events the trace hit so far (properties/executor/coverage.h): its config's, the
  /// kind's probe's, a refused op, and what the caller marked.
  const event_set& events() const { return events_; }
  /// Marks event `index` of the kind's list (events_of), for what only the caller knows: the input
  /// class its rows came from.
  void hit(std::size_t index) { events_.set(index); }

 private:
  bool fail(std::string check, std::string message);
  /// Runs `body` (a call into the implementation); an exception it throws is the step's failure.
  bool call_implementation(const std::function<void()>& body, const char* when);
  /// Each decode problem's numbers against the oracle under the bound, with the run's statistics.
  bool check_decodes(const expectation& want, const op_outcome& got);
  /// Where the numbers are not judged (expectation::judge_numbers): every weight of a row its query does not see is 0.
  bool masked_weights_zero(const expectation& want, const op_outcome& got);
  /// Sparse top-k (docs/numerics.md §7.4): when a problem of `given` chooses rows, `resolved` becomes `given` with the
  /// rows the cache attended (read from `weights`); false, the step's failure, when they are not an admissible set.
  bool choose_rows(const expectation& given, const std::vector<double>& weights, expectation& resolved);
  /// A recurrent append's outputs against the oracle's, each within its bound (docs/numerics.md §3.9).
  bool judge_outputs(const expectation& want, const op_outcome& got);
  /// Each problem's output and weights of op `op_index` against the oracle (check_decodes after its
  /// shape check), and with `end_to_end` the figures of a cache whose storage rounds.
  bool judge_decodes(std::size_t op_index, const expectation& want, const std::vector<double>& output,
                     const std::vector<double>& weights, bool end_to_end);
  /// A decode sampling left unjudged: its op index, the model's problems and the answer.
  struct unjudged {
    std::size_t op_index;
    expectation want;
    std::vector<double> output, weights;
  };
  const implementation& impl_;
  std::unique_ptr<model> model_;
  std::unique_ptr<subject> subject_;
  format_checker formats_;
  std::vector<std::vector<double>> kept_buffers_;  // poisoned inputs stay alive: aliasing reads NaN
  std::vector<op> ops_;
  std::optional<failure> failure_;
  std::optional<snapshot> observed_;  // the implementation's state after the last op, when it was checked
  op_outcome last_;
  decode_stats stats_;
  std::unique_ptr<event_probe> probe_;
  event_set events_;
  std::size_t refused_;   // the kind's "refused op" event
  std::size_t infinity_;  // its "stored infinity" event
  std::optional<std::uint64_t> sample_seed_;
  std::optional<unjudged> unjudged_;
};

/// The result of running a whole trace.
struct verdict {
  std::optional<failure> fail;
  decode_stats stats;
  event_set events;  ///< what the trace hit (the original's, for a rewritten trace)
  bool ok() const { return !fail; }
};

/// Runs every op of `t` against `impl` (a fresh cache from t.config).
verdict run_trace(const trace& t, const implementation& impl);

}  // namespace kvconform
