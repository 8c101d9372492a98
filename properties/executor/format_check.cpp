// The format rules of docs/numerics.md §6.2 applied to a snapshot, and the hint for rows stored in an undeclared
// format.
#include "properties/executor/format_check.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>

#include "oracle/numeric/element_rounding.h"
#include "oracle/numeric/group_rules.h"

namespace kvconform {

namespace {
std::string num(double x) {
  std::ostringstream s;
  s.precision(17);
  s << x;
  return s.str();
}

bool same_bits(const double* a, const double* b, std::size_t n) { return std::memcmp(a, b, n * sizeof(double)) == 0; }

/// For a side declared in an element format whose rows differ: the format, the first differing value and what
/// the format stores for it (the row shown by the state comparison may be cut before that value).
std::string declared_hint(bool keys, const storage_format& f, std::size_t width, const std::vector<double>& want,
                          const std::vector<double>& got) {
  std::size_t k = 0;
  while (k + 1 < want.size() && same_bits(&want[k], &got[k], 1)) ++k;
  const std::string side = keys ? "key" : "value", at = width ? std::to_string(k / width) : "0";
  return " (" + side + "s are declared " + describe(f) + ": " + side + " row " + at + " value " +
         std::to_string(width ? k % width : k) + " is " + num(got[k]) + ", where " + describe(f) + " stores " +
         num(want[k]) + ")";
}

/// One side of one stream as the checks see it.
struct side_ref {
  const char* name;  // "key" or "value"
  const storage_format& f;
  std::size_t width;
  const std::vector<double>&want_rows, &got_rows;
  const group_view &want, &got;
  const std::string& stream_name;
  /// " of seq 0", or "": for messages only.
  std::string where() const { return stream_name.empty() ? "" : " of " + stream_name; }
};

/// One group's rule checks: its scale and minimum, then each value (rows x columns of `at`).
struct group_checker {
  const side_ref& s;
  std::vector<double>& err;
  std::optional<format_problem> problem;

  bool fail(std::string m) {
    problem = format_problem{"format", std::move(m)};
    return false;
  }
  std::string fmt() const { return " (" + std::string(s.name) + "s declared " + describe(s.f) + ")"; }

  template <class Label>
  bool stored(const char* what, double got, double ideal, const Label& label) {
    const double rounded = round_element({.element = s.f.scale_format}, ideal);
    if (!std::isfinite(rounded))
      return std::isfinite(got) ? fail(label() + " " + what + " " + num(got) + " is finite, but " + num(ideal) +
                                       " overflows " + to_string(s.f.scale_format) + fmt())
                                : true;
    if (std::fabs(got - ideal) <= stored_tolerance(s.f.scale_format, ideal)) return true;
    return fail(label() + " " + what + " is " + num(got) + ", expected " + num(ideal) + " within one rounding of " +
                to_string(s.f.scale_format) + fmt());
  }

