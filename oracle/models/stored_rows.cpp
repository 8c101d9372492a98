// The model's storage of rows: element rounding, and the group, residual and chunk rules of docs/numerics.md §6.
#include "oracle/models/stored_rows.h"

#include <algorithm>

#include "oracle/numeric/element_rounding.h"
#include "oracle/numeric/group_rules.h"

namespace kvconform {

void stored_rows::push(const row& given) {
  row s = given;
  for (double& x : s) x = f_.groups ? round_element({.element = f_.element}, x) : store_element(f_, x, scale_);
  given_.push_back(given);
  stored_.push_back(s);
  ++appended_;
  if (f_.groups && appended_ - quantized_ == f_.chunk()) quantize_chunk();
}

void stored_rows::quantize_chunk() {
  // Per-token groups need nothing recorded: a row's groups are its own values. Per-channel groups
  // record each channel's range over the rows held now, which later evictions must not change.
  if (f_.axis == group_axis::channel)
    for (std::size_t g = quantized_; g < appended_; g += f_.group) {
      channel_group cg{g, std::min(f_.group, appended_ - g), row(width_, 0.0), row(width_, 0.0)};
      bool any = false;
      for (std::size_t r = std::max(g, first_); r < g + cg.count; ++r)
        for (std::size_t j = 0; j < width_; ++j) {
          const double x = stored_[r - first_][j];
          cg.lo[j] = any ? std::min(cg.lo[j], x) : x, cg.hi[j] = any ? std::max(cg.hi[j], x) : x;
          if (j + 1 == width_) any = true;
        }
      if (any) groups_.push_back(std::move(cg));
    }
  quantized_ = appended_;
}

void stored_rows::pop_front() {
  given_.pop_front(), stored_.pop_front();
  ++first_;
  while (!groups_.empty() && groups_.front().first + groups_.front().count <= first_) groups_.pop_front();
}

void stored_rows::erase(std::size_t i) {
  if (i == 0) return pop_front();
  given_.erase(i), stored_.erase(i);
}

void stored_rows::truncate(std::size_t rows) {
  given_.resize(rows), stored_.resize(rows);
  appended_ = first_ + rows;
  quantized_ = std::min(quantized_, appended_);
  while (!groups_.empty() && groups_.back().first >= appended_) groups_.pop_back();
  if (!groups_.empty()) groups_.back().count = std::min(groups_.back().count, appended_ - groups_.back().first);
}

void stored_rows::expose_token_groups(group_view& g) const {
  for (std::size_t r = 0; r < g.quantized; ++r)
    for (std::size_t at = 0; at < width_; at += f_.group) {
      const auto begin = stored_[r].begin() + static_cast<std::ptrdiff_t>(at);
      const auto end = stored_[r].begin() + static_cast<std::ptrdiff_t>(std::min(at + f_.group, width_));
      const auto [lo, hi] = std::minmax_element(begin, end);
      const group_ideal ideal = ideal_group(f_, *lo, *hi);
      g.scales.push_back(ideal.scale);
      if (!f_.symmetric) g.zeros.push_back(ideal.zero);
    }
}

void stored_rows::expose(row_data& rows, group_view& g) const {
  stored_.view_into(rows);
  if (!f_.groups) return;
  g.quantized = quantized_ > first_ ? std::min(quantized_ - first_, size()) : 0;
  if (f_.axis == group_axis::token) return expose_token_groups(g);
  for (const channel_group& cg : groups_) {
    if (cg.first >= first_ + g.quantized) break;
    g.starts.push_back(cg.first > first_ ? cg.first - first_ : 0);
    for (std::size_t j = 0; j < width_; ++j) {
      const group_ideal ideal = ideal_group(f_, cg.lo[j], cg.hi[j]);
      g.scales.push_back(ideal.scale);
      if (!f_.symmetric) g.zeros.push_back(ideal.zero);
    }
  }
}

}  // namespace kvconform
