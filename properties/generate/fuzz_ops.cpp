// The draws every kind's fuzz strategy shares.
#include "properties/generate/fuzz_ops.h"

#include "properties/generate/format_configs.h"

namespace kvconform {

fuzz_ops::fuzz_ops(byte_io& io, const cache_config& c) : io_(io), c_(c) {
  const auto cls = static_cast<input_class>(io.range(0, all_input_classes().size() - 1, 0));
  src_ = std::make_unique<row_source>(cls, c_.d_k, c_.d_v, io.range(0, UINT64_MAX, 0));
}

std::size_t fuzz_ops::pick(const std::vector<std::size_t>& choices) {
  return choices[io_.range(0, choices.size() - 1, 0)];
}

std::uint64_t fuzz_ops::seed() { return io_.range(0, UINT64_MAX, 0); }

void fuzz_ops::rows_of(op& o, std::int64_t first, std::size_t n) {
  src_->rows(first, n, seed(), o.k.data, o.v.data);
  o.k.shape = {n, c_.d_k}, o.v.shape = {n, c_.d_v};
  if (n == 1 && io_.range(0, 1, 0)) o.k.shape = {c_.d_k};
  if (n == 1 && io_.range(0, 1, 0)) o.v.shape = {c_.d_v};
}

void fuzz_ops::as_prefill(op& o) {
  const std::size_t n = o.k.shape.size() == 2 ? o.k.shape[0] : 1;
  o.kind = op_kind::prefill;
  o.q.shape = {n, c_.d_k};
  for (std::size_t i = 0; i < n; ++i) o.q.data.insert(o.q.data.end(), src_->query().begin(), src_->query().end());
}

void fuzz_ops::break_shape(op& o) {
  const std::size_t n = o.k.shape.size() == 2 ? o.k.shape[0] : 1;
  switch (io_.range(0, 3, 0)) {
    case 0: o.k.shape.back() += 1, o.k.data.resize(o.k.data.size() + n); break;     // wrong key width
    case 1: o.v.shape.back() += 1, o.v.data.resize(o.v.data.size() + n); break;     // wrong value width
    case 2: o.v.shape = {n + 1, c_.d_v}, o.v.data.resize((n + 1) * c_.d_v); break;  // step mismatch
    default: o.k.shape.insert(o.k.shape.begin(), 1); break;                         // rank + 1
  }
}

void fuzz_sizes(byte_io& io, cache_config& c) {
  c.capacity = io.range(1, fuzz::max_capacity, c.capacity);
  c.d_k = io.range(1, fuzz::max_dim, c.d_k);
  c.d_v = io.range(1, fuzz::max_dim, c.d_v);
  fuzz_scales(io, c);
}

void fuzz_scales(byte_io& io, cache_config& c) {
  c.k_scale = scale_of_code(io.range(0, scale_codes - 1, code_of_scale(c.k_scale)));
  c.v_scale = scale_of_code(io.range(0, scale_codes - 1, code_of_scale(c.v_scale)));
}

}  // namespace kvconform
