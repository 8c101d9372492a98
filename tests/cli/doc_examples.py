"""Documentation that runs: every example of the documents below is extracted and checked by the harness or a schema.

Usage: doc_examples.py KVCONFORM ROOT (run in a scratch directory; tests/cli/doc_examples.sh does so)

The conventions a document follows so that its examples are found (nothing else is special-cased):
- A fenced block tagged `json` holds one JSON document: a protocol message (it has "id"; a request when it has
  "op", else an answer), validated against docs/port-protocol.schema.json, or a file with a "schema" field (a trace
  or vectors file), validated against the docs/*.schema.json it names; a trace is also replayed by
  `kvconform replay`. A hello answer (with "kinds") is also sent to the harness by a port (tests/cli/doc_port.py),
  which must accept it: its profiles, storage formats, capabilities and limits are the harness's to parse.
- A fenced block tagged `exchange ARGS` is a full exchange, `> ` lines as the harness sends them and `< ` lines as
  the port answers: each line validates against the protocol schema, `kvconform port ARGS` is run against a port
  that answers exactly the lines shown (and the requests left out, which must be `observe`, with the numpy caches),
  it must pass, and every request shown must be the one the harness sent, character for character.
- A fenced block tagged `python` in a document of RUN_PYTHON is a complete program: it is run with /usr/bin/python3,
  with the repository's python/ and examples/python/ on PYTHONPATH, and must exit 0 (numpy only, no engine).
- Any other fenced block (formulas, pseudo-code, python elsewhere, cmake) holds no JSON; one that starts with `{` or a
  `> {` / `< {` line is an error. In a `sh` block, each command (indented lines continue the one above) is checked
  as an inline command below.
- An inline code span that starts with `{` is JSON: a whole message as above, or a part of one, which must match a
  definition of the protocol schema (a tensor, a stream, a config). `"NAME": {...}` or `NAME = {...}` with NAME a
  field of a kind's offer in hello (`profile`, `limits`, `policies`) is that field: a hello offering it for flat must
  pass (policies: for the first kind that has them, which the harness must accept).
- An inline code span that starts with an element format or an integer group (`f64`, `f32`, `fp16`, `bf16`, `e4m3`,
  `e5m2`, `int8`, `int4`; in JSON quotes or not) is a storage format: a hello declaring it for keys and values
  must pass. One that starts with `storage PRECISION, ` is a profile in words: `kvconform list` must print it.
- A command (an inline span or a `sh` line starting with `kvconform` or `PATH/kvconform`) names a subcommand of
  `kvconform --help` and only options of `kvconform SUBCOMMAND --help` (after `--` comes the port's command, up to
  a `|` of a synopsis); lowercase values of `--impl`, `--kind` and `--property` are names `kvconform list` prints.
  A `cmake` or `ctest` command's `--preset` is one of CMakePresets.json (configure, build or test presets).
"""
import glob
import json
import os
import re
import subprocess
import sys
import time

import jsonschema

KVCONFORM, ROOT = sys.argv[1], sys.argv[2]
DOCS = ["docs/port-protocol.md", "docs/numerics.md", "README.md", "python/README.md",
        "fuzz/README.md", "docs/engines.md"] + sorted(os.path.relpath(p, ROOT) for p in glob.glob(f"{ROOT}/docs/kinds/*.md"))
# Documents whose ```python blocks are complete programs, run and required to exit 0.
RUN_PYTHON = {"docs/engines.md", "python/README.md"}
# Documented examples the harness must refuse, each with its reason; one it accepts fails the test.
EXPECTED_FAILURES = {"e4m3 inf": "docs/numerics.md §6 shows it as a declaration §6.1 refuses: e4m3 has no infinity"}
FORMAT = re.compile(r'^"?((?:f64|f32|fp16|bf16|e4m3|e5m2|int8|int4)(?: [^"]*)?)"?$')
FIELD = re.compile(r'^(?:"(profile|limits|policies)": |(profile|limits|policies) = )(\{.*\})$')
POLICY_KINDS = ("prefix", "paged", "latent", "ring", "hybrid")  # the kinds with policies (docs/design.md §2.4)
COMMAND = re.compile(r"^(?:(?:\S*/)?kvconform|cmake|ctest)$")
PY = "/usr/bin/python3"  # Debian's python, with numpy and jsonschema: the first python3 on PATH may be another
HERE = os.path.dirname(os.path.abspath(__file__))

