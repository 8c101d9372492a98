// RapidCheck plumbing shared by every kind's generators; include it only in generator sources.
#pragma once

#include <rapidcheck.h>
#include <rapidcheck/state.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "properties/executor/stop.h"
#include "properties/generate/format_configs.h"
#include "properties/generate/lockstep.h"
#include "properties/generate/numeric_search.h"
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

/// What a generated case's commands run against: its session and, for a metamorphic property, the
/// rewrite stepped beside it, so that the trace runs once (check_trace would run it again).
struct case_session {
  session s;
  std::optional<rewrite_lockstep> rewrite;
  case_session(const property& p, const cache_config& c, const implementation& impl) : s(c, impl) {
    if (p.rewrite) rewrite.emplace(p, c, impl);
  }
};

/// Runs one op through the executor (and the rewrite); a divergence fails the RapidCheck case with its
/// signature. A run asked to stop ends the case as a success instead: RapidCheck then runs out its
/// remaining cases (or shrink candidates) at once, and a failure found before the stop is kept as it was.
inline void step_or_fail(case_session& c, const op& o) {
  if (c.s.step(o)) {
    if (c.rewrite) c.rewrite->follow(c.s);
    return;
  }
  if (stopped_early(*c.s.failed())) RC_SUCCEED("stopped early");
  RC_FAIL(c.s.failed()->signature() + ": " + c.s.failed()->message);
}

/// A trace op as a RapidCheck command: apply to the model, run through the executor, show.
template <class Model>
struct trace_command final : rc::state::Command<Model, case_session> {
  op o;
  explicit trace_command(op x) : o(std::move(x)) {}
  void apply(Model& m) const override { m.apply(o); }
  void run(const Model&, case_session& s) const override { step_or_fail(s, o); }
  void show(std::ostream& os) const override { os << describe(o); }
};
/// Several trace ops as one command, for a group that means something only whole (a speculative round:
/// draft, verify, roll back, append the bonus); shrinking drops the group or shrinks what it drew.
template <class Model>
struct trace_group final : rc::state::Command<Model, case_session> {
  std::vector<op> ops;
  explicit trace_group(std::vector<op> x) : ops(std::move(x)) {}
  void apply(Model& m) const override {
    for (const op& o : ops) m.apply(o);
  }
  void run(const Model&, case_session& s) const override {
    for (const op& o : ops) step_or_fail(s, o);
  }
  void show(std::ostream& os) const override {
    for (std::size_t i = 0; i < ops.size(); ++i) os << (i ? "; " : "") << describe(ops[i]);
  }
};

template <class Model>
using command_ptr = std::shared_ptr<const rc::state::Command<Model, case_session>>;

/// A command whose op is made from the model state when it runs, for kinds whose ops name
/// state (paged handles, an exact fill): shrinking removes earlier commands, which renumbers
/// handles and changes what is free, and a deferred op keeps its meaning through that (as a
/// Hypothesis bundle draw does). `make` returns nullopt where no op can be made: a failed
/// precondition, so RapidCheck regenerates or drops the command.
template <class Model>
struct deferred_command final : rc::state::Command<Model, case_session> {
  using ops = std::vector<op>;
  std::string label;
  std::function<std::optional<ops>(const Model&)> make;  // several ops for a group that means something only whole
  deferred_command(std::string l, std::function<std::optional<op>(const Model&)> f)
      : label(std::move(l)), make([f = std::move(f)](const Model& m) -> std::optional<ops> {
          if (auto o = f(m)) return ops{std::move(*o)};
          return std::nullopt;
        }) {}
  deferred_command(std::string l, std::function<std::optional<ops>(const Model&)> f, bool /*group*/)
      : label(std::move(l)), make(std::move(f)) {}
  void checkPreconditions(const Model& m) const override { RC_PRE(make(m).has_value()); }
  /// checkPreconditions, run and apply with the ops made once (making them is most of a command's cost).
  void run_and_apply(Model& m, case_session& s) const {
    const auto made = make(m);
    RC_PRE(made.has_value());
    for (const op& o : *made) step_or_fail(s, o);
    for (const op& o : *made) m.apply(o);
  }
  void apply(Model& m) const override {
    const auto made = make(m);  // held: *make(m) in a range-for would dangle
    for (const op& o : *made) m.apply(o);
  }
  void run(const Model& m, case_session& s) const override {
    const auto made = make(m);
    for (const op& o : *made) step_or_fail(s, o);
  }
  void show(std::ostream& os) const override { os << label; }
};
/// A deferred group: its ops are made from the model before the first of them runs.
template <class Model>
command_ptr<Model> deferred_ops(std::string label, std::function<std::optional<std::vector<op>>(const Model&)> f) {
  return std::make_shared<const deferred_command<Model>>(std::move(label), std::move(f), true);
}
template <class Model>
command_ptr<Model> command(op o) {
  return std::make_shared<const trace_command<Model>>(std::move(o));
}
template <class Model>
command_ptr<Model> command(std::vector<op> ops) {
  return std::make_shared<const trace_group<Model>>(std::move(ops));
}

