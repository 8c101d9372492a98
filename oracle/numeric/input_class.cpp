// The input classes' names and the lists the generators and the coverage statistics walk.
#include "oracle/numeric/input_class.h"

namespace kvconform {

namespace {
constexpr input_class all[] = {input_class::moderate,
                               input_class::peaked,
                               input_class::minus_1000,
                               input_class::plus_1000,
                               input_class::near_tie_1000,
                               input_class::huge_1e4,
                               input_class::spread_1500,
                               input_class::max_last,
                               input_class::max_first,
                               input_class::ramp,
                               input_class::all_equal,
                               input_class::cancellation,
                               input_class::ill_conditioned_key,
                               input_class::value_offset,
                               input_class::one_hot,
                               input_class::zero_keys};
constexpr input_class large[] = {input_class::minus_1000, input_class::plus_1000,   input_class::near_tie_1000,
                                 input_class::huge_1e4,   input_class::spread_1500, input_class::max_last,
                                 input_class::max_first};
const char* const names[] = {"moderate",
                             "peaked",
                             "minus_1000",
                             "plus_1000",
                             "near_tie_1000",
                             "huge_1e4",
                             "spread_1500",
                             "max_last",
                             "max_first",
                             "ramp",
                             "all_equal",
                             "cancellation",
                             "ill_conditioned_key",
                             "value_offset",
                             "one_hot",
                             "zero_keys",
                             "format_edges"};
}  // namespace

const char* to_string(input_class c) { return names[static_cast<int>(c)]; }
std::span<const input_class> all_input_classes() { return all; }
std::span<const input_class> large_score_classes() { return large; }

}  // namespace kvconform
