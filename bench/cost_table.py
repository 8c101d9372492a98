#!/usr/bin/python3
"""What each kind costs: its files' compile time, each reference's quick (and deep) row, and the whole gate.

  bench/cost_table.py [--build build] [--runs N] [--fresh] [--deep [NAME ...]] [--write]

Compile time is read from BUILD/.ninja_log (the last time each object was built), per kind's files
(properties/kinds/KIND/ and anything else naming the kind) and per library: the gate's (what README's first
command builds) and the zoo's (mutants and variants, built for the tests). With --fresh the script first builds
the gate as README's first command does (no tests, no zoo), then the zoo, in a scratch folder with -j2, and
reads that folder's log; it also reports the gate build's wall time. Without it, BUILD must have been built
from scratch for the figures to be whole.

Rows are CPU time (user + system, workers included) of `kvconform gate --impl NAME -j 1`, the median of N runs
(default 3); the ratio is to the flat reference's row of the same run. --deep also times deep rows (the
references named, or all: an hour or more). The whole quick gate is timed with -j 2 (wall and CPU).
--write puts the table into docs/performance.md between its cost-table markers; otherwise it is printed.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from performance import ROOT, median, references, timed_runs  # noqa: E402

BEGIN, END = "<!-- cost-table: begin (bench/cost_table.py --write) -->", "<!-- cost-table: end -->"


def kinds(root):
    text = open(os.path.join(root, "cmake", "kinds.cmake"), encoding="utf-8").read()
    return re.search(r"set\(KVCONFORM_KINDS ([a-z_ ]+)\)", text).group(1).split()


def ninja_objects(build):
    """{object path: seconds} from .ninja_log, the latest build of each object the build still makes (the log also
    keeps objects of files since renamed or removed)."""
    listed = subprocess.run(["ninja", "-C", build, "-t", "targets", "all"], capture_output=True, text=True, check=True)
    current = {line.rsplit(": ", 1)[0] for line in listed.stdout.splitlines()}
    last = {}
    with open(os.path.join(build, ".ninja_log"), encoding="utf-8") as f:
        for line in f:
            if line.startswith("#"):
                continue
            start, end, _, out, *_ = line.rstrip("\n").split("\t")
            if out.endswith(".o") and out in current:
                last[out] = (int(end) - int(start)) / 1000
    return last


def compile_times(build, kind_names):
    """{(kind or 'shared', 'gate' | 'zoo'): seconds} over the gate's and the zoo's libraries."""
    gate_libs = ("kvconform_trace.dir", "kvconform_core.dir", "kvconform_harness.dir", "kvconform_cli.dir",
                 "kvconform_builtin.dir", "kvconform.dir")
    out = {}
    for obj, seconds in ninja_objects(build).items():
        lib = "zoo" if "kvconform_zoo.dir" in obj else "gate" if any(d in obj for d in gate_libs) else None
        if lib is None:
            continue
        owner = next((k for k in kind_names if f"/kinds/{k}/" in obj), "shared")
        out[(owner, lib)] = out.get((owner, lib), 0.0) + seconds
    return out


def fresh_build():
    """Builds README's first command's target, then the zoo, in a scratch folder: (folder, gate wall seconds)."""
    scratch = tempfile.mkdtemp(prefix="kvconform-cost-")
    try:
        return scratch, build_in(scratch)
    except BaseException:
        shutil.rmtree(scratch)
        raise


def build_in(scratch):
    """Configures `scratch` as README's first command does, builds its `kvconform`, then the zoo: the first's wall."""
    subprocess.run(["cmake", "--preset", "default", "-B", scratch, "-DKVCONFORM_BUILD_TESTS=OFF", "-DKVCONFORM_ZOO=OFF",
                    "-DKVCONFORM_BUILD_BENCHMARKS=OFF", "-DKVCONFORM_BUILD_FUZZERS=OFF"], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)
    start = time.monotonic()
    subprocess.run(["ninja", "-C", scratch, "-j2", "kvconform"], check=True, stdout=subprocess.DEVNULL)
    wall = time.monotonic() - start
    subprocess.run(["ninja", "-C", scratch, "-j2", "kvconform_zoo"], check=True, stdout=subprocess.DEVNULL)
    return wall


def row_cpu(kvconform, impl, profile, runs):
    command = [kvconform, "gate", "-j", "1", "--store", "", "--profile", profile, "--impl", impl]
    return median([cpu for _, cpu in timed_runs(command, runs)])


def table(args):
    kind_names = kinds(ROOT)
    gate_wall = None
    if args.fresh:
        scratch, gate_wall = fresh_build()
        try:
            compiled = compile_times(scratch, kind_names)
        finally:
            shutil.rmtree(scratch)
    else:
        compiled = compile_times(args.build, kind_names)
    kvconform = os.path.abspath(os.path.join(args.build, "kvconform"))
    impls = references(kvconform)
    quick = {i: row_cpu(kvconform, i, "quick", args.runs) for i in impls}
    deep_names = impls if args.deep == [] else (args.deep or [])
    deep = {i: row_cpu(kvconform, i, "deep", 1) for i in deep_names}
    whole = timed_runs([kvconform, "gate", "-j", "2", "--store", ""], args.runs)
    lines = ["| kind | gate compile (s) | zoo compile (s) | reference | quick row CPU (s) | / flat | deep row CPU (s) |",
             "| --- | ---: | ---: | --- | ---: | ---: | ---: |"]
    kind_of = {i: next((k for k in sorted(kind_names, key=len, reverse=True) if i == k or i.startswith(k + "-")),
                       "?") for i in impls}
    for k in kind_names:
        first = True
        for i in (i for i in impls if kind_of[i] == k):
            cells = [k, f"{compiled.get((k, 'gate'), 0):.1f}", f"{compiled.get((k, 'zoo'), 0):.1f}"] if first else \
                ["", "", ""]
            first = False
            lines.append("| " + " | ".join(cells + [i, f"{quick[i]:.2f}", f"{quick[i] / quick['flat']:.1f}",
                                                   f"{deep[i]:.1f}" if i in deep else "-"]) + " |")
    lines.append(f"| shared | {compiled.get(('shared', 'gate'), 0):.1f} | {compiled.get(('shared', 'zoo'), 0):.1f} "
                 "| | | | |")
    gate_total = sum(s for (_, lib), s in compiled.items() if lib == "gate")
    zoo_total = sum(s for (_, lib), s in compiled.items() if lib == "zoo")
    lines += ["", f"Compile time in all: gate {gate_total:.0f} s, zoo {zoo_total:.0f} s"
              + (f"; the gate's build took {gate_wall:.0f} s wall with -j2" if gate_wall else "") + ".",
              f"The whole quick gate (`gate -j 2`, median of {args.runs}): "
              f"{median([w for w, _ in whole]):.1f} s wall, {median([c for _, c in whole]):.1f} s CPU; "
              f"the rows sum to {sum(quick.values()):.1f} s CPU. Load average at the end: {os.getloadavg()[0]:.1f}."]
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--fresh", action="store_true")
    parser.add_argument("--deep", nargs="*")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    lines = table(args)
    if not args.write:
        print("\n".join(lines))
        return
    path = os.path.join(ROOT, "docs", "performance.md")
    text = open(path, encoding="utf-8").read()
    if BEGIN not in text or END not in text:
        raise SystemExit(f"{path}: no cost-table markers")
    head, rest = text.split(BEGIN, 1)
    text = head + BEGIN + "\n" + "\n".join(lines) + "\n" + END + rest.split(END, 1)[1]
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


if __name__ == "__main__":
    main()
