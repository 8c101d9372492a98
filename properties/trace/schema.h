// JSON Schema pieces made from the kind table: numbers, tensors, every kind's config and ops.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kvconform::schema {

using json = nlohmann::json;

/// A double: a JSON number or "nan", "inf", "-inf".
json number();
/// {"shape": [...], "data": [numbers]} with at most 4 dimensions.
json tensor();
/// One of every kind's config: "kind" and exactly that kind's fields (sizes required, flags optional).
json config();
/// One of every kind's ops: "op" and exactly the fields the op carries in that kind, plus `extra`
/// properties (required when named in `extra_required`).
json ops(const json& extra, const std::vector<std::string>& extra_required);
/// Declared policies (docs/design.md §2.4): an object naming, for any of the kinds' policies, one of its choices.
json policies();
/// The kind names, and the refusal reason names.
json kind_names();
json refusal_names();
/// The schema of a trace file (the JSON codec's format).
json trace_file();

}  // namespace kvconform::schema
