// `kvconform list`: the implementations the runner knows and each kind's properties.
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "properties/cli/subcommand.h"
#include "properties/generate/property.h"
#include "properties/trace/kind_spec.h"

namespace kvconform::cli {

namespace {
/// A kind's policies, each with its choices (the default first) and what each does (docs/design.md §2.4).
void list_policies(const kind_spec& k) {
  if (k.policies.empty()) return;
  std::cout << k.name << " policies (declared by a cache; the first choice is the default):\n";
  for (const policy_spec& p : k.policies) {
    std::cout << "  " << p.name << ":";
    for (const policy_choice& c : p.choices) std::cout << (&c == &p.choices.front() ? " " : " | ") << c.name;
    std::cout << "\n      " << p.summary << "\n";
    for (const policy_choice& c : p.choices)
      std::cout << "      " << c.name << ": " << c.summary << (*c.engines ? std::string("; engines: ") + c.engines : "")
                << "\n";
  }
}

/// The same as JSON, for programs that build on the gate (the pytest plugin asks it which properties a kind has).
nlohmann::ordered_json list_json(const command_line& cmd) {
  nlohmann::ordered_json impls = nlohmann::ordered_json::array(), kinds = nlohmann::ordered_json::array();
  for (const auto& i : cmd.impls())
    impls.push_back({{"name", i.name},
                     {"kind", to_string(i.kind)},
                     {"group", to_string(i.group)},
                     {"profile", i.profile.describe()},
                     {"note", i.note}});
  for (const kind_spec* k : kind_specs()) {
    nlohmann::ordered_json properties = nlohmann::ordered_json::array(), policies = nlohmann::ordered_json::array();
    for (const property* p : properties_of(k->kind)) properties.push_back({{"name", p->name}, {"summary", p->summary}});
    for (const policy_spec& p : k->policies) {
      nlohmann::ordered_json choices = nlohmann::ordered_json::array();
      for (const policy_choice& c : p.choices)
        choices.push_back({{"name", c.name}, {"summary", c.summary}, {"engines", c.engines}});
      policies.push_back({{"name", p.name}, {"summary", p.summary}, {"choices", choices}});
    }
    kinds.push_back({{"name", k->name}, {"properties", properties}, {"policies", policies}});
  }
  return {{"implementations", impls}, {"kinds", kinds}};
}

int list(const command_line& cmd, bool json) {
  if (json) {
    std::cout << list_json(cmd).dump(2) << "\n";
    return exit_pass;
  }
  std::cout << "implementations:\n";
  for (const auto& i : cmd.impls())
    std::cout << "  " << i.name << "  [" << to_string(i.kind) << ", " << to_string(i.group) << "; "
              << i.profile.describe() << (i.policies.empty() ? "" : "; policies " + i.policies.describe())
              << "]\n      " << i.note << (i.killer.empty() ? "" : " (killed by " + i.killer + ")") << "\n";
  for (const kind_spec* k : kind_specs()) {
    list_policies(*k);
    std::cout << k->name << " properties:\n";
    for (const property* p : properties_of(k->kind)) std::cout << "  " << p->name << "\n      " << p->summary << "\n";
  }
  return exit_pass;
}
}  // namespace

subcommand add_list(CLI::App& app, const command_line& cmd) {
  auto* sub = app.add_subcommand("list", "List implementations and properties");
  auto json = std::make_shared<bool>(false);
  sub->add_flag("--json", *json, "As JSON: implementations, and each kind's properties and policies");
  return {sub, [&cmd, json] { return list(cmd, *json); }};
}

}  // namespace kvconform::cli
