// The fuzz byte format: a reader (FuzzedDataProvider) and a writer walk the same visits of a kind's config and ops.
#include "fuzz/byte_trace.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <memory>

#include "properties/generate/fuzz_ops.h"
#include "properties/executor/kind_table.h"
#include "properties/runners/builtin.h"
#include "properties/trace/op_vocabulary.h"

namespace kvconform::fuzz {

namespace {
/// Literal doubles are kept exactly when finite and |x| <= domain_limit; others are folded
/// into range, so a fuzz input never leaves the numeric domain (docs/numerics.md §3.5).
constexpr double domain_limit = 1e5;
constexpr std::size_t max_handle = 63, max_layer = 7, max_index = 8, max_tokens = 64, max_token = 7;

double to_domain(std::uint64_t bits) {
  const double x = std::bit_cast<double>(bits);
  if (!std::isfinite(x)) return static_cast<double>(bits % 2001) - 1000;  // non-finite: a score-sized value
  if (std::fabs(x) <= domain_limit) return x;
  int e = 0;
  const double m = std::frexp(x, &e);  // keep sign and mantissa, fold the exponent below 2^16 < 1e5
  return std::ldexp(m, e % 17);
}

/// Reads values from the end of the input, as FuzzedDataProvider::ConsumeIntegralInRange does.
class reader final : public byte_io {
 public:
  reader(const std::uint8_t* data, std::size_t size) : in_(data, size) {}
  std::uint64_t range(std::uint64_t lo, std::uint64_t hi, std::uint64_t) override {
    return in_.ConsumeIntegralInRange(lo, hi);
  }
  bool more() { return in_.remaining_bytes() > 0; }

 private:
  FuzzedDataProvider in_;
};

/// Writes the bytes that `reader` turns back into the given values: big-endian per value in
/// consumption order, the whole stream reversed at the end (values are read from the back).
class writer final : public byte_io {
 public:
  std::uint64_t range(std::uint64_t lo, std::uint64_t hi, std::uint64_t v) override {
    v = std::clamp(v, lo, hi);
    const std::uint64_t span = hi - lo, r = v - lo;
    int bytes = 0;
    for (int offset = 0; offset < 64 && (span >> offset) > 0; offset += 8) ++bytes;
    for (int b = bytes - 1; b >= 0; --b) consumed.push_back(static_cast<std::uint8_t>(r >> (8 * b)));
    return v;
  }
  std::vector<std::uint8_t> consumed;
};

std::int64_t visit_int(byte_io& io, std::int64_t& x, std::int64_t hi) {
  return x = static_cast<std::int64_t>(
             io.range(0, static_cast<std::uint64_t>(hi), static_cast<std::uint64_t>(std::max<std::int64_t>(x, 0))));
}

/// A tensor's shape and data; `reading` sizes the data to the shape first. An optional tensor without a shape is
/// absent (no data), where a tensor's is a scalar.
void visit_tensor(byte_io& io, tensor& t, bool reading, bool optional) {
  t.shape.resize(io.range(0, 4, t.shape.size()));
  std::size_t n = optional && t.shape.empty() ? 0 : 1;
  for (auto& d : t.shape) n *= (d = io.range(0, 2 * max_capacity, d));
  if (n > max_values) t.shape = {max_values}, n = max_values;  // keeps every tensor consistent and cheap
  if (reading) t.data.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t bits = io.range(0, UINT64_MAX, i < t.data.size() ? std::bit_cast<std::uint64_t>(t.data[i]) : 0);
    if (reading) t.data[i] = to_domain(bits);
  }
}

/// The bounds of a literal op field's integers: the largest a fuzz input draws for range `r` (field_range,
/// properties/trace/op_vocabulary.h), and the longest list of them.
std::int64_t most(field_range r) {
  switch (r) {
    case field_range::handle: return max_handle;
    case field_range::layer: return max_layer;
    case field_range::step: return 2 * max_capacity;
    case field_range::rows: return max_index;
    case field_range::tokens: return max_token;
    case field_range::none: break;
  }
  return 0;
}
std::size_t longest(field_range r) { return r == field_range::tokens ? max_tokens : max_index; }

void visit_field(byte_io& io, const op_field_info& f, tensor& t, bool reading) {
  visit_tensor(io, t, reading, f.type == field_type::optional_tensor);
}
void visit_field(byte_io& io, const op_field_info& f, std::int64_t& x, bool) { visit_int(io, x, most(f.range)); }
void visit_field(byte_io& io, const op_field_info& f, std::vector<std::int64_t>& xs, bool) {
  xs.resize(io.range(0, longest(f.range), xs.size()));
  for (auto& x : xs) visit_int(io, x, most(f.range));
}

/// Any op of the kind, every field its spec lists in the vocabulary's order: what the writer always emits.
void visit_literal(byte_io& io, op& o, const kind_spec& spec, bool reading) {
  // Only the kind's own ops: others are format errors, not cache bugs.
  std::size_t at = 0;
  while (at < spec.ops.size() && spec.ops[at].kind != o.kind) ++at;
  const op_spec& which = spec.ops[io.range(0, spec.ops.size() - 1, at)];
  o.kind = which.kind;
  visit_fields(o, which.fields, [&](const op_field_info& f, auto& x) { visit_field(io, f, x, reading); });
}
}  // namespace

