// The harness's part of the kind table: per kind its model, its property catalogue and its fuzz strategy.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

#include "oracle/models/model.h"
#include "properties/executor/coverage.h"
#include "properties/trace/kind_spec.h"

namespace kvconform {

struct property;
class byte_io;
class fuzz_ops;

/// How a kind's fuzz target reads bytes (fuzz/byte_trace.cpp walks it, for reading and writing):
/// its config fields in a fixed order, then its structured ops (properties/generate/fuzz_ops.h).
struct fuzz_strategy {
  void (*config)(byte_io& io, cache_config& c) = nullptr;
  std::unique_ptr<fuzz_ops> (*ops)(byte_io& io, const cache_config& c) = nullptr;
};

/// One row of the kind table (docs/design.md §3.3). Nothing outside a kind's own folders switches
/// over kinds: the executor, the gate, the CLI, the codec, the port, the vectors and the fuzz
/// targets all go through these rows.
struct kind_descriptor {
  const kind_spec& spec;
  /// The executable specification of a cache of this kind (oracle/models), holding it to its declared policies.
  std::unique_ptr<model> (*make_model)(const cache_config& c, const numeric_profile& p, const policy_set& policies);
  /// Appends the kind's properties, in the order the gate runs them.
  void (*add_properties)(std::vector<property>& catalogue);
  fuzz_strategy fuzz;
  /// The boundary events of its traces and the probe that marks them (docs/design.md §4.6).
  coverage_spec coverage;
  /// The targeted numeric search's structural move (docs/numerics.md §4.4): `t`, whose last op is a
  /// decode, with the rows of k (n x d_k) and v (n x d_v) appended right before it to the sequence
  /// or layer it reads, and the capacity raised so that they fit; nullopt where that cannot be done.
  /// Without it the search keeps the kind's traces at their length.
  std::optional<trace> (*lengthen)(const trace& t, const tensor& k, const tensor& v) = nullptr;
};

/// A model factory for a kind whose model is a `Model(config, profile, policies)`, or a `Model(config, profile)` for a
/// kind without policies.
template <class Model>
std::unique_ptr<model> model_of(const cache_config& c, const numeric_profile& p, const policy_set& policies) {
  if constexpr (std::is_constructible_v<Model, const cache_config&, const numeric_profile&, const policy_set&>)
    return std::make_unique<Model>(c, p, policies);
  else
    return (void)policies, std::make_unique<Model>(c, p);
}

/// Every row, in table order (properties/trace/kind_list.h).
std::span<const kind_descriptor* const> all_kinds();
const kind_descriptor& kind_of(cache_kind k);
/// The model for a config and an implementation's profile and policies: the kind's own.
std::unique_ptr<model> make_model(const cache_config& c, const numeric_profile& p, const policy_set& policies = {});

}  // namespace kvconform
