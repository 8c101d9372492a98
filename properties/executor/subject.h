// The executor's small runtime interface to an implementation under test (in-process or a port).
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <kvconform/array_view.h>
#include "oracle/numeric/numeric_profile.h"
#include "properties/trace/trace.h"

namespace kvconform {

/// One op as the implementation receives it: the op plus views of the executor's guarded
/// copies of its arrays (sentinels around them; poisoned after the call).
struct call {
  const op& o;
  array_view k, v, q, mask, w_uk, w_uv, x, g, beta, sinks;
  array_view index_k, index_q, index_w;  ///< sparse top-k's indexer inputs (docs/numerics.md §7.4)
};

/// What an implementation did: accepted (with decode results) or refused with a reason from
/// the `refusal` set of properties/trace/refusal.h.
struct op_outcome {
  bool accepted = true;
  unsigned reason = 0;
  std::string message;
  std::vector<double> output, weights;  ///< a decode's; a recurrent append's outputs, one row of d_v per step
  std::vector<std::int64_t> preempted;  ///< paged with preemption: handles of released victims
  bool unsupported = false;             ///< the implementation lacks the op (NOT SUPPORTED, never a pass)
};

/// A failure an implementation's adapter detects itself (a port that hangs, exits or answers
/// garbage); the executor reports it under `check` instead of as an unexpected exception.
struct subject_failure : std::runtime_error {
  std::string check;
  subject_failure(std::string check_name, const std::string& what)
      : std::runtime_error(what), check(std::move(check_name)) {}
};

/// An implementation under test. Exceptions other than refusals escape `apply` and are
/// reported by the executor as failures.
class subject {
 public:
  virtual ~subject() = default;
  virtual op_outcome apply(const call& c) = 0;
  virtual snapshot observe() = 0;
  /// The state after an op, which an implementation may confirm against the model's `expected`
  /// instead of sending it in full (a port answering digests, docs/port-protocol.md §8); when it
  /// differs, the implementation's own state in full.
  virtual snapshot observe_against(const snapshot& expected) {
    (void)expected;
    return observe();
  }
};

using subject_ptr = std::unique_ptr<subject>;

/// What a registered implementation is for: the gate runs references; `selftest` proves every
/// mutant (deliberately wrong) is killed and every variant (a correct alternative) passes.
enum class impl_group { reference, mutant, variant };
const char* to_string(impl_group g);

/// Optional abilities of an implementation. A property that needs one the implementation lacks
/// is NOT SUPPORTED: never run, never a pass, never a kill.
enum class capability : unsigned {
  decode = 1u << 0,
  preempt = 1u << 1,
  sinks = 1u << 2,
  prefill = 1u << 3,     ///< multi-query causal attention over appended steps
  rollback = 1u << 4,    ///< dropping the newest steps
  prefix = 1u << 5,      ///< hybrid: a create finds the blocks live sequences hold for a prefix of its tokens
  extra_keys = 1u << 6,  ///< prefix: a create's extra_key is part of its blocks' chain (docs/kinds/prefix.md)
  phases = 1u << 7,      ///< prefix: lookup, admit, retract and abort, a scheduler's phases (docs/kinds/prefix.md)
};
inline constexpr capability all_capabilities[] = {capability::decode,     capability::preempt,  capability::sinks,
                                                  capability::prefill,    capability::rollback, capability::prefix,
                                                  capability::extra_keys, capability::phases};
const char* to_string(capability c);
std::optional<capability> capability_from_string(std::string_view name);

/// A set of capabilities.
class capability_set {
 public:
  constexpr capability_set() = default;
  constexpr capability_set(std::initializer_list<capability> cs) {
    for (capability c : cs) add(c);
  }
  constexpr void add(capability c) { bits_ |= static_cast<unsigned>(c); }
  constexpr bool has(capability c) const { return (bits_ & static_cast<unsigned>(c)) != 0; }
  /// The first capability of this set that `have` lacks, if any.
  std::optional<capability> missing_from(capability_set have) const;
  /// "decode, preempt".
  std::string describe() const;

 private:
  unsigned bits_ = 0;
};

/// What a plug-in says about a cache it registers.
struct implementation_info {
  std::string name;
  impl_group group = impl_group::reference;
  std::string note = {};    ///< one line: what it is, or the bug it models and where it comes from
  std::string killer = {};  ///< mutants: the property expected to kill it (checked against the catalogue)
};

/// A registered implementation: who it is, its kind, its declared numeric profile and capabilities,
/// and a factory for its caches.
struct implementation : implementation_info {
  cache_kind kind = cache_kind::flat;
  numeric_profile profile;
  /// The choices it declares where engines legitimately differ (docs/design.md §2.4), normalised: the model holds
  /// it to exactly these.
  policy_set policies;
  capability_set capabilities;
  std::string
      unavailable;  ///< non-empty: the implementation cannot serve its kind at all (every property NOT SUPPORTED)
  /// The largest value of each limited config size, by the field's name: a port declares them in
  /// hello (docs/port-protocol.md §3), and generated configs stay within them.
  std::map<std::string, std::size_t> config_limits;
  std::function<subject_ptr(const cache_config&)> make;
  /// Called before each property runs, if set (a port forgets the failure it stopped retrying).
  std::function<void()> begin_property;
};

}  // namespace kvconform
