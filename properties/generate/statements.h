// Statements that hold for several kinds: one name and wording, each kind choosing its own op mix.
#pragma once

#include <string>
#include <vector>

#include "properties/generate/property.h"

namespace kvconform {

/// What a cross-kind property states; `add` turns it into a kind's property.
struct statement {
  const char* name;
  const char* summary;
  capability_set needs = {};
  bool long_traces = false;
  bool large_scores = false;  ///< only the classes whose scores reach |s| >= 710
};

namespace statements {
inline constexpr statement refused_unchanged{"refused_append_unchanged",
                                             "a refused op (full, step mismatch, wrong width or rank, unknown or "
                                             "released sequence, bad layer, start or reorder index) "
                                             "changes nothing"};
inline constexpr statement copy_semantics{
    "copy_semantics",
    "the cache keeps copies: later changes to the caller's arrays change nothing, and no call modifies its inputs"};
inline constexpr statement views_filled_rows{
    "views_filled_rows",
    "keys()/values() show exactly the filled rows (of each layer, for beam) and decode weighs exactly that many"};
inline constexpr statement one_d_equals_one_row{"one_d_equals_one_row",
                                                "a 1-D append leaves the same state as the one-row 2-D append"};
inline constexpr statement order_preserved{
    "order_preserved", "rows keep their append order across many appends", {}, true};
inline constexpr statement large_scores{"large_scores",
                                        "scores beyond +-1000 and +-1e4 give finite output within the bound",
                                        {capability::decode},
                                        false,
                                        true};
inline constexpr statement decode_within_bound{
    "decode_within_bound",
    "decode output and weights lie within the derived bound for every input class",
    {capability::decode}};
}  // namespace statements

/// Appends a property of `kind` to `ps` and returns it for the rest (mix, rewrite, drive).
property& add_property(std::vector<property>& ps, cache_kind kind, std::string name, std::string summary);
property& add_property(std::vector<property>& ps, cache_kind kind, const statement& s);

/// A 1-D append as the equivalent one-row 2-D append (the rewrite of one_d_equals_one_row).
std::vector<op> one_d_as_one_row(const op& o);

}  // namespace kvconform
