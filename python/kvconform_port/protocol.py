"""The protocol loop: hello, open, close, observe and the kinds' ops, one JSON line each way (docs/port-protocol.md)."""
import argparse
import json
import signal
import sys
import traceback

import numpy as np

from . import codec
from .adapters import SCALES
from .drivers import Refused
from .refusals import REASONS, Unsupported

PROTOCOL = 2
MAX_SIZE = 1 << 20  # the largest config size the protocol allows (§4)
MIN_SCALE, MAX_SCALE = 2.0 ** -40, 2.0 ** 40  # the range of a per-tensor scale (§4)
# Inputs are overwritten with a quiet NaN whose payload no arithmetic produces, so that a cache that
# kept a reference shows it in its next observation (§9); integer lists with the most negative int64.
POISON = np.array([0x7FF8DEADBEEF0000], dtype=np.uint64).view(np.float64)[0]
POISON_INT = -(1 << 63)


def _config(config, adapter_class):
    """The config (of the adapter's kind) with its optional fields filled in; ProtocolError if malformed (§4)."""
    fields, defaults = adapter_class.config_fields, adapter_class.config_defaults
    unknown = set(config) - {"kind", *fields, *defaults}
    missing = [f for f in fields if f not in config]
    if unknown or missing:
        raise codec.ProtocolError(f"config: unknown fields {sorted(unknown)} or missing fields {missing}")
    out = dict(defaults, **config)
    for name in fields:
        if type(out[name]) is not int or not 1 <= out[name] <= MAX_SIZE:
            raise codec.ProtocolError(f"config.{name}: expected an integer in [1, {MAX_SIZE}], got {out[name]!r}")
    for name, default in defaults.items():
        if name in SCALES:  # a number in [2^-40, 2^40]; JSON may write a whole one as an integer
            if type(out[name]) not in (int, float) or not MIN_SCALE <= out[name] <= MAX_SCALE:
                raise codec.ProtocolError(f"config.{name}: expected a number in [2^-40, 2^40], got {out[name]!r}")
            out[name] = float(out[name])
        elif type(out[name]) is not type(default):
            raise codec.ProtocolError(f"config.{name}: expected a {type(default).__name__}, got {out[name]!r}")
        elif type(default) is int and not 0 <= out[name] <= MAX_SIZE:  # an optional size: 0 when absent (§4)
            raise codec.ProtocolError(f"config.{name}: expected an integer in [0, {MAX_SIZE}], got {out[name]!r}")
    window = out["window"] if "window" in out else out.get("capacity", 1)  # a hybrid's sinks are its window's
    if out.get("keep", 0) < 0 or (out.get("keep", 0) >= window and window > 0):
        raise codec.ProtocolError(f"config.keep: must be in [0, window), got {out['keep']}")
    if "cross" in out and (out["shared"] >= out["layers"] or (out["window"] == 0 and out["keep"] + out["global_every"])):
        raise codec.ProtocolError("config: a hybrid cache needs shared < layers, and keep and global_every a window")
    if "q_heads" in out and (out["d_k"] != out["d_v"] or out["q_heads"] % out["heads"]):
        raise codec.ProtocolError("config: a beam cache needs d_k = d_v and q_heads a multiple of heads")
    return out


def _fields(request, allowed, op):
    unknown = set(request) - {"id", "op", *allowed}
    if unknown:
        raise codec.ProtocolError(f"{op}: unknown fields {sorted(unknown)}")


