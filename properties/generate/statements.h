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
  bool search = false;        ///< the targeted numeric search follows the random cases (property::search)
};

namespace statements {
inline constexpr statement refused_unchanged{"refused_append_unchanged",
                                             "a refused op (full, step mismatch, wrong width or rank, unknown or "
                                             "released sequence, bad layer, start or reorder index) changes nothing"};
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
                                        true,
                                        true};
inline constexpr statement decode_within_bound{
    "decode_within_bound",
    "decode output and weights lie within the derived bound for every input class",
    {capability::decode},
    false,
    false,
    true};
}  // namespace statements

/// Appends a property of `kind` to `ps`, drawn from `generate` and NOT SUPPORTED without `needs`, and returns it
/// for the rest (rewrite, drive).
property& add_property(std::vector<property>& ps, cache_kind kind, std::string name, std::string summary,
                       case_generator generate = {}, capability_set needs = {});
property& add_property(std::vector<property>& ps, cache_kind kind, const statement& s);

/// A 1-D append as the equivalent one-row 2-D append (the rewrite of one_d_equals_one_row).
std::vector<op> one_d_as_one_row(const op& o);

/// The cross-kind statements of `kind`, in the gate's order, each with the op mix every kind uses:
/// `Mix` is the kind's own mix type, whose first fields are append, fill, overfill, empty,
/// bad_shape, decode and bad_decode; `refusals` adds the kind's own refusing ops to
/// refused_append_unchanged; `cases` turns a mix into the kind's generator. A kind without 1-D
/// appends leaves out one_d_equals_one_row.
template <class Mix, class Cases>
void add_statements(std::vector<property>& ps, cache_kind kind, Cases cases, Mix refusals, bool one_d_appends = true) {
  auto add = [&](const statement& s, Mix mix) -> property& {
    property& p = add_property(ps, kind, s);
    p.generate = cases(mix);
    return p;
  };
  Mix refused = refusals;
  refused.append = 3, refused.fill = 2, refused.overfill = 3, refused.empty = 1, refused.bad_shape = 4,
  refused.decode = 1, refused.bad_decode = 2;
  add(statements::refused_unchanged, refused);
  add(statements::copy_semantics, {.append = 6, .fill = 1, .empty = 1, .decode = 3});
  add(statements::views_filled_rows, {.append = 5, .fill = 1, .empty = 2, .decode = 4});
  if (one_d_appends)
    add(statements::one_d_equals_one_row, {.append = 6, .fill = 1, .empty = 1, .decode = 1}).rewrite = one_d_as_one_row;
  add(statements::order_preserved, {.append = 8, .fill = 1, .empty = 1, .decode = 1});
  add(statements::large_scores, {.append = 4, .fill = 1, .decode = 4});
  add(statements::decode_within_bound, {.append = 4, .fill = 1, .empty = 1, .decode = 4, .bad_decode = 1});
}

}  // namespace kvconform