failures, passes_unexpectedly, counts = [], [], {}
verdicts = {}  # hello answer -> (exit code, last line of the harness's message): formats and profiles recur
schemas = {path: json.load(open(path)) for path in glob.glob(f"{ROOT}/docs/*.schema.json")}
protocol = schemas[f"{ROOT}/docs/port-protocol.schema.json"]


def fail(where, what):
    failures.append(f"{where}: {what}")


def count(doc, sort):
    counts.setdefault(doc, {}).setdefault(sort, 0)
    counts[doc][sort] += 1


def harness(*args, env=None):
    return subprocess.run([KVCONFORM, *args], capture_output=True, text=True, env=env, timeout=600)


def protocol_errors(value, definition):
    """The first schema error of `value` as the protocol schema's `definition` (a $defs entry), or None."""
    sub = jsonschema.Draft202012Validator({"$ref": "#/$defs/" + definition, "$defs": protocol["$defs"]})
    error = next(iter(sub.iter_errors(value)), None)
    return None if error is None else f"{error.message[:200]} (at {'/'.join(map(str, error.absolute_path))})"


def hello_verdict(answer):
    """The harness's exit code and last line for `answer` as a port's hello, on a flat run of one property."""
    key = json.dumps(answer, sort_keys=True)
    if key not in verdicts:
        with open("hello.json", "w") as f:
            f.write(key)
        run = harness("port", "--kind", "flat", "--property", "seed_worked_example", "--store", "", "--", PY,
                      f"{HERE}/doc_port.py", "hello", "hello.json")
        verdicts[key] = run.returncode, (run.stderr.strip().splitlines() or [run.stdout.strip()])[-1]
    return verdicts[key]


def hello_passes(where, answer, expected=None):
    """The harness accepts `answer` as a port's hello: a flat run of one property is NOT SUPPORTED, not exit 2.
    `expected`: why the harness refuses it today (EXPECTED_FAILURES)."""
    code, message = hello_verdict(answer)
    if expected is not None:
        if code == 0:
            passes_unexpectedly.append(f"{where}: passes now ({expected}): remove its mark in EXPECTED_FAILURES")
        else:
            print(f"expected failure {where}: {message}")
    elif code != 0:
        fail(where, f"the harness refuses it (exit {code}): {message}")


def parse(where, text, first_line=None):
    """The JSON value of `text`, or None after a failure naming the line (of a block starting at `first_line`)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        doc, line = where.split(":")
        fail(f"{doc}:{first_line + e.lineno - 1}" if first_line else where, f"not JSON: {e}")
        return None


def check_message(where, value, fragments=False):
    """A JSON value shown in a document: a message, a file with a schema, or (inline) a part of a message."""
    if isinstance(value, dict) and "schema" in value:
        return check_file(where, value)
    if isinstance(value, dict) and "id" in value:
        definition = "request" if "op" in value else "answer"
        error = protocol_errors(value, definition)
        if error:
            return fail(where, f"not a valid {definition} of docs/port-protocol.schema.json: {error}")
        if "kinds" in value:
            hello_passes(where, value)
        return
    parts = ("tensor", "stream", "config") if fragments else ()
    if not any(protocol_errors(value, d) is None for d in parts):
        fail(where, "neither a protocol message nor a file with a schema" +
             (", nor a tensor, stream or config of docs/port-protocol.schema.json" if fragments else ""))


def check_file(where, value):
    named = [s for s in schemas.values() if s.get("properties", {}).get("schema", {}).get("const") == value["schema"]]
    if not named:
        return fail(where, f"no docs/*.schema.json is the schema {value['schema']!r}")
    error = next(iter(jsonschema.Draft202012Validator(named[0]).iter_errors(value)), None)
    if error:
        return fail(where, f"not valid against its schema: {error.message[:200]}")
    if value["schema"] == "kvconform-trace":
        with open("trace.json", "w") as f:
            json.dump(value, f)
        run = harness("replay", "trace.json")
        if run.returncode == 2:
            fail(where, f"kvconform replay refuses it: {run.stderr.strip()}")


def check_inline_json(where, text):
    field = FIELD.match(text)
    value = parse(where, field.group(3) if field else text)
    if value is None:
        return
    if not field:
        return check_message(where, value, fragments=True)
    name = field.group(1) or field.group(2)
    kinds = POLICY_KINDS if name == "policies" else ("flat",)
    for kind in kinds:
        answer = {"id": 1, "ok": True, "protocol": 2, "kinds": {kind: {name: value}}}
        if name != "policies" or kind == kinds[-1] or hello_verdict(answer)[0] == 0:
            return hello_passes(where, answer)


def check_format(where, text):
    profile = {"keys": text, "values": text}
    hello_passes(where, {"id": 1, "ok": True, "protocol": 2, "kinds": {"flat": {"profile": profile}}},
                 EXPECTED_FAILURES.get(text))


presets = json.load(open(f"{ROOT}/CMakePresets.json"))
listing = harness("list").stdout
known_names = {*re.findall(r"^  ([a-z0-9_-]+)", listing, re.M), *re.findall(r"^(\w+) properties:", listing, re.M)}
helps = {}


def options_of(subcommand):
    """The subcommands of `kvconform --help` (subcommand None), or the options of one subcommand's help."""
    if subcommand not in helps:
        text = harness(*([subcommand] if subcommand else []), "--help").stdout
        if subcommand is None:
            helps[None] = set(re.findall(r"^  ([a-z]+) ", text.split("Subcommands:")[-1], re.M))
        else:
            helps[subcommand] = {n for spec in re.findall(r"^  (-\S+)", text, re.M) for n in spec.split(",")}
    return helps[subcommand]


