# The README's two commands: `make demo` and `make test`. Both set up a fresh clone first (scripts/setup.sh).
PY := .venv/bin/python

.PHONY: setup demo test bench
setup:
	@bash scripts/setup.sh

demo: setup
	$(PY) -m hudi_cluster_core.cli demo

test: setup
	$(PY) -m pytest -q || [ $$? -eq 5 ]

bench: setup
	$(PY) bench/run_all.py
