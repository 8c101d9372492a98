# Every kind has its document docs/kinds/KIND.md, and it names (in backticks) every property `kvconform list` shows.
source "$(dirname "$0")/lib.sh"
root=$2
run 0 "$kvconform" list
kind=""
missing=0
while IFS= read -r line; do
  if [[ $line =~ ^([a-z_]+)\ properties:$ ]]; then
    kind=${BASH_REMATCH[1]}
    doc=$root/docs/kinds/$kind.md
    [ -f "$doc" ] || { echo "FAILED: the $kind kind has no document docs/kinds/$kind.md" >&2; missing=1; }
  elif [ -n "$kind" ] && [[ $line =~ ^\ \ ([a-z0-9_]+)$ ]]; then
    property=${BASH_REMATCH[1]}
    [ -f "$doc" ] && ! grep -qF "\`$property\`" "$doc" &&
      { echo "FAILED: docs/kinds/$kind.md does not name the property \`$property\` of the $kind kind" >&2; missing=1; }
  fi
done < out.txt
[ -n "$kind" ] || fail "'kvconform list' showed no kind's properties"
exit $missing
