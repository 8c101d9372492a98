// The trace layer's part of the kind table: every kind's vocabulary, found by kind or by name.
#include "properties/trace/kind_spec.h"

#include <stdexcept>

#include "properties/trace/utf8.h"

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

std::string policy_set::describe() const {
  std::string s;
  for (const auto& [name, choice] : choices_) s += (s.empty() ? "" : ", ") + name + "=" + choice;
  return s;
}

const policy_spec* kind_spec::find_policy(std::string_view name) const {
  for (const policy_spec& p : policies)
    if (name == p.name) return &p;
  return nullptr;
}

std::string policy_problem(const kind_spec& k, const policy_set& p) {
  for (const auto& [name, choice] : p.declared()) {
    const policy_spec* spec = k.find_policy(name);
    if (!spec) {
      std::string known;
      for (const policy_spec& s : k.policies) known += (known.empty() ? "" : ", ") + std::string(s.name);
      return "the " + std::string(k.name) + " kind has no policy \"" + valid_utf8(name, 64) + "\" (" +
             (known.empty() ? "it has none" : "its policies: " + known) + ")";
    }
    bool found = false;
    std::string choices;
    for (const policy_choice& c : spec->choices) {
      found = found || choice == c.name;
      choices += (choices.empty() ? "" : ", ") + std::string(c.name);
    }
    if (!found)
      return std::string(k.name) + " policy " + name + " has no choice \"" + valid_utf8(choice, 64) +
             "\" (its choices: " + choices + ")";
  }
  return k.policy_rules ? k.policy_rules(normalised(k, p)) : "";
}

policy_set normalised(const kind_spec& k, policy_set p) {
  for (const policy_spec& s : k.policies)
    if (!s.choices.empty() && p.is(s.name, s.choices.front().name)) p.erase(s.name);
  return p;
}

std::string with_policies(const kind_spec& k, const policy_set& p) {
  const std::string declared = p.describe();
  return declared.empty() ? std::string(k.name) : std::string(k.name) + ", " + declared;
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
