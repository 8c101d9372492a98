// The model factory (one model class per kind family) and the row helpers the models share.
#include "oracle/models/model.h"

#include <stdexcept>

#include "oracle/models/beam_model.h"
#include "oracle/models/paged_model.h"
#include "oracle/models/rows_model.h"

namespace kvconform {

namespace {
constexpr const char* reason_names[] = {"capacity", "shape", "empty", "index"};  // bit i of `refusal`
}  // namespace

std::vector<std::string> refusal_names(unsigned reasons) {
  std::vector<std::string> names;
  for (unsigned i = 0; i < std::size(reason_names); ++i)
    if (reasons & (1u << i)) names.emplace_back(reason_names[i]);
  return names;
}

unsigned refusal_from_name(const std::string& name) {
  for (unsigned i = 0; i < std::size(reason_names); ++i)
    if (name == reason_names[i]) return 1u << i;
  return refuse_none;
}

std::string describe_refusals(unsigned reasons) {
  std::string s;
  for (const std::string& n : refusal_names(reasons)) s += (s.empty() ? "" : " or ") + n;
  return s.empty() ? "none" : s;
}

std::optional<std::size_t> append_steps(const op& o, std::size_t d_k, std::size_t d_v) {
  auto steps = [](const tensor& t, std::size_t width) -> std::optional<std::size_t> {
    if (t.shape.size() == 1 && t.shape[0] == width) return 1;
    if (t.shape.size() == 2 && t.shape[1] == width) return t.shape[0];
    return std::nullopt;
  };
  const auto ks = steps(o.k, d_k), vs = steps(o.v, d_v);
  return ks && ks == vs ? ks : std::nullopt;
}

std::vector<double> stored_row(const tensor& t, std::size_t i, precision storage) {
  const std::size_t w = t.shape.back();
  std::vector<double> r(t.data.begin() + static_cast<std::ptrdiff_t>(i * w), t.data.begin() + static_cast<std::ptrdiff_t>((i + 1) * w));
  for (double& x : r) x = round_to(storage, x);
  return r;
}

std::unique_ptr<model> make_model(const cache_config& c, const numeric_profile& p) {
  switch (c.kind) {
    case cache_kind::flat:
    case cache_kind::ring: return std::make_unique<rows_model>(c, p);
    case cache_kind::beam: return std::make_unique<beam_model>(c, p);
    case cache_kind::paged: return std::make_unique<paged_model>(c, p);
    default: throw std::invalid_argument(std::string("no model for kind ") + to_string(c.kind));
  }
}

}  // namespace kvconform
