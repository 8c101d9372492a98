// RapidCheck stateful generation for the single-sequence kinds (flat, ring); the only TU with rapidcheck.
#include <rapidcheck.h>
#include <rapidcheck/detail/TestListenerAdapter.h>
#include <rapidcheck/state.h>

#include <algorithm>
#include <memory>

#include "oracle/rows_model.h"
#include "properties/generators.h"

namespace kvconform {

namespace {
/// A trace op as a RapidCheck command: apply to the model, run through the executor, show.
struct rows_command final : rc::state::Command<rows_model, session> {
  op o;
  explicit rows_command(op x) : o(std::move(x)) {}
  void apply(rows_model& m) const override { m.apply(o); }
  void run(const rows_model&, session& s) const override {
    if (!s.step(o)) RC_FAIL(s.failed()->signature() + ": " + s.failed()->message);
  }
  void show(std::ostream& os) const override { os << describe(o); }
};
using command_ptr = std::shared_ptr<const rc::state::Command<rows_model, session>>;

/// Uniform over [lo, hi) at every RapidCheck size (inRange alone narrows with the size, which
/// would make early cases all minimal); still shrinks towards lo.
template <class T>
rc::Gen<T> uniform_in(T lo, T hi) {
  return rc::gen::resize(100, rc::gen::inRange<T>(lo, hi));
}

op append_op(const row_source& src, std::int64_t first, std::size_t n, bool one_d, std::uint64_t seed) {
  op o;
  o.kind = op_kind::append;
  src.rows(first, n, seed, o.k.data, o.v.data);
  if (one_d && n == 1) o.k.shape = {src.d_k()}, o.v.shape = {src.d_v()};
  else o.k.shape = {n, src.d_k()}, o.v.shape = {n, src.d_v()};
  return o;
}

/// The state the generator needs, copied: RapidCheck keeps generators alive while shrinking.
struct gen_state {
  std::shared_ptr<const row_source> src;
  cache_config config;
  std::size_t size = 0;
  std::int64_t total = 0;
  std::size_t max_steps = 4;
};

rc::Gen<command_ptr> append_gen(const gen_state& s, rc::Gen<std::size_t> steps) {
  return rc::gen::apply(
      [s](std::size_t n, bool one_d, std::uint64_t seed) {
        return command_ptr(std::make_shared<const rows_command>(append_op(*s.src, s.total, n, one_d, seed)));
      },
      std::move(steps), rc::gen::arbitrary<bool>(), rc::gen::noShrink(rc::gen::arbitrary<std::uint64_t>()));
}

rc::Gen<command_ptr> bad_shape_gen(const gen_state& s) {
  return rc::gen::apply(
      [s](int variant, std::uint64_t seed) {
        const std::size_t dk = s.config.d_k, dv = s.config.d_v;
        op o = append_op(*s.src, s.total, 2, false, seed);
        switch (variant) {
          case 0: o.k.shape = {1, 2 * dk}; break;                                      // wrong key width
          case 1: o.v.shape = {1, 2 * dv}; break;                                      // wrong value width
          case 2: o.v.shape = {1, dv}, o.v.data.resize(dv); break;                     // 2 key steps, 1 value step
          case 3: o.k.shape = {1, 2, dk}, o.v.shape = {1, 2, dv}; break;               // rank 3
          case 4: o.k.shape = {}, o.k.data.resize(1), o.v.shape = {}, o.v.data.resize(1); break;  // rank 0
          default: o.k.shape = {dk}, o.k.data.resize(dk); break;                       // 1-D k, 2-row v
        }
        return command_ptr(std::make_shared<const rows_command>(std::move(o)));
      },
      uniform_in(0, 6), rc::gen::noShrink(rc::gen::arbitrary<std::uint64_t>()));
}

rc::Gen<command_ptr> decode_gen(const gen_state& s, bool bad) {
  return rc::gen::apply(
      [s, bad](int variant) {
        op o;
        o.kind = op_kind::decode;
        o.q = tensor::vector(s.src->query());
        if (bad && variant == 0) o.q.shape = {1, s.config.d_k};                          // rank 2
        if (bad && variant == 1) o.q.data.push_back(0.5), o.q.shape = {s.config.d_k + 1};  // wrong width
        return command_ptr(std::make_shared<const rows_command>(std::move(o)));
      },
      uniform_in(0, 2));
}

/// One op drawn by weight from the property's mix, sized from the model's state.
rc::Gen<command_ptr> op_gen(const op_mix& mix, const gen_state& s, bool can_decode) {
  const std::size_t cap = s.config.capacity;
  const std::size_t room = s.config.kind == cache_kind::flat ? cap - s.size : cap;
  std::vector<std::pair<int, rc::Gen<command_ptr>>> choices;
  auto add = [&](int weight, rc::Gen<command_ptr> g) {
    if (weight > 0) choices.emplace_back(weight, std::move(g));
  };
  add(mix.append, append_gen(s, uniform_in<std::size_t>(1, s.max_steps + 1)));
  if (s.config.kind == cache_kind::flat) {
    add(mix.fill, append_gen(s, rc::gen::just(std::max<std::size_t>(room, 1))));
    add(mix.overfill, append_gen(s, rc::gen::map(uniform_in<std::size_t>(1, 4), [room](std::size_t extra) { return room + extra; })));
  } else {  // ring: appends of about the window, crossing the wrap point, and n > W
    const std::size_t to_wrap = cap - static_cast<std::size_t>(s.total % static_cast<std::int64_t>(cap));
    add(mix.fill, append_gen(s, rc::gen::elementOf(std::vector<std::size_t>{cap, to_wrap, cap > 1 ? cap - 1 : 1, cap + 1})));
    add(mix.overfill, append_gen(s, rc::gen::elementOf(std::vector<std::size_t>{cap + 1, 2 * cap + 1, 3 * cap})));
  }
  add(mix.empty, append_gen(s, rc::gen::just<std::size_t>(0)));
  add(mix.bad_shape, bad_shape_gen(s));
  if (can_decode) {
    add(mix.decode, decode_gen(s, false));
    add(mix.bad_decode, decode_gen(s, true));
  }
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

rc::Gen<cache_config> config_gen(cache_kind kind, bool long_traces, bool deep) {
  static const std::vector<std::size_t> quick_dims = {1, 2, 3, 4, 8, 16}, deep_dims = {1, 2, 3, 4, 5, 8, 16, 64, 128};
  const std::vector<std::size_t>& dims = deep ? deep_dims : quick_dims;
  const std::size_t max_cap = deep ? 300 : (long_traces ? 24 : 10);
  // Picking by index (not elementOf) lets a failing case shrink towards the smallest dimension.
  const auto dim = rc::gen::map(uniform_in<std::size_t>(0, dims.size()), [&dims](std::size_t i) { return dims[i]; });
  return rc::gen::apply([kind](std::size_t cap, std::size_t dk, std::size_t dv) { return cache_config{kind, cap, dk, dv}; },
                        uniform_in<std::size_t>(1, max_cap + 1), dim, dim);
}

bool has(const implementation& impl, const std::string& capability) {
  return std::find(impl.capabilities.begin(), impl.capabilities.end(), capability) != impl.capabilities.end();
}
}  // namespace

std::uint64_t property_seed(std::uint64_t run_seed, const std::string& property) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : property) h = (h ^ c) * 1099511628211ull;
  return run_seed ^ h;
}

