// RapidCheck plumbing shared by every kind's generators; include it only in generator sources.
#pragma once

#include <rapidcheck.h>
#include <rapidcheck/state.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "properties/executor/stop.h"
#include "properties/generate/format_configs.h"
#include "properties/generate/property.h"
#include "properties/generate/run_property.h"
#include "properties/generate/shapes.h"

namespace kvconform {

/// Uniform over [lo, hi) at every RapidCheck size (inRange alone narrows with the size, which
/// would make early cases all minimal); still shrinks towards lo.
template <class T>
rc::Gen<T> uniform_in(T lo, T hi) {
  return rc::gen::resize(100, rc::gen::inRange<T>(lo, hi));
}

/// Runs one op through the executor; a divergence fails the RapidCheck case with its signature.
/// A run asked to stop ends the case as a success instead: RapidCheck then runs out its remaining
/// cases (or shrink candidates) at once, and a failure found before the stop is kept as it was.
inline void step_or_fail(session& s, const op& o) {
  if (s.step(o)) return;
  if (stopped_early(*s.failed())) RC_SUCCEED("stopped early");
  RC_FAIL(s.failed()->signature() + ": " + s.failed()->message);
}

/// A trace op as a RapidCheck command: apply to the model, run through the executor, show.
template <class Model>
struct trace_command final : rc::state::Command<Model, session> {
  op o;
  explicit trace_command(op x) : o(std::move(x)) {}
  void apply(Model& m) const override { m.apply(o); }
  void run(const Model&, session& s) const override { step_or_fail(s, o); }
  void show(std::ostream& os) const override { os << describe(o); }
};
template <class Model>
using command_ptr = std::shared_ptr<const rc::state::Command<Model, session>>;

/// A command whose op is made from the model state when it runs, for kinds whose ops name
/// state (paged handles, an exact fill): shrinking removes earlier commands, which renumbers
/// handles and changes what is free, and a deferred op keeps its meaning through that (as a
/// Hypothesis bundle draw does). `make` returns nullopt where no op can be made: a failed
/// precondition, so RapidCheck regenerates or drops the command.
template <class Model>
struct deferred_command final : rc::state::Command<Model, session> {
  std::string label;
  std::function<std::optional<op>(const Model&)> make;
  deferred_command(std::string l, std::function<std::optional<op>(const Model&)> f)
      : label(std::move(l)), make(std::move(f)) {}
  void checkPreconditions(const Model& m) const override { RC_PRE(make(m).has_value()); }
  void apply(Model& m) const override { m.apply(*make(m)); }
  void run(const Model& m, session& s) const override { step_or_fail(s, *make(m)); }
  void show(std::ostream& os) const override { os << label; }
};
template <class Model>
command_ptr<Model> command(op o) {
  return std::make_shared<const trace_command<Model>>(std::move(o));
}

/// One of `choices` by weight (weight 0 = never); which one is picked does not shrink, what it
/// generates does.
template <class T>
rc::Gen<T> weighted(std::vector<std::pair<int, rc::Gen<T>>> choices) {
  std::erase_if(choices, [](const auto& c) { return c.first <= 0; });
  int total = 0;
  for (const auto& c : choices) total += c.first;
  return rc::gen::mapcat(rc::gen::noShrink(uniform_in(0, total)), [choices](int r) {
    for (const auto& [w, g] : choices) {
      if (r < w) return g;
      r -= w;
    }
    return choices.back().second;
  });
}

/// Where a generated op goes: its rows continue a stream at position `first` (several input
/// classes depend on the position), in sequence `seq` (paged; 0 for the other kinds).
struct op_target {
  std::shared_ptr<const row_source> src;
  std::int64_t first = 0;
  std::int64_t seq = 0;
};

/// An append of n rows of the target's input class; for n = 1, bit 0 of `ranks` makes k 1-D
/// and bit 1 makes v 1-D (mixed ranks are valid: both are one step).
op append_op(const op_target& t, std::size_t n, int ranks, std::uint64_t seed);
/// An append with shape error `variant` in [0, 6): a wrong key or value width, k and v that
/// differ in steps, rank 3, rank 0, or a 1-D k with a 2-row v.
op bad_shape_op(const op_target& t, int variant, std::uint64_t seed);
/// A decode of the class's query; with `bad`, variant 0 has rank 2 and variant 1 the wrong width.
op decode_op(const op_target& t, bool bad, int variant);
/// A key or value width: small in quick runs, up to 128 in deep ones, and now and then a production
/// head dim (shapes.h). Picked by index (not elementOf) so that a failing case shrinks towards the smallest.
rc::Gen<std::size_t> width_gen(bool deep);

/// What a kind's op generator gets besides the model state (its op mix it captures itself).
struct gen_context {
  std::shared_ptr<const row_source> src;  ///< the trace's input class and anchor
  bool can_decode = true;
  std::size_t max_steps = 4;  ///< steps of an ordinary append
  /// A long case (shapes.h): the kind's long config, starting with a bulk append of most of its room.
  bool long_case = false;
};

/// A kind's configs: its ordinary ones and those of its long cases (shapes.h, docs/design.md §4.4).
struct config_gens {
  rc::Gen<cache_config> ordinary;
  rc::Gen<cache_config> long_shapes;
};

/// Runs `body` as a RapidCheck property with the run's seed, cases and size, and maps the
/// result into `out` (cases to the first failure, gave-up and internal errors).
void run_rapidcheck(const property& p, const run_options& o, const std::function<void()>& body, property_run& out);

/// What every generated case shares, whatever its kind: the driver, the op generator's context,
/// keeping the last (hence minimal) failure, the metamorphic comparison and on_trace.
class case_runner {
 public:
  case_runner(const property& p, const implementation& impl, const run_options& o, property_run& out)
      : p_(p), impl_(impl), o_(o), out_(out) {}
  /// Runs p.drive on a fresh session with a drawn seed and size; fails the case on a divergence.
  void drive(const cache_config& config);
  /// A case's config and whether it is a long case (the size decides, shapes.h), fitted to the
  /// implementation's declared formats (docs/numerics.md §6.5) and config limits. One draw, so that
  /// the other cases draw exactly what they would without long cases.
  rc::Gen<std::pair<bool, cache_config>> configs(config_gens gens) const;
  /// The op generator's context: a drawn input class and anchor, the property's limits.
  gen_context context(const cache_config& config, bool long_case);
  /// Records the session's failure, if any, as the counterexample; true when there was one.
  bool keep_failure(const cache_config& config, session& s);
  /// After the ops ran: the rewrite's comparison (which fails the case when it differs), then on_trace.
  void finish(const cache_config& config, session& s);

