// Named properties: what each generates, which kinds it applies to, and how a trace is judged.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "properties/executor/executor.h"
#include "properties/generate/input_classes.h"

namespace kvconform {

/// Relative weights of the op generators a property draws from (0 = never).
struct op_mix {
  int append = 6;      ///< n in [1, max_steps], 1-D or 2-D
  int fill = 0;        ///< exactly up to capacity (flat); n = W-1, W, W+1, 2W+1 (ring)
  int overfill = 0;    ///< capacity - len + 1 or more steps
  int empty = 1;       ///< a 2-D append of 0 steps
  int bad_shape = 0;   ///< wrong width, wrong rank, or k and v differing in steps
  int decode = 2;
  int bad_decode = 0;  ///< q of the wrong width or rank, or a decode of an empty cache
  int rollback = 0;     ///< beam: an update starting below the layer's length (truncates first)
  int reorder = 0;      ///< beam: a gather along the batch axis (repeats, drops, permutations, identity)
  int bad_reorder = 0;  ///< beam: an index out of range, or not one index per batch row
  // Paged only (the single-sequence kinds have one sequence and ignore these):
  int create = 1;      ///< a new sequence
  int fork = 1;        ///< a fork of a live sequence
  int release = 1;     ///< a release of a live sequence
  int stale = 0;       ///< an append, decode, fork or release naming a released or never-issued handle
};

/// A named property. Every trace goes through the one executor, which checks everything after
/// every op; a property chooses what traces to make (mix, classes, sizes) and may add a
/// metamorphic comparison or pin a fixed trace.
struct property {
  std::string name, summary;
  std::vector<cache_kind> kinds;
  std::vector<std::string> needs;  ///< capabilities an implementation must have, else NOT SUPPORTED
  op_mix mix;
  std::span<const input_class> classes;  ///< empty = every class
  bool long_traces = false;              ///< larger capacities and more ops
  /// Metamorphic rewrite: an op into an equivalent group of ops; the implementation's state
  /// after the group must equal its state after the original op.
  std::vector<op> (*rewrite)(const op&) = nullptr;
  trace (*fixed)() = nullptr;  ///< one fixed trace instead of generated ones (cases = 1)
  /// A driver that makes ops from the implementation's own answers (a generation loop) and
  /// steps the session itself; `size` is drawn in [1, capacity]. The ops it ran are the trace.
  void (*drive)(session& s, const cache_config& c, std::uint64_t seed, std::size_t size) = nullptr;

  bool applies_to(cache_kind k) const;
};

const std::vector<property>& all_properties();

/// Appends a property with its name, summary and kinds, and returns it for the rest.
property& add_property(std::vector<property>& ps, std::string name, std::string summary, std::span<const cache_kind> kinds);
/// The catalogue, one source per kind family.
void add_rows_properties(std::vector<property>& ps);
void add_beam_properties(std::vector<property>& ps);
void add_paged_properties(std::vector<property>& ps);
const property* find_property(const std::string& name);

/// Judges one trace as `p` does: the executor over every op, plus p's metamorphic comparison.
verdict check_trace(const property* p, const trace& t, const implementation& impl);

}  // namespace kvconform
