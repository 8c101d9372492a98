# Policies through the C ABI (docs/port-protocol.md §12): they travel in kvc_hello's JSON, which every version has, so
# no function and no new version. The C paged cache that keeps a rollback's blocks until the release and declares
# rollback_blocks=kept passes every paged property it runs on seeds 1 to 3, built for the current version and for version 3; the
# same cache undeclared fails, naming nothing it declared; the C latent cache that keeps them and declares it passes
# every latent property, and fails undeclared. Usage: port_c_policies.sh KVCONFORM KEPT KEPT_ABI3 UNDECLARED
# LATENT_KEPT LATENT_UNDECLARED
source "$(dirname "$0")/lib.sh"
kept=$2 abi3=$3 undeclared=$4 latent=$5 latent_undeclared=$6
for library in "$kept" "$abi3"; do
  for seed in 1 2 3; do
    run 0 "$kvconform" port --kind paged --seed "$seed" --library "$library"
    contains out.txt " 0 failed, 1 not supported"
    grep -qE "^port +speculative_rounds +PASS " out.txt || fail "speculative_rounds did not pass on seed $seed"
  done
done
for seed in 1 2 3; do
  run 0 "$kvconform" port --kind latent --seed "$seed" --library "$latent"
  contains out.txt " 0 failed, 0 not supported"
done
run 1 "$kvconform" port --kind latent --property speculative_rounds --store "" --library "$latent_undeclared"
contains out.txt "FAIL port / speculative_rounds: "
run 0 "$kvconform" port --kind paged --seed 1 --stats --library "$kept"
grep -qE '^\* rollback kept blocks past the end +[1-9]' out.txt || fail "no trace kept blocks past a rollback"
run 1 "$kvconform" port --kind paged --property speculative_rounds --library "$undeclared"
contains out.txt "FAIL port / speculative_rounds: "
grep -q "rollback_blocks=kept" out.txt && fail "the undeclared cache's failure names a policy it did not declare"
no_temporaries
