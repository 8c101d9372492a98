// The trace layer's part of the kind table: every kind's vocabulary, found by kind or by name.
#include "properties/trace/kind_spec.h"

#include <stdexcept>

namespace kvconform {

namespace kinds {
#define KVCONFORM_DECLARE_SPEC(name) extern const kind_spec name##_spec;
KVCONFORM_KINDS(KVCONFORM_DECLARE_SPEC)
#undef KVCONFORM_DECLARE_SPEC
}  // namespace kinds

namespace {
#define KVCONFORM_SPEC_ADDRESS(name) &kinds::name##_spec,
const kind_spec* const table[] = {KVCONFORM_KINDS(KVCONFORM_SPEC_ADDRESS)};
#undef KVCONFORM_SPEC_ADDRESS
}  // namespace

const op_spec* kind_spec::find(op_kind k) const {
  for (const op_spec& o : ops)
    if (o.kind == k) return &o;
  return nullptr;
}

std::span<const kind_spec* const> kind_specs() { return table; }

double rows_cells(const cache_config& c) { return double(c.capacity) * double(c.d_k + c.d_v); }

const kind_spec& spec_of(cache_kind k) {
  const auto i = static_cast<std::size_t>(k);
  // A row in the wrong place would make every kind lookup lie; the table is tiny, so check it.
  if (i >= std::size(table) || table[i]->kind != k) throw std::logic_error("kind table out of order");
  return *table[i];
}

const char* to_string(cache_kind k) { return spec_of(k).name; }

std::optional<cache_kind> kind_from_string(std::string_view name) {
  for (const kind_spec* s : table)
    if (name == s->name) return s->kind;
  return std::nullopt;
}

std::string kind_names() {
  std::string s;
  for (const kind_spec* k : table) s += (s.empty() ? "" : ", ") + std::string(k->name);
  return s;
}

}  // namespace kvconform
