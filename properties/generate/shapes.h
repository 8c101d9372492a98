// Production shapes in every profile (docs/design.md §4.4): wide head dims now and then, and rare long cases.
#pragma once

#include <rapidcheck.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <type_traits>

#include "properties/generate/property.h"
#include "properties/generate/run_property.h"

namespace kvconform {

/// The head dims of production models, which take wide (vectorised, tiled) paths small ones never reach.
inline constexpr std::size_t production_dims[] = {32, 64, 80, 96, 128, 256};
/// Query heads per kv head of production models with grouped-query attention (Qwen2-7B has 7, Llama-3-70B 8).
inline constexpr std::size_t production_groups[] = {5, 7, 8};

/// Whether a case of this RapidCheck size draws production shapes: sizes 2, 34, 66, ... (2 mod 32).
/// Sizes cycle through 0 .. max_size, so that is five cases of a quick run (100 cases up to size
/// 40), the first its third case, four in a hundred deep ones, and none of the format references'
/// sixteenth (sizes 0, 8, .. 40), whose checks cost most for wide rows.
constexpr bool production_size(int size) { return size % 32 == 2; }

/// One of `ordinary`, or in a production case one of `production`; picked by index, so that a
/// failing case shrinks towards the first.
rc::Gen<std::size_t> production_or(std::span<const std::size_t> ordinary, std::span<const std::size_t> production);
/// A head dim: one of `ordinary`, or in a production case one of production_dims.
inline rc::Gen<std::size_t> head_dim_gen(std::span<const std::size_t> ordinary) {
  return production_or(ordinary, production_dims);
}

/// What a long case reaches, whatever the profile: appends past 256 rows and windows, capacities
/// and steps up to 4096 rows; a paged pool of more than 2^16 one-row blocks; a beam cache of more
/// than 2^24 elements (L B H T D).
inline constexpr std::size_t long_rows_min = 300, long_rows_max = 4096;
inline constexpr std::size_t huge_pool_blocks = std::size_t{1} << 16;
inline constexpr std::size_t big_beam_elements = std::size_t{1} << 24;
/// The rows of a long case: long_rows_min to long_rows_max, log-uniform (a long case's cost grows
/// with its rows; every magnitude is reached as often), shrinking towards long_rows_min.
rc::Gen<std::size_t> long_rows_gen();
/// Row widths of a long case (beam's big cache excepted): 1 to 4, so that its bulk ops stay cheap
/// and within the trace codec's limits when a failure is saved; wide heads come in production cases.
inline rc::Gen<std::size_t> long_width_gen() { return rc::gen::resize(100, rc::gen::inRange<std::size_t>(1, 5)); }
/// The RapidCheck size of a long case's command list: 3 to 5 ops, a few bulk ops however small the
/// case's own size, of which the first are the kind's bulk prologue.
inline constexpr int long_case_ops = 4;
inline constexpr std::size_t long_case_min_ops = 3;

/// `make(n, seed)` as a mapping that keeps its last result: RapidCheck computes a mapped value again
/// each time it reads it, and a long case's bulk op of thousands of rows would be drawn each time.
template <class Make>
auto keep_last(Make make) {
  using made = std::invoke_result_t<Make, std::size_t, std::uint64_t>;
  struct last_made {
    std::size_t n;
    std::uint64_t seed;
    made value;
  };
  auto last = std::make_shared<std::optional<last_made>>();
  return [make, last](std::size_t n, std::uint64_t seed) {
    if (!*last || (*last)->n != n || (*last)->seed != seed) *last = last_made{n, seed, make(n, seed)};
    return (*last)->value;
  };
}

/// The RapidCheck size of the property's long cases: a phase in {1, 3, 5, 6} fixed by its seed, so
/// two cases of a quick run (the first among its first seven), about ten of a deep one and none
/// among the format references' sixteenth; nullopt for drivers and metamorphic properties (whose
/// comparisons would repeat thousands of single ops) and for a run without production shapes.
std::optional<int> long_case_size(const property& p, const run_options& o);

}  // namespace kvconform
