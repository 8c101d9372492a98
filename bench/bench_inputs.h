// What the benchmarks share: a decode's rows and query from the moderate input class, and a filled flat cache.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include <kvconform/array_view.h>
#include "oracle/numeric/attention_problem.h"
#include "properties/generate/input_classes.h"

namespace kvconform::bench {

/// n rows of width d (keys and values) and a query, from the moderate class with a fixed seed.
inline attention_problem moderate_problem(std::size_t n, std::size_t d) {
  const row_source src(input_class::moderate, d, d, 1);
  attention_problem p;
  p.n = n, p.d_k = p.d_v = d;
  std::vector<double> keys, values;
  src.rows(0, n, 2, keys, values);
  p.keys = std::move(keys), p.values = std::move(values);
  p.q = src.query();
  return p;
}

/// Benchmarks registered per implementation and property: from main, once every kind's row exists
/// (registering from a static initialiser would race the kind table's own).
void register_executor_benchmarks();
void register_gate_benchmarks();

inline array_view matrix(const shared_doubles& data, std::size_t rows, std::size_t cols) {
  return array_view(data.data(), {rows, cols});
}

}  // namespace kvconform::bench
