"""A deterministic simulation of the commit protocol (issue 22): the core's real timeline, plan, ownership, lock,
conflict-check, commit, metadata-table and rollback code, run by actors on a simulated store and clock under a
seeded scheduler, with crashes and storage faults injected, and the table checked after every schedule.

* ``scheduler.py``: actors (threads, one running at a time), the seeded choice at every storage operation, the
  faults (a crash before or after an operation; an operation that fails, times out, or succeeds and reports
  failure; a clock jump; an actor frozen past its heartbeat's expiry; an actor that goes on while its heartbeat
  refreshes fail), the recorded steps a replay follows;
* ``store.py``, ``clock.py``, ``runtime.py``: what is simulated (the store, the clock and heartbeat timers, the
  Spark job run in-process, the process boundary of the timeline lock), installed for one schedule;
* ``actors.py``, ``archiver.py``: two clustering runs, a writer (upsert with an update strategy, append) and
  Apache Hudi's timeline archival; ``metadata_setup.py``: the initial table's metadata table;
* ``checks.py``: the invariants, read from the files by Apache Hudi's rules; ``simulation.py``: one schedule;
* ``shrink.py``: a failure made minimal, printed as ``seed=N`` and a replay.

Not simulated (left for later): Hudi's storage-based lock provider's own code (the timeline lock excludes actors
as ``flock`` does), the cleaning of older versions of live file groups, and the metadata table's compaction.

Run ``python -m tests.sim run COUNT [FIRST_SEED]`` for a campaign, ``python -m tests.sim replay SEED 'STEPS'``
to replay one (``tests/test_simulation.py`` is the one in ``make test``; ``make soak`` runs 100,000).
"""
