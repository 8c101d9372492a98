#!/usr/bin/python3
"""Runs the benchmarks in bench/ and times the gate, then writes docs/performance.md.

  bench/performance.py [--build build] [--before-bench PATH] [--before-kvconform PATH] [--deep]
  bench/performance.py --compare-gate BEFORE [--build build] [--runs N] [--per-impl] [--jobs J] [-- GATE ARGS]

--before-bench is kvconform_bench built from an older tree (the same bench/ sources compile against
it) and --before-kvconform that tree's kvconform: they fill the "before" columns. --deep also times
the deep gate (minutes). Figures not re-measured say where they come from.

--compare-gate times `gate` (the quick gate over every reference, or GATE ARGS) of BEFORE, another
tree's kvconform, and of this build's, N times each (default 5), alternating so that other load on a
shared machine falls on both alike, and prints the median wall and CPU (user + system, workers
included) of each; --per-impl also times each reference alone with -j 1 and prints its median CPU.
It writes nothing.
"""
import argparse
import datetime
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Issue 15's measurements of the tree before it (same machine), for figures too slow to re-run.
ISSUE_DEEP_SECONDS = 2034.0
# docs/numerics.md §5.1 before this change: the quick gate over the four references, one core.
NUMERICS_QUICK_SECONDS = 2.25
SIZES = [(256, 64), (4096, 128), (32768, 128)]
INTRO = [
    "# Performance",
    "",
    "Written by `bench/performance.py` from the Google Benchmark programs in `bench/` (same run for every",
    "ratio) and timed gate runs; regenerate it with `bench/performance.py`, on an otherwise idle machine.",
    "\"Before\" is the tree before the double-double oracle, the in-place snapshot checks and `gate -j`",
    "(its kvconform and the same benchmark sources built against it), unless a cell says otherwise.",
    "Benchmark figures are CPU time per iteration (the fastest of seven runs for §1 and §2), so that other",
    "load on the machine does not distort the ratios; gate runs give wall and CPU time. The oracle and",
    "its guarantee are in docs/numerics.md §1.5.",
]


def run_bench(binary, out_dir, name):
    """All benchmarks of one binary, as {name: result}. The per-decode ones run seven times and keep
    the fastest (other load only ever adds time), the slower per-property ones once."""
    results, context = {}, None
    for part, extra in (("fast", ["--benchmark_filter=^(reference|oracle|check|plain|flat|paged|prefill)",
                                  "--benchmark_repetitions=7"]),
                        ("slow", ["--benchmark_filter=^(executor|cases)"])):
        out = os.path.join(out_dir, f"{name}-{part}.json")
        subprocess.run([binary, "--benchmark_out=" + out, "--benchmark_out_format=json"] + extra, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(out) as f:
            data = json.load(f)
        context = data["context"]
        for b in data["benchmarks"]:
            name = b.get("run_name", b["name"])
            if b.get("run_type", "iteration") == "iteration" and (
                    name not in results or b["cpu_time"] < results[name]["cpu_time"]):
                results[name] = b
    return results, context


def micros(results, name):
    """CPU time per iteration in microseconds (robust against other load on the machine), or None."""
    b = results.get(name)
    if b is None:
        return None
    scale = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}[b["time_unit"]]
    return b["cpu_time"] * scale


def timed(command, repeat):
    """(wall, CPU) seconds of the run with the best wall time over `repeat` runs, each in a fresh
    scratch folder; CPU is user + system time of the command and its workers."""
    best = None
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as scratch:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.monotonic()
            done = subprocess.run(command, cwd=scratch, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            took = time.monotonic() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(command)} exited {done.returncode}")
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        best = (took, cpu) if best is None or took < best[0] else best
    return best


def timed_runs(command, repeat):
    """[(wall, CPU)] seconds of `repeat` runs, each in a fresh scratch folder (CPU: user + system time of
    the command and its workers)."""
    return [timed(command, 1) for _ in range(repeat)]


def median(xs):
    xs = sorted(xs)
    mid = len(xs) // 2
    return xs[mid] if len(xs) % 2 else (xs[mid - 1] + xs[mid]) / 2


def references(kvconform):
    """The reference implementations `kvconform list` names, in its order."""
    out = subprocess.run([kvconform, "list"], capture_output=True, text=True, check=True).stdout
    names = []
    for line in out.splitlines():
        if line.startswith("  ") and not line.startswith("   ") and ", reference;" in line:
            names.append(line.split()[0])
    return names


