"""A deterministic simulator of the commit protocol (issue 22): the core's real timeline, plan, ownership, lock,
conflict-check, commit, metadata-table and rollback code, run by actors on a simulated store and clock under a
seeded scheduler, with crashes and storage faults injected, and the table checked after every schedule."""
