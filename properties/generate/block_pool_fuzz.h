// The fuzz strategy the block-pool kinds (paged, prefix) share: the pool's config, and ops on live sequences.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "properties/generate/fuzz_ops.h"

namespace kvconform {

/// The sizes (fuzz_sizes), then a pool of at most `most_blocks` blocks (few, so that it runs dry and
/// blocks are reused) of 1 to `most_block_size` rows: the config fields every block-pool kind reads first.
inline void block_pool_fuzz_config(byte_io& io, cache_config& c, std::size_t most_blocks,
                                   std::uint64_t most_block_size) {
  fuzz_sizes(io, c);
  c.capacity = std::min(c.capacity, most_blocks);
  c.block_size = io.range(1, most_block_size, c.block_size);
}

/// The structured ops of a block-pool kind whose model is a `Model`: flavour 1 a create, 2 a fork, a
/// release or a rollback, 3 a decode, 4 an append or the same steps as a prefill and 5 a malformed
/// append, each but a create naming a sequence (a create comes first while none is live). The kind
/// makes its creates, names the sequence and sizes its appends, so that they land on block
/// boundaries and on the room the pool has left.
template <class Model>
class block_pool_fuzz : public model_fuzz_ops<Model> {
 public:
  using model_fuzz_ops<Model>::model_fuzz_ops;

  op make(int which) final {
    op o;
    const std::vector<std::int64_t> live = this->model_.live();
    if (!name_sequence(o, which, live)) return o;
    if (which == 2 && this->io_.range(0, 2, 0) == 2) return rollback(o, live);
    if (which == 2) return o.kind = this->io_.range(0, 1, 0) ? op_kind::fork : op_kind::release, o;
    if (which == 3) return this->decode_op(o);
    append(o, which == 5, live);
    if (which == 4 && this->io_.range(0, 1, 0)) this->as_prefill(o);
    return o;
  }

 protected:
  /// Sets o.seq for an op of flavour `which`, or makes `o` a create (flavour 1, or no `live`
  /// sequence) and gives false.
  virtual bool name_sequence(op& o, int which, const std::vector<std::int64_t>& live) = 0;
  /// Makes `o` an append to o.seq, which need not be `live`; a `malformed` one is refused for its shape.
  virtual void append(op& o, bool malformed, const std::vector<std::int64_t>& live) = 0;
  /// A rollback of o.seq by none, one, the drafts just verified, back across its last block boundary, every step
  /// or one more.
  op rollback(op& o, const std::vector<std::int64_t>& live) {
    const bool alive = std::find(live.begin(), live.end(), o.seq) != live.end();
    const std::size_t size = alive ? this->model_.size(o.seq) : 0, across = size % this->c_.block_size + 1;
    o.kind = op_kind::rollback;
    o.count = static_cast<std::int64_t>(this->pick({0, 1, this->model_.drafts(), across, size, size + 1}));
    return o;
  }
  /// One of the live handles `live` (not empty).
  std::int64_t one_of(const std::vector<std::int64_t>& live) { return live[this->io_.range(0, live.size() - 1, 0)]; }
};

}  // namespace kvconform
