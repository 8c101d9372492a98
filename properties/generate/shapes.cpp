// Production head dims and the choice of a property's long cases (docs/design.md §4.4).
#include "properties/generate/shapes.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "properties/executor/coverage.h"

namespace kvconform {

bool production_case(int size) { return production_size(size) && !generator_disabled("production-shapes"); }

rc::Gen<std::size_t> production_or(std::span<const std::size_t> ordinary, std::span<const std::size_t> production) {
  const std::vector<std::size_t> usual(ordinary.begin(), ordinary.end()), wide(production.begin(), production.end());
  return rc::gen::withSize([usual, wide](int size) {
    const std::vector<std::size_t>& from = production_case(size) ? wide : usual;
    return rc::gen::map(rc::gen::resize(100, rc::gen::inRange<std::size_t>(0, from.size())),
                        [from](std::size_t i) { return from[i]; });
  });
}

rc::Gen<std::size_t> width_gen(bool deep) {
  static const std::vector<std::size_t> quick_dims = {1, 2, 3, 4, 8, 16}, deep_dims = {1, 2, 3, 4, 5, 8, 16, 64, 128};
  return head_dim_gen(deep ? deep_dims : quick_dims);
}

rc::Gen<std::size_t> long_rows_gen() {
  constexpr int steps = 1000;
  return rc::gen::map(rc::gen::resize(100, rc::gen::inRange(0, steps + 1)), [](int i) {
    const double ratio = double(long_rows_max) / double(long_rows_min);
    return static_cast<std::size_t>(std::lround(double(long_rows_min) * std::pow(ratio, double(i) / steps)));
  });
}

rc::Gen<std::size_t> long_fill_gen(std::size_t room, std::size_t least) {
  const std::size_t slack = room - std::min(room, std::max(room - room / 8, least));
  return rc::gen::map(rc::gen::resize(100, rc::gen::inRange<std::size_t>(0, slack + 1)),
                      [room](std::size_t j) { return room - j; });
}

std::optional<int> long_case_size(const property& p, const run_options& o) {
  if (p.drive || p.rewrite || !o.production_shapes || generator_disabled("long-cases")) return std::nullopt;
  static constexpr int phases[] = {3, 4, 5, 6};  // early, and never a production case's size
  return phases[property_seed(o.seed, p.name) % 4];
}

}  // namespace kvconform