/// rc::state::runAll without the model updates no command reads: an op made when its command was
/// generated runs without the state, so a list of only those runs without a model.
template <class Model>
void run_all(const std::vector<command_ptr<Model>>& commands, const Model& initial, case_session& s) {
  const bool stateful = std::any_of(commands.begin(), commands.end(), [](const command_ptr<Model>& c) {
    return dynamic_cast<const trace_command<Model>*>(c.get()) == nullptr &&
           dynamic_cast<const trace_group<Model>*>(c.get()) == nullptr;
  });
  if (!stateful) {
    for (const command_ptr<Model>& c : commands) c->run(initial, s);
    return;
  }
  Model state = initial;
  for (const command_ptr<Model>& c : commands) {
    if (const auto* d = dynamic_cast<const deferred_command<Model>*>(c.get()))
      d->run_and_apply(state, s);
    else
      c->checkPreconditions(state), c->run(state, s), c->apply(state);
  }
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

/// The generator `make()` returns, built only when drawn from: most of a command's alternatives are not, and building
/// them all was most of generation's cost. Same draws as make() itself.
template <class Make>
auto lazy_gen(Make make) -> decltype(make()) {
  return [make](const rc::Random& r, int size) { return make()(r, size); };
}

/// What a kind's op generator gets besides the model state (its op mix it captures itself).
struct gen_context {
  std::shared_ptr<const row_source> src;  ///< the trace's input class and anchor
  bool can_decode = true;
  capability_set caps;        ///< the implementation's: ops behind a capability it lacks are not drawn
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
  /// With the targeted numeric search when `p` has it and the run's budget allows (docs/numerics.md §4.4).
  case_runner(const property& p, const implementation& impl, const run_options& o, property_run& out);
  /// Runs p.drive on a fresh session with a drawn seed and size; fails the case on a divergence.
  void drive(const cache_config& config);
  /// A case's shape and config (the size decides, shapes.h), fitted to the implementation's declared
  /// formats (docs/numerics.md §6.5) and config limits. One draw, so that the other cases draw
  /// exactly what they would without long cases.
  rc::Gen<std::pair<case_shape, cache_config>> configs(config_gens gens) const;
  /// The op generator's context: a drawn input class and anchor, the property's limits.
  gen_context context(const cache_config& config, bool long_case);
  /// Records the session's failure, if any, as the counterexample; true when there was one.
  bool keep_failure(const cache_config& config, session& s);
  /// After the ops ran: the rewrite's first difference fails the case, else on_trace, and the passed
  /// case is offered to the search.
  void finish(const cache_config& config, case_session& s);
  /// The search found a failure (or a stop cut it short), or the run's case_limit is reached: the remaining cases
  /// return at once.
  bool done() const { return (search_ && search_->done()) || limited(); }
  /// A signal or a deadline asks the run to stop: the case returns before it generates anything
  /// (a long trace takes seconds to draw), and the stop is noted for the gate (note_stop_seen).
  static bool stopped();
  /// After the random cases: the rest of the search's budget unless a case failed, and its results into `out`.
  void conclude();

 private:
  const property& p_;
  const implementation& impl_;
  const run_options& o_;
  property_run& out_;
  std::optional<input_class> class_;  // the current case's input class, when it drew one
  bool long_case_ = false;            // the current case is a long one (shapes.h)
  std::unique_ptr<numeric_search> search_;
  int passed_ = 0;  // cases that passed: a next one fails as case passed_ + 1 (+ the search's traces before it)

  bool limited() const;
};

/// The command list of a case of `shape` (shapes.h): up to `trace_scale` x (RapidCheck size + 1)
/// commands for an ordinary case, as many as at size production_case_size for a production one,
/// long_case_min_ops to long_case_ops + 1 for a long one. `max_commands` (0: none) caps an ordinary case's size
/// without changing a smaller case's draws.
template <class Commands>
rc::Gen<Commands> case_commands(rc::Gen<Commands> list, case_shape shape, double trace_scale, int max_commands) {
  if (shape == case_shape::long_case)
    return rc::gen::suchThat(rc::gen::resize(long_case_ops, std::move(list)),
                             [](const Commands& c) { return c.size() >= long_case_min_ops; });
  if (shape == case_shape::production)
    return rc::gen::resize(static_cast<int>(production_case_size * trace_scale), std::move(list));
  if (max_commands == 0) return rc::gen::scale(trace_scale, std::move(list));
  return [=](const rc::Random& r, int size) {
    return list(r, std::min(max_commands, static_cast<int>(size * trace_scale)));
  };
}

/// Thrown by a command's generator once the run stops: the case being drawn returns at once
/// (run_commands catches it), so a stop never waits for a long trace to be drawn whole.
struct generation_stopped {};

/// Runs a generated property: a config from `configs` (a long one on the property's long cases),
/// then either `p.drive` on a session, or commands from `op_gen(model, ctx)` starting at
/// `make_model(config)`, run through the executor (run_all) and, for metamorphic properties,
/// compared with the rewrite as they run. The last failing (hence minimal) trace becomes the
/// counterexample. A trace's length follows its shape (case_commands); the quick profile judges a
/// sample of a long case's decodes (docs/design.md §4.4).
template <class Model, class MakeModel, class OpGen>
property_run run_commands(const property& p, const implementation& impl, const run_options& o, config_gens configs,
                          MakeModel make_model, OpGen op_gen, double trace_scale = 1, int max_commands = 0) {
  property_run out;
  case_runner run(p, impl, o, out);
  const auto drawn = run.configs(std::move(configs));
  run_rapidcheck(
      p, o,
      [&] {
        if (run.done() || run.stopped()) return;
        const auto drawn_case = *drawn;
        const cache_config& config = drawn_case.second;  // not a structured binding: lambdas below capture it
        if (p.drive) return run.drive(config);
        const bool is_long = drawn_case.first == case_shape::long_case;
        const gen_context ctx = run.context(config, is_long);
        const Model initial = [&] {
          if constexpr (std::is_invocable_v<MakeModel, const cache_config&, const numeric_profile&, const policy_set&>)
            return make_model(config, impl.profile, impl.policies);
          else
            return make_model(config, impl.profile);
        }();
        // RapidCheck asks for a command's generator once more than it draws from (nextEntry), and building
        // one is most of a kind's generation cost: build it only when drawn from, which happens at once.
        const auto lazy = [ctx, op_gen](const Model& m) {
          using gen = decltype(op_gen(m, ctx));
          return gen([&m, ctx, op_gen](const rc::Random& r, int size) {
            if (case_runner::stopped()) throw generation_stopped{};  // RapidCheck rethrows it from the draw below
            return op_gen(m, ctx)(r, size);
          });
        };
        const auto list =
            case_commands(rc::state::gen::commands(initial, lazy), drawn_case.first, trace_scale, max_commands);
        typename decltype(list)::ValueType commands;
        try {
          commands = *list;
        } catch (const generation_stopped&) {
          return;  // no trace, no finding: the gate sees the stop noted
        }
        case_session s(p, config, impl);
        if (is_long && !o.deep) s.s.sample_decodes(*rc::gen::noShrink(rc::gen::arbitrary<std::uint64_t>()));
        try {
          run_all(commands, initial, s);
        } catch (...) {
          run.keep_failure(config, s.s);
          throw;
        }
        run.finish(config, s);
      },
      out);
  run.conclude();
  return out;
}

}  // namespace kvconform
