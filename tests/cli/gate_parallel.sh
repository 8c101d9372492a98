# gate -j 2 gives what -j 1 gives: the same matrix in the same order, byte-identical JSON, JUnit and HTML
# once their timing fields are blanked, and the same saved failures (two mutants fail most
# properties and shrink each failure; a storage-format reference brings the end-to-end figures).
source "$(dirname "$0")/lib.sh"
impls=(--impl flat --impl flat-q4_1 --impl ring-head-off-by-one --impl paged-fork-without-cow --impl beam)
for j in 1 2; do
  mkdir "j$j" && cd "j$j" || fail "cannot enter j$j"
  "$kvconform" gate -j "$j" "${impls[@]}" --json out.json --junit out.xml --html out.html >matrix.txt 2>log.txt
  echo $? >rc.txt
  # Timings are the only fields allowed to differ.
  sed -i -E 's/"seconds": [-0-9.e+]+/"seconds": 0/' out.json
  sed -i -E 's/ time="[^"]*"/ time=""/g' out.xml
  sed -i -E 's/<td class="n secs">[^<]*</<td class="n secs"></g' out.html
  cd ..
done
[ "$(cat j1/rc.txt)" = 1 ] || { cat j1/matrix.txt j1/log.txt >&2; fail "exit $(cat j1/rc.txt), expected 1"; }
for f in rc.txt matrix.txt out.json out.xml out.html; do
  cmp "j1/$f" "j2/$f" || { diff "j1/$f" "j2/$f" | head -20 >&2; fail "-j 2 gives a different $f"; }
done
grep -q '"worst_end_to_end_over_bound"' j1/out.json || fail "no end-to-end figure for flat-q4_1"
grep -q '<rect class="bar' j1/out.html || fail "no histogram in the HTML report"
diff -r j1/kvconform-failures j2/kvconform-failures || fail "-j 2 saved different failures"
[ "$(find j1/kvconform-failures -name '*.json' | wc -l)" = "$(grep -c '  FAIL  ' j1/matrix.txt)" ] ||
  fail "expected one saved failure per FAIL row"
contains j1/matrix.txt "46 passed, 37 failed, 0 not supported"
# A failure a worker cannot save is the same usage error (exit 2) as without workers.
for j in 1 2; do
  run 2 "$kvconform" gate -j "$j" --impl flat-strict-capacity --store /dev/null/store
  contains err.txt "/dev/null/store"
done
