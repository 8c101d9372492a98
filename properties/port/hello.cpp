// Reading a port's handshake into an implementation's profile and capabilities.
#include "properties/port/hello.h"

#include "properties/trace/json_codec.h"
#include "properties/trace/kind_spec.h"

namespace kvconform {

namespace {
capability_set capabilities_from(const nlohmann::json& j, const std::string& where) {
  if (!j.is_array()) codec::bad(where, "expected an array of names");
  capability_set caps;
  for (const auto& c : j) {
    const std::string name = c.is_string() ? c.get<std::string>() : "";
    if (name == "decode")
      caps.add(capability::decode);
    else if (name == "preempt")
      caps.add(capability::preempt);
    else if (name == "sinks")
      caps.add(capability::sinks);
    else
      codec::bad(where, "unknown capability " + c.dump() + " (known: decode, preempt, sinks)");
  }
  return caps;
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
    }
    k.capabilities = offer.contains("capabilities") ? capabilities_from(offer["capabilities"], where + ".capabilities")
                                                    : capability_set{capability::decode};
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
  if (!h.name.empty()) impl.note = h.name + " (" + impl.note + ")";
}

}  // namespace kvconform
