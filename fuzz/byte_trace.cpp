// One visitor describes the byte format; a reader (FuzzedDataProvider) and a writer walk it.
#include "fuzz/byte_trace.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <memory>

#include "oracle/models/beam_model.h"
#include "oracle/models/paged_model.h"
#include "oracle/models/rows_model.h"
#include "properties/generate/input_classes.h"

namespace kvconform::fuzz {

namespace {
/// Literal doubles are kept exactly when finite and |x| <= domain_limit; others are folded
/// into range, so a fuzz input never leaves the numeric domain of DESIGN section 4.
constexpr double domain_limit = 1e5;
constexpr std::size_t max_handle = 63, max_layer = 7, max_index = 8;

double to_domain(std::uint64_t bits) {
  const double x = std::bit_cast<double>(bits);
  if (!std::isfinite(x)) return static_cast<double>(bits % 2001) - 1000;  // non-finite: a score-sized value
  if (std::fabs(x) <= domain_limit) return x;
  int e = 0;
  const double m = std::frexp(x, &e);  // keep sign and mantissa, fold the exponent below 2^16 < 1e5
  return std::ldexp(m, e % 17);
}

/// Reads values from the end of the input, as FuzzedDataProvider::ConsumeIntegralInRange does.
struct reader {
  static constexpr bool reading = true;
  FuzzedDataProvider in;
  std::uint64_t range(std::uint64_t lo, std::uint64_t hi, std::uint64_t) { return in.ConsumeIntegralInRange(lo, hi); }
  bool more() { return in.remaining_bytes() > 0; }
};

/// Writes the bytes that `reader` turns back into the given values: big-endian per value in
/// consumption order, the whole stream reversed at the end (values are read from the back).
struct writer {
  static constexpr bool reading = false;
  std::vector<std::uint8_t> consumed;
  std::uint64_t range(std::uint64_t lo, std::uint64_t hi, std::uint64_t v) {
    v = std::clamp(v, lo, hi);
    const std::uint64_t span = hi - lo, r = v - lo;
    int bytes = 0;
    for (int offset = 0; offset < 64 && (span >> offset) > 0; offset += 8) ++bytes;
    for (int b = bytes - 1; b >= 0; --b) consumed.push_back(static_cast<std::uint8_t>(r >> (8 * b)));
    return v;
  }
  bool more() { return true; }
};

template <class IO>
std::int64_t visit_int(IO& io, std::int64_t& x, std::int64_t hi) {
  return x = static_cast<std::int64_t>(io.range(0, static_cast<std::uint64_t>(hi), static_cast<std::uint64_t>(std::max<std::int64_t>(x, 0))));
}

template <class IO>
void visit_tensor(IO& io, tensor& t) {
  t.shape.resize(io.range(0, 4, t.shape.size()));
  std::size_t n = 1;
  for (auto& d : t.shape) n *= (d = io.range(0, 2 * max_capacity, d));
  if (n > max_values) t.shape = {max_values}, n = max_values;  // keeps every tensor consistent and cheap
  if constexpr (IO::reading) t.data.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t bits = io.range(0, UINT64_MAX, i < t.data.size() ? std::bit_cast<std::uint64_t>(t.data[i]) : 0);
    if constexpr (IO::reading) t.data[i] = to_domain(bits);
  }
}

/// Any op, every field it uses written out: what the writer always emits.
template <class IO>
void visit_literal(IO& io, op& o, cache_kind kind) {
  const auto vocabulary = ops_of(kind);  // only the kind's own ops: others are format errors, not cache bugs
  const auto at = std::find(vocabulary.begin(), vocabulary.end(), o.kind);
  o.kind = vocabulary[io.range(0, vocabulary.size() - 1, static_cast<std::uint64_t>(at - vocabulary.begin()))];
  const bool paged = kind == cache_kind::paged, beam = kind == cache_kind::beam;
  if (o.kind == op_kind::append || o.kind == op_kind::update) visit_tensor(io, o.k), visit_tensor(io, o.v);
  if (o.kind == op_kind::decode) visit_tensor(io, o.q);
  if (paged && (o.kind == op_kind::append || o.kind == op_kind::decode || o.kind == op_kind::fork || o.kind == op_kind::release))
    visit_int(io, o.seq, max_handle);
  if (beam && (o.kind == op_kind::update || o.kind == op_kind::decode)) visit_int(io, o.layer, max_layer);
  if (o.kind == op_kind::update) visit_int(io, o.start, 2 * max_capacity);
  if (beam && o.kind == op_kind::decode) visit_tensor(io, o.mask);
  if (o.kind == op_kind::reorder) {
    o.index.resize(io.range(0, max_index, o.index.size()));
    for (auto& x : o.index) visit_int(io, x, max_index);
  }
}

/// What a reader draws beyond literal ops: sizes and handles taken from a model that follows
/// the trace, so that appends land on capacity, window and block boundaries and ops name
/// live sequences, with data of the input's class.
class structured {
 public:
  structured(reader& io, const trace& t) : io_(io), c_(t.config) {
    const auto cls = static_cast<input_class>(io.range(0, all_input_classes().size() - 1, 0));
    src_ = std::make_unique<row_source>(cls, c_.d_k, c_.d_v, io.range(0, UINT64_MAX, 0));
    if (c_.kind == cache_kind::paged) paged_ = std::make_unique<paged_model>(c_, numeric_profile{});
    else if (c_.kind == cache_kind::beam) beam_ = std::make_unique<beam_model>(c_, numeric_profile{});
    else rows_ = std::make_unique<rows_model>(c_, numeric_profile{});
  }

