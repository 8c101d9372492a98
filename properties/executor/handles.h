// What the adapters of the sequence kinds (paged, prefix) share: trace handles to ids, and their observation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "properties/executor/adapter.h"

namespace kvconform {

/// Handles count the create and fork ops of a trace, refused ones included; each keeps the id the
/// implementation gave (none when refused) and whether it is live. A handle that never named a
/// sequence maps to an id no implementation is expected to have issued, so that the
/// implementation refuses it itself; a released one keeps its old id for the same reason.
template <class Id>
class sequence_handles {
 public:
  /// Uses up the next handle; `give` it its id once the implementation answered.
  void issue() { handles_.emplace_back(); }
  void give(Id id) { handles_.back() = {id, true}; }
  Id id_of(std::int64_t h) const { return issued(h) ? *at(h).id : std::numeric_limits<Id>::max(); }
  bool issued(std::int64_t h) const { return h >= 0 && static_cast<std::size_t>(h) < handles_.size() && at(h).id; }
  void released(std::int64_t h) {
    if (issued(h)) handles_[static_cast<std::size_t>(h)].live = false;
  }
  /// The live handle of `id`, now released (preemption); -1 (which no model expects) if none.
  std::int64_t release_id(Id id) {
    for (std::size_t h = 0; h < handles_.size(); ++h)
      if (handles_[h].live && handles_[h].id == id) return handles_[h].live = false, static_cast<std::int64_t>(h);
    return -1;
  }
  /// Calls f(handle, id) for every live handle, in handle order.
  template <class F>
  void for_each_live(F f) const {
    for (std::size_t h = 0; h < handles_.size(); ++h)
      if (handles_[h].live) f(static_cast<std::int64_t>(h), *handles_[h].id);
  }

 private:
  struct handle {
    std::optional<Id> id;  ///< empty when its create or fork was refused
    bool live = false;
  };
  const handle& at(std::int64_t h) const { return handles_[static_cast<std::size_t>(h)]; }
  std::vector<handle> handles_;
};

/// One stream "seq H" per live handle (its rows and block table), then every held block's
/// reference count: the observation every block-pool cache shares.
template <class C, class Id>
void observe_sequences(const C& c, const sequence_handles<Id>& handles, const cache_config& config, snapshot& s) {
  handles.for_each_live([&](std::int64_t h, Id sid) {
    stream st;
    st.name = "seq " + std::to_string(h);
    st.d_k = config.d_k, st.d_v = config.d_v;
    read_rows(c.keys(sid), st.keys);  // each view once: a paged reference gathers a copy
    read_rows(c.values(sid), st.values);
    if constexpr (requires { c.key_scales(sid); })  // integer groups (docs/numerics.md §6.2)
      copy_groups(
          st.key_groups, [&] { return c.key_scales(sid); },
          [&] {
            if constexpr (requires { c.key_zeros(sid); }) return c.key_zeros(sid);
          });
    if constexpr (requires { c.value_scales(sid); })
      copy_groups(
          st.value_groups, [&] { return c.value_scales(sid); },
          [&] {
            if constexpr (requires { c.value_zeros(sid); }) return c.value_zeros(sid);
          });
    for (const auto& b : c.block_table(sid)) st.blocks.push_back(static_cast<std::int64_t>(b));
    s.streams.push_back(std::move(st));
  });
  for (std::size_t b = 0; b < static_cast<std::size_t>(c.num_blocks()); ++b)
    if (const auto refs = static_cast<std::int64_t>(c.ref_count(b)); refs > 0)
      s.block_refs.emplace_back(static_cast<std::int64_t>(b), refs);
}

}  // namespace kvconform
