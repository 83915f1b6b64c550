"""Hashes of Apache Hudi's and our own: the record-key bloom filter of base file footers, and the row value codes
of the rewrite check."""
