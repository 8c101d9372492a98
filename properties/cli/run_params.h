// Numbers from the command line and RC_PARAMS, parsed strictly against their allowed ranges.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "properties/generate/run_property.h"

namespace kvconform {

/// A command-line value or an RC_PARAMS entry outside its allowed form or range; the message
/// names the option (or key), the value and the range. The command line answers it with exit 2.
struct params_error : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

/// The limits of run sizes (docs/reliability.md): cases per property and RapidCheck's size.
inline constexpr std::uint64_t max_cases = 1000000;
inline constexpr std::uint64_t max_rc_size = 1000;

/// `text` as a decimal integer in [min, max]: digits only (no sign, no spaces, no exponent), so
/// "-1" or a value past 2^64 is an error instead of wrapping around. `what` names it in the error.
std::uint64_t parse_count(std::string_view text, const std::string& what, std::uint64_t min, std::uint64_t max);

/// What RC_PARAMS may set: `seed`, `max_success` (cases), `max_size` and `noshrink`.
struct rc_params {
  std::optional<std::uint64_t> seed;
  std::optional<int> max_success, max_size;
  bool noshrink = false;
};

/// Parses RC_PARAMS ("key=value" words separated by spaces, RapidCheck's format): each key at
/// most once, each value in its range (max_success in [1, max_cases], max_size in [1,
/// max_rc_size]); an unknown key is an error, since it would otherwise be silently ignored.
rc_params parse_rc_params(std::string_view text);

/// The run options of a profile ("quick" or "deep") with RC_PARAMS applied (parse_rc_params).
run_options profile_options(const std::string& profile);

/// Tells RapidCheck, which reads RC_PARAMS itself and announces a seed, the seed in use, in a form
/// it always accepts (what the user gave was checked by profile_options).
void announce_seed(std::uint64_t seed);

}  // namespace kvconform
