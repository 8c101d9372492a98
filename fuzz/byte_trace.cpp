// One visitor describes the byte format; a reader (FuzzedDataProvider) and a writer walk it.
#include "fuzz/byte_trace.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <bit>
#include <cmath>

#include "properties/input_classes.h"

namespace kvconform::fuzz {

namespace {
/// Literal doubles are kept exactly when finite and |x| <= domain_limit; others are folded
/// into range, so a fuzz input never leaves the numeric domain of DESIGN section 4.
constexpr double domain_limit = 1e5;

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

enum tag : std::uint64_t { class_append, literal_append, class_decode, literal_decode, bad_shape, tag_count };

template <class IO>
void visit_tensor(IO& io, tensor& t) {
  t.shape.resize(io.range(0, 3, t.shape.size()));
  std::size_t n = 1;
  for (auto& d : t.shape) n *= (d = io.range(0, 2 * max_capacity, d));
  if (n > max_values) t.shape = {max_values}, n = max_values;  // keeps every tensor consistent and cheap
  if constexpr (IO::reading) t.data.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t bits = io.range(0, UINT64_MAX, i < t.data.size() ? std::bit_cast<std::uint64_t>(t.data[i]) : 0);
    if constexpr (IO::reading) t.data[i] = to_domain(bits);
  }
}

/// The appends and decodes only a reader draws: class rows and sizes around the capacity.
void structured_op(reader& io, const trace& t, const row_source& src, std::int64_t total, std::size_t held, tag which, op& o) {
  const std::size_t cap = t.config.capacity, room = cap > held ? cap - held : 0;
  const std::size_t sizes[] = {1, 2, room, room + 1, cap - 1, cap, cap + 1, 2 * cap + 1, 0};
  const std::uint64_t seed = io.range(0, UINT64_MAX, 0);
  if (which == class_decode) {
    o.kind = op_kind::decode;
    o.q = tensor::vector(src.query());
    return;
  }
  const std::size_t n = sizes[io.range(0, std::size(sizes) - 1, 0)];
  src.rows(total, n, seed, o.k.data, o.v.data);
  o.k.shape = {n, t.config.d_k}, o.v.shape = {n, t.config.d_v};
  if (n == 1 && io.range(0, 1, 0)) o.k.shape = {t.config.d_k}, o.v.shape = {t.config.d_v};
  if (which == bad_shape) switch (io.range(0, 3, 0)) {
      case 0: o.k.shape.back() += 1, o.k.data.resize(o.k.data.size() + n); break;  // wrong key width
      case 1: o.v.shape.back() += 1, o.v.data.resize(o.v.data.size() + n); break;  // wrong value width
      case 2: o.v.shape = {n + 1, t.config.d_v}, o.v.data.resize((n + 1) * t.config.d_v); break;  // step mismatch
      default: o.k.shape.insert(o.k.shape.begin(), 1); break;  // rank + 1
    }
}

template <class IO>
void visit(IO& io, trace& t, cache_kind kind) {
  t.config.kind = kind;
  t.config.capacity = io.range(1, max_capacity, t.config.capacity);
  t.config.d_k = io.range(1, max_dim, t.config.d_k);
  t.config.d_v = io.range(1, max_dim, t.config.d_v);
  const auto cls = static_cast<input_class>(io.range(0, all_input_classes().size() - 1, 0));
  const row_source src(cls, t.config.d_k, t.config.d_v, io.range(0, UINT64_MAX, 0));
  const std::size_t count = IO::reading ? max_ops : std::min(t.ops.size(), max_ops);
  std::int64_t total = 0;  // steps appended so far, for position-dependent classes
  std::size_t held = 0;    // rows the cache holds if every well-formed append was accepted
  for (std::size_t i = 0; i < count && io.more(); ++i) {
    if constexpr (IO::reading) t.ops.emplace_back();
    op& o = t.ops[i];
    const auto which = static_cast<tag>(io.range(0, tag_count - 1, o.kind == op_kind::append ? literal_append : literal_decode));
    if (which == literal_append || which == literal_decode) {
      o.kind = which == literal_append ? op_kind::append : op_kind::decode;
      for (tensor* x : which == literal_append ? std::vector<tensor*>{&o.k, &o.v} : std::vector<tensor*>{&o.q}) visit_tensor(io, *x);
    } else if constexpr (IO::reading) {
      structured_op(io, t, src, total, held, which, o);
    }
    if (o.kind == op_kind::append && (o.k.shape.size() == 1 || o.k.shape.size() == 2)) {
      const std::size_t n = o.k.shape.size() == 2 ? o.k.shape[0] : 1;
      total += static_cast<std::int64_t>(n);
      if (kind == cache_kind::ring) held = std::min(held + n, t.config.capacity);
      else if (held + n <= t.config.capacity) held += n;
    }
  }
  if constexpr (!IO::reading) t.ops.resize(count);
}
}  // namespace

trace decode_bytes(cache_kind kind, const std::uint8_t* data, std::size_t size) {
  reader io{FuzzedDataProvider(data, size)};
  trace t;
  visit(io, t, kind);
  return t;
}

std::vector<std::uint8_t> encode_trace(const trace& t) {
  writer io;
  trace copy = t;
  visit(io, copy, t.config.kind);
  std::reverse(io.consumed.begin(), io.consumed.end());
  return io.consumed;
}

}  // namespace kvconform::fuzz