def check_preset(where, words):
    which = "testPresets" if words[0] == "ctest" else "buildPresets" if "--build" in words else "configurePresets"
    names = [p["name"] for p in presets[which]]
    for option, value in zip(words, words[1:] + [""]):
        if option == "--preset" and value not in names:
            fail(where, f"{' '.join(words)}: no such preset in CMakePresets.json's {which} ({', '.join(names)})")


def check_command(where, words):
    if words[0] in ("cmake", "ctest"):
        return check_preset(where, words)
    subcommand = words[1] if len(words) > 1 else ""
    if subcommand not in options_of(None):
        return fail(where, f"kvconform has no subcommand {subcommand!r} (it has {', '.join(sorted(options_of(None)))})")
    skipping = False  # the port's command, after "--"
    for i, word in enumerate(words[2:], 2):
        bare = word.strip("[]().,;")
        if skipping or bare == "--":
            skipping = bare == "--" or word != "|"
            continue
        name = bare.split("=")[0]
        if name.startswith("-") and name not in options_of(subcommand):
            fail(where, f"kvconform {subcommand} has no option {name}")
        value = words[i + 1].strip("[]().,;'\"") if i + 1 < len(words) else ""
        if name in ("--impl", "--kind", "--property") and re.fullmatch(r"[a-z0-9_-]+", value) and \
                value not in known_names:
            fail(where, f"{name} {value}: kvconform list names no such implementation, kind or property")


def check_commands(where, line):
    """Every kvconform command of a shell line (commands joined by &&, ||, ; or a pipe outside brackets)."""
    line, depth, command = line.split(" #")[0], 0, []
    for word in line.split() + ["&&"]:
        depth += word.count("[") + word.count("(") - word.count("]") - word.count(")")
        if word in ("&&", "||", ";") or (word == "|" and depth == 0):
            if command and COMMAND.match(command[0]):
                tool = "cmake/ctest" if command[0] in ("cmake", "ctest") else "kvconform"
                count(where.split(":")[0], f"{tool} command")
                check_command(where, command)
            command = []
        else:
            command.append(word)


def check_exchange(where, args, lines):
    doc, first = where.split(":")
    transcript = []
    for n, line in enumerate(lines, int(first) + 1):
        direction, _, text = line.partition(" ")
        if direction not in (">", "<"):
            return fail(f"{doc}:{n}", "an exchange line starts with '> ' (sent) or '< ' (answered)")
        value = parse(f"{doc}:{n}", text)
        if value is None:
            return
        check_message(f"{doc}:{n}", value)
        transcript.append((direction, text, n))
    with open("exchange.json", "w") as f:
        json.dump([(d, t) for d, t, _ in transcript], f)
    env = dict(os.environ, PYTHONPATH=f"{ROOT}/examples/python")
    if os.path.exists("requests.jsonl"):
        os.remove("requests.jsonl")
    run = harness("port", *args.split(), "--store", "", "--", PY, f"{HERE}/doc_port.py", "exchange", "exchange.json",
                  "requests.jsonl", env=env)
    passed = run.returncode == 0 and " 0 failed" in run.stdout and " 0 not supported" in run.stdout
    if not passed:
        fail(where, f"kvconform port {args} does not pass with the answers shown:\n{run.stdout}{run.stderr}")
    sent = {json.loads(r)["id"]: r.strip() for r in open("requests.jsonl")} if os.path.exists("requests.jsonl") else {}
    shown = {json.loads(t)["id"]: (t, n) for d, t, n in transcript if d == ">"}
    for ident, (text, n) in shown.items():
        if ident in sent and sent[ident] != text:
            fail(f"{doc}:{n}", f"the harness sent {sent[ident]!r}, not the request shown")
        elif ident not in sent and passed:  # a failed run stops early
            fail(f"{doc}:{n}", "the harness never sent the request shown")
    for ident, text in sent.items():
        if passed and ident not in shown and json.loads(text).get("op") != "observe":
            fail(where, f"the example leaves out a request that is not an observe: {text}")