  op make(int which) {
    op o;
    if (paged_) paged_op(which, o);
    else if (beam_) beam_op(which, o);
    else rows_op(which, o);
    return o;
  }
  /// Keeps the model in step with every op of the trace, literal ones included (a decode
  /// changes nothing, and building its attention problem would cost as much as the run).
  void follow(const op& o) {
    if (o.kind == op_kind::decode) return;
    if (paged_) paged_->apply(o);
    else if (beam_) beam_->apply(o);
    else rows_->apply(o);
  }

 private:
  std::size_t pick(const std::vector<std::size_t>& choices) { return choices[io_.range(0, choices.size() - 1, 0)]; }
  std::uint64_t seed() { return io_.range(0, UINT64_MAX, 0); }

  void rows_of(op& o, std::int64_t first, std::size_t n) {
    src_->rows(first, n, seed(), o.k.data, o.v.data);
    o.k.shape = {n, c_.d_k}, o.v.shape = {n, c_.d_v};
    if (n == 1 && io_.range(0, 1, 0)) o.k.shape = {c_.d_k};
    if (n == 1 && io_.range(0, 1, 0)) o.v.shape = {c_.d_v};
  }
  void break_shape(op& o) {
    const std::size_t n = o.k.shape.size() == 2 ? o.k.shape[0] : 1;
    switch (io_.range(0, 3, 0)) {
      case 0: o.k.shape.back() += 1, o.k.data.resize(o.k.data.size() + n); break;  // wrong key width
      case 1: o.v.shape.back() += 1, o.v.data.resize(o.v.data.size() + n); break;  // wrong value width
      case 2: o.v.shape = {n + 1, c_.d_v}, o.v.data.resize((n + 1) * c_.d_v); break;  // step mismatch
      default: o.k.shape.insert(o.k.shape.begin(), 1); break;  // rank + 1
    }
  }

  // flat and ring: appends around the capacity or window, decodes, shape errors.
  void rows_op(int which, op& o) {
    const std::size_t cap = c_.capacity, held = rows_->size(), room = cap > held ? cap - held : 0;
    if (which == 1) return void((o.kind = op_kind::decode, o.q = tensor::vector(src_->query())));
    rows_of(o, rows_->total(), pick({1, 2, room, room + 1, cap - 1, cap, cap + 1, 2 * cap + 1, 0}));
    if (which == 2) break_shape(o);
  }

  // paged: sequences created, forked and released from the live set, appends at block edges.
  void paged_op(int which, op& o) {
    const std::vector<std::int64_t> live = paged_->live();
    const std::int64_t stale = paged_->handles();  // never issued: an index refusal
    const std::int64_t h = live.empty() ? stale : live[io_.range(0, live.size() - 1, 0)];
    if (which == 1 || live.empty()) return void(o.kind = op_kind::create);
    o.seq = io_.range(0, 7, 0) == 0 ? stale : h;
    if (which == 2) return void(o.kind = io_.range(0, 1, 0) ? op_kind::fork : op_kind::release);
    if (which == 3) return void((o.kind = op_kind::decode, o.q = tensor::vector(src_->query())));
    const bool alive = std::find(live.begin(), live.end(), o.seq) != live.end();
    const std::size_t bs = c_.block_size, len = alive ? paged_->size(o.seq) : 0;
    const std::size_t room = alive ? paged_->room(o.seq) : 1, to_edge = bs - len % bs;
    rows_of(o, static_cast<std::int64_t>(len), pick({1, to_edge, to_edge + 1, bs, room, room + 1, 0}));
    if (which == 5) break_shape(o);
  }