def compare_gate(args, gate_args):
    """Median wall and CPU of `gate` for the before binary and this build's, run alternately."""
    binaries = {"before": args.compare_gate, "after": os.path.join(args.build, "kvconform")}
    jobs = ["-j", str(args.jobs)] if args.jobs else []
    runs = {name: [] for name in binaries}
    for _ in range(args.runs):
        for name, kv in binaries.items():
            runs[name] += timed_runs([kv, "gate"] + jobs + gate_args, 1)
    print(f"gate {' '.join(jobs + gate_args)}: median of {args.runs} runs, alternating; load average "
          f"{os.getloadavg()[0]:.1f} at the end")
    for name, got in runs.items():
        print(f"  {name:6s} wall {median([w for w, _ in got]):.3g} s, CPU {median([c for _, c in got]):.3g} s "
              f"(CPU of each run: {', '.join(f'{c:.2f}' for _, c in got)})")
    if args.per_impl:
        print(f"per reference, gate --impl NAME -j 1: median CPU of {args.runs} runs (s)")
        total = {name: 0.0 for name in binaries}
        for impl in references(binaries["after"]):
            cpu = {name: [] for name in binaries}
            for _ in range(args.runs):
                for name, kv in binaries.items():
                    cpu[name] += [c for _, c in timed_runs([kv, "gate", "-j", "1", "--impl", impl], 1)]
            row = {name: median(cpu[name]) for name in binaries}
            for name in binaries:
                total[name] += row[name]
            print(f"  {impl:18s} before {row['before']:6.3f}  after {row['after']:6.3f}")
        print(f"  {'sum':18s} before {total['before']:6.3f}  after {total['after']:6.3f}")


def fmt(x, unit="", digits=3):
    if x is None:
        return "-"
    return f"{x:.{digits}g}{unit}"


def ratio(a, b):
    return None if a is None or b is None else a / b


