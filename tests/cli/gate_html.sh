# gate --html writes one self-contained page that headless Chromium renders (matrix, a FAIL, histogram bars) without
# a console message; JSON carries the same histograms; a page that cannot be written is exit 2 naming its path.
source "$(dirname "$0")/lib.sh"
run 1 "$kvconform" gate -j 1 --impl flat --impl flat-max-first-32-rows --html report.html --json report.json
page=report.html

# Self-contained: nothing to fetch or run, whatever the browser.
for banned in '<script' 'http:' 'https:' 'src=' 'url(' '@import' '<link' '<iframe' '<img'; do
  grep -qiF -- "$banned" "$page" && fail "$page contains $banned"
done
contains "$page" "default-src 'none'"
"$py" -c 'import sys; open(sys.argv[1], encoding="utf-8", errors="strict").read()' "$page" || fail "$page is not UTF-8"
contains "$page" '<td class="fail"><a href="#fail-1-'
contains "$page" 'replay: <code>'
bars=$(grep -o '<rect class="bar' "$page" | wc -l)
charts=$(grep -o '<svg class="hist"' "$page" | wc -l)
[ "$bars" -gt 0 ] && [ "$charts" -gt 0 ] || fail "no histogram bars in $page ($charts charts, $bars bars)"

# The JSON's histograms count every numeric decode of a passing cell once (no shrinking ran there), and the search's
# every decode of its traces.
"$py" - report.json <<'EOF' || fail "the JSON histograms do not add up"
import json, sys
report = json.load(open(sys.argv[1]))
assert len(report["err_over_bound_bin_edges"]) == 13
checked = 0
for impl in report["implementations"]:
    for p in impl["properties"]:
        counts = [sum(c) for c in p.get("err_over_bound_histogram", {}).values()]
        if p["status"] == "PASS":
            assert sum(counts) == p["numeric_decodes"], (impl["name"], p["name"], counts, p["numeric_decodes"])
            checked += p["numeric_decodes"] > 0
        if "search" in p:
            assert sum(p["search"]["err_over_bound_histogram"]) == p["search"]["numeric_decodes"], p["name"]
assert checked >= 3, checked
EOF

# A page that cannot be written completely is the same usage error as a JSON or JUnit report.
for bad in /dev/full no-such-dir/report.html; do
  run 2 "$kvconform" gate -j 1 --impl flat --property exact_fill --html "$bad"
  contains err.txt "$bad"
done

# Headless Chromium renders it: every chart and bar survives its parser, and nothing reaches its console.
browser=$(command -v chromium || command -v chromium-browser) ||
  skip "gate_html: no chromium on PATH (Debian package chromium; .ci/setup installs it)"
export HOME=$scratch/home XDG_CONFIG_HOME=$scratch/home/config XDG_CACHE_HOME=$scratch/home/cache
mkdir -p "$HOME"
timeout 60 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync --user-data-dir="$(mktemp -d)" \
  --enable-logging=stderr --v=0 --dump-dom "file://$scratch/$page" >dom.html 2>browser.txt
got=$?
if [ "$got" != 0 ] || ! grep -q '</html>' dom.html; then
  tail -5 browser.txt
  skip "gate_html: $browser could not be started or rendered nothing (exit $got)"
fi
grep -E 'CONSOLE|Uncaught' browser.txt && fail "Chromium's console reported the messages above"
contains dom.html '<table class="matrix">'
contains dom.html '>flat-max-first-32-rows</a>'
contains dom.html '<td class="fail"><a href="#fail-1-'
[ "$(grep -o '<svg class="hist"' dom.html | wc -l)" = "$charts" ] || fail "the rendered page lost charts"
[ "$(grep -o '<rect class="bar' dom.html | wc -l)" = "$bars" ] || fail "the rendered page lost bars"
echo "rendered: $charts charts, $bars bars"