def fenced(doc, text):
    """Checks the fenced blocks of `text`; returns the text with them blanked (lines kept) for the inline spans."""
    out, lines, i = [], text.split("\n"), 0
    while i < len(lines):
        fence = re.match(r"^```(\S*)\s*(.*)$", lines[i])
        if not fence:
            out.append(lines[i])
            i += 1
            continue
        end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("```")), len(lines))
        tag, args, body, where = fence.group(1), fence.group(2), lines[i + 1:end], f"{doc}:{i + 1}"
        check_block(doc, where, tag, args, body, i + 2)
        out += [""] * (end + 1 - i)
        i = end + 1
    return "\n".join(out)


def check_block(doc, where, tag, args, body, first_line):
    if tag == "json":
        count(doc, "json block")
        value = parse(where, "\n".join(body), first_line)
        if value is not None:
            check_message(where, value)
    elif tag == "exchange":
        count(doc, "exchange")
        check_exchange(where, args, body)
    elif tag == "sh":
        commands = []  # [first line, text]: indented lines continue the command above
        for n, line in enumerate(body, first_line):
            if line[:1].isspace() and commands:
                commands[-1][1] += " " + line
            else:
                commands.append([n, line])
        for n, line in commands:
            check_commands(f"{doc}:{n}", line)
    elif tag == "python" and doc in RUN_PYTHON:
        count(doc, "python program")
        run_python(where, body)
    elif body and re.match(r"^([<>] )?\{", body[0].strip()):
        fail(where, f"JSON in a block tagged {tag!r}: tag it json (one document) or exchange (a transcript)")


def run_python(where, body):
    """Runs a python block as a program (in the scratch directory, 60 s at most); a nonzero exit fails `where`."""
    with open("example.py", "w") as f:
        f.write("\n".join(body) + "\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([f"{ROOT}/python", f"{ROOT}/examples/python"]),
               PYTHONDONTWRITEBYTECODE="1")
    try:
        run = subprocess.run([PY, "example.py"], stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env,
                             timeout=60)
    except subprocess.TimeoutExpired:
        return fail(where, "the python example ran past 60 s")
    if run.returncode != 0:
        fail(where, f"the python example exits {run.returncode}:\n{(run.stdout + run.stderr)[-2000:]}")


def inline(doc, text):
    for span in re.finditer(r"(?<!`)`([^`]+)`(?!`)", text):
        content, where = " ".join(span.group(1).split()), f"{doc}:{text.count(chr(10), 0, span.start()) + 1}"
        if content.startswith("{") or FIELD.match(content):
            count(doc, "inline json")
            check_inline_json(where, content)
        elif FORMAT.match(content):
            count(doc, "storage format")
            check_format(where, FORMAT.match(content).group(1))
        elif re.match(r"storage \w+, ", content):
            count(doc, "profile in words")
            if content not in listing:
                fail(where, "kvconform list prints no such profile")
        elif content and COMMAND.match(content.split()[0]):
            check_commands(where, content)


start = time.monotonic()
for doc in DOCS:
    counts[doc] = {}
    inline(doc, fenced(doc, open(f"{ROOT}/{doc}").read()))
for doc, sorts in counts.items():
    print(f"{doc}: " + (", ".join(f"{n} {sort}" for sort, n in sorted(sorts.items())) or "no examples"))
print(f"checked in {time.monotonic() - start:.1f} s", flush=True)
for problem in failures + passes_unexpectedly:
    print("FAILED:", problem, file=sys.stderr)
sys.exit(1 if failures or passes_unexpectedly else 0)
