// The parts of the prefix kind that its sources share: its op mix, generators and fuzz strategy.
#pragma once

#include <memory>
#include <vector>

#include "properties/generate/fuzz_ops.h"
#include "properties/generate/pool_speculation_mix.h"
#include "properties/generate/property.h"

namespace kvconform::kinds {

/// The most commands of a quick case of a pool with tokens (prefix, radix, tiered): the first cases, which kill, are
/// drawn as before; the largest, which cost most, are cut (docs/performance.md §8). Deep cases are not capped.
inline constexpr int quick_max_commands = 32;

/// Relative weights of the phases a property draws (docs/kinds/prefix.md "Phases"; 0 = never).
struct phase_mix {
  int lookup = 0;   ///< a waiting sequence whose prompt is a token sequence held before, cut or continued
  int admit = 0;    ///< of a waiting sequence, a chunk's rows or its whole prompt (now and then more than fit)
  int chunk = 0;    ///< an append of the next tokens of a running sequence's prompt
  int retract = 0;  ///< of a running sequence
  int abort = 0;    ///< of a running or waiting sequence
  int stale = 0;    ///< an admit of a running sequence, a retract of a waiting one, an abort of a dead handle
  /// A scheduler step as one command: several lookups, then their admits, their chunks, a retract or abort between
  /// chunks (step_plan in phase_generation.h).
  int step = 0;
  unsigned tails = 0x1f;  ///< the tails a step draws (bit i: tail i; tail 0 always)
};

/// Relative weights of the ops a prefix property draws (0 = never).
struct prefix_mix {
  int append = 6;     ///< up to two blocks of tokens, capped at what fits
  int fill = 0;       ///< every free and evictable block (evicting the least recently released)
  int overfill = 0;   ///< 1 or 2 rows more than fit: refused
  int empty = 1;      ///< a 2-D append of 0 steps
  int bad_shape = 0;  ///< a token more than steps, or keys of the wrong width
  int decode = 2;
  int bad_decode = 0;                     ///< q one too wide
  int create = 1;                         ///< a new sequence looking up a few fresh tokens
  int reuse = 1;                          ///< a create looking up a prefix of a token sequence held before
  int fork = 1;                           ///< a fork of a live sequence
  int release = 1;                        ///< a release of a live sequence
  int stale = 0;                          ///< a release naming a released or never-issued handle
  bool keys = false;                      ///< creates name extra keys 0 to 2 (a cache with extra_keys)
  pool_speculation_mix speculation = {};  ///< prefills, rollbacks and speculative rounds (behind their capabilities)
  phase_mix phases = {};                  ///< the phases (behind the capability `phases` for prefix)
  /// Commands per RapidCheck size (doubled for a property with long traces): many sequences come and go, so a kind's
  /// own properties draw 2; the statements, which need no pool history, 1 (docs/performance.md §8).
  double trace = 2;
};

/// A driver: `size` distinct prefixes cached and released in turn, some reused and released again,
/// then a fresh sequence that runs the pool dry, then every prefix looked up again: which ones are
/// still found shows whether the least recently released blocks went first.
void lru_scenario(session& s, const cache_config& c, std::uint64_t seed, std::size_t size);
/// The cases of a prefix property drawn from `mix`.
case_generator prefix_cases(prefix_mix mix);
void add_prefix_properties(std::vector<property>& ps);
/// The phases' properties of `kind` (prefix, radix; docs/kinds/prefix.md "Phases"), KIND_admitted_hit_decodes_as_miss,
/// KIND_written_before_found and KIND_retract_abort_release_blocks, drawn from `cases`, needing `needs`.
void add_phase_properties(std::vector<property>& ps, cache_kind kind, case_generator (*cases)(prefix_mix),
                          capability_set needs);
/// prefill_chunked_equals_whole, prefill_equals_decode_steps, speculative_rounds and refused_rollback_unchanged of a
/// prefix pool (prefix's, or a kind's built on it: tiered), drawn from `cases`.
void add_prefix_speculation(std::vector<property>& ps, cache_kind kind, case_generator (*cases)(prefix_mix));
void prefix_fuzz_config(byte_io& io, cache_config& c);
std::unique_ptr<fuzz_ops> prefix_fuzz_ops(byte_io& io, const cache_config& c);

}  // namespace kvconform::kinds
