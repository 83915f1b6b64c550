"""The layout report: how a table's files overlap on its columns, what a query opens, and what a plan changes."""
