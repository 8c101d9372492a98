// acme's zoo runner on kvconform's CLI: its flat and latent caches, a mutant the gate must kill, a decode-less variant.
#include <cstddef>
#include <vector>

#include <kvconform/plugin.h>
#include "latent_cache.h"
#include "tiny_cache.h"

namespace acme {

/// The bug acme once shipped: `>=` in the capacity check wastes the last slot. Kept so that
/// `selftest` proves the gate still catches it; exact_fill is the property expected to.
struct strict_tiny_cache : tiny_cache {
  using tiny_cache::tiny_cache;
  status append(kvconform::array_view k, kvconform::array_view v) {
    if (const auto n = rows_in(k); n && size() + n->steps >= max_len()) return status(code::full);
    return tiny_cache::append(k, v);
  }
};

/// A correct cache of another shape (a row per vector, bool for success) used by acme's
/// prefix store, which never decodes: its decode properties are NOT SUPPORTED, not failures.
/// Not derived from tiny_cache, or ADL would find tiny_cache's decode_step for it.
class ledger_cache {
 public:
  ledger_cache(std::size_t max_len, std::size_t d_k, std::size_t d_v) : max_(max_len), dk_(d_k), dv_(d_v) {}

  bool append(kvconform::array_view k, kvconform::array_view v) {
    const auto n = append_steps(k, v, dk_, dv_);
    if (!n || keys_.size() + *n > max_) return false;
    for (std::size_t i = 0; i < *n; ++i) {
      keys_.emplace_back(k.data + i * dk_, k.data + (i + 1) * dk_);
      values_.emplace_back(v.data + i * dv_, v.data + (i + 1) * dv_);
    }
    return true;
  }

  /// The rows are separate vectors, so the view indexes the outer vector first.
  struct view {
    const std::vector<std::vector<double>>* rows_of;
    std::size_t width;
    std::ptrdiff_t rows() const { return static_cast<std::ptrdiff_t>(rows_of->size()); }
    std::ptrdiff_t cols() const { return static_cast<std::ptrdiff_t>(width); }
    double operator()(std::ptrdiff_t i, std::ptrdiff_t j) const {
      return (*rows_of)[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)];
    }
  };
  std::size_t size() const { return keys_.size(); }
  view keys() const { return {&keys_, dk_}; }
  view values() const { return {&values_, dv_}; }

 private:
  std::size_t max_, dk_, dv_;
  std::vector<std::vector<double>> keys_, values_;
};

}  // namespace acme

int main(int argc, char** argv) {
  using kvconform::impl_group;
  const std::vector<kvconform::implementation> impls = {
      kvconform::make_implementation<acme::tiny_cache>(
          {.name = "acme-tiny", .group = impl_group::reference, .note = "acme's flat cache"}),
      kvconform::make_implementation<acme::strict_tiny_cache>(
          {.name = "acme-tiny-strict",
           .group = impl_group::mutant,
           .note = "`>=` in the capacity check wastes the last slot (acme, 2023)",
           .killer = "exact_fill"}),
      kvconform::make_implementation<acme::ledger_cache>(
          {.name = "acme-ledger", .group = impl_group::variant, .note = "acme's prefix store: no decode"}),
      kvconform::make_implementation<acme::latent_cache>(
          {.name = "acme-latent", .group = impl_group::reference, .note = "acme's MLA cache: absorbed decode"}),
  };
  return kvconform::run_cli(argc, argv, impls, "acme zoo: acme's flat and latent caches, a known mutant and a variant");
}
