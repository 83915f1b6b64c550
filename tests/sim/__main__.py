"""``python -m tests.sim run [COUNT] [FIRST_SEED] [FAULT_RATE]``: run schedules (each seed draws its fault rate unless one is given), shrink and print each failure;
``python -m tests.sim replay SEED 'STEPS'``: replay one schedule and print what it found and what each actor did."""

from __future__ import annotations

import sys
import time

from .shrink import decode, report, shrink
from .simulation import base_table, run_schedule


def main(argv: list[str]) -> int:
    if argv[:1] == ["replay"]:
        outcome = run_schedule(int(argv[1]), decode(argv[2]) if len(argv) > 2 else None)
        print(f"seed={outcome.seed}: {len(outcome.steps)} steps, {outcome.faults} fault(s), errors: {outcome.errors}")
        print("\n".join(outcome.problems) or "no problem")
        return 1 if outcome.failed else 0
    count = int(argv[1]) if len(argv) > 1 else 100
    first = int(argv[2]) if len(argv) > 2 else 0
    rate = float(argv[3]) if len(argv) > 3 else None  # faults per scheduling point (default: the seed's)
    base_table()
    started, failed, faults = time.monotonic(), 0, 0
    for seed in range(first, first + count):
        outcome = run_schedule(seed, fault_rate=rate)
        faults += outcome.faults
        if outcome.failed:
            failed += 1
            print(report(outcome, shrink(outcome)), flush=True)  # a replay draws no fault: its steps name them
    took = time.monotonic() - started
    print(f"{count} schedules in {took:.1f} s ({count / took:.1f}/s), {faults / count:.2f} faults per schedule, "
          f"{failed} failed")  # fmt: skip
    return 1 if failed else 0


sys.exit(main(sys.argv[1:]))
