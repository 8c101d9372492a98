// Names, rendering and snapshot comparison for the trace language.
#include "properties/trace/trace.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

#include "properties/trace/kind_spec.h"
#include "properties/trace/op_vocabulary.h"

namespace kvconform {

namespace {
bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

bool same_bits(const double* a, const double* b, std::size_t n) {
  return n == 0 || std::memcmp(a, b, n * sizeof(double)) == 0;
}

/// A row for messages: up to four values at full precision.
std::string row_text(const std::vector<double>& r) {
  std::ostringstream s;
  s.precision(17);
  s << '[';
  for (std::size_t i = 0; i < r.size() && i < 4; ++i) s << (i ? ", " : "") << r[i];
  s << (r.size() > 4 ? ", ...]" : "]");
  return s.str();
}

std::string shape_string(const tensor& t) {
  std::string s = "(";
  for (std::size_t i = 0; i < t.shape.size(); ++i) s += (i ? "," : "") + std::to_string(t.shape[i]);
  return s + (t.shape.size() == 1 ? ",)" : ")");
}
/// Block tables and reference counts up to a renaming of block ids: the model's block a must
/// be the same implementation block wherever it appears, and distinct model blocks distinct.
/// The index of the first double of `got` farther from `want`'s than its bound (NaN is never within), or want.size().
std::size_t bounded_mismatch(const row_data& want, const row_data& got, const std::vector<double>& bounds) {
  const std::vector<double> w = want.copy(), g = got.copy();
  for (std::size_t i = 0; i < w.size(); ++i)
    if (!(std::abs(g[i] - w[i]) <= (i < bounds.size() ? bounds[i] : 0.0))) return i;
  return w.size();
}

std::string diff_blocks(const snapshot& e, const snapshot& o) {
  // Hash maps: a pool of more than 2^16 blocks (docs/design.md §4.4) is compared after every op.
  std::size_t held = 0;
  for (const auto& st : e.streams) held += st.blocks.size();
  std::unordered_map<std::int64_t, std::int64_t> to_impl, to_model;
  to_impl.reserve(held), to_model.reserve(held);
  for (std::size_t i = 0; i < e.streams.size(); ++i) {
    const auto &want = e.streams[i].blocks, &got = o.streams[i].blocks;
    const std::string& name = e.streams[i].name;
    if (want.size() != got.size())
      return name + " has " + std::to_string(got.size()) + " blocks, expected " + std::to_string(want.size());
    for (std::size_t j = 0; j < want.size(); ++j) {
      const auto [it, fresh] = to_impl.emplace(want[j], got[j]);
      const auto [back, fresh_back] = to_model.emplace(got[j], want[j]);
      if (!fresh && it->second != got[j])
        return name + " block " + std::to_string(j) + " is " + std::to_string(got[j]) +
               ", but the model shares it with block " + std::to_string(it->second) +
               " (a copy where the model shares)";
      if (!fresh_back && back->second != want[j])
        return name + " block " + std::to_string(j) + " is block " + std::to_string(got[j]) +
               ", which another table also holds where the model has separate blocks (shared where the model copied)";
    }
  }
  std::unordered_map<std::int64_t, std::int64_t> refs(o.block_refs.begin(), o.block_refs.end());
  for (const auto& [block, count] : e.block_refs) {
    const auto mapped = to_impl.find(block);
    const std::int64_t mine = mapped == to_impl.end() ? -1 : mapped->second;
    const auto held_by = refs.find(mine);
    const std::int64_t got = held_by == refs.end() ? 0 : held_by->second;
    if (got != count)
      return "block " + std::to_string(mine) + " has reference count " + std::to_string(got) + ", expected " +
             std::to_string(count) + " (tables holding it)";
    if (held_by != refs.end()) refs.erase(held_by);
  }
  if (refs.empty()) return "";
  const auto leaked = std::min_element(refs.begin(), refs.end());  // the lowest id, whatever the hash order
  return "block " + std::to_string(leaked->first) + " has reference count " + std::to_string(leaked->second) +
         " but no table holds it (leaked)";
}
}  // namespace

double row_data::operator[](std::size_t i) const {
  for (const auto& piece : pieces_) {
    if (i < piece.size()) return piece[i];
    i -= piece.size();
  }
  throw std::out_of_range("row_data index");
}

std::vector<double> row_data::copy(std::size_t begin, std::size_t n) const {
  std::vector<double> out;
  const std::size_t end = n > size_ - std::min(begin, size_) ? size_ : begin + n;
  if (begin >= end) return out;
  out.reserve(end - begin);
  std::size_t at = 0;  // where the piece starts
  for (const auto& piece : pieces_) {
    const std::size_t from = std::max(begin, at), to = std::min(end, at + piece.size());
    if (from < to) out.insert(out.end(), piece.begin() + (from - at), piece.begin() + (to - at));
    at += piece.size();
    if (at >= end) break;
  }
  return out;
}

std::size_t row_data::mismatch(const row_data& other) const {
  std::size_t done = 0, a = 0, b = 0, a_off = 0, b_off = 0;
  while (a < pieces_.size() && b < other.pieces_.size()) {
    const auto &x = pieces_[a], &y = other.pieces_[b];
    const std::size_t n = std::min(x.size() - a_off, y.size() - b_off);
    if (!same_bits(x.data() + a_off, y.data() + b_off, n))  // only now look for the double that differs
      for (std::size_t i = 0;; ++i)
        if (std::memcmp(x.data() + a_off + i, y.data() + b_off + i, sizeof(double)) != 0) return done + i;
    done += n, a_off += n, b_off += n;
    if (a_off == x.size()) ++a, a_off = 0;
    if (b_off == y.size()) ++b, b_off = 0;
  }
  return done;
}

bool operator==(const row_data& a, const std::vector<double>& b) {
  return a.size() == b.size() && a.mismatch(row_data(b)) == a.size();
}

std::uint64_t fnv1a(std::string_view text, std::uint64_t from) {
  std::uint64_t h = from;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string content_hash(std::string_view text) {
  static const char digits[] = "0123456789abcdef";
  std::string s(16, '0');
  for (std::uint64_t x = fnv1a(text), i = 16; i-- > 0; x >>= 4) s[i] = digits[x & 15];
  return s;
}

const char* to_string(op_kind k) { return info_of(k).name; }
std::optional<op_kind> op_kind_from_string(const std::string& s) {
  for (const op_info& o : op_infos)
    if (s == o.name) return o.kind;
  return std::nullopt;
}

bool tensor::consistent() const {
  if (shape.size() > 4) return false;
  std::size_t n = 1;
  for (std::size_t d : shape)
    if (__builtin_mul_overflow(n, d, &n)) return false;  // a hostile shape must not wrap around to the data's size
  return n == data.size();
}

array_view tensor::view_of(const double* storage) const {
  array_view a;
  a.data = storage;
  for (std::size_t d : shape) a.dims[a.rank++] = d;
  return a;
}

bool operator==(const tensor& a, const tensor& b) { return a.shape == b.shape && same_bits(a.data, b.data); }

namespace {
/// One op field as `describe` shows it: " seq 2", " k(2,3)", " tokens [1,2]".
std::string field_text(const op_field_info& f, std::int64_t x) {
  return std::string(" ") + f.name + " " + std::to_string(x);
}
std::string field_text(const op_field_info& f, const tensor& t) { return std::string(" ") + f.name + shape_string(t); }
std::string field_text(const op_field_info& f, const std::vector<std::int64_t>& v) {
  std::string s = std::string(" ") + f.name + " [";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}
bool unset(std::int64_t x) { return x == 0; }
bool unset(const tensor& t) { return t.shape.empty(); }
bool unset(const std::vector<std::int64_t>& v) { return v.empty(); }
}  // namespace

std::string describe(const op& o) {
  // A field every kind's op of this name carries is always shown, one only some kinds carry when it is set (a
  // paged append names its seq when it is not 0): without the kind, that reads the same for every kind.
  unsigned everywhere = ~0u, anywhere = 0;
  for (const kind_spec* k : kind_specs())
    if (const op_spec* s = k->find(o.kind)) everywhere &= s->fields, anywhere |= s->fields;
  std::string text[3];  // integers (where), then tensors (what), then lists: "update layer 1 start 0 k(2,3) v(2,3)"
  visit_fields(o, anywhere, [&](const op_field_info& f, const auto& x) {
    const bool always =
        (everywhere & f.bit) && f.type != field_type::optional_tensor && f.type != field_type::optional_integer;
    if (always || !unset(x))
      text[f.type == field_type::integers                                          ? 2
           : f.type == field_type::tensor || f.type == field_type::optional_tensor ? 1
                                                                                   : 0] += field_text(f, x);
  });
  return to_string(o.kind) + text[0] + text[1] + text[2];
}

std::string describe(const cache_config& c) {
  const kind_spec& spec = spec_of(c.kind);
  std::ostringstream s;
  s << spec.name << '(';
  const char* sep = "";
  for (const config_field& f : spec.config) {
    const bool sized = f.size && !(f.optional && c.*f.size == 0);
    const bool shown = sized || (f.flag && c.*f.flag) || (f.scale && c.*f.scale != 1);
    if (!shown) continue;
    s << sep << f.name;
    if (sized) s << '=' << c.*f.size;
    if (f.scale) s << '=' << c.*f.scale;
    sep = ", ";
  }
  s << ')';
  return s.str();
}

std::string diff(const snapshot& e, const snapshot& o) {
  // Messages are built only on a difference: this runs after every op of every case.
  for (const auto& [name, value] : e.counters) {
    auto at = o.counters.begin();  // a loop, not find_if: clang 14 cannot capture a structured binding
    while (at != o.counters.end() && at->first != name) ++at;
    if (at == o.counters.end()) return "counter " + name + " missing";
    if (at->second != value) return name + " is " + std::to_string(at->second) + ", expected " + std::to_string(value);
  }
  if (e.streams.size() != o.streams.size())
    return std::to_string(o.streams.size()) + " streams, expected " + std::to_string(e.streams.size());
  for (std::size_t i = 0; i < e.streams.size(); ++i) {
    const stream &a = e.streams[i], &b = o.streams[i];
    const std::string where = a.name.empty() ? "" : " of " + a.name;
    if (a.name != b.name) return "stream " + b.name + ", expected " + a.name;
    if (a.d_k != b.d_k || a.d_v != b.d_v || b.keys.size() != b.rows() * b.d_k || b.values.size() != b.rows() * b.d_v ||
        b.rows() != a.rows()) {
      std::ostringstream s;
      s << "view" << where << " is " << b.keys.size() / (b.d_k ? b.d_k : 1) << " x " << b.d_k << " keys / "
        << b.values.size() / (b.d_v ? b.d_v : 1) << " x " << b.d_v << " values, expected " << a.rows() << " x " << a.d_k
        << " / " << a.rows() << " x " << a.d_v;
      return s.str();
    }
    for (auto [name, want, got, w] :
         {std::tuple{"key", &a.keys, &b.keys, a.d_k}, std::tuple{"value", &a.values, &b.values, a.d_v}}) {
      const bool bounded = want == &a.keys && !a.key_bounds.empty();
      const std::size_t at = bounded ? bounded_mismatch(*want, *got, a.key_bounds) : want->mismatch(*got);
      if (at == want->size()) continue;
      const std::size_t r = at / w;
      std::ostringstream s;
      s << name << " row " << r << where << " is " << row_text(got->copy(r * w, w)) << ", expected "
        << row_text(want->copy(r * w, w));
      if (bounded)
        s << " (entry " << at % w << " off by " << std::abs((*got)[at] - (*want)[at]) << ", bound " << a.key_bounds[at]
          << ")";
      return s.str();
    }
    if (a.positions != b.positions) return "positions" + where + " differ";
  }
  return diff_blocks(e, o);
}

}  // namespace kvconform