class Port:
    """Serves adapter classes (one per kind) to the harness; handle() answers one request.

    poison: make the arrays handed to a cache read-only during the call and overwrite them (and
    integer lists) afterwards (§9). digest: offer digests in hello (§8), unless an adapter declares
    integer groups: a digest stream cannot carry their scales, so such a port answers in full.
    """

    def __init__(self, name, adapters, poison=True, digest=True):
        self.name, self.poison = name, poison
        self.digest = digest and not any(cls.declares_groups() for cls in adapters)
        self.adapters = {}
        for cls in adapters:
            if cls.kind in self.adapters:
                raise ValueError(f"two adapters of kind {cls.kind}: {self.adapters[cls.kind].__name__}, {cls.__name__}")
            for reason in cls.refusals.values():
                if reason not in REASONS:
                    raise ValueError(f"{cls.__name__}.refusals: {reason!r} is not a refusal reason")
            self.adapters[cls.kind] = cls
        self.caches = {}  # cache id -> driver
        self.unsupported = {}  # cache id -> why its open was answered unsupported
        self.inputs = []

    def handle(self, request):
        """The answer to one request (a dict); raises ProtocolError for a request that breaks the protocol."""
        if type(request) is not dict:
            raise codec.ProtocolError(f"a request must be a JSON object, got {str(request)[:200]}")
        answer = {"id": codec.integer(request.get("id"), "id"), "ok": True}
        op = request.get("op")
        try:
            answer.update(self.dispatch(op, request))
        except Unsupported as e:
            answer.update(ok=False, error="unsupported", message=str(e))
        except Refused as e:
            answer.update(ok=False, error=e.reason, message=e.message)
        finally:
            self.poison_inputs()
        return answer

    def dispatch(self, op, request):
        if op == "hello":
            _fields(request, ("protocol",), op)
            codec.integer(request.get("protocol"), "protocol")
            return self.hello()
        cache = codec.integer(request.get("cache"), "cache")
        if op == "open":
            _fields(request, ("cache", "config"), op)
            return self.open(cache, request.get("config"))
        if cache in self.unsupported:
            if op == "close":
                del self.unsupported[cache]
                return {}
            raise Unsupported(f"cache {cache} was not opened: {self.unsupported[cache]}")
        if cache not in self.caches:
            raise codec.ProtocolError(f"{op}: cache {cache} is not open")
        if op == "close":
            _fields(request, ("cache",), op)
            del self.caches[cache]
            return {}
        if op == "observe":
            _fields(request, ("cache", "digest"), op)
            digest = request.get("digest", False)
            if type(digest) is not bool:
                raise codec.ProtocolError(f"observe: digest must be true or false, got {digest!r}")
            return self.caches[cache].observe(digest and self.digest)  # without digests offered: in full
        if type(op) is not str:
            raise codec.ProtocolError(f"op: expected a string, got {op!r}")
        return self.caches[cache].apply(op, request)

    def hello(self):
        kinds = {}
        for kind, cls in self.adapters.items():
            kinds[kind] = {"capabilities": cls.capabilities()}
            if cls.profile:
                kinds[kind]["profile"] = dict(cls.profile)
            if cls.limits:
                kinds[kind]["limits"] = dict(cls.limits)
            if cls.policies:
                kinds[kind]["policies"] = dict(cls.policies)
        return {"protocol": PROTOCOL, "name": self.name, "digest": self.digest, "kinds": kinds}

    def open(self, cache, config):
        if cache in self.caches or cache in self.unsupported:
            raise codec.ProtocolError(f"open: cache {cache} is open already")
        if type(config) is not dict or type(config.get("kind")) is not str:
            raise codec.ProtocolError(f"open: config must be an object with a kind, got {str(config)[:200]}")
        cls = self.adapters.get(config["kind"])
        try:
            if cls is None:
                raise Unsupported(f"this port does not serve kind {config['kind']!r} (it serves "
                                  f"{', '.join(self.adapters)})")
            config = _config(config, cls)
            adapter = cls(config)
            if not adapter.supports(config):
                raise Unsupported(f"{cls.__name__} does not serve the config {config}")
        except Unsupported as e:
            self.unsupported[cache] = str(e)
            raise
        self.caches[cache] = cls.driver(adapter, self.inputs, self.poison)
        return {}

    def poison_inputs(self):
        """Overwrites every input of the last call, so a cache that kept one shows it (§9)."""
        if self.poison:
            for x in self.inputs:
                if isinstance(x, list):
                    x[:] = [POISON_INT] * len(x)
                else:
                    x.flags.writeable = True
                    x.fill(POISON)
        self.inputs.clear()


def _reject_constant(name):
    raise codec.ProtocolError(f'{name} is not JSON: non-finite numbers are the strings "nan", "inf", "-inf"')


def run(port, lines, out, err):
    """Answers every line of `lines` on `out`, flushing each answer. Returns the exit code: 0 at
    EOF, 2 after a request that breaks the protocol, 1 after an exception of the cache."""
    for number, line in enumerate(lines, 1):
        try:
            answer = port.handle(json.loads(line, parse_constant=_reject_constant))
            text = json.dumps(answer, allow_nan=False, check_circular=False, separators=(",", ":"))
        except (codec.ProtocolError, json.JSONDecodeError, UnicodeDecodeError) as e:
            err.write(f"{port.name}: request on line {number} breaks the protocol: {e}\n")
            return 2
        except Exception:  # noqa: BLE001 - a bug of the cache: shown in full, and the port stops
            err.write(traceback.format_exc())
            err.write(f"{port.name}: the cache raised an exception answering line {number}: {line[:200]!r}\n")
            return 1
        out.write(text + "\n")
        out.flush()
    return 0


def serve(name, adapters, bugs=None, argv=None):
    """The command line of a port: serves `adapters` on stdin/stdout until EOF and exits.

    bugs: {NAME: adapter class} of seeded-bug twins; `--bug NAME` serves that twin in place of
    the adapter of its kind. `--no-poison` and `--no-digest` turn those features off."""
    bugs = bugs or {}
    parser = argparse.ArgumentParser(prog=name, description=f"{name}: a kvconform port (docs/port-protocol.md)")
    parser.add_argument("--bug", choices=sorted(bugs), help="serve a seeded-bug twin")
    parser.add_argument("--no-poison", action="store_true", help="do not guard and overwrite inputs after calls")
    parser.add_argument("--no-digest", action="store_true", help="do not offer observation digests in hello")
    options = parser.parse_args(argv)
    if options.bug:
        twin = bugs[options.bug]
        adapters = [twin if cls.kind == twin.kind else cls for cls in adapters]
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # interrupted with the harness: exit quietly
    port = Port(name, adapters, poison=not options.no_poison, digest=not options.no_digest)
    try:
        code = run(port, sys.stdin.buffer, sys.stdout, sys.stderr)
        sys.stdout.flush()
    except BrokenPipeError:  # the harness closed our stdout: nobody is left to answer
        sys.stdout = None  # nothing left to flush at exit either
        code = 0
    sys.exit(code)
