// Wycheproof-style test vectors: traces with their expected observations, for ports to check offline.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "properties/executor/subject.h"

namespace kvconform {

/// The schema name and version every vectors file declares.
inline constexpr const char* vectors_schema_name = "kvconform_vectors_schema_v1.json";

/// The JSON Schema the vectors files follow (docs/vectors.schema.json is its output).
nlohmann::json vectors_schema();

/// Writes DIR/kvconform_<kind>_test.json for each kind in `kinds` (a kind needs a reference
/// implementation among `impls`) and the JSON Schema they follow. Tests cover every input class,
/// refusals, the seed's worked example (flat) and the shrunk trace that kills each mutant in
/// `impls`. Returns the files written.
std::vector<std::string> write_vectors(const std::string& dir, const std::vector<cache_kind>& kinds,
                                       const std::vector<implementation>& impls, std::uint64_t seed);

}  // namespace kvconform
