"""Glue every real engine's port wrote by hand: a copy-on-write fork, the prefix kind's counters, undo on a refusal."""
import contextlib
import copy
import operator

from .refusals import IndexRefusal, Refusal


class _Engine:
    """The engine's callbacks a CowBlocks calls: shared by every copy of it, so that a snapshot of the tables
    (undo_on_refusal, copy.deepcopy) still calls the engine itself, never a copy of it bound to a method."""

    __slots__ = ("allocate", "free", "copy")

    def __init__(self, allocate, free, copy):
        self.allocate, self.free, self.copy = allocate, free, copy

    def __deepcopy__(self, memo):
        return self


class CowBlocks:
    """Copy-on-write fork over an engine's block allocator that has none (vLLM v1 shares a block between requests
    only through a prefix hit on a full block, which nobody writes again, so it never copies one; the paged and
    prefix kinds' fork shares a partly filled last block too, which the next write must copy first).

    `allocate()` returns a new block id from the engine (it may raise CapacityRefusal), `free(block)` gives one back,
    `copy(src, dst)` copies a block's rows. CowBlocks counts the tables that hold each block and calls the engine only
    at the edges: `allocate` when a write needs a private copy of a shared block, `free` when the last table lets go,
    so the engine sees one holder per block whatever the forks.

    Every refusal (IndexRefusal for an unknown sequence or table index, a block already held, a sequence that exists;
    the CapacityRefusal of `allocate`) leaves the tables, the counts and the engine as they were.
    """

    def __init__(self, allocate, free, copy):
        self._engine = _Engine(allocate, free, copy)
        self._tables = {}  # sequence -> its blocks in row order
        self._refs = {}  # block -> tables holding it; a block no table holds has no entry

    def _table(self, seq):
        try:
            return self._tables[seq]
        except (KeyError, TypeError):  # TypeError: an unhashable id names no sequence either
            raise IndexRefusal(f"no sequence {seq!r}") from None

    def add(self, seq, blocks):
        """Appends `blocks`, which the engine allocated for `seq`, to its table (a new sequence starts with them):
        each is owned once, by seq alone. IndexRefusal for a block already held or listed twice."""
        blocks = list(blocks)
        try:
            hash(seq)
        except TypeError:
            raise IndexRefusal(f"a sequence id must be hashable, got {seq!r}") from None
        seen = set()
        for block in blocks:
            if block in self._refs or block in seen:  # shared blocks come from fork only, or counts would lie
                raise IndexRefusal(f"block {block!r} is held already")
            seen.add(block)
        self._tables.setdefault(seq, []).extend(blocks)
        for block in blocks:
            self._refs[block] = 1

    def table(self, seq):
        """The blocks of `seq` in row order (a copy: writing into it changes nothing here)."""
        return list(self._table(seq))

    def fork(self, src_seq, new_seq):
        """`new_seq` shares every block of `src_seq`: counts rise by one, nothing is allocated or copied."""
        blocks = self._table(src_seq)
        try:
            taken = new_seq in self._tables
        except TypeError:
            raise IndexRefusal(f"a sequence id must be hashable, got {new_seq!r}") from None
        if taken:
            raise IndexRefusal(f"sequence {new_seq!r} exists already")
        self._tables[new_seq] = list(blocks)
        for block in blocks:
            self._refs[block] += 1

    def writable(self, seq, index):
        """The block to write at table entry `index` of `seq`: itself when seq alone holds it, else a fresh copy that
        replaces it in seq's table (the other holders keep the old one). A refused allocation changes nothing."""
        blocks = self._table(seq)
        try:
            at = operator.index(index)
        except TypeError:
            raise IndexRefusal(f"table index must be an integer, got {index!r}") from None
        if isinstance(index, bool) or not 0 <= at < len(blocks):  # no negative indices: a miscount would wrap
            raise IndexRefusal(f"sequence {seq!r} has no table entry {index!r} (it has {len(blocks)})")
        old = blocks[at]
        if self._refs[old] == 1:
            return old
        new = self._engine.allocate()
        if new in self._refs:
            raise RuntimeError(f"the engine allocated block {new!r}, which tables still hold")
        try:
            self._engine.copy(old, new)
        except BaseException:
            self._engine.free(new)  # the engine gets its block back, so a failed copy changes nothing either
            raise
        blocks[at] = new
        self._refs[new] = 1
        self._refs[old] -= 1  # it was shared, so another table still holds it: never freed here
        return new

    def release(self, seq):
        """Drops seq's table; a block no other table holds goes back to the engine, the last block first (the order
        an engine's release frees them in, so that an LRU queue evicts a sequence's tail before its prefix)."""
        blocks = self._table(seq)
        del self._tables[seq]
        gone = []
        for block in reversed(blocks):
            self._refs[block] -= 1
            if self._refs[block] == 0:
                del self._refs[block]
                gone.append(block)
        for block in gone:  # after the counts, so that a free that looks back sees a consistent state
            self._engine.free(block)

    def refcount(self, block):
        """The tables holding `block`: 0 for one no table holds."""
        try:
            return self._refs.get(block, 0)
        except TypeError:
            return 0

    def sequences(self):
        """The sequences held, in the order they were added or forked."""
        return list(self._tables)


