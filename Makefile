# chainrule: `make demo` and `make test` each set up .venv on a fresh machine first.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: demo test bench lint stubs clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev,viz,train,fast,dist,onnx]'
	touch $(STAMP)

# System packages (Graphviz for drawings, Chromium for the browser tests), installed when this
# runs as root or with password-less sudo; otherwise the tests that need them skip with a reason.
SYSTEM_PACKAGES := scripts/system-packages.sh

demo: $(STAMP)
	@$(SYSTEM_PACKAGES) dot:graphviz
	$(PY) -m chainrule demo

test: $(STAMP)
	@$(SYSTEM_PACKAGES) dot:graphviz chromium:chromium
	$(PY) -m ruff check src tests benchmarks
	$(PY) -m pytest

bench: $(STAMP)
	$(PY) -m benchmarks

lint: $(STAMP)
	$(PY) -m ruff check src tests benchmarks

# The Tensor stub type checkers read (src/chainrule/_tensor_methods.pyi): after adding an op.
stubs: $(STAMP)
	$(PY) -m chainrule._stubgen

clean:
	rm -rf $(VENV) out .pytest_cache .ruff_cache
