// The model of the paged kind: exact rows per sequence handle, abstract blocks with reference counts.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "oracle/models/model.h"

namespace kvconform {

/// Sequences by trace handle (the count of create and fork ops before them, refused forks
/// included), each with its exact rows and a table of abstract block ids; a block's count is
/// the number of tables holding it, and free = capacity - blocks held. Block ids are fresh
/// numbers never reused: snapshots compare them up to renaming.
///
/// Refusal precedence (a set of acceptable reasons where several apply):
/// - append: `index` for a handle that names no live sequence and `shape` for malformed k/v,
///   either one when both hold; `capacity` only for a live sequence and a well-formed append,
///   when the pool lacks the blocks (after preempting every other sequence, with the policy on).
/// - decode: any of `index`, `shape` (q not 1-D of width d_k), `empty` (a live sequence with
///   no rows) that holds.
/// - fork, release: `index` for a handle that names no live sequence. create is never refused.
class paged_model final : public model {
 public:
  paged_model(const cache_config& c, const numeric_profile& p) : config_(c), profile_(p) {}

  expectation apply(const op& o) override;
  /// One stream "seq H" per live handle in handle order, counters free_blocks and bytes_in_use
  /// (blocks held x the bytes block_size rows of keys and of values take in their formats,
  /// docs/numerics.md §6.3), and every held block's count.
  snapshot observe() const override;

  const cache_config& config() const { return config_; }
  /// Live handles, oldest first.
  std::vector<std::int64_t> live() const;
  /// Handles issued so far: the next create or fork gets this number.
  std::int64_t handles() const { return handles_; }
  /// Blocks no table holds.
  std::size_t free_blocks() const { return config_.capacity - refs_.size(); }
  /// Rows of live sequence h.
  std::size_t size(std::int64_t h) const { return seqs_.at(h).rows.size(); }
  /// The most rows an append to live sequence h takes without preempting (the exact fill).
  std::size_t room(std::int64_t h) const;
  /// Whether live sequence h's last block is partly filled and held by another table too, so
  /// that its next append copies it first.
  bool copies_on_append(std::int64_t h) const;

 private:
  struct sequence {
    stored_stream rows;
    std::vector<std::int64_t> blocks;
  };
  bool is_live(std::int64_t h) const { return seqs_.count(h) != 0; }
  expectation append(const op& o);
  void drop(std::int64_t h);
  std::int64_t new_block();

  cache_config config_;
  numeric_profile profile_;
  std::map<std::int64_t, sequence> seqs_;      // live sequences by handle
  std::map<std::int64_t, std::int64_t> refs_;  // held block -> tables holding it (> 0)
  std::int64_t handles_ = 0, blocks_made_ = 0;
};

}  // namespace kvconform
