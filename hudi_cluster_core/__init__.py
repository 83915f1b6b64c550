"""hudi-cluster: the clustering table service for Apache Hudi tables."""
