// Production shapes in every profile (docs/design.md §4.4): wide head dims now and then, and rare long cases.
#pragma once

#include <rapidcheck.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "properties/generate/property.h"
#include "properties/generate/run_property.h"

namespace kvconform {

/// The head dims of production models, which take wide (vectorised, tiled) paths small ones never reach.
inline constexpr std::size_t production_dims[] = {32, 64, 80, 96, 128, 256};
/// Query heads per kv head of production models with grouped-query attention (Qwen2-7B has 7, Llama-3-70B 8).
inline constexpr std::size_t production_groups[] = {5, 7, 8};

/// What a case is (docs/design.md §4.4): an ordinary one, a production one (wide heads) or a long one.
enum class case_shape { ordinary, production, long_case };

/// Whether a case of this RapidCheck size draws production shapes: size 1. Sizes cycle through
/// 0 .. max_size, so that is two cases of a quick run (100 cases up to size 40), the first its
/// second, and about ten of a deep one (1000 up to 100).
constexpr bool production_size(int size) { return size == 1; }
/// Whether a case of this size is a production case: production_size, unless a test disabled them
/// (generator_disabled("production-shapes"), docs/design.md §4.6).
bool production_case(int size);
/// The RapidCheck size a production case's command list is drawn at (times the property's trace
/// scale), not its own size 1: a dozen ops, a few decodes over several rows.
inline constexpr int production_case_size = 12;

/// One of `ordinary`, or in a production case one of `production`; picked by index, so that a
/// failing case shrinks towards the first.
rc::Gen<std::size_t> production_or(std::span<const std::size_t> ordinary, std::span<const std::size_t> production);
/// A head dim: one of `ordinary`, or in a production case one of production_dims.
inline rc::Gen<std::size_t> head_dim_gen(std::span<const std::size_t> ordinary) {
  return production_or(ordinary, production_dims);
}
/// A key or value width: small in quick runs, up to 128 in deep ones, and now and then a production
/// head dim. Picked by index (not elementOf) so that a failing case shrinks towards the smallest.
rc::Gen<std::size_t> width_gen(bool deep);

/// What a long case reaches, whatever the profile: appends past 256 rows and windows, capacities
/// and steps up to 4096 rows; a paged pool of more than 2^16 one-row blocks; a beam cache of more
/// than 2^24 elements (L B H T D).
inline constexpr std::size_t long_rows_min = 300, long_rows_max = 4096;
inline constexpr std::size_t huge_pool_blocks = std::size_t{1} << 16;
inline constexpr std::size_t big_beam_elements = std::size_t{1} << 24;
/// The rows of a long case: long_rows_min to long_rows_max, log-uniform (a long case's cost grows
/// with its rows; every magnitude is reached as often), shrinking towards long_rows_min.
rc::Gen<std::size_t> long_rows_gen();
/// The rows of a long case's first bulk append into `room` rows: at least 7/8 of them and at least
/// `least` (a huge pool's 2^16 + 1, so that a block past 2^16 is taken whatever order blocks come
/// in), shrinking towards all of them.
rc::Gen<std::size_t> long_fill_gen(std::size_t room, std::size_t least = 0);
/// Row widths of a long case (beam's big cache excepted): 1 to 4, so that its bulk ops stay cheap
/// and within the trace codec's limits when a failure is saved; wide heads come in production cases.
inline rc::Gen<std::size_t> long_width_gen() { return rc::gen::resize(100, rc::gen::inRange<std::size_t>(1, 5)); }
/// The RapidCheck size of a long case's command list: 3 to 9 ops however small the case's own size, the
/// kind's bulk prologue first, then the property's own ops (a prefill, then steps and decodes over it).
inline constexpr int long_case_ops = 8;
inline constexpr std::size_t long_case_min_ops = 3;

/// The RapidCheck size of the property's long cases: a phase in {3, 4, 5, 6} fixed by its seed, so
/// the first is among a run's first seven cases; nullopt for drivers and metamorphic properties
/// (whose comparisons would repeat thousands of single ops) and for a run without production shapes.
/// The quick profile makes only the first case of that size long, the deep one each (about ten).
std::optional<int> long_case_size(const property& p, const run_options& o);

}  // namespace kvconform
