"""A failing schedule made minimal: the shortest list of steps that still fails the same way, printed so that it
replays (``python -m tests.sim replay SEED 'STEPS'``).

A replayed list of steps is followed to its end, then every choice falls back to "the first runnable actor, no
fault" (``Scheduler._choose``), so any shorter or thinned list is itself a complete schedule. Shrinking drops
chunks of steps (halves, quarters, ... single steps, delta debugging) and clears faults one by one, keeping each
change after which the schedule still fails with the same kind of problem.
"""

from __future__ import annotations

import re
from typing import Callable

from .scheduler import Step
from .simulation import Outcome, run_schedule


def kind(outcome: Outcome) -> str:
    """What failed, without the times and names that change from one schedule to another."""
    first = outcome.problems[0] if outcome.problems else ""
    return re.sub(r"\d+|'[^']*'|\[[^]]*\]", "#", first)[:120]


def encode(steps: list[Step]) -> str:
    """Steps as text, runs of one actor without faults compressed (``c1*4 w c2!crash-after``)."""
    out, index = [], 0
    while index < len(steps):
        step, run = steps[index], 1
        while not step.fault and index + run < len(steps) and steps[index + run] == step:
            run += 1
        out.append(f"{step}*{run}" if run > 1 else str(step))
        index += run
    return " ".join(out)


def decode(text: str) -> list[Step]:
    steps = []
    for token in text.split():
        body, _, count = token.partition("*")
        actor, _, fault = body.partition("!")
        steps += [Step(actor, fault)] * int(count or 1)
    return steps


def shrink(outcome: Outcome, *, budget: int = 300, run: Callable[..., Outcome] = run_schedule) -> Outcome:
    """The smallest failing schedule found within ``budget`` replays (the original if nothing smaller fails)."""
    target, best, tries = kind(outcome), outcome, 0

    def fails(steps: list[Step]) -> Outcome | None:
        nonlocal tries
        tries += 1
        candidate = run(outcome.seed, steps)
        return candidate if candidate.failed and kind(candidate) == target else None

    steps = list(outcome.steps)
    chunk = max(1, len(steps) // 2)
    while chunk >= 1 and tries < budget:
        start, changed = 0, False
        while start < len(steps) and tries < budget:
            candidate = steps[:start] + steps[start + chunk:]
            found = fails(candidate)
            if found is not None:
                steps, best, changed = _trimmed(candidate, found), found, True
            else:
                start += chunk
        if not changed:
            chunk //= 2
    for index in range(len(steps)):
        if tries >= budget:
            break
        if steps[index].fault:
            candidate = steps[:index] + [Step(steps[index].actor)] + steps[index + 1:]
            found = fails(candidate)
            if found is not None:
                steps, best = _trimmed(candidate, found), found
    best.steps = _trimmed(steps, best)
    return best


def _trimmed(steps: list[Step], outcome: Outcome) -> list[Step]:
    """The steps that mattered: those the replay took (a replay stops short when its actors ended sooner)."""
    return steps[: len(outcome.steps)]


def report(outcome: Outcome, minimal: Outcome) -> str:
    return (f"seed={outcome.seed} fails: {outcome.problems[0]}\n"
            f"  ({len(outcome.problems)} problem(s), {len(outcome.steps)} steps, {outcome.faults} fault(s); "
            f"errors: {outcome.errors})\n"
            f"  minimal replay ({len(minimal.steps)} steps): python -m tests.sim replay {outcome.seed} "
            f"'{encode(minimal.steps)}'\n  it fails with: {minimal.problems[0]}")  # fmt: skip