  /// Group k with ideal from the model, stored scale and minimum from the cache, over rows [r0, r1) x
  /// columns [c0, c1). `label()` names the group; it and every message are built only for a failure (the
  /// checks run after every op).
  template <class Label>
  bool check(std::size_t k, const Label& label, std::size_t r0, std::size_t r1, std::size_t c0, std::size_t c1) {
    const group_ideal ideal{s.want.scales[k], s.f.symmetric ? 0.0 : s.want.zeros[k]};
    const double d = s.got.scales[k], z = s.f.symmetric ? 0.0 : s.got.zeros[k];
    if (!stored("scale", d, ideal.scale, label) || (!s.f.symmetric && !stored("minimum", z, ideal.zero, label)))
      return false;
    // A scale or minimum the declared format cannot hold makes its values non-finite: judged by the stored value.
    const storage_format sf{.element = s.f.scale_format};
    if (!std::isfinite(round_element(sf, ideal.scale)) || !std::isfinite(round_element(sf, ideal.zero))) return true;
    for (std::size_t r = r0; r < r1; ++r)
      for (std::size_t j = c0; j < c1; ++j) {
        const std::size_t at = r * s.width + j;
        const double x = s.want_rows[at], got = s.got_rows[at];
        auto cell = [&] {
          return s.name + std::string(" row ") + std::to_string(r) + " value " + std::to_string(j) + s.where();
        };
        if (!grid_code(s.f, d, z, got))
          return fail(cell() + " is " + num(got) + ", off the grid of its group's scale " + num(d) +
                      (s.f.symmetric ? "" : " and minimum " + num(z)) + fmt());
        const double bound = group_error_bound(s.f, ideal, d, z, x);
        if (std::fabs(got - x) > bound)
          return fail(cell() + " is " + num(got) + " for input " + num(x) + ": |error| " + num(std::fabs(got - x)) +
                      " exceeds half a step plus the scale's rounding, " + num(bound) + fmt());
        err[at] = bound;
      }
    return true;
  }
};
/// Every quantized group of a side, unit by unit: `unit(ra, rb, ga, ng, check)` judges rows [ra, rb) and
/// their ng groups from ga on, calling `check` unless those bits passed before; false at the first failure.
template <class Unit>
bool check_units(const side_ref& s, group_checker& g, std::size_t q, Unit&& unit) {
  if (s.f.axis == group_axis::token) {
    const std::size_t per_row = (s.width + s.f.group - 1) / s.f.group;
    for (std::size_t r = 0; r < q; ++r)
      if (!unit(r, r + 1, r * per_row, per_row, [&] {
            for (std::size_t k = 0; k < per_row; ++k) {
              auto label = [&] {
                return s.name + std::string(" row ") + std::to_string(r) + " group " + std::to_string(k) + s.where();
              };
              const std::size_t a = k * s.f.group;
              if (!g.check(r * per_row + k, label, r, r + 1, a, std::min(a + s.f.group, s.width))) return false;
            }
            return true;
          }))
        return false;
    return true;
  }
  for (std::size_t k = 0; k < s.want.starts.size(); ++k) {
    const std::size_t a = s.want.starts[k], b = k + 1 < s.want.starts.size() ? s.want.starts[k + 1] : q;
    if (!unit(a, b, k * s.width, s.width, [&] {
          for (std::size_t j = 0; j < s.width; ++j) {
            auto label = [&] {
              return s.name + std::string(" rows ") + std::to_string(a) + "-" + std::to_string(b - 1) + " channel " +
                     std::to_string(j) + s.where();
            };
            if (!g.check(k * s.width + j, label, a, b, j, j + 1)) return false;
          }
          return true;
        }))
      return false;
  }
  return true;
}
}  // namespace

const storage_format& format_checker::format(std::size_t st, bool keys) const {
  const bool sliding = st < sliding_.size() && sliding_[st];
  if (sliding && (keys ? p_.sliding_keys : p_.sliding_values)) return keys ? *p_.sliding_keys : *p_.sliding_values;
  return keys ? p_.keys : p_.values;
}

std::optional<format_problem> format_checker::check_side(const stream& want, const stream& got, bool keys,
                                                         stream_errors& errors) {
  const storage_format f = keys ? p_.keys_of(want.sliding) : p_.values_of(want.sliding);
  // The group checks index rows freely: copies, made only for sides stored in integer groups.
  const std::vector<double> want_rows = f.groups ? (keys ? want.keys : want.values).copy() : std::vector<double>{},
                            got_rows = f.groups ? (keys ? got.keys : got.values).copy() : std::vector<double>{};
  const side_ref s{keys ? "key" : "value",
                   f,
                   keys ? want.d_k : want.d_v,
                   want_rows,
                   got_rows,
                   keys ? want.key_groups : want.value_groups,
                   keys ? got.key_groups : got.value_groups,
                   want.name};
  auto problem = [](std::string m) { return format_problem{"format", std::move(m)}; };
  if (!s.f.groups) {
    if (s.got.empty()) return std::nullopt;
    const std::optional<storage_format> layout =
        s.f.rounds() ? std::nullopt
                     : common_group_layout((keys ? want.keys : want.values).copy(),
                                           (keys ? got.keys : got.values).copy(), s.width);
    return problem("the cache exposes " + std::to_string(s.got.scales.size()) + " " + s.name + " scales" + s.where() +
                   ", but " + s.name + "s are declared " + describe(s.f) +
                   (layout ? "; the stored rows lie on the grid of " + describe(*layout) + ": declare that format"
                           : ": declare its integer group format"));
  }
  const std::size_t rows = s.width ? s.want_rows.size() / s.width : 0, q = s.want.quantized;
  if (s.got.scales.size() != s.want.scales.size() || s.got.zeros.size() != s.want.zeros.size())
    return problem("the cache exposes " + std::to_string(s.got.scales.size()) + " " + s.name + " scales and " +
                   std::to_string(s.got.zeros.size()) + " minima" + s.where() + ", expected " +
                   std::to_string(s.want.scales.size()) + " and " + std::to_string(s.want.zeros.size()) + " (" +
                   std::to_string(q) + " of " + std::to_string(rows) + " rows quantized; " + s.name + "s declared " +
                   describe(s.f) + ")");
  std::vector<double>& err = keys ? errors.keys : errors.values;
  err.assign(s.want_rows.size(), 0.0);
  for (std::size_t r = q; r < rows; ++r)
    if (!same_bits(&s.want_rows[r * s.width], &s.got_rows[r * s.width], s.width))
      return problem(std::string(s.name) + " row " + std::to_string(r) + s.where() +
                     " is a residual row, kept as given " + "in " + to_string(s.f.element) +
                     " until its chunk is quantized, but differs: " + num(s.got_rows[r * s.width]) + "... for " +
                     num(s.want_rows[r * s.width]) + "... (" + s.name + "s declared " + describe(s.f) + ")");
  group_checker g{s, err, std::nullopt};
  // A unit is rows [ra, rb) with their groups from ga on: one row and its groups (per token), or one block
  // of rows and its channels (per channel). Its verdict and error bounds depend on its bits alone.
  passed_units& passed = passed_[keys ? 0 : 1];
  auto unit = [&](std::size_t ra, std::size_t rb, std::size_t ga, std::size_t ng, auto&& check_groups) {
    const std::size_t a = ra * s.width, b = rb * s.width;
    passed.key(s.want_rows, s.got_rows, a, b, s.want, s.got, ga, ng);
    if (const std::vector<double>* e = passed.find()) return std::copy(e->begin(), e->end(), err.begin() + a), true;
    if (!check_groups()) return false;
    passed.add(std::vector<double>(err.begin() + a, err.begin() + b));
    return true;
  };
  if (!check_units(s, g, q, unit)) return g.problem;
  return std::nullopt;
}

void format_checker::passed_units::key(const std::vector<double>& want_rows, const std::vector<double>& got_rows,
                                       std::size_t a, std::size_t b, const group_view& want, const group_view& got,
                                       std::size_t ga, std::size_t ng) {
  parts_.clear();
  parts_.emplace_back(want_rows.data() + a, b - a), parts_.emplace_back(got_rows.data() + a, b - a);
  for (const std::vector<double>* v : {&want.scales, &want.zeros, &got.scales, &got.zeros})
    if (!v->empty()) parts_.emplace_back(v->data() + ga, ng);
  rows_ = b - a, size_ = 0;
  // Four lanes: one multiply chain over every element was most of a quantized reference's state check.
  std::uint64_t h[4] = {0x9e3779b97f4a7c15ull ^ rows_, 1, 2, 3};
  for (const std::span<const double> part : parts_) {
    for (std::size_t i = 0; i < part.size(); ++i, ++size_) {
      std::uint64_t& x = h[size_ & 3];
      x = (x ^ std::bit_cast<std::uint64_t>(part[i])) * 0xff51afd7ed558ccdull, x ^= x >> 32;
    }
  }
  hash_ = ((h[0] * 31 + h[1]) * 31 + h[2]) * 31 + h[3];
}

bool format_checker::passed_units::matches(const std::vector<double>& stored) const {
  if (stored.size() != size_ + 1 || stored[0] != static_cast<double>(rows_)) return false;
  std::size_t at = 1;
  for (const std::span<const double> part : parts_) {  // bits, not values: -0.0 and NaN payloads are inputs too
    if (!same_bits(stored.data() + at, part.data(), part.size())) return false;
    at += part.size();
  }
  return true;
}

const std::vector<double>* format_checker::passed_units::find() const {
  const auto at = by_hash_.find(hash_);
  if (at == by_hash_.end()) return nullptr;
  for (const auto& [k, err] : at->second)
    if (matches(k)) return &err;
  return nullptr;
}

void format_checker::passed_units::add(std::vector<double> err) {
  std::vector<double> key;
  key.reserve(size_ + 1);
  key.push_back(static_cast<double>(rows_));
  for (const std::span<const double> part : parts_) key.insert(key.end(), part.begin(), part.end());
  by_hash_[hash_].emplace_back(std::move(key), std::move(err));
}

std::optional<format_problem> format_checker::check_state(snapshot& expected, const snapshot& observed) {
  sliding_.clear();
  for (const stream& st : expected.streams) sliding_.push_back(st.sliding);
  if (!p_.keys.groups && !p_.values.groups && !p_.rounds_storage()) {
    // A double cache: only scales it exposes without declaring groups are a format problem.
    bool any = false;
    for (const stream& st : observed.streams) any = any || !st.key_groups.empty() || !st.value_groups.empty();
    if (!any) return std::nullopt;
  }
  if (expected.streams.size() != observed.streams.size()) return std::nullopt;  // the comparison names it
  errors_.assign(expected.streams.size(), {});
  exposed_keys_.assign(expected.streams.size(), {}), exposed_values_.assign(expected.streams.size(), {});
  for (std::size_t i = 0; i < expected.streams.size(); ++i) {
    stream& want = expected.streams[i];
    const stream& got = observed.streams[i];
    if (want.name != got.name || want.keys.size() != got.keys.size() || want.values.size() != got.values.size() ||
        want.d_k != got.d_k || want.d_v != got.d_v)
      return std::nullopt;  // shapes first: the bitwise comparison reports them
    for (bool keys : {true, false}) {
      if (auto p = check_side(want, got, keys, errors_[i])) return p;
      const storage_format& f = format(i, keys);
      if (!f.groups) continue;
      (keys ? want.keys : want.values) = keys ? got.keys : got.values;
      (keys ? want.key_groups : want.value_groups) = keys ? got.key_groups : got.value_groups;
      (keys ? exposed_keys_ : exposed_values_)[i] = (keys ? got.keys : got.values).copy();  // kept for the next op
    }
  }
  return std::nullopt;
}

void format_checker::substitute(expectation& e) const {
  if (e.rematerialise) {  // a latent op's heads are made from its one stream's rows
    const std::size_t st = e.streams.empty() ? exposed_keys_.size() : e.streams[0];
    if (p_.keys.groups && st < exposed_keys_.size() && exposed_keys_[st].size() == e.problems[0].n * c_.d_k)
      e.problems = e.rematerialise(exposed_keys_[st]);
    return;
  }
  for (std::size_t i = 0; i < e.problems.size() && i < e.streams.size(); ++i) {
    const std::size_t st = e.streams[i];
    attention_problem& p = e.problems[i];
    if (p_.keys.groups && st < exposed_keys_.size() && exposed_keys_[st].size() == p.keys.size())
      p.keys = exposed_keys_[st];
    if (p_.values.groups && st < exposed_values_.size() && exposed_values_[st].size() == p.values.size())
      p.values = exposed_values_[st];
  }
}

std::string format_checker::hint(const snapshot& expected, const snapshot& observed) const {
  static const element_format candidates[] = {element_format::f32, element_format::f16, element_format::bf16,
                                              element_format::e4m3, element_format::e5m2};
  for (std::size_t i = 0; i < expected.streams.size() && i < observed.streams.size(); ++i)
    for (bool keys : {true, false}) {
      const storage_format f =
          keys ? p_.keys_of(expected.streams[i].sliding) : p_.values_of(expected.streams[i].sliding);
      const row_data &w = keys ? expected.streams[i].keys : expected.streams[i].values,
                     &g = keys ? observed.streams[i].keys : observed.streams[i].values;
      // Sizes first: a cache whose view claims more rows than it holds must not be read past the model's rows.
      if (f.groups || w.size() != g.size() || w.size() == 0) continue;
      const std::vector<double> want = w.copy(), got = g.copy();
      if (same_bits(want.data(), got.data(), want.size())) continue;
      if (f.rounds())
        return declared_hint(keys, f, keys ? expected.streams[i].d_k : expected.streams[i].d_v, want, got);
      for (element_format c : candidates)
        for (overflow_rule o : {c == element_format::e4m3 ? overflow_rule::nan : overflow_rule::infinity,
                                overflow_rule::saturate, overflow_rule::nan}) {
          const storage_format cf{.element = c, .overflow = o};
          if (!check(cf).empty()) continue;
          bool all = true;
          for (std::size_t k = 0; all && k < want.size(); ++k) {
            const double r = round_element(cf, want[k]);
            all = std::bit_cast<std::uint64_t>(r) == std::bit_cast<std::uint64_t>(got[k]);
          }
          if (all)
            return std::string(" (") + (keys ? "keys" : "values") + " are declared " + describe(f) +
                   ", but the stored rows match " + describe(cf) + " rounding: declare that format)";
        }
      if (const auto layout = common_group_layout(want, got, keys ? expected.streams[i].d_k : expected.streams[i].d_v))
        return std::string(" (") + (keys ? "keys" : "values") + " are declared " + describe(f) +
               ", but the stored rows lie on the grid of " + describe(*layout) + ": declare that format)";
      return std::string(" (") + (keys ? "keys" : "values") + " are declared " + describe(f) + ")";
    }
  return "";
}

}  // namespace kvconform
