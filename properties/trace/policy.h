// Cache policies: the points where real engines legitimately differ, which a cache declares and is held to.
#pragma once

#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>

namespace kvconform {

/// One choice of a policy (docs/design.md §2.4): the name a cache declares, what a cache with it does, and the
/// engines that make it.
struct policy_choice {
  const char* name;
  const char* summary;
  const char* engines = "";
};

/// A point where engines legitimately differ. Its first choice is the default: the kind's contract when a cache
/// declares nothing.
struct policy_spec {
  const char* name;
  const char* summary;
  std::span<const policy_choice> choices;
};

/// What a cache declares: a choice for some of its kind's policies, the others at their defaults. A declared
/// default is kept out (normalised, kind_spec.h), so that declaring the default is declaring nothing.
class policy_set {
 public:
  using map = std::map<std::string, std::string, std::less<>>;
  policy_set() = default;
  /// Declares `choice` for `policy`; whether both exist for a kind is policy_problem's (kind_spec.h).
  void declare(std::string policy, std::string choice) { choices_[std::move(policy)] = std::move(choice); }
  /// The declared choice of `policy`, or "" for its default.
  std::string_view choice(std::string_view policy) const {
    const auto it = choices_.find(policy);
    return it == choices_.end() ? std::string_view{} : std::string_view{it->second};
  }
  bool is(std::string_view policy, std::string_view c) const { return choice(policy) == c; }
  bool empty() const { return choices_.empty(); }
  const map& declared() const { return choices_; }
  void erase(std::string_view policy) {
    if (const auto it = choices_.find(policy); it != choices_.end()) choices_.erase(it);
  }
  /// "duplicates=registered, hit_limit=all_but_last", in name order; "" when nothing is declared.
  std::string describe() const;
  friend bool operator==(const policy_set&, const policy_set&) = default;

 private:
  map choices_;
};

/// A policy as a C++ cache declares it: `static constexpr kvconform::policy policies[] = {{"hit_limit",
/// "all_but_last"}};` (docs/design.md §6).
struct policy {
  const char* name;
  const char* choice;
};

}  // namespace kvconform
