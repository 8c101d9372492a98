"""Refusals an adapter raises, and how exceptions become the protocol's refusal reasons (docs/port-protocol.md §6)."""


class Refusal(Exception):
    """An op the cache refuses; it must have changed nothing observable. Raise a subclass: a bare
    Refusal carries no reason the harness knows, so it never matches an expected refusal."""

    reason = "refused"


class CapacityRefusal(Refusal):
    """The cache or its block pool has no room for the op."""

    reason = "capacity"


class ShapeRefusal(Refusal):
    """Wrong rank or width, k and v differing in steps, a bad mask, index or token count."""

    reason = "shape"


class EmptyRefusal(Refusal):
    """A decode with no rows to attend."""

    reason = "empty"


class IndexRefusal(Refusal):
    """An unknown or released sequence, a sequence in the wrong phase (prefix's phases, radix: waiting for an op that
    runs it, running for an admit), a transfer that is not pending, a layer, start, reorder index or tier out of
    range."""

    reason = "index"


class PendingRefusal(Refusal):
    """tiered: an op on a sequence whose load is pending, or a store of a tier block whose rows are not all written."""

    reason = "pending"


class OrderRefusal(Refusal):
    """tiered: a completion out of the order the cache completes transfers in (completion_order=fifo)."""

    reason = "order"


# Every reason a refusal may carry (docs/port-protocol.md §6); an adapter's `refusals` must map to one of these.
REASONS = ("capacity", "shape", "empty", "index", "pending", "order")


class Unsupported(Exception):
    """An op (or a config, such as sinks or preemption) the adapter does not implement: answered
    as `unsupported`, which the harness reports NOT SUPPORTED rather than as a pass or a failure."""


def reason_of(error, extra):
    """The refusal reason of `error`: its own if it is a Refusal, else the first entry of `extra`
    (an adapter's `refusals`, exception class -> reason) that it is an instance of; None if neither."""
    if isinstance(error, Refusal):
        return error.reason
    for cls, reason in extra.items():
        if isinstance(error, cls):
            return reason
    return None
