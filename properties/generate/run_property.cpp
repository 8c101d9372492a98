// Running a property: its fixed trace, or its kind's generated cases (case_runner) and RapidCheck's result.
#include <rapidcheck/detail/TestListenerAdapter.h>

#include "properties/executor/case_count.h"
#include "properties/generate/commands.h"
#include "properties/trace/kind_spec.h"

namespace kvconform {

std::uint64_t property_seed(std::uint64_t run_seed, const std::string& property) { return run_seed ^ fnv1a(property); }

void run_rapidcheck(const property& p, const run_options& o, const std::function<void()>& body, property_run& out) {
  // rc::detail, as RapidCheck's public rc::check takes its parameters from RC_PARAMS, prints, and returns a bool only.
  rc::detail::TestParams params;
  params.seed = property_seed(o.seed, p.name);
  params.maxSuccess = o.cases;
  params.maxSize = o.max_size;
  params.disableShrinking = !o.shrink;
  rc::detail::TestMetadata meta{p.name, p.summary};
  rc::detail::TestListenerAdapter quiet;
  const auto result = rc::detail::checkTestable(body, meta, params, quiet);
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
}

case_runner::case_runner(const property& p, const implementation& impl, const run_options& o, property_run& out)
    : p_(p), impl_(impl), o_(o), out_(out) {
  // A rewrite or a driver judges more than the trace's ops, which the search's traces would lose.
  if (p.search && o.search > 0 && !p.rewrite && !p.drive) search_ = std::make_unique<numeric_search>(p, impl, o);
}

bool case_runner::stopped() {
  if (stop_requested() == stop_reason::none) return false;
  note_stop_seen();
  return true;
}

void case_runner::conclude() {
  if (!search_) return;
  if (!out_.fail && out_.error.empty() && !search_->done() && !limited()) search_->finish();
  search_->report(out_);
}

void case_runner::drive(const cache_config& config) {
  const std::uint64_t seed = *rc::gen::noShrink(rc::gen::arbitrary<std::uint64_t>());
  const std::size_t size = *uniform_in<std::size_t>(1, config.capacity + 1);
  class_.reset();  // a driver draws its own inputs
  session s(config, impl_);
  p_.drive(s, config, seed, size);
  if (keep_failure(config, s)) {
    out_.counterexample->drive_seed = seed, out_.counterexample->drive_size = size;
    RC_FAIL(s.failed()->signature() + ": " + s.failed()->message);
  }
  if (o_.on_trace) o_.on_trace(trace{config, s.ops(), impl_.name, p_.name, ""});
  ++passed_;
}

bool within_limits(const cache_config& c, const implementation& impl) {
  for (const config_field& f : spec_of(c.kind).config)
    if (const auto l = impl.config_limits.find(f.name);
        f.size && l != impl.config_limits.end() && c.*f.size > l->second)
      return false;
  return true;
}

std::string undeclared(const trace& t, const implementation& impl) {
  const kind_spec& k = spec_of(t.config.kind);
  if (const policy_set recorded = normalised(k, t.policies); recorded != impl.policies) {
    auto named = [](const policy_set& p) {
      return p.empty() ? std::string("none (the kind's contract)") : p.describe();
    };
    return "recorded under the policies " + named(recorded) + "; " + impl.name + " declares " + named(impl.policies);
  }
  if (!within_limits(t.config, impl))
    return "its config (" + describe(t.config) + ") exceeds the sizes " + impl.name + " declares it serves";
  return "";
}

namespace {
/// `configs` with each of `limits` clamped to its limit, so that the limit itself is drawn often; a
/// clamp that breaks a rule across fields (beam's q_heads a multiple of heads, ring's keep < W) is drawn again.
rc::Gen<cache_config> within(rc::Gen<cache_config> configs, const std::map<std::string, std::size_t>& limits) {
  if (limits.empty()) return configs;
  return rc::gen::suchThat(
      rc::gen::map(std::move(configs),
                   [limits](cache_config c) {
                     for (const config_field& f : spec_of(c.kind).config)
                       if (const auto l = limits.find(f.name); f.size && l != limits.end())
                         c.*f.size = std::min(c.*f.size, l->second);
                     return c;
                   }),
      [](const cache_config& c) { return !spec_of(c.kind).check || spec_of(c.kind).check(c).empty(); });
}
}  // namespace

rc::Gen<std::pair<case_shape, cache_config>> case_runner::configs(config_gens gens) const {
  auto fitted = [this](rc::Gen<cache_config> g, bool long_case) {
    if (impl_.profile.rounds_storage())
      g = rc::gen::apply(
          [prof = impl_.profile, long_case](cache_config c, std::uint64_t k, std::uint64_t v) {
            return fit_formats(c, prof, k, v, long_case);
          },
          std::move(g), uniform_in<std::uint64_t>(0, scale_codes), uniform_in<std::uint64_t>(0, scale_codes));
    return within(std::move(g), impl_.config_limits);
  };
  const auto long_size = long_case_size(p_, o_);
  // Cases of the long size drawn so far: the quick profile's sizes cycle twice and more, and only the
  // first of them is long (a generator runs once per case; shrinking reuses what it drew).
  auto seen = std::make_shared<int>(0);
  return rc::gen::withSize([ordinary = fitted(std::move(gens.ordinary), false),
                            long_shapes = fitted(std::move(gens.long_shapes), true), long_size, seen, every = o_.deep,
                            shapes = o_.production_shapes](int size) {
    const bool is_long = long_size == size && (every || (*seen)++ == 0);
    const case_shape shape = is_long                           ? case_shape::long_case
                             : shapes && production_case(size) ? case_shape::production
                                                               : case_shape::ordinary;
    // Without production shapes a production size is drawn as the next one.
    return rc::gen::map(rc::gen::resize(size + (!shapes && production_size(size)), is_long ? long_shapes : ordinary),
                        [shape](cache_config c) {
                          return std::pair{shape, std::move(c)};
                        });
  });
}

gen_context case_runner::context(const cache_config& config, bool long_case) {
  const std::span<const input_class> classes = p_.classes.empty() ? all_input_classes() : p_.classes;
  std::vector<input_class> drawn(classes.begin(), classes.end());
  // A cache whose storage rounds also draws its formats' edges, about a quarter of the time.
  const numeric_profile& prof = impl_.profile;
  if (prof.rounds_storage() && p_.classes.empty()) drawn.insert(drawn.end(), 5, input_class::format_edges);
  const input_class cls = *rc::gen::elementOf(drawn);
  class_ = cls, long_case_ = long_case;
  const std::uint64_t anchor = *rc::gen::noShrink(rc::gen::arbitrary<std::uint64_t>());
  gen_context ctx;
  auto src = std::make_shared<row_source>(cls, config.d_k, config.d_v, anchor);
  // A hybrid cache's sliding group may be stored otherwise: half the traces draw its formats' edges.
  const bool sliding = (anchor & 1) != 0;
  src->set_formats(prof.keys_of(sliding), prof.values_of(sliding), config.k_scale, config.v_scale);
  src->set_learned_sinks(prof.attention.sinks == sink_kind::learned);
  if (prof.attention.top_k > 0) src->set_indexer(prof.attention.index_heads, prof.attention.index_width);
  ctx.src = std::move(src);
  ctx.can_decode = impl_.capabilities.has(capability::decode);
  ctx.caps = impl_.capabilities;
  ctx.max_steps = p_.long_traces && !long_case ? 3 : std::max<std::size_t>(2, config.capacity / 2 + 1);
  ctx.long_case = long_case;
  return ctx;
}

bool case_runner::keep_failure(const cache_config& config, session& s) {
  out_.stats.merge(s.stats());
  if (!out_.fail) {  // each case once: the shrinking after the first failure adds no cases
    count_case();
    if (class_ && s.stats().decodes > 0) s.hit(class_event(config.kind, *class_));
    out_.coverage.add(s.events(), events_of(config.kind).size());
    add_histogram(out_.ratios, class_ ? to_string(*class_) : "(generation loop)", s.stats().ratios);
  }
  if (!s.failed() || stopped_early(*s.failed())) return false;
  out_.counterexample = trace{config, s.ops(), impl_.name, p_.name, s.failed()->message};
  out_.counterexample->policies = impl_.policies;
  out_.fail = s.failed();
  return true;
}

void case_runner::finish(const cache_config& config, case_session& c) {
  const session& s = c.s;
  c.s.finish_decodes();  // a sampled session's last decode (docs/design.md §4.4)
  if (keep_failure(config, c.s)) RC_FAIL(s.failed()->signature() + ": " + s.failed()->message);
  if (c.rewrite && c.rewrite->difference() && !stopped_early(*c.rewrite->difference())) {
    const failure& f = *c.rewrite->difference();
    out_.counterexample = trace{config, s.ops(), impl_.name, p_.name, f.message}, out_.fail = f;
    RC_FAIL(f.signature() + ": " + f.message);
  }
  if (o_.on_trace) o_.on_trace(trace{config, s.ops(), impl_.name, p_.name, ""});
  // A long case's thousands of rows would make each search trace cost a hundred ordinary ones.
  if (search_ && !s.failed() && !long_case_) search_->passed(config, s.ops(), s.stats());
  ++passed_;
}

bool case_runner::limited() const {
  if (o_.case_limit <= 0) return false;
  // A next random case would fail as case passed_ + 1 + the search's traces, a next trace of the search (a round
  // after the cases that the search saw, and at the end) as its counted() + 1: neither may still come within.
  const bool random_past = passed_ + (search_ ? search_->traces() : 0) >= o_.case_limit;
  return random_past && (!search_ || search_->done() || search_->counted() >= o_.case_limit);
}

property_run run_property(const property& p, const implementation& impl, const run_options& o) {
  if (impl.begin_property) impl.begin_property();
  if (p.fixed) {
    property_run out;
    trace t = p.fixed();
    const verdict v = check_trace(&p, t, impl);
    out.cases = 1, out.stats = v.stats, out.fail = v.fail;
    count_case();
    out.coverage.add(v.events, events_of(p.kind).size());
    add_histogram(out.ratios, "(fixed trace)", v.stats.ratios);
    if (v.fail) out.counterexample = std::move(t);
    return out;
  }
  if (!p.generate) {
    property_run none;
    none.error = "property " + p.name + " has neither a fixed trace nor generators";
    return none;
  }
  return p.generate(p, impl, o);
}

}  // namespace kvconform
