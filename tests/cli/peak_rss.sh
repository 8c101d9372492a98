# Memory stays bounded on hostile sizes: a 200 MB trace and a port that writes 1 GB on its stderr each end with a
# clear message and a peak RSS under 200 MB (measured by /usr/bin/time -v).
source "$(dirname "$0")/lib.sh"
limit_kb=195312  # 200 MB (decimal), in the KiB that time -v reports
# A real 200 MB file of JSON (numbers in one array): refused by its size before it is read.
{ printf '{"schema":"kvconform-trace","version":1,"ops":['; yes '0.1234567890123456,' | head -c 200M; echo '0]}'; } \
  >big.json
/usr/bin/time -v -o time.txt "$kvconform" replay big.json >out.txt 2>err.txt
[ $? = 2 ] || fail "a 200 MB trace: expected exit 2"
contains err.txt "more than the limit of 67108864 bytes"
rss=$(sed -n 's/^\tMaximum resident set size (kbytes): //p' time.txt)
echo "200 MB trace: exit 2, peak RSS $rss KB"
[ "$rss" -lt $limit_kb ] || fail "peak RSS $rss KB on a 200 MB trace"
# The costliest JSON text within the limits found so far, accepted: 2^21 numbers and a 2.7 MB string (57 MB); and
# 1.25 million short strings (7.5 MB of text, about 150 MB once parsed), refused before parsing.
"$py" -c "import sys; sys.stdout.write('{\"schema\":\"kvconform-trace\",\"version\":1,\"implementation\":\"flat\",'
  '\"config\":{\"kind\":\"flat\",\"capacity\":2,\"d_k\":1,\"d_v\":1},\"ops\":[],\"x\":['
  + ','.join(['-0.12345678901234567e-300'] * (2**21 - 200)) + '],\"note\":\"' + 'q' * 2700000 + '\"}')" >costly.json
"$py" -c "print('{\"x\":[' + '\"nan\",' * 1250000 + '0]}')" >strings.json
for f in costly.json strings.json; do
  /usr/bin/time -v -o time.txt "$kvconform" replay $f >out.txt 2>err.txt
  code=$?
  [ $code = $([ $f = costly.json ] && echo 0 || echo 2) ] || { cat err.txt >&2; fail "$f: exit $code"; }
  rss=$(sed -n 's/^\tMaximum resident set size (kbytes): //p' time.txt)
  echo "$f ($(wc -c <$f) bytes): exit $code, peak RSS $rss KB"
  [ "$rss" -lt $limit_kb ] || fail "peak RSS $rss KB on $f"
done
contains err.txt "would take more than the limit of 96 MiB once parsed"
# A port that writes 1 GB on its stderr, then exits: its stderr is kept as a bounded tail.
/usr/bin/time -v -o time.txt "$kvconform" port --kind flat --property exact_fill --timeout-ms 60000 --store "" -- \
  "${tracked[@]}" bash -c 'head -c 1000000000 /dev/zero >&2; echo the end >&2; exit 4' >out.txt 2>err.txt
[ $? = 1 ] || { cat out.txt err.txt >&2; fail "a port with 1 GB of stderr: expected exit 1"; }
contains out.txt "exit status 4"
contains out.txt "the end"
rss=$(sed -n 's/^\tMaximum resident set size (kbytes): //p' time.txt)
echo "1 GB port stderr: exit 1, peak RSS $rss KB"
[ "$rss" -lt $limit_kb ] || fail "peak RSS $rss KB with 1 GB of port stderr"
no_leftovers