def free_and_evictable(queue, is_cached):
    """(free, evictable) of one queue of blocks no table holds (vLLM v1's free_block_queue): a block that still holds
    a cached prefix (`is_cached(block)` true) is evictable, the others are free, as the prefix kind counts them."""
    free = evictable = 0
    for block in queue:
        if is_cached(block):
            evictable += 1
        else:
            free += 1
    return free, evictable


class HitRows:
    """The prefix kind's counter hit_rows: the rows every create so far found cached (docs/kinds/prefix.md).

    PrefixAdapter observes it by calling `self.hit_rows()`, so an instance stored as that attribute serves the
    observation as is: `self.hit_rows = HitRows()` in the constructor, `self.hit_rows.add(rows)` in create."""

    def __init__(self):
        self._total = 0

    def add(self, rows):
        """Counts the rows one create found; a hit is whole rows, never negative (ValueError: a bug of the caller)."""
        if isinstance(rows, bool):
            raise ValueError(f"hit rows must be an integer, got {rows!r}")
        try:
            rows = operator.index(rows)  # numpy integers too; the observation must be a plain int for JSON
        except TypeError:
            raise ValueError(f"hit rows must be an integer, got {rows!r}") from None
        if rows < 0:
            raise ValueError(f"hit rows cannot be negative, got {rows}")
        self._total += rows

    @property
    def total(self):
        return self._total

    def reset(self):
        self._total = 0

    def __call__(self):
        return self._total

    def __repr__(self):
        return f"HitRows({self._total})"


@contextlib.contextmanager
def undo_on_refusal(*objects, attrs=None, refusals=()):
    """Snapshots each object's state on entry (copy.deepcopy of its __dict__, or of the attributes named in `attrs`)
    and, if a Refusal or an exception of a type in `refusals` (e.g. an adapter's `refusals` dict) escapes the block,
    puts every object back exactly and re-raises; after success or any other exception (a bug) it leaves them.

    An engine that changes a request before its allocation fails needs it: a refused op must change nothing. The
    objects are copied in one deepcopy, so what they share stays shared after a restore, and a reference from one to
    another stays that very object; what they reference outside their state is restored as the copy taken on entry.
    `attrs` keeps large arrays that a refused op never writes (a block pool's rows) out of the copy."""
    if isinstance(attrs, str):
        attrs = (attrs,)
    caught = (Refusal, *tuple(refusals))
    if attrs is None:
        for obj in objects:
            if not hasattr(obj, "__dict__"):
                raise TypeError(f"{type(obj).__name__} has no __dict__: name its attributes in attrs")
        states = [dict(vars(obj)) for obj in objects]
    else:
        attrs = tuple(attrs)
        states = [{name: getattr(obj, name) for name in attrs if hasattr(obj, name)} for obj in objects]
    # The objects themselves are restored in place, so a reference to one must not become a copy of it.
    saved = copy.deepcopy(states, {id(obj): obj for obj in objects})
    try:
        yield
    except caught:
        for obj, state in zip(objects, saved):
            if attrs is None:
                vars(obj).clear()  # attributes the block added go too
                vars(obj).update(state)
                continue
            for name in attrs:
                if name in state:
                    setattr(obj, name, state[name])
                elif hasattr(obj, name):  # absent on entry: the block added it
                    delattr(obj, name)
        raise
