"""The update kit: ``update_decide`` over generated incoming and pending file groups.

Checked (``check_update_strategy``; ``run_update_kit`` runs it bounded and shrunk):

* it returns an :class:`UpdateDecision` whose ``file_groups`` are exactly the incoming file groups under pending
  clustering (never one that is not both);
* by ``policy``: ``reject`` rejects exactly when some incoming file group is pending, and its message names each
  of them (``partition/file_id``); ``allow`` always allows; ``duplicate`` duplicates exactly when one is pending;
* **pure**: it writes no file and leaves its context unchanged. Writes are seen two ways while it runs: Python's
  file API through audit events (opens for writing, removes, renames, ...), and, on Linux, any byte the process
  writes (``wchar`` of ``/proc/self/io``), which catches writes through pyarrow's file systems and other native
  code; its prints and log lines are swallowed meanwhile so they do not count. A delete or rename through
  native code writes no bytes and is not seen;
* **deterministic**: equal contexts (built in another order) give equal decisions.
"""

from __future__ import annotations

import contextlib
import io
import logging
import sys
import threading
from collections.abc import Iterator

from hypothesis import strategies as st

from ..plan.model import UpdateContext, UpdateDecision
from ..table import FileGroupId
from .conformance import _checked_call, check_params_model, fail, run_kit

HOOK = "update_decide"
POLICIES = ("reject", "allow", "duplicate")
_WRITE_EVENTS = {"os.remove", "os.rename", "os.replace", "os.mkdir", "os.rmdir", "os.truncate", "shutil.rmtree",
                 "shutil.copyfile", "shutil.move", "os.link", "os.symlink", "os.chmod"}  # fmt: skip
_AUDIT = threading.local()
_HOOK_INSTALLED: list[bool] = []


def _audit(event: str, args) -> None:
    log = getattr(_AUDIT, "writes", None)
    if log is None:
        return
    if event == "open" and len(args) >= 2:
        mode, flags = args[1], args[2] if len(args) > 2 else 0
        if (isinstance(mode, str) and any(c in mode for c in "wax+")) or (isinstance(flags, int) and flags & 0o3):
            log.append(f"open({args[0]!r}, {mode!r})")
    elif event in _WRITE_EVENTS:
        log.append(f"{event}{tuple(str(a) for a in args[:2])}")


def _watch_writes():
    if not _HOOK_INSTALLED:
        sys.addaudithook(_audit)  # process-wide and permanent; inert unless a kit call is being watched
        _HOOK_INSTALLED.append(True)


file_groups = st.builds(FileGroupId, st.sampled_from(["", "us", "eu", "dt=2024-01-01"]),
                        st.sampled_from([f"{i:08x}-0000-0000-0000-000000000000-0" for i in range(10)]))  # fmt: skip
INSTANTS = st.sampled_from(["20260101000000000", "20260101000100000", "20260102000000000"])


@st.composite
def update_inputs(draw):
    """(incoming file groups, pending clustering): usually overlapping, sometimes not."""
    pending = draw(st.dictionaries(file_groups, INSTANTS, max_size=6))
    incoming = set(draw(st.sets(file_groups, max_size=6)))
    if pending and draw(st.integers(0, 3)):
        incoming |= set(draw(st.lists(st.sampled_from(sorted(pending)), min_size=1, max_size=3)))
    return frozenset(incoming), pending


def _bytes_written() -> int | None:
    """Bytes this process has passed to write(2) so far; None where the kernel does not say (not Linux)."""
    try:
        with open("/proc/self/io", "rb") as counters:  # a read: not an audited write
            for line in counters:
                if line.startswith(b"wchar:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


@contextlib.contextmanager
def _output_swallowed() -> Iterator[None]:
    """Prints and log lines are not file writes: kept out of the byte count while the hook runs."""
    stdout, stderr = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = io.StringIO(), io.StringIO()
    logging.disable(logging.CRITICAL)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = stdout, stderr
        logging.disable(logging.NOTSET)


def _decide(strategy, incoming, pending):
    __tracebackhide__ = True
    context = UpdateContext(frozenset(incoming), dict(pending))
    _watch_writes()
    _AUDIT.writes = []
    try:
        with _output_swallowed():
            before = _bytes_written()
            decision = _checked_call(strategy, HOOK, context=context)
            after = _bytes_written()
        writes = _AUDIT.writes
    finally:
        _AUDIT.writes = None
    if writes:
        fail(strategy, HOOK, "pure (writes nothing)", f"wrote: {writes[0]}")
    if before is not None and after is not None and after > before:
        fail(strategy, HOOK, "pure (writes nothing)",
             f"wrote {after - before} bytes through native code (e.g. pyarrow's file system), which Python's "
             "file API did not see")  # fmt: skip
    if context.pending_clustering != pending or context.incoming_file_groups != frozenset(incoming):
        fail(strategy, HOOK, "pure (leaves its context unchanged)", "the context's pending clustering was modified")
    return decision


def _names(groups) -> str:
    return ", ".join(f"{g.partition or '(none)'}/{g.file_id[:8]}" for g in sorted(groups)) or "none"


def check_update_strategy(strategy, case, *, policy: str) -> UpdateDecision:
    """Assert the update invariants for ``strategy`` (which implements ``policy``) on ``(incoming, pending)``."""
    __tracebackhide__ = True
    if policy not in POLICIES:
        raise ValueError(f"policy {policy!r}; accepted: {', '.join(POLICIES)}")
    incoming, pending = case
    decision = _decide(strategy, incoming, pending)
    if not isinstance(decision, UpdateDecision):
        fail(strategy, HOOK, "returns an UpdateDecision", f"returned {decision!r:.100}")
    overlap = frozenset(g for g in incoming if g in pending)
    if decision.file_groups != overlap:
        fail(strategy, HOOK, "names exactly the incoming file groups under pending clustering",
             f"named {_names(decision.file_groups)}; pending and incoming: {_names(overlap)}")  # fmt: skip
    wanted = {"reject": "reject", "duplicate": "duplicate", "allow": "allow"}[policy] if overlap else "allow"
    if decision.action != wanted:
        fail(strategy, HOOK, f"{policy} policy: {wanted} when {'some' if overlap else 'no'} incoming file group is pending",
             f"decided {decision.action!r} for {_names(overlap)}")  # fmt: skip
    if decision.action == "reject":
        unnamed = [g for g in overlap if g.file_id not in decision.message]
        if unnamed:
            fail(strategy, HOOK, "a rejection names the file groups",
                 f"message {decision.message[:80]!r} does not name {_names(unnamed)}")  # fmt: skip
    again = _decide(strategy, frozenset(sorted(incoming, reverse=True)), dict(sorted(pending.items(), reverse=True)))
    if again != decision:
        fail(strategy, HOOK, "deterministic (same input, same decision)", f"{decision.action} then {again.action}")
    return decision


def run_update_kit(strategy, *, policy: str, max_examples: int = 60) -> None:
    """Check ``strategy``'s params model, then generated contexts (shrunk on failure, bounded, quiet)."""
    __tracebackhide__ = True
    check_params_model(strategy)
    run_kit(lambda case: check_update_strategy(strategy, case, policy=policy), update_inputs(), max_examples=max_examples)


__all__ = ["check_update_strategy", "run_update_kit", "update_inputs"]
