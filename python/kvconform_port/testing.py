"""conformance(): one pytest test per property of a kind, run through the kvconform program (python/README.md)."""
import dataclasses
import inspect
import json

PROFILES = ("quick", "deep")


@dataclasses.dataclass(frozen=True)
class Spec:
    """What one conformance test runs: an adapter class served by a port, and the gate's options for it."""
    adapter: type
    kind: str
    policies: dict = None  # None: the class's own declaration
    profile: str = "quick"
    seed: int = 1
    cases: int = None  # None: the profile's
    search: int = None
    program: str = None  # None: the plugin's --kvconform, $KVCONFORM, beside the package, PATH
    port_args: tuple = ()

    def port_command(self, python):
        """The port process: this interpreter serving the adapter class from its module's file."""
        module = inspect.getmodule(self.adapter)
        path = getattr(module, "__file__", None)
        if not path:
            raise ValueError(f"{self.adapter.__qualname__} must be defined in a module file (not {module!r})")
        if "<locals>" in self.adapter.__qualname__:
            raise ValueError(f"{self.adapter.__qualname__} must be defined at module level or in a class, "
                             "so that the port process can import it")
        return [python, "-m", "kvconform_port.serve_class", path, module.__name__, self.adapter.__qualname__,
                json.dumps(self.policies), *self.port_args]


def conformance(adapter, *, kind=None, policies=None, profile="quick", seed=1, cases=None, search=None,
                program=None, port_args=()):
    """A pytest test function with one test per property of the adapter's kind, and `required_events` (the coverage
    the kind's quick row must reach). Assign it to a name starting with test_:

        test_my_paged = conformance(MyPaged, policies={"rollback_blocks": "keep"}, seed=1)

    `kind` defaults to the adapter class's (PagedAdapter: paged); `policies` replaces the class's declaration;
    `cases` and `search` default to the profile's; `port_args` go to the port (e.g. ["--no-digest"])."""
    import pytest  # only conformance tests need pytest; the port library does not

    kind = kind or getattr(adapter, "kind", None)
    if not isinstance(adapter, type) or kind is None:
        raise TypeError(f"conformance() takes an adapter class (a subclass of a kvconform_port adapter), got {adapter!r}")
    if getattr(adapter, "kind", kind) not in (None, kind):
        raise ValueError(f"{adapter.__qualname__} is a {adapter.kind} adapter, not {kind}")
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {PROFILES}, got {profile!r}")
    if policies is not None and not isinstance(policies, dict):
        raise TypeError(f"policies must be a dict of policy name to choice, got {policies!r}")
    spec = Spec(adapter, kind, policies, profile, int(seed), cases, search, program, tuple(port_args))
    spec.port_command("python3")  # refuse an adapter the port process could not import, at collection

    def test(kvconform_property, request):
        from .pytest_plugin import STATE  # the plugin imports pytest; the port library does not
        request.config.stash[STATE].check(request.node, spec, kvconform_property)

    test.kvconform = spec
    test.__doc__ = f"kvconform {kind} conformance of {adapter.__qualname__}"
    return pytest.mark.kvconform(test)