property_run run_property(const property& p, const implementation& impl, const run_options& o) {
  property_run out;
  if (p.fixed) {
    trace t = p.fixed();
    const verdict v = check_trace(&p, t, impl);
    out.cases = 1, out.stats = v.stats, out.fail = v.fail;
    if (v.fail) out.counterexample = std::move(t);
    return out;
  }
  const bool can_decode = has(impl, "decode");
  // Records the session's trace as the counterexample when it failed; true when it did.
  auto keep_failure = [&](const cache_config& config, session& s) {
    out.stats.merge(s.stats());
    if (!s.failed()) return false;
    out.counterexample = trace{config, s.ops(), impl.name, p.name, s.failed()->message};
    out.fail = s.failed();
    return true;
  };
  const std::span<const input_class> classes = p.classes.empty() ? all_input_classes() : p.classes;
  auto property_body = [&] {
    const cache_config config = *config_gen(impl.kind, p.long_traces, o.deep);
    if (p.drive) {
      const std::uint64_t seed = *rc::gen::noShrink(rc::gen::arbitrary<std::uint64_t>());
      const std::size_t size = *uniform_in<std::size_t>(1, config.capacity + 1);
      session s(config, impl);
      p.drive(s, config, seed, size);
      if (keep_failure(config, s)) RC_FAIL(s.failed()->signature() + ": " + s.failed()->message);
      return;
    }
    const input_class cls = *rc::gen::elementOf(std::vector<input_class>(classes.begin(), classes.end()));
    const std::uint64_t anchor = *rc::gen::noShrink(rc::gen::arbitrary<std::uint64_t>());
    const auto src = std::make_shared<const row_source>(cls, config.d_k, config.d_v, anchor);
    const std::size_t max_steps = p.long_traces ? 3 : std::max<std::size_t>(2, config.capacity / 2 + 1);
    const rows_model initial(config, impl.profile);
    const auto commands = *rc::state::gen::commands(initial, [=, mix = p.mix](const rows_model& m) {
      return op_gen(mix, gen_state{src, m.config(), m.size(), m.total(), max_steps}, can_decode);
    });
    session s(config, impl);
    try {
      rc::state::runAll(commands, initial, s);
    } catch (...) {
      keep_failure(config, s);
      throw;
    }
    keep_failure(config, s);
    if (p.rewrite) {
      trace t{config, s.ops(), impl.name, p.name, ""};
      const verdict v = check_trace(&p, t, impl);
      if (!v.ok()) {
        t.note = v.fail->message;
        out.counterexample = t, out.fail = v.fail;
        RC_FAIL(v.fail->signature() + ": " + v.fail->message);
      }
    }
  };

  rc::detail::TestParams params;
  params.seed = property_seed(o.seed, p.name);
  params.maxSuccess = o.cases;
  params.maxSize = o.max_size;
  rc::detail::TestMetadata meta{p.name, p.summary};
  rc::detail::TestListenerAdapter quiet;
  const auto result = rc::detail::checkTestable(property_body, meta, params, quiet);
  rc::detail::SuccessResult success;
  rc::detail::FailureResult failed;
  rc::detail::GaveUpResult gave_up;
  rc::detail::Error err;
  if (result.match(success)) {
    out.cases = success.numSuccess;
    out.counterexample.reset(), out.fail.reset();
  } else if (result.match(failed)) {
    out.cases = failed.numSuccess + 1;
    if (!out.fail) out.error = "failed outside the executor: " + failed.description;
  } else if (result.match(gave_up)) {
    out.cases = gave_up.numSuccess;
    out.error = "generator gave up: " + gave_up.description;
  } else if (result.match(err)) {
    out.error = "RapidCheck error: " + err.description;
  }
  return out;
}

}  // namespace kvconform
