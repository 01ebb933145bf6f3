# Every target creates .venv when it is missing and installs the project with what it needs.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test test-all check test-durations bench lint install clean ctan pictures

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@$(PY) -m pip install --quiet --disable-pip-version-check --upgrade pip
	@$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	@touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	@$(PY) -m pithauthor._demo

# Python may cache compiled modules even where the environment says not to: without the cache
# every pytest worker re-compiles and re-rewrites every test module (collection 4 s -> 25 s).
unexport PYTHONDONTWRITEBYTECODE

# Tests run in parallel, one worker per core (pytest-xdist); each test has its own PITH_HOME.
# (Not one more, as `make check` has: in a run with three workers on 2 loaded cores the 3 s TeX
# time-out tests of tests/latex/test_build_limits.py failed, and no gain in wall time was shown.)
# `-p no:anyio`: no test uses anyio's plugin, and loading it costs each pytest process ~0.2 s.
PYTEST := $(PY) -m pytest -n auto --dist worksteal -p no:anyio

# Every test but the slow ones, TeX included (a bare `pytest` runs the same set). The workers
# share each TeX build (tests/support/latex/texbuild.py: shared_folder).
test: $(STAMP)
	$(PYTEST)

# Everything, the slow tests too (the full LaTeX matrices; CI runs this).
test-all: $(STAMP)
	PITH_SLOW=1 $(PYTEST)

# The edit loop: everything but the TeX and slow tests.
# One worker more than cores: many of these tests wait on sockets and time-outs, not the CPU
# (2 idle cores: -n 2 took 37 s, -n 3 31 s; docs/performance.md).
CHECK_WORKERS = $(shell $(PYTHON) -c 'import os; print((os.cpu_count() or 1) + 1)')
check: $(STAMP)
	$(PY) -m pytest -n $(CHECK_WORKERS) --dist worksteal -q -m "not tex and not slow" -p no:anyio

# Time `make check`, `make test` and `make test-all`: their section of benchmarks/RESULTS.md.
test-durations: $(STAMP)
	$(PY) benchmarks/suite_times.py

bench: $(STAMP)
	$(PY) benchmarks/run.py

# Pictures of the badge for docs/latex.md (needs TeX Live and poppler-utils).
pictures: $(STAMP)
	$(PY) tests/support/latex/pictures.py
	PITH_UPDATE_IMAGES=1 $(PY) -m pytest -q -p no:cacheprovider -m "slow or not slow" tests/latex/test_sty_pictures.py

ctan: $(STAMP)
	$(PY) latex/build_ctan.py dist/pith-ctan.zip

lint: $(STAMP)
	$(VENV)/bin/ruff check pithauthor tests benchmarks
	$(VENV)/bin/ruff format --check pithauthor tests benchmarks
	$(VENV)/bin/mypy

clean:
	rm -rf $(VENV) build dist .pytest_cache .mypy_cache .ruff_cache
