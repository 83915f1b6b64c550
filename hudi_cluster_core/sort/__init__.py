"""The clustering's sort engine: sort keys (linear values, z-order and Hilbert curves), a group's key ranges, and
the out-of-core sort that routes a group's rows into those ranges, spills them to local disk and writes them back
in key order within a task's memory budget."""
