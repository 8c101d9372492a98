# A store that cannot be written is found before any test runs; a disk that fills during the run loses no failure
# silently: the matrix is printed, the failure that could not be saved is named, and the run exits 2.
source "$(dirname "$0")/lib.sh"
touch plain-file
run 2 "$kvconform" gate --impl flat-strict-capacity --store plain-file/store
contains err.txt "cannot use the store plain-file/store"
[ ! -s out.txt ] || fail "tests ran before the store was found unwritable"
run 2 "$kvconform" gate --impl flat --property exact_fill --junit /dev/full --json /dev/full --store ""
contains err.txt "cannot write /dev/full: No space left on device"
contains out.txt "1 passed, 0 failed"
# A full disk: a 64 KiB tmpfs filled up to one free page, in a mount namespace of this test only. The probe of
# the store fits; the failures of flat-strict-capacity (several properties) do not all fit.
if ! unshare -m true 2>/dev/null; then
  echo "SKIPPED the full-disk case: no mount namespace here (unshare -m)"
  exit 0
fi
mkdir full
unshare -m bash -c '
  mount -t tmpfs -o size=64k tmpfs full || exit 77
  free=$(df --output=avail -B1 full | tail -1)
  head -c $((free - 4096)) /dev/zero >full/filler
  "$0" gate --impl flat-strict-capacity --store full/store >out.txt 2>err.txt
  code=$?
  [ -z "$(find full -name ".*.tmp.*")" ] || { echo "temporaries left in the full store" >&2; exit 3; }
  exit $code
' "$kvconform"
got=$?
[ $got != 77 ] || { echo "SKIPPED the full-disk case: cannot mount a tmpfs here"; exit 0; }
[ $got = 2 ] || { cat out.txt err.txt >&2; fail "a full store: exit $got, expected 2"; }
contains err.txt "a failure was not saved: cannot write full/store/flat-strict-capacity/"
contains err.txt "No space left on device"
contains out.txt "NOT SAVED: cannot write"
contains out.txt "passed,"
