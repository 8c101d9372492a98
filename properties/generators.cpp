// Dispatch of a property run to its kind's generators, and the RapidCheck result mapping.
#include <rapidcheck/detail/TestListenerAdapter.h>

#include "properties/rc_runner.h"

namespace kvconform {

std::uint64_t property_seed(std::uint64_t run_seed, const std::string& property) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : property) h = (h ^ c) * 1099511628211ull;
  return run_seed ^ h;
}

void run_rapidcheck(const property& p, const run_options& o, const std::function<void()>& body, property_run& out) {
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

property_run run_property(const property& p, const implementation& impl, const run_options& o) {
  if (p.fixed) {
    property_run out;
    trace t = p.fixed();
    const verdict v = check_trace(&p, t, impl);
    out.cases = 1, out.stats = v.stats, out.fail = v.fail;
    if (v.fail) out.counterexample = std::move(t);
    return out;
  }
  switch (impl.kind) {
    case cache_kind::flat:
    case cache_kind::ring: return run_rows_property(p, impl, o);
    case cache_kind::beam: return run_beam_property(p, impl, o);
    default: break;
  }
  property_run unknown;
  unknown.error = std::string("no generators for kind ") + to_string(impl.kind);
  return unknown;
}

}  // namespace kvconform
