// The recurrent kind's model: per sequence one recurrent head's state and convolution window (and the rows of the
// attention layers beside it), rollback of the last append, and checkpoints of the state and blocks of the rows at
// block boundaries, found again by the prefix's tokens (docs/kinds/recurrent.md).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "oracle/models/model.h"
#include "oracle/numeric/recurrence.h"
#include "properties/trace/policy.h"

namespace kvconform {

class recurrent_model final : public model {
 public:
  /// Without `numbers` the model follows only what generators read (lengths, droppable steps, chains): its states
  /// and outputs stay empty, which is most of its cost.
  recurrent_model(const cache_config& c, const numeric_profile& p, const policy_set& policies, bool numbers = true);
  expectation apply(const op& o) override;
  snapshot observe() const override;

  /// What the generators and the coverage probe read.
  std::size_t handles() const { return seqs_.size(); }
  bool live(std::int64_t h) const;
  std::size_t length(std::int64_t h) const { return seq(h).tokens.size(); }
  /// Steps of h's last append a rollback may still drop.
  std::size_t droppable(std::int64_t h) const { return seq(h).droppable; }
  const std::vector<std::int64_t>& tokens(std::int64_t h) const { return seq(h).tokens; }
  std::size_t checkpoints() const { return store_.size(); }
  std::size_t blocks() const { return blocks_.size(); }
  /// The live handles, oldest first.
  std::vector<std::int64_t> live() const;
  /// The chains of the checkpoints held, in their order; then those of the attention blocks held with `blocks`.
  std::vector<std::vector<std::int64_t>> chains(bool blocks = false) const;
  bool holds_checkpoint(const std::vector<std::int64_t>& chain) const { return store_.count(chain) > 0; }
  bool holds_block(const std::vector<std::int64_t>& chain) const { return blocks_.count(chain) > 0; }
  /// The steps a create of `tokens` would resume from.
  std::size_t hit_of(const std::vector<std::int64_t>& tokens) const;
  const cache_config& config() const { return c_; }

  /// Facts about the last op, for the coverage probe.
  struct facts {
    std::size_t hit = 0;           ///< a create's hit, in steps
    bool short_of_state = false;   ///< a create's hit stopped below a chain the attention blocks covered
    bool short_of_blocks = false;  ///< a create's hit stopped below a checkpoint an attention block was missing for
    bool published = false;        ///< a checkpoint was published
    bool evicted = false;          ///< a checkpoint was evicted (by evict or for room)
    bool dropped_pending = false;  ///< a rollback dropped a boundary its append had crossed
    bool rolled_back = false;      ///< an accepted rollback of at least one step
    bool after_rollback = false;   ///< an append right after a rollback of the same sequence
    bool crossed = false;          ///< an append of several steps crossed a block boundary
  };
  const facts& last() const { return last_; }

 private:
  // Shared until written (own): a fork, a checkpoint or a boundary's pending state costs a pointer, and a generator's
  // copies of the model (RapidCheck copies it per command) copy no states.
  using tracker = std::shared_ptr<recurrence_tracker>;
  struct sequence {
    tracker now, committed;  // committed: before the last append, which a rollback replays from
    std::vector<std::int64_t> tokens;
    std::size_t droppable = 0;
    std::vector<double> x, g, beta;          // the last append's inputs, as stored
    std::map<std::size_t, tracker> pending;  // its crossed boundaries, published when it is committed
    bool rolled_back = false;
    std::vector<std::vector<double>> keys, values;  // per attention layer, a row per step (numbers only)
  };
  struct checkpoint {
    tracker state;
    std::uint64_t used = 0;
    std::string name;  // "checkpoint T0,T1,...", written once (with numbers): every observation names every entry
  };
  /// The rows of one block of steps of every attention layer, layer by layer (empty without numbers).
  struct block {
    std::vector<double> keys, values;
    std::uint64_t used = 0;
    std::string name;  // "block T0,T1,... rows", as a checkpoint's
  };

  cache_config c_;
  numeric_profile p_;
  recurrence_form form_;
  recurrence_precision prec_;
  std::vector<double> conv_;
  bool all_but_last_ = false, append_end_ = false, numbers_ = true;
  std::vector<std::optional<sequence>> seqs_;
  std::map<std::vector<std::int64_t>, checkpoint> store_;
  std::map<std::vector<std::int64_t>, block> blocks_;  // with store_, at most capacity entries (one pool)
  std::uint64_t clock_ = 0;
  std::size_t hit_tokens_ = 0;
  facts last_;

  const sequence& seq(std::int64_t h) const { return *seqs_.at(static_cast<std::size_t>(h)); }
  tracker fresh_;  // the empty state every sequence starts from
  std::size_t channels() const { return 2 * c_.d_k + c_.d_v; }
  expectation create(const op& o);
  expectation append(const op& o);
  expectation rollback(const op& o);
  /// Advances s.now by n stored steps, noting the boundaries they cross; outputs and bounds when asked.
  void advance(sequence& s, std::size_t from, std::size_t n, std::vector<double>* out, std::vector<double>* bound);
  /// The last append becomes permanent: its checkpoints are published (docs/kinds/recurrent.md, Checkpoints).
  void commit(sequence& s);
  void publish(std::vector<std::int64_t> chain, const tracker& t);
  void publish_block(const sequence& s, std::size_t end);
  /// Makes room for one more entry in the pool of checkpoints and blocks.
  void make_room();
  void evict_oldest();
  /// The most steps of `tokens` a create may resume (the declared hit limit).
  std::size_t hit_limit(const std::vector<std::int64_t>& tokens) const;
  /// The whole blocks of `tokens`, within the hit limit, whose attention blocks are all held (all without layers).
  std::size_t covered(const std::vector<std::int64_t>& tokens) const;
};

}  // namespace kvconform