  // beam: updates at, below and past a layer's length, reorders, masked decodes.
  void beam_op(int which, op& o) {
    const std::size_t L = c_.layers, B = c_.batch, H = c_.heads, T = c_.capacity, D = c_.d_k;
    o.layer = static_cast<std::int64_t>(io_.range(0, L, 0));  // L itself: out of range
    const std::size_t len = o.layer < static_cast<std::int64_t>(L) ? beam_->length(static_cast<std::size_t>(o.layer)) : 0;
    if (which == 3) {
      o.kind = op_kind::reorder;
      o.index.resize(io_.range(0, 3, 0) == 0 ? B + 1 : B);  // sometimes one index too many
      for (std::size_t b = 0; b < o.index.size(); ++b) o.index[b] = static_cast<std::int64_t>(io_.range(0, B, b));  // B: out of range
      return;
    }
    if (which == 4) {
      o.kind = op_kind::decode;
      const std::size_t hq = c_.q_heads;
      for (std::size_t i = 0; i < B * hq; ++i) o.q.data.insert(o.q.data.end(), src_->query().begin(), src_->query().end());
      o.q.shape = {B, hq, D};
      if (io_.range(0, 1, 0)) {  // left padding: row b masks its first pad_b positions
        o.mask.shape = {B, len};
        for (std::size_t b = 0; b < B; ++b) {
          const std::size_t pad = io_.range(0, len, 0);
          for (std::size_t i = 0; i < len; ++i) o.mask.data.push_back(i < pad ? 0 : 1);
        }
      }
      return;
    }
    o.kind = op_kind::update;
    o.start = static_cast<std::int64_t>(pick({len, len, len > 0 ? len - 1 : 0, 0, len + 1}));
    const std::size_t at = static_cast<std::size_t>(o.start), n = pick({1, 2, T > at ? T - at : 0, T + 1 - std::min(at, T), 0});
    std::vector<double> k, v;
    src_->rows(o.start, n * B * H, seed(), k, v);  // rows (b, h, i) in order
    o.k = {{B, H, n, D}, k}, o.v = {{B, H, n, D}, v};
    if (which == 5) {  // a bad shape: wrong head_dim or batch
      if (io_.range(0, 1, 0)) o.k.shape[3] += 1, o.k.data.resize(o.k.data.size() + B * H * n);
      else o.v.shape[0] += 1, o.v.data.resize(o.v.data.size() + H * n * D);
    }
  }

  reader& io_;
  cache_config c_;
  std::unique_ptr<row_source> src_;
  std::unique_ptr<rows_model> rows_;
  std::unique_ptr<paged_model> paged_;
  std::unique_ptr<beam_model> beam_;
};

template <class IO>
void visit_config(IO& io, cache_config& c, cache_kind kind) {
  c.kind = kind;
  if (kind == cache_kind::beam) {
    // Small shapes that still have two layers, two rows, grouped heads and repeats to reorder:
    // each (layer, row, head) is a stream the executor compares after every op.
    c.layers = io.range(1, 2, c.layers), c.batch = io.range(1, 2, c.batch), c.heads = io.range(1, 2, c.heads);
    c.q_heads = c.heads * io.range(1, 2, c.heads ? c.q_heads / c.heads : 1);
    c.capacity = io.range(1, max_capacity / 2, c.capacity);
    c.d_k = c.d_v = io.range(1, max_dim / 2, c.d_k);
    return;
  }
  c.capacity = io.range(1, max_capacity, c.capacity);
  c.d_k = io.range(1, max_dim, c.d_k);
  c.d_v = io.range(1, max_dim, c.d_v);
  if (kind == cache_kind::paged) {
    c.capacity = std::min<std::size_t>(c.capacity, 12);  // blocks: enough to exhaust and reuse
    c.block_size = io.range(1, 4, c.block_size);
    c.preempt = io.range(0, 1, c.preempt);
  }
}
}  // namespace

trace decode_bytes(cache_kind kind, const std::uint8_t* data, std::size_t size) {
  reader io{FuzzedDataProvider(data, size)};
  trace t;
  visit_config(io, t.config, kind);
  structured gen(io, t);
  for (std::size_t i = 0; i < max_ops && io.more(); ++i) {
    const int which = static_cast<int>(io.range(0, 5, 0));  // 0: a literal op; 1-5: the kind's structured ops
    op o;
    if (which == 0) visit_literal(io, o, kind);
    else o = gen.make(which);
    gen.follow(o);
    t.ops.push_back(std::move(o));
  }
  return t;
}

bool encodable(const trace& t) {
  const std::vector<std::uint8_t> bytes = encode_trace(t);
  const trace back = decode_bytes(t.config.kind, bytes.data(), bytes.size());
  if (!(back.config == t.config) || back.ops.size() != t.ops.size()) return false;
  for (std::size_t i = 0; i < t.ops.size(); ++i) {
    const op &a = t.ops[i], &b = back.ops[i];
    if (a.kind != b.kind || !(a.k == b.k) || !(a.v == b.v) || !(a.q == b.q) || !(a.mask == b.mask) || a.index != b.index ||
        a.seq != b.seq || a.layer != b.layer || a.start != b.start)
      return false;
  }
  return true;
}

std::vector<std::uint8_t> encode_trace(const trace& t) {
  writer io;
  trace copy = t;
  visit_config(io, copy.config, t.config.kind);
  io.range(0, all_input_classes().size() - 1, 0), io.range(0, UINT64_MAX, 0);  // class and anchor, unused by literal ops
  for (std::size_t i = 0; i < std::min(copy.ops.size(), max_ops); ++i) {
    io.range(0, 5, 0);
    visit_literal(io, copy.ops[i], t.config.kind);
  }
  std::reverse(io.consumed.begin(), io.consumed.end());
  return io.consumed;
}

}  // namespace kvconform::fuzz
