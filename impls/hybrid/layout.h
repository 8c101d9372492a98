// How the reference hybrid cache reads a hybrid_layers: each layer's type, group, place in its group and source.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include <kvconform/errors.h>
#include <kvconform/hybrid.h>

namespace kvconform {

/// One layer as the cache sees it.
struct hybrid_layer {
  enum class type : unsigned char { full, sliding, shared, cross } kind = type::full;
  hybrid_group group = hybrid_group::full;  ///< the group whose rows it reads (its producer's, when shared)
  std::size_t source = 0;                   ///< the layer whose rows it reads: itself, or its producer
  std::size_t in_group = 0;                 ///< its producer's place among the writing layers of the group
  std::size_t written = 0;                  ///< its producer's place among all writing layers (the append's k)
};

/// The layers of `l` in order, decoder layers then the cross layer. A shared layer reads the last writing
/// layer whose type its place in the pattern gives it, else the last writing layer (docs/kinds/hybrid.md).
inline std::vector<hybrid_layer> resolve_layers(const hybrid_layers& l) {
  if (l.layers == 0 || l.shared >= l.layers) throw shape_error("hybrid: at least one decoder layer must write");
  if (l.window > 0 && l.keep >= l.window) throw shape_error("hybrid: keep must be below the window");
  using type = hybrid_layer::type;
  auto pattern = [&](std::size_t i) {
    return l.window > 0 && !(l.global_every > 0 && (i + 1) % l.global_every == 0) ? type::sliding : type::full;
  };
  std::vector<hybrid_layer> out;
  std::size_t per_group[hybrid_groups] = {};
  const std::size_t writers = l.layers - l.shared;
  for (std::size_t i = 0; i < writers; ++i) {
    const type t = pattern(i);
    const auto g = t == type::sliding ? hybrid_group::sliding : hybrid_group::full;
    out.push_back({t, g, i, per_group[static_cast<std::size_t>(g)]++, i});
  }
  for (std::size_t i = writers; i < l.layers; ++i) {
    std::size_t from = writers - 1;
    for (std::size_t j = writers; j-- > 0;)
      if (out[j].kind == pattern(i)) {
        from = j;
        break;
      }
    hybrid_layer s = out[from];
    s.kind = type::shared, s.source = from;
    out.push_back(s);
  }
  if (l.cross > 0) out.push_back({type::cross, hybrid_group::cross, l.layers, 0, 0});
  return out;
}

/// Writing layers in each group: the rows a block of that group holds per position.
inline std::size_t group_width(const std::vector<hybrid_layer>& layers, hybrid_group g) {
  return static_cast<std::size_t>(std::count_if(layers.begin(), layers.end(), [g](const hybrid_layer& x) {
    return x.group == g && x.kind != hybrid_layer::type::shared;
  }));
}

}  // namespace kvconform
