"""Our own writers of table data (append, upsert, the consistent-bucket upsert) and their commit protocol.

They write Hudi base and log files through :mod:`hudi_cluster_core.write`, as the clustering does; the
clustering itself never imports this package (tests/test_layering.py)."""
