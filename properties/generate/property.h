// Named properties: what each generates for its kind, what it needs, and how a trace is judged.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "properties/executor/executor.h"
#include "properties/generate/input_classes.h"

namespace kvconform {

struct property;
struct run_options;
struct property_run;

/// Generates and runs a property's cases on an implementation: a kind's generators with the op
/// mix that property chose (each kind has its own mix; properties/kinds/KIND/properties.cpp).
using case_generator = std::function<property_run(const property&, const implementation&, const run_options&)>;

/// A named property of one kind. Every trace goes through the one executor, which checks
/// everything after every op; a property chooses what traces to make and may add a metamorphic
/// comparison, pin a fixed trace, or drive the cache itself. Several kinds have properties of the
/// same name (the statements of properties/generate/statements.h); each kind words its own mix.
struct property {
  std::string name, summary;
  cache_kind kind = cache_kind::flat;
  capability_set needs;                  ///< else NOT SUPPORTED
  /// Pins plain attention's numbers (a worked example): NOT SUPPORTED on a cache declaring other attention
  /// semantics (docs/numerics.md §7), whose numbers differ by design.
  bool plain_attention = false;
  std::span<const input_class> classes;  ///< empty = every class
  bool long_traces = false;              ///< larger capacities and more ops
  /// Its decodes' numbers matter: the targeted numeric search (docs/numerics.md §4.4) follows its
  /// random cases. Only for generated properties without a rewrite or a driver (their traces replay as they are).
  bool search = false;
  /// Metamorphic rewrite: an op into an equivalent group of ops; the implementation's state
  /// after the group must equal its state after the original op.
  std::vector<op> (*rewrite)(const op&) = nullptr;
  trace (*fixed)() = nullptr;  ///< one fixed trace instead of generated ones (cases = 1)
  /// A driver that makes ops from the implementation's own answers (a generation loop) and
  /// steps the session itself; `size` is drawn in [1, capacity]. The ops it ran are the trace.
  void (*drive)(session& s, const cache_config& c, std::uint64_t seed, std::size_t size) = nullptr;
  case_generator generate;  ///< generated cases (unless fixed)
};

/// Every kind's catalogue, in kind-table order.
const std::vector<property>& all_properties();
/// The properties of one kind, in catalogue order.
std::vector<const property*> properties_of(cache_kind k);
/// By name for a kind, or nullptr.
const property* find_property(const std::string& name, cache_kind k);

/// Judges one trace as `p` does: the executor over every op, plus p's metamorphic comparison.
verdict check_trace(const property* p, const trace& t, const implementation& impl);

}  // namespace kvconform
