// The vocabulary of each cache kind: its ops, the fields every op carries, and its config fields.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "properties/trace/op_vocabulary.h"
#include "properties/trace/policy.h"
#include "properties/trace/trace.h"

namespace kvconform {

/// One op of a kind's vocabulary.
struct op_spec {
  op_kind kind;
  unsigned fields = 0;  ///< op_field bits (op_vocabulary.h)
  const char* summary = "";
};

/// One field of a kind's config: a size (at least `min`, at most 2^20; an `optional` one is 0 when
/// absent and written only when it is not 0), a flag (optional, false when absent) or a scale
/// (optional, 1 when absent, finite within [2^-40, 2^40]).
struct config_field {
  const char* name;
  std::size_t cache_config::*size = nullptr;
  bool cache_config::*flag = nullptr;
  const char* summary = "";
  std::size_t min = 1;
  double cache_config::*scale = nullptr;
  bool optional = false;
};
/// The per-tensor scales every kind's config ends with: storage formats are orthogonal to kinds.
inline constexpr config_field k_scale_field{
    "k_scale", nullptr, nullptr, "per-tensor key scale of a scaled element format", 1, &cache_config::k_scale};
inline constexpr config_field v_scale_field{
    "v_scale", nullptr, nullptr, "per-tensor value scale of a scaled element format", 1, &cache_config::v_scale};
/// The range a per-tensor scale must lie in.
inline constexpr double min_scale = 0x1p-40, max_scale = 0x1p40;

/// A cache kind's vocabulary: what the trace codec, the schemas, the port protocol and the fuzz
/// byte format need to know about it. The harness's part of the kind table (properties/executor/kind_table.h)
/// adds its model, generators, properties and fuzz strategy.
struct kind_spec {
  cache_kind kind;
  const char* name;
  const char* summary;
  std::span<const op_spec> ops;
  std::span<const config_field> config;
  /// Rules across fields (beam: d_k = d_v); "" when the config is fine.
  std::string (*check)(const cache_config&) = nullptr;
  /// Doubles the cache would hold, so that a hostile trace cannot make it allocate gigabytes.
  double (*cells)(const cache_config&) = nullptr;
  /// The most cells a config may ask for: max_config_cells (properties/trace/trace_json.h), more only for a
  /// kind whose caches reserve their storage and touch what they write (docs/reliability.md §2).
  double max_cells = 0x1p24;
  /// The points where engines legitimately differ (docs/design.md §2.4), each with its choices, default first.
  std::span<const policy_spec> policies = {};
  /// Rules across policies (a choice that needs another); "" when the declared set is fine.
  std::string (*policy_rules)(const policy_set&) = nullptr;

  /// The op's spec, or nullptr when the kind has no such op.
  const op_spec* find(op_kind k) const;
  /// The policy's spec, or nullptr when the kind has no such policy.
  const policy_spec* find_policy(std::string_view name) const;
};

/// The vocabulary of the rows family (flat, ring, growing): append and decode, prefill and rollback.
inline constexpr op_spec rows_ops[] = {
    {op_kind::append, field_k | field_v, "k and v 1-D (one step) or 2-D (n steps, n = 0 a no-op) of widths d_k, d_v"},
    {op_kind::decode, field_q, "q 1-D of width d_k over the held rows"},
    {op_kind::prefill, field_k | field_v | field_q,
     "k and v as in append (m steps), q 2-D (m, d_k): step i's query attends causally; m = 0 a no-op"},
    {op_kind::rollback, field_count, "drops the newest count steps (0 a no-op)"},
};
/// Flat's ops: the rows family's, a decode and a prefill carrying learned sinks and, with the appends, the indexer's
/// inputs when the profile declares them (docs/numerics.md §7).
inline constexpr op_spec flat_ops[] = {
    {op_kind::append, field_k | field_v | field_index_k,
     "k and v 1-D (one step) or 2-D (n steps, n = 0 a no-op) of widths d_k, d_v; index_k when top-k is declared"},
    {op_kind::decode, field_q | field_sinks | field_index_q | field_index_w,
     "q 1-D of width d_k over the held rows; sinks (1), index_q and index_w when declared"},
    {op_kind::prefill, field_k | field_v | field_q | field_sinks | field_index_k | field_index_q | field_index_w,
     "k and v as in append (m steps), q 2-D (m, d_k): step i's query attends causally; m = 0 a no-op; sinks (1) and "
     "the indexer's inputs when declared"},
    {op_kind::rollback, field_count, "drops the newest count steps (0 a no-op)"},
};
/// Ring's ops: the rows family's, a decode and a prefill carrying learned sinks when the profile declares
/// them (docs/numerics.md §7).
inline constexpr op_spec attending_rows_ops[] = {
    {op_kind::append, field_k | field_v, "k and v 1-D (one step) or 2-D (n steps, n = 0 a no-op) of widths d_k, d_v"},
    {op_kind::decode, field_q | field_sinks, "q 1-D of width d_k over the held rows; sinks (1) when declared"},
    {op_kind::prefill, field_k | field_v | field_q | field_sinks,
     "k and v as in append (m steps), q 2-D (m, d_k): step i's query attends causally; m = 0 a no-op; sinks (1) when "
     "declared"},
    {op_kind::rollback, field_count, "drops the newest count steps (0 a no-op)"},
};
/// Capacity (what it means is the kind's: `capacity`), d_k and d_v, then the per-tensor scales.
constexpr std::array<config_field, 5> sized_config(const char* capacity) {
  return {{{"capacity", &cache_config::capacity, nullptr, capacity},
           {"d_k", &cache_config::d_k, nullptr, "key width"},
           {"d_v", &cache_config::d_v, nullptr, "value width"},
           k_scale_field,
           v_scale_field}};
}
/// capacity x (d_k + d_v): the cells of a cache of one sequence.
double rows_cells(const cache_config& c);

/// What is wrong with a cache of kind k declaring `p` (a policy the kind lacks, a choice the policy lacks, a rule
/// across policies), naming what is accepted; "" when nothing is.
std::string policy_problem(const kind_spec& k, const policy_set& p);
/// `p` without the choices that are their policy's default (a valid `p`).
policy_set normalised(const kind_spec& k, policy_set p);
/// "prefix, duplicates=registered" for a kind and what a cache of it declares; the kind alone when nothing is.
std::string with_policies(const kind_spec& k, const policy_set& p);

/// The spec of every kind, in table order (properties/trace/kind_list.h).
std::span<const kind_spec* const> kind_specs();
const kind_spec& spec_of(cache_kind k);
std::optional<cache_kind> kind_from_string(std::string_view name);
/// The kinds' names in table order, comma-separated ("flat, ring, paged, beam, growing, prefix").
std::string kind_names();

}  // namespace kvconform