 private:
  const property& p_;
  const implementation& impl_;
  const run_options& o_;
  property_run& out_;
};

/// Runs a generated property: a config from `configs` (a long one on the property's long cases),
/// then either `p.drive` on a session, or commands from `op_gen(model, ctx)` starting at
/// `make_model(config)`, run through the executor with RapidCheck's runAll and, for metamorphic
/// properties, compared with the rewrite. The last failing (hence minimal) trace becomes the
/// counterexample. Traces hold up to `trace_scale` x (RapidCheck size + 1) ops, a long case
/// long_case_min_ops to long_case_ops + 1, whose decodes the quick profile samples (docs/design.md §4.4).
template <class Model, class MakeModel, class OpGen>
property_run run_commands(const property& p, const implementation& impl, const run_options& o, config_gens configs,
                          MakeModel make_model, OpGen op_gen, double trace_scale = 1) {
  property_run out;
  case_runner run(p, impl, o, out);
  const auto drawn = run.configs(std::move(configs));
  run_rapidcheck(
      p, o,
      [&] {
        const auto [is_long, config] = *drawn;
        if (p.drive) return run.drive(config);
        const gen_context ctx = run.context(config, is_long);
        const Model initial = make_model(config, impl.profile);
        auto list = rc::state::gen::commands(initial, [ctx, op_gen](const Model& m) { return op_gen(m, ctx); });
        const auto commands = *(is_long ? rc::gen::suchThat(rc::gen::resize(long_case_ops, list),
                                                            [](const auto& c) { return c.size() >= long_case_min_ops; })
                                        : rc::gen::scale(trace_scale, list));
        session s(config, impl);
        if (is_long && !o.deep) s.sample_decodes(*rc::gen::noShrink(rc::gen::arbitrary<std::uint64_t>()));
        try {
          rc::state::runAll(commands, initial, s);
        } catch (...) {
          run.keep_failure(config, s);
          throw;
        }
        run.finish(config, s);
      },
      out);
  return out;
}

}  // namespace kvconform
