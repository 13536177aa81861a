# chainrule: `make demo` and `make test` each set up .venv on a fresh machine first.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: demo test bench lint clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev,viz,train,fast]'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m chainrule demo

test: $(STAMP)
	$(PY) -m ruff check src tests benchmarks
	$(PY) -m pytest

bench: $(STAMP)
	$(PY) -m benchmarks

lint: $(STAMP)
	$(PY) -m ruff check src tests benchmarks

clean:
	rm -rf $(VENV) out .pytest_cache .ruff_cache
