# The few-line port of python/README.md runs as written and passes every flat property.
# Usage: port_python_readme.sh KVCONFORM ROOT
source "$(dirname "$0")/port_python_lib.sh"
"$py" - "$root/python/README.md" my_port.py <<'PY' || fail "no python example in the README"
import re, sys
blocks = re.findall(r"```python\n(.*?)```", open(sys.argv[1]).read(), re.S)
open(sys.argv[2], "w").write(blocks[0])
PY
PYTHONPATH=$ex run 0 "$kvconform" port --kind flat -- "${tracked[@]}" "$py" my_port.py
only_speculation_unsupported out.txt  # the README's port has append and decode only
no_leftovers