namespace {
/// The references of a kind, one per storage format (docs/numerics.md §6), in registry order.
std::vector<std::string> references_of(cache_kind kind) {
  std::vector<std::string> names;
  for (const implementation& i : builtin_implementations())
    if (i.kind == kind && i.group == impl_group::reference) names.push_back(i.name);
  return names;
}
/// The format byte: which of the kind's references (hence storage formats) the trace runs on.
void visit_format(byte_io& io, trace& t) {
  const std::vector<std::string> refs = references_of(t.config.kind);
  std::size_t at = 0;
  while (at < refs.size() && refs[at] != t.implementation) ++at;
  t.implementation = refs[io.range(0, refs.size() - 1, at < refs.size() ? at : 0)];
}
}  // namespace

trace decode_bytes(cache_kind kind, const std::uint8_t* data, std::size_t size) {
  const kind_descriptor& k = kind_of(kind);
  reader io(data, size);
  trace t;
  t.config.kind = kind;
  visit_format(io, t);
  k.fuzz.config(io, t.config);
  const std::unique_ptr<fuzz_ops> gen = k.fuzz.ops(io, t.config);
  for (std::size_t i = 0; i < max_ops && io.more(); ++i) {
    const int which = static_cast<int>(io.range(0, 5, 0));  // 0: a literal op; 1-5: the kind's structured ops
    op o;
    if (which == 0)
      visit_literal(io, o, k.spec, true);
    else
      o = gen->make(which);
    gen->follow(o);
    t.ops.push_back(std::move(o));
  }
  return t;
}

bool encodable(const trace& t) {
  const std::vector<std::uint8_t> bytes = encode_trace(t);
  const trace back = decode_bytes(t.config.kind, bytes.data(), bytes.size());
  if (!(back.config == t.config) || back.ops.size() != t.ops.size()) return false;
  for (std::size_t i = 0; i < t.ops.size(); ++i)
    if (!same_fields(t.ops[i], back.ops[i])) return false;
  return true;
}

std::vector<std::uint8_t> encode_trace(const trace& t) {
  const kind_descriptor& k = kind_of(t.config.kind);
  writer io;
  trace copy = t;
  visit_format(io, copy);
  k.fuzz.config(io, copy.config);
  io.range(0, all_input_classes().size() - 1, 0),
      io.range(0, UINT64_MAX, 0);  // class and anchor, unused by literal ops
  for (std::size_t i = 0; i < std::min(copy.ops.size(), max_ops); ++i) {
    io.range(0, 5, 0);
    visit_literal(io, copy.ops[i], k.spec, false);
  }
  std::reverse(io.consumed.begin(), io.consumed.end());
  return io.consumed;
}

}  // namespace kvconform::fuzz
