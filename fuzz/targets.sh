# Sourced by campaign.sh and smoke.sh: the built fuzz targets, and the libFuzzer flags of a target's .dict and .options.
# KVCONFORM_FUZZ_BIN: the folder of the built targets (default: build-fuzz/fuzz of the fuzz preset).
fuzz_src=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
fuzz_bin=${KVCONFORM_FUZZ_BIN:-$fuzz_src/../build-fuzz/fuzz}
if [ -d "$fuzz_bin" ]; then fuzz_bin=$(cd "$fuzz_bin" && pwd); fi  # the messages name it: absolute, without ".."

# select_targets [TARGET...]: sets `targets` to those named, or to every target of fuzz_targets.txt (the one list,
# written by fuzz/CMakeLists.txt); says what is missing and fails for an unknown or unbuilt one.
select_targets() {
  if [ ! -f "$fuzz_bin/fuzz_targets.txt" ]; then
    echo "missing $fuzz_bin/fuzz_targets.txt: build the fuzz preset first"
    return 2
  fi
  if [ $# -gt 0 ]; then targets=("$@"); else mapfile -t targets <"$fuzz_bin/fuzz_targets.txt"; fi
  local t
  for t in "${targets[@]}"; do
    if ! grep -qx "$t" "$fuzz_bin/fuzz_targets.txt"; then
      echo "unknown target $t: see $fuzz_bin/fuzz_targets.txt"
      return 2
    fi
    [ -x "$fuzz_bin/$t" ] || { echo "missing $fuzz_bin/$t: build the fuzz preset first"; return 2; }
  done
}

# target_flags TARGET: sets `flags` to -dict=FILE and one -KEY=VALUE per line of the [libfuzzer] section of its
# .options, the flags OSS-Fuzz runs it with (its max_len and per-input timeout), so local runs find what it would.
target_flags() {
  flags=()
  [ -f "$fuzz_src/$1.dict" ] && flags+=("-dict=$fuzz_src/$1.dict")
  [ -f "$fuzz_src/$1.options" ] || return 0
  local line
  while IFS= read -r line; do flags+=("$line"); done < <(
    sed -n '/^\[libfuzzer\]/,/^\[/s/^[[:space:]]*\([a-z_]*\)[[:space:]]*=[[:space:]]*\([^[:space:]]*\).*/-\1=\2/p' \
      "$fuzz_src/$1.options")
}
