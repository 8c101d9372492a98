// What the block-pool references (paged, prefix) share: their sequences, found by id or refused.
#pragma once

#include <string>

#include <kvconform/errors.h>

namespace kvconform {

/// The entry of sequence `s` in `seqs` (a map by id); index_error, named for the cache `what`, when
/// `s` is unknown or released.
template <class Map, class Id>
auto find_sequence(Map& seqs, Id s, const char* what) {
  const auto it = seqs.find(s);
  if (it == seqs.end()) throw index_error(std::string(what) + ": unknown or released sequence");
  return it;
}

}  // namespace kvconform
