// Doubles that copies share until one is changed: the rows of a prefill's m attention problems are one block.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <memory>
#include <vector>

namespace kvconform {

/// A std::vector<double> whose copies share one block until a copy is changed (copy on write). A prefill poses m
/// problems over the same n + m rows (docs/numerics.md §3.7); owning them per problem would take m times the memory.
class shared_doubles {
 public:
  shared_doubles() = default;
  shared_doubles(std::vector<double> v)  // NOLINT: implicit, so a problem's rows are assigned as a vector
      : p_(std::make_shared<std::vector<double>>(std::move(v))) {}
  shared_doubles(std::initializer_list<double> v) : shared_doubles(std::vector<double>(v)) {}  // NOLINT: as above

  std::size_t size() const { return p_ ? p_->size() : 0; }
  bool empty() const { return size() == 0; }
  const double* data() const { return p_ ? p_->data() : nullptr; }
  const double* begin() const { return data(); }
  const double* end() const { return data() + size(); }
  const double& operator[](std::size_t i) const { return (*p_)[i]; }
  /// Whatever changes the doubles first takes a copy of its own when the block is shared.
  double& operator[](std::size_t i) { return own()[i]; }
  void push_back(double x) { own().push_back(x); }
  template <class It>
  void append(It first, It last) {
    own().insert(own().end(), first, last);
  }
  const std::vector<double>& vector() const {
    static const std::vector<double> none;
    return p_ ? *p_ : none;
  }
  friend bool operator==(const shared_doubles& a, const shared_doubles& b) { return a.vector() == b.vector(); }

 private:
  std::vector<double>& own() {
    if (!p_)
      p_ = std::make_shared<std::vector<double>>();
    else if (p_.use_count() > 1)
      p_ = std::make_shared<std::vector<double>>(*p_);
    return *p_;
  }
  std::shared_ptr<std::vector<double>> p_;
};

}  // namespace kvconform