def machine(context):
    cpu = "unknown CPU"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    flags = open("/proc/cpuinfo").read()
    fma = "AVX2 + FMA" if " avx2" in flags and " fma" in flags else "no AVX2/FMA"
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    cxx = subprocess.run(["c++", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    return [f"{cpu}, {context['num_cpus']} CPUs ({fma}), {mem:.0f} GiB, {platform.system()} {platform.release()}",
            f"{cxx}; build type {context.get('library_build_type', '?')} Google Benchmark, "
            f"kvconform RelWithDebInfo (-O2), no -march flags",
            f"measured {datetime.date.today().isoformat()}, load average {context.get('load_avg', [0])[0]:.1f} "
            f"when the benchmarks started (the machine is shared: CPU times are the robust figures)"]


def oracle_section(after, before):
    rows = ["| n, d | double decode | double-double oracle | ratio | float128 oracle | ratio | whole check_decode "
            "| before: float128 / double decode |", "|---|---|---|---|---|---|---|---|"]
    for n, d in SIZES:
        key = f"/{n}/{d}"
        dec, ddo, f128 = (micros(after, x + key) for x in ("reference_decode", "oracle_double_double",
                                                            "oracle_float128"))
        chk = micros(after, "check_decode" + key)
        old = ratio(micros(before, "oracle_float128" + key), micros(before, "reference_decode" + key))
        rows.append(f"| {n}, {d} | {fmt(dec, ' µs')} | {fmt(ddo, ' µs')} | **{fmt(ratio(ddo, dec))}x** "
                    f"| {fmt(f128, ' µs')} | {fmt(ratio(f128, dec))}x | {fmt(chk, ' µs')} | {fmt(old)}x |")
    generic = [f"{n}, {d}: {fmt(micros(after, f'oracle_double_double_generic/{n}/{d}'), ' µs')}" for n, d in SIZES]
    return rows + ["", "The same oracle on its generic kernels (std::fma, no AVX2): " + "; ".join(generic) + "."]


def prefill_section(after):
    key = "/512/4096/128"
    dbl, ora = micros(after, "prefill_double" + key), micros(after, "prefill_oracle" + key)
    return ["| m, n, d | double prefill | prefill oracle (double-double) | ratio (goal <= 8) |", "|---|---|---|---|",
            f"| 512, 4096, 128 | {fmt(dbl, ' µs')} | {fmt(ora, ' µs')} | **{fmt(ratio(ora, dbl))}x** |"]


def decode_section(after, before):
    key = "/4096/128"
    rows = ["| n = 4096, d = 128 | before | after |", "|---|---|---|"]
    values = {}
    for label, name in (("plain read of K and V", "plain_read"), ("flat decode", "flat_decode"),
                        ("paged decode (16-row blocks)", "paged_decode")):
        values[name] = (micros(before, name + key), micros(after, name + key))
        rows.append(f"| {label} | {fmt(values[name][0], ' µs')} | {fmt(values[name][1], ' µs')} |")
    for label, num, den, goal in (("flat decode speed / plain read speed", "plain_read", "flat_decode", ">= 0.6"),
                                  ("paged decode time / flat decode time", "paged_decode", "flat_decode", "<= 1.25")):
        if num == "paged_decode":
            got = [ratio(values[num][i], values[den][i]) for i in (0, 1)]
        else:
            got = [ratio(values[num][i], values[den][i]) for i in (0, 1)]
        rows.append(f"| {label} (goal {goal}) | {fmt(got[0])} | **{fmt(got[1])}** |")
    return rows


def executor_section(after, before):
    rows = ["| kind (reference) | ops | before: checked / bare µs per op | after: checked / bare µs per op "
            "| after: overhead µs per op |", "|---|---|---|---|---|"]
    for name in sorted(n for n in after if n.startswith("executor_checked/")):
        impl = name.split("/", 1)[1]

        def per_op(results, kind):
            b = results.get(f"executor_{kind}/{impl}")
            return None if b is None else micros(results, f"executor_{kind}/{impl}") / b["ops"]
        a, ab = per_op(after, "checked"), per_op(after, "bare")
        b, bb = per_op(before, "checked"), per_op(before, "bare")
        rows.append(f"| {impl} | {int(after[name]['ops'])} | {fmt(b)} / {fmt(bb)} | {fmt(a)} / {fmt(ab)} "
                    f"| {fmt(None if a is None else a - ab)} |")
    return rows


def cases_section(after, before):
    rows = ["| implementation | property | before: cases/s | after: cases/s |", "|---|---|---|---|"]
    for name in sorted(n for n in after if n.startswith("cases/")):
        _, impl, prop = name.split("/")
        old = before.get(name, {}).get("cases_per_s")
        rows.append(f"| {impl} | {prop} | {fmt(old, '', 4)} | {fmt(after[name]['cases_per_s'], '', 4)} |")
    return rows


def gate_section(args):
    kv = os.path.join(args.build, "kvconform")
    cpus = os.cpu_count()
    quick = {j: timed([kv, "gate", "-j", str(j)], 3) for j in (1, cpus)}
    if args.before_kvconform:
        wall, cpu = timed([args.before_kvconform, "gate"], 3)
        old = f"{wall:.3g} s (CPU {cpu:.3g} s)"
    else:
        old = f"{NUMERICS_QUICK_SECONDS} s (docs/numerics.md §5.1)"
    rows = ["| gate over the four references | before | after |", "|---|---|---|",
            f"| quick, wall (best of 3) | {old}, 1 core | {quick[1][0]:.3g} s (CPU {quick[1][1]:.3g} s) with -j 1, "
            f"**{quick[cpus][0]:.3g} s** (CPU {quick[cpus][1]:.3g} s) with -j {cpus} |"]
    if args.deep:
        wall, cpu = timed([kv, "gate", "--profile", "deep", "-j", str(cpus)], 1)
        rows.append(f"| deep, wall (one run) | {ISSUE_DEEP_SECONDS:.0f} s (issue 15), 1 core "
                    f"| **{wall:.0f} s** (CPU {cpu:.0f} s, so {cpu / cpus:.0f} s on {cpus} idle cores)"
                    f" with -j {cpus} |")
    rows.append(f"| cores used | 1 | {cpus} (gate -j, default: every CPU) |")
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--before-bench")
    parser.add_argument("--before-kvconform")
    parser.add_argument("--deep", action="store_true")
    parser.add_argument("--out", default=os.path.join(ROOT, "docs", "performance.md"))
    parser.add_argument("--compare-gate", metavar="BEFORE")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--per-impl", action="store_true")
    parser.add_argument("--jobs", type=int)
    argv = sys.argv[1:]
    gate_args = argv[argv.index("--") + 1:] if "--" in argv else []
    args = parser.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    if args.compare_gate:
        compare_gate(args, gate_args)
        return
    with tempfile.TemporaryDirectory() as scratch:
        after, context = run_bench(os.path.join(args.build, "bench", "kvconform_bench"), scratch, "after")
        before = run_bench(args.before_bench, scratch, "before")[0] if args.before_bench else {}
    text = INTRO + ["", "## Machine", ""] + ["- " + line for line in machine(context)]
    for title, rows in (("1. Oracle time per decode", oracle_section(after, before)),
                        ("2. Decode against a plain read of the same bytes", decode_section(after, before)),
                        ("3. Executor overhead per op, by kind", executor_section(after, before)),
                        ("4. The gate", gate_section(args)),
                        ("5. Cases per second per property (quick profile, seed 1)", cases_section(after, before)),
                        ("6. The prefill oracle", prefill_section(after))):
        text += ["", "## " + title, ""] + rows
    with open(args.out, "w") as f:
        f.write("\n".join(text) + "\n")
    print("wrote", args.out)


if __name__ == "__main__":
    main()
