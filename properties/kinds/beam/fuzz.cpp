// The beam kind's fuzz strategy: updates at, below and past a layer's length, reorders, masked decodes and prefills.
#include "oracle/models/beam_model.h"
#include "properties/kinds/beam/parts.h"

namespace kvconform::kinds {

namespace {
class beam_fuzz final : public model_fuzz_ops<beam_model> {
 public:
  using model_fuzz_ops::model_fuzz_ops;

  op make(int which) override {
    op o;
    const std::size_t L = c_.layers, B = c_.batch;
    o.layer = static_cast<std::int64_t>(io_.range(0, L, 0));  // L itself: out of range
    const std::size_t len =
        o.layer < static_cast<std::int64_t>(L) ? model_.length(static_cast<std::size_t>(o.layer)) : 0;
    if (which == 3) {
      o.kind = op_kind::reorder;
      o.index.resize(io_.range(0, 3, 0) == 0 ? B + 1 : B);  // sometimes one index too many
      for (std::size_t b = 0; b < o.index.size(); ++b)
        o.index[b] = static_cast<std::int64_t>(io_.range(0, B, b));  // B: out of range
      return o;
    }
    if (which == 4) return decode(o, len);
    if (which == 2) return prefill(o, len);
    return update(o, len, which == 5);
  }

 private:
  /// A decode of the class's query on every row and head, left-padded half the time.
  op& decode(op& o, std::size_t len) {
    o.kind = op_kind::decode;
    o.q = queries(1), o.q.shape = {c_.batch, c_.q_heads, c_.d_k};
    o.mask = padding(len);
    return o;
  }
  /// A prefill of 1, 2, to max_len, past it or 0 positions at the length, left-padded half the time.
  op& prefill(op& o, std::size_t len) {
    const std::size_t B = c_.batch, H = c_.heads, T = c_.capacity, D = c_.d_k;
    o.kind = op_kind::prefill;
    const std::size_t m = pick({1, 2, T > len ? T - len : 0, T + 1 - std::min(len, T), 0});
    std::vector<double> k, v;
    src_->rows(static_cast<std::int64_t>(len), m * B * H, seed(), k, v);  // rows (b, h, i) in order
    o.k = {{B, H, m, D}, k}, o.v = {{B, H, m, D}, v};
    o.q = queries(m);
    o.mask = padding(len + m);
    return o;
  }
  /// (B, Hq, m, D): the class's query for every row, query head and position.
  tensor queries(std::size_t m) const {
    tensor q{{c_.batch, c_.q_heads, m, c_.d_k}, {}};
    for (std::size_t i = 0; i < c_.batch * c_.q_heads * m; ++i)
      q.data.insert(q.data.end(), src_->query().begin(), src_->query().end());
    return q;
  }
  /// Half the time a (B, width) mask of left padding (row b masks its first pad_b positions), else none.
  tensor padding(std::size_t width) {
    tensor mask;
    if (!io_.range(0, 1, 0)) return mask;
    mask.shape = {c_.batch, width};
    for (std::size_t b = 0; b < c_.batch; ++b) {
      const std::size_t pad = io_.range(0, width, 0);
      for (std::size_t i = 0; i < width; ++i) mask.data.push_back(i < pad ? 0 : 1);
    }
    return mask;
  }
  /// An update at, below or past the length, with 1, 2, to max_len, past it or 0 positions.
  op& update(op& o, std::size_t len, bool bad_shape) {
    const std::size_t B = c_.batch, H = c_.heads, T = c_.capacity, D = c_.d_k;
    o.kind = op_kind::update;
    o.start = static_cast<std::int64_t>(pick({len, len, len > 0 ? len - 1 : 0, 0, len + 1}));
    const auto at = static_cast<std::size_t>(o.start);
    const std::size_t n = pick({1, 2, T > at ? T - at : 0, T + 1 - std::min(at, T), 0});
    std::vector<double> k, v;
    src_->rows(o.start, n * B * H, seed(), k, v);  // rows (b, h, i) in order
    o.k = {{B, H, n, D}, k}, o.v = {{B, H, n, D}, v};
    if (bad_shape) {  // a wrong head_dim or batch
      if (io_.range(0, 1, 0))
        o.k.shape[3] += 1, o.k.data.resize(o.k.data.size() + B * H * n);
      else
        o.v.shape[0] += 1, o.v.data.resize(o.v.data.size() + H * n * D);
    }
    return o;
  }
};
}  // namespace

void beam_fuzz_config(byte_io& io, cache_config& c) {
  // Small shapes that still have two layers, two rows, grouped heads and repeats to reorder:
  // each (layer, row, head) is a stream the executor compares after every op.
  c.layers = io.range(1, 2, c.layers), c.batch = io.range(1, 2, c.batch), c.heads = io.range(1, 2, c.heads);
  c.q_heads = c.heads * io.range(1, 2, c.heads ? c.q_heads / c.heads : 1);
  c.capacity = io.range(1, fuzz::max_capacity / 2, c.capacity);
  c.d_k = c.d_v = io.range(1, fuzz::max_dim / 2, c.d_k);
  fuzz_scales(io, c);
}

std::unique_ptr<fuzz_ops> beam_fuzz_ops(byte_io& io, const cache_config& c) {
  return std::make_unique<beam_fuzz>(io, c);
}

}  // namespace kvconform::kinds
