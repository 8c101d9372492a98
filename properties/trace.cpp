// Names, rendering and snapshot comparison for the trace language.
#include "properties/trace.h"

#include <bit>
#include <cstdint>
#include <sstream>
#include <tuple>

namespace kvconform {

namespace {
template <class E, std::size_t N>
std::optional<E> find_name(const std::string& s, const char* const (&names)[N]) {
  for (std::size_t i = 0; i < N; ++i)
    if (s == names[i]) return static_cast<E>(i);
  return std::nullopt;
}
const char* const kind_names[] = {"flat", "ring"};
const char* const op_names[] = {"append", "decode"};

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::bit_cast<std::uint64_t>(a[i]) != std::bit_cast<std::uint64_t>(b[i])) return false;
  return true;
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
}  // namespace

const char* to_string(cache_kind k) { return kind_names[static_cast<int>(k)]; }
std::optional<cache_kind> kind_from_string(const std::string& s) { return find_name<cache_kind>(s, kind_names); }
const char* to_string(op_kind k) { return op_names[static_cast<int>(k)]; }
std::optional<op_kind> op_kind_from_string(const std::string& s) { return find_name<op_kind>(s, op_names); }

bool tensor::consistent() const {
  if (shape.size() > 4) return false;
  std::size_t n = 1;
  for (std::size_t d : shape) n *= d;
  return n == data.size();
}

array_view tensor::view_of(const double* storage) const {
  array_view a;
  a.data = storage;
  for (std::size_t d : shape) a.dims[a.rank++] = d;
  return a;
}

bool operator==(const tensor& a, const tensor& b) { return a.shape == b.shape && same_bits(a.data, b.data); }

std::string describe(const op& o) {
  switch (o.kind) {
    case op_kind::append: return "append k" + shape_string(o.k) + " v" + shape_string(o.v);
    case op_kind::decode: return "decode q" + shape_string(o.q);
  }
  return "?";
}

std::string describe(const cache_config& c) {
  std::ostringstream s;
  s << to_string(c.kind) << '(' << c.capacity << ", d_k=" << c.d_k << ", d_v=" << c.d_v << ')';
  return s.str();
}

std::string diff(const snapshot& e, const snapshot& o) {
  std::ostringstream s;
  for (const auto& [name, value] : e.counters) {
    bool found = false;
    for (const auto& [oname, ovalue] : o.counters) {
      if (oname != name) continue;
      found = true;
      if (ovalue != value) s << name << " is " << ovalue << ", expected " << value;
    }
    if (!found) s << "counter " << name << " missing";
    if (!s.str().empty()) return s.str();
  }
  if (e.streams.size() != o.streams.size())
    return std::to_string(o.streams.size()) + " streams, expected " + std::to_string(e.streams.size());
  for (std::size_t i = 0; i < e.streams.size(); ++i) {
    const stream &a = e.streams[i], &b = o.streams[i];
    const std::string where = a.name.empty() ? "" : " of " + a.name;
    if (a.name != b.name) return "stream " + b.name + ", expected " + a.name;
    if (a.d_k != b.d_k || a.d_v != b.d_v || b.keys.size() != b.rows() * b.d_k ||
        b.values.size() != b.rows() * b.d_v || b.rows() != a.rows())
      s << "view" << where << " is " << b.keys.size() / (b.d_k ? b.d_k : 1) << " x " << b.d_k
        << " keys / " << b.values.size() / (b.d_v ? b.d_v : 1) << " x " << b.d_v << " values, expected "
        << a.rows() << " x " << a.d_k << " / " << a.rows() << " x " << a.d_v;
    else
      for (std::size_t r = 0; r < a.rows() && s.str().empty(); ++r) {
        auto row = [r](const std::vector<double>& m, std::size_t w) {
          return std::vector<double>(m.begin() + static_cast<std::ptrdiff_t>(r * w),
                                     m.begin() + static_cast<std::ptrdiff_t>((r + 1) * w));
        };
        for (auto [name, want, got] : {std::tuple{"key", row(a.keys, a.d_k), row(b.keys, b.d_k)},
                                       std::tuple{"value", row(a.values, a.d_v), row(b.values, b.d_v)}})
          if (s.str().empty() && !same_bits(want, got))
            s << name << " row " << r << where << " is " << row_text(got) << ", expected " << row_text(want);
      }
    if (s.str().empty() && a.positions != b.positions) s << "positions" << where << " differ";
    if (!s.str().empty()) return s.str();
  }
  return "";
}

}  // namespace kvconform
