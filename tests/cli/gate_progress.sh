# The progress line (docs/design.md §7): on a terminal one line redrawn in place, cleared before every other line,
# so that the matrix and the progress lines read clean on the screen; nothing of it when standard output is a file,
# and never in a report. Usage: gate_progress.sh KVCONFORM
source "$(dirname "$0")/lib.sh"
command -v script >/dev/null || skip "no script(1) to run the gate under a pseudo-terminal"

# screen FILE: FILE as a terminal shows it (a carriage return goes back to the line's start, later text overwrites).
screen() {
  "$py" - "$1" <<'PY'
import sys
rows, row, col = [], [], 0
for ch in open(sys.argv[1], encoding="utf-8", errors="replace", newline="").read():
    if ch == "\r":
        col = 0
    elif ch == "\n":
        rows.append("".join(row).rstrip()); row, col = [], 0
    else:
        row[col:col + 1] = [ch] if col < len(row) else row[col:] + [ch]
        col += 1
rows.append("".join(row).rstrip())
print("\n".join(rows))
PY
}

for jobs in 1 2; do  # the gate's own thread, and worker processes
  cmd=$(printf '%q ' "$kvconform" gate --impl flat -j $jobs --json r.json --junit r.xml --html r.html)
  run 0 script -qec "$cmd" /dev/null
  contains out.txt $'\rkvconform: 0/14 properties, '  # drawn at once
  grep -qE $'\rkvconform: [0-9]+/14 properties, [0-9]+ cases/s, 0:0[0-9] elapsed, ' out.txt ||
    { cat -A out.txt >&2; fail "no progress line"; }
  screen out.txt > screen.txt
  grep -q "cases/s" screen.txt && { cat screen.txt >&2; fail "the progress line was left on the screen (-j $jobs)"; }
  contains screen.txt "  flat / exact_fill: PASS (100 cases, "
  grep -qE '^implementation +property +status' screen.txt || { cat screen.txt >&2; fail "the matrix header is cut"; }
  grep -qE '^flat +exact_fill +PASS +100 ' screen.txt || { cat screen.txt >&2; fail "a matrix row is cut"; }
  contains screen.txt "14 passed, 0 failed, 0 not supported"
  for report in r.json r.xml r.html; do
    grep -q "cases/s" "$report" && fail "the progress line is in $report"
  done
done

# Standard output a file: no progress text anywhere, and no carriage return.
run 0 "$kvconform" gate --impl flat
for f in out.txt err.txt; do
  grep -q "cases/s" "$f" && fail "progress text in $f though standard output is a file"
  grep -q $'\r' "$f" && fail "a carriage return in $f"
done
contains out.txt "14 passed, 0 failed, 0 not supported"
exit 0
