// The harness's kind table: one row per kind, defined in each kind's folder (properties/kinds/KIND/properties.cpp).
#include "properties/executor/kind_table.h"

#include <iterator>
#include <stdexcept>

namespace kvconform {

namespace kinds {
#define KVCONFORM_DECLARE_KIND(name) extern const kind_descriptor name##_kind;
KVCONFORM_KINDS(KVCONFORM_DECLARE_KIND)
#undef KVCONFORM_DECLARE_KIND
}  // namespace kinds

namespace {
#define KVCONFORM_KIND_ADDRESS(name) &kinds::name##_kind,
const kind_descriptor* const table[] = {KVCONFORM_KINDS(KVCONFORM_KIND_ADDRESS)};
#undef KVCONFORM_KIND_ADDRESS
}  // namespace

std::span<const kind_descriptor* const> all_kinds() { return table; }

const kind_descriptor& kind_of(cache_kind k) {
  const auto i = static_cast<std::size_t>(k);
  if (i >= std::size(table) || table[i]->spec.kind != k) throw std::logic_error("kind table out of order");
  return *table[i];
}

std::unique_ptr<model> make_model(const cache_config& c, const numeric_profile& p, const policy_set& policies) {
  return kind_of(c.kind).make_model(c, p, policies);
}

}  // namespace kvconform
