// Reading a port's handshake into an implementation's profile, capabilities and config limits.
#include "properties/port/hello.h"

#include <algorithm>

#include "properties/trace/json_codec.h"
#include "properties/trace/kind_spec.h"

namespace kvconform {

namespace {
capability_set capabilities_from(const nlohmann::json& j, const std::string& where) {
  if (!j.is_array()) codec::bad(where, "expected an array of names");
  capability_set caps;
  for (const auto& c : j) {
    const auto known = capability_from_string(c.is_string() ? c.get<std::string>() : "");
    if (!known) {
      std::string names;
      for (capability k : all_capabilities) names += (names.empty() ? "" : ", ") + std::string(to_string(k));
      codec::bad(where, "unknown capability " + c.dump() + " (known: " + names + ")");
    }
    caps.add(*known);
  }
  return caps;
}

/// The config sizes a kind's offer limits: each a size field of the kind, at least the field's minimum.
std::map<std::string, std::size_t> limits_from(const nlohmann::json& j, cache_kind kind, const std::string& where) {
  if (!j.is_object()) codec::bad(where, "expected an object of config sizes");
  std::map<std::string, std::size_t> limits;
  for (const auto& item : j.items()) {
    const std::string& name = item.key();  // not a structured binding: clang before 16 cannot capture one
    const nlohmann::json& value = item.value();
    const auto fields = spec_of(kind).config;
    const auto f =
        std::find_if(fields.begin(), fields.end(), [&](const config_field& c) { return c.size && name == c.name; });
    if (f == fields.end())
      codec::bad(where + "." + name, "not a size of the " + std::string(to_string(kind)) + " config");
    limits[name] = codec::count_from(value, where + "." + name);
    if (limits[name] < f->min) codec::bad(where + "." + name, "below the field's minimum " + std::to_string(f->min));
  }
  return limits;
}
}  // namespace

port_hello parse_hello(const nlohmann::json& a) {
  port_hello h;
  const auto& protocol = codec::field(a, "protocol", "hello");
  if (!protocol.is_number_integer()) codec::bad("hello.protocol", "expected an integer");
  h.protocol = protocol.get<int>();
  if (a.contains("name") && a["name"].is_string()) h.name = a["name"].get<std::string>();
  if (a.contains("digest")) {
    if (!a["digest"].is_boolean()) codec::bad("hello.digest", "expected true or false");
    h.digest = a["digest"].get<bool>();
  }
  const auto& kinds = codec::field(a, "kinds", "hello");
  if (!kinds.is_object()) codec::bad("hello.kinds", "expected an object of kinds");
  for (const auto& [name, offer] : kinds.items()) {
    const std::string where = "hello.kinds." + name;
    if (!kind_from_string(name)) codec::bad(where, "unknown kind (known: " + kind_names() + ")");
    if (!offer.is_object()) codec::bad(where, "expected an object");
    kind_offer k;
    if (offer.contains("profile")) {
      try {
        k.profile = profile_from_json(offer["profile"].dump());
      } catch (const std::exception& e) {
        codec::bad(where + ".profile", e.what());
      }
      if (const std::string why =
              kind_problem(k.profile, name == "hybrid", name == "latent", attention_served_by(name));
          !why.empty())
        codec::bad(where + ".profile", why);
      // The protocol does not carry an indexer's keys, queries and weights yet (docs/port-protocol.md §3).
      if (k.profile.attention.top_k > 0)
        codec::bad(where + ".profile", "attention.sparse: top-k is served by built-in and plug-in caches, not ports");
    }
    k.capabilities = offer.contains("capabilities") ? capabilities_from(offer["capabilities"], where + ".capabilities")
                                                    : capability_set{capability::decode};
    if (offer.contains("policies"))
      k.policies = codec::policies_from(offer["policies"], *kind_from_string(name), where + ".policies");
    if (offer.contains("limits")) k.limits = limits_from(offer["limits"], *kind_from_string(name), where + ".limits");
    h.kinds[name] = k;
  }
  return h;
}

port_hello version_1_hello() { return {}; }

void apply_hello(const port_hello& h, cache_kind kind, implementation& impl) {
  if (h.protocol == 1) {
    impl.capabilities = {capability::decode};
    return;
  }
  const auto offer = h.kinds.find(to_string(kind));
  if (offer == h.kinds.end()) {
    impl.unavailable = std::string("the port does not serve the ") + to_string(kind) + " kind";
    return;
  }
  impl.profile = offer->second.profile;
  impl.capabilities = offer->second.capabilities;
  impl.policies = offer->second.policies;
  impl.config_limits = offer->second.limits;
  if (!h.name.empty()) impl.note = h.name + " (" + impl.note + ")";
}

std::string beyond_c_abi(const port_hello& h) {
  for (const auto& entry : h.kinds)
    for (const auto& [kind, what] : {std::pair{"tiered", "its transfers, tiers and entries"},
                                     {"recurrent", "its steps' x, g and beta, its states and checkpoints"},
                                     {"radix", "its lookups, admissions, retractions and aborts"}})
      if (entry.first == kind)
        return std::string("the library declares the ") + kind + " kind, which the C ABI does not carry (" + what +
               " are in no function of <kvconform/c_port.h>): serve that cache as a port over the pipe (docs/kinds/" +
               kind + ".md)";
  for (const auto& [kind, offer] : h.kinds)
    for (const auto& [cap, why] : {std::pair{capability::extra_keys, "kvc_create takes no extra key"},
                                   {capability::phases, "no function takes a lookup, an admit, a retract or an abort"}})
      if (offer.capabilities.has(cap))
        return std::string("the library declares the capability \"") + to_string(cap) + "\" for the " + kind +
               " kind, which the C ABI cannot carry (" + why + "): serve that cache as a port over the pipe " +
               "(docs/port-protocol.md §12)";
  return "";
}

}  // namespace kvconform
