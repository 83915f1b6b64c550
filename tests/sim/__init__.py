"""A deterministic simulation of the commit protocol (issue 22): the core's real timeline, plan, ownership, lock,
conflict-check, commit, metadata-table and rollback code, run by actors on a simulated store and clock under a
seeded scheduler, with crashes and storage faults injected, and the table checked after every schedule.

* ``scheduler.py``: actors (threads, one running at a time), the seeded choice at every storage operation, the
  faults (a crash before or after an operation; an operation that fails, times out, or succeeds and reports
  failure; a clock jump; an actor frozen past its heartbeat's expiry; an actor that goes on while its heartbeat
  refreshes fail), the recorded steps a replay follows;
* ``store.py``, ``clock.py``, ``runtime.py``: what is simulated (the store, the clock and heartbeat timers, the
  Spark job run in-process), installed for one schedule; ``lock_modes.py``: how actors exclude each other (as
  ``flock`` does, or on an object store under Apache Hudi's storage-based lock or its file-system based lock, their
  code running for real); ``pids.py``: each actor a process of its own (its pid in its heartbeats and lock file,
  gone when it crashed);
* ``actors.py``, ``archiver.py``: two clustering runs, a writer (upsert with an update strategy, append) and
  Apache Hudi's timeline archival; ``metadata_setup.py``: the initial table's metadata table;
* ``bucket_table.py``: the second kind of table, MERGE_ON_READ with the consistent-hashing bucket index (18% of
  the seeds): the clustering runs are the consistent-bucket plugin's resizes, the writer our bucket upsert, with
  the ``duplicate`` update strategy mostly (``allow`` or ``reject`` otherwise); ``log_merge.py``: its slices read
  in Python (hudi-rs's merge in the resize's tasks cannot see the simulated store; the checks' reader by Hudi's
  rules: latest slice by completion time, log blocks of committed instants only);
* ``checks.py``: the invariants, read from the files by Apache Hudi's rules; ``simulation.py``: one schedule;
* ``shrink.py``: a failure made minimal, printed as ``seed=N`` and a replay.

Not simulated (left for later): the metadata table's compaction, the data table's compaction, and Apache Hudi's
own writer beside ours (the bucket table's writer is ours only). The cleaner applies Hudi's whole
``KEEP_LATEST_COMMITS`` rule (the earliest pending instant's limit, older versions of live file groups); 30% of
the schedules run under Hudi's storage-based lock and 15% under its file-system based lock.

Run ``python -m tests.sim run COUNT [FIRST_SEED]`` for a campaign, ``python -m tests.sim replay SEED 'STEPS'``
to replay one (``tests/test_simulation.py`` is the one in ``make test``; ``make soak`` runs 100,000).
"""
