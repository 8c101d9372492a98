// The shared op builders: rows and queries from the target's row source, in the shapes the trace language takes.
#include "properties/generate/op_builders.h"

namespace kvconform {

op append_op(const op_target& t, std::size_t n, int ranks, std::uint64_t seed) {
  op o;
  o.kind = op_kind::append;
  o.seq = t.seq;
  t.src->rows(t.first, n, seed, o.k.data, o.v.data);
  o.k.shape = {n, t.src->d_k()}, o.v.shape = {n, t.src->d_v()};
  if (n == 1 && (ranks & 1)) o.k.shape = {t.src->d_k()};
  if (n == 1 && (ranks & 2)) o.v.shape = {t.src->d_v()};
  attach_index(o, *t.src, t.first);
  return o;
}

op prefill_op(const op_target& t, std::size_t n, std::uint64_t seed) {
  op o = append_op(t, n, 0, seed);
  o.kind = op_kind::prefill;
  o.q.shape = {n, t.src->d_k()};
  for (std::size_t i = 0; i < n; ++i) o.q.data.insert(o.q.data.end(), t.src->query().begin(), t.src->query().end());
  attach_sinks(o, *t.src, t.first);
  attach_index(o, *t.src, t.first);
  return o;
}

op rollback_op(const op_target& t, std::int64_t count) {
  op o;
  o.kind = op_kind::rollback;
  o.seq = t.seq;
  o.count = count;
  return o;
}

op bad_shape_op(const op_target& t, int variant, std::uint64_t seed) {
  const std::size_t dk = t.src->d_k(), dv = t.src->d_v();
  op o = append_op(t, 2, 0, seed);
  switch (variant) {
    case 0: o.k.shape = {1, 2 * dk}; break;                                                 // wrong key width
    case 1: o.v.shape = {1, 2 * dv}; break;                                                 // wrong value width
    case 2: o.v.shape = {1, dv}, o.v.data.resize(dv); break;                                // 2 key steps, 1 value step
    case 3: o.k.shape = {1, 2, dk}, o.v.shape = {1, 2, dv}; break;                          // rank 3
    case 4: o.k.shape = {}, o.k.data.resize(1), o.v.shape = {}, o.v.data.resize(1); break;  // rank 0
    default: o.k.shape = {dk}, o.k.data.resize(dk); break;                                  // 1-D k, 2-row v
  }
  return o;
}

op decode_op(const op_target& t, bool bad, int variant) {
  op o;
  o.kind = op_kind::decode;
  o.seq = t.seq;
  o.q = tensor::vector(t.src->query());
  if (bad && variant == 0) o.q.shape = {1, t.src->d_k()};                            // rank 2
  if (bad && variant == 1) o.q.data.push_back(0.5), o.q.shape = {t.src->d_k() + 1};  // wrong width
  attach_sinks(o, *t.src, t.first);
  attach_index(o, *t.src, t.first);
  return o;
}

void attach_sinks(op& o, const row_source& src, std::int64_t position, std::size_t heads) {
  if (!src.learned_sinks() || (o.kind != op_kind::decode && o.kind != op_kind::prefill)) return;
  std::vector<double> logits;
  for (std::size_t h = 0; h < heads; ++h) logits.push_back(src.sink_logit(position + static_cast<std::int64_t>(h)));
  o.sinks = tensor::vector(std::move(logits));
}

void attach_index(op& o, const row_source& src, std::int64_t position) {
  if (!src.indexes()) return;
  const std::size_t h = src.index_heads(), d = src.index_width();
  auto queries = [&](std::int64_t p) {
    const std::vector<double> x = src.index_query(p);
    o.index_q.data.insert(o.index_q.data.end(), x.begin(), x.begin() + static_cast<std::ptrdiff_t>(h * d));
    o.index_w.data.insert(o.index_w.data.end(), x.begin() + static_cast<std::ptrdiff_t>(h * d), x.end());
  };
  o.index_k = {}, o.index_q = {}, o.index_w = {};
  if (o.kind == op_kind::decode) {
    queries(position);
    o.index_q.shape = {h, d}, o.index_w.shape = {h};
    return;
  }
  const std::size_t steps = o.k.shape.size() == 1 ? 1 : o.k.shape.empty() ? 0 : o.k.shape[0];
  for (std::size_t i = 0; i < steps; ++i) {
    const std::vector<double> key = src.index_key(position + static_cast<std::int64_t>(i));
    o.index_k.data.insert(o.index_k.data.end(), key.begin(), key.end());
    if (o.kind == op_kind::prefill) queries(position + static_cast<std::int64_t>(i));
  }
  o.index_k.shape = o.k.shape.size() == 1 ? std::vector<std::size_t>{d} : std::vector<std::size_t>{steps, d};
  if (o.kind == op_kind::prefill) o.index_q.shape = {steps, h, d}, o.index_w.shape = {steps, h};
}

}  // namespace kvconform
