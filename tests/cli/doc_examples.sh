# Documentation that runs: every example of the documents is checked (tests/cli/doc_examples.py says how).
# Usage: doc_examples.sh KVCONFORM ROOT
source "$(dirname "$0")/lib.sh"
"$py" "$(dirname "$0")/doc_examples.py" "$kvconform" "$2"
