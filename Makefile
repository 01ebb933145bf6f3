# Every target creates .venv when it is missing and installs the project with what it needs.
# PYTHON and VENV choose another Python in its own venv: `make check PYTHON=python3.13
# VENV=.venv-313` (`make test-debian-python` is one such run).
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test test-all check test-durations bench lint install clean ctan pictures tex \
        test-debian-python

# pyproject.toml's requires-python (tests/test_platform.py holds them equal): an older Python
# is refused at once, in one line, before a venv is made or anything downloaded.
PYTHON_OK = $(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11) and "make: pithauthor needs Python 3.11 or newer; $(PYTHON) is " + sys.version.split()[0] + ": make PYTHON=python3.11 ...")'

$(STAMP): pyproject.toml
	@$(PYTHON_OK)
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

# Tests run in parallel (pytest-xdist), one worker more than cores: many tests wait on sockets,
# time-outs and TeX's files rather than the CPU, and the extra worker fills those waits (2 idle
# cores: `make check` 37 s with -n 2, 31 s with -n 3; `make test` 100 s with -n 2, 84 s with -n 3;
# docs/performance.md). Each test has its own PITH_HOME.
# `-p no:anyio`: no test uses anyio's plugin, and loading it costs each pytest process ~0.2 s.
WORKERS = $(shell $(PYTHON) -c 'import os; print((os.cpu_count() or 1) + 1)')
PYTEST = $(PY) -m pytest -n $(WORKERS) --dist worksteal -p no:anyio

# The tests' temporary files go to a RAM disk when the machine has a roomy one (/dev/shm with at
# least 4 GiB free; a run writes about 60 MB), else where TMPDIR says: the suite writes keys,
# outboxes and manuscripts durably, and each fsync on a real disk is a wait (`make test` 113 s
# -> 103 s on 2 idle cores). The code runs the same: fsync on tmpfs returns at once.
RAM_TMP = $(shell test -w /dev/shm && df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 && $$4 >= 4194304 { print "/dev/shm" }')
TEST_ENV = $(if $(RAM_TMP),TMPDIR=$(RAM_TMP))

# Every test but the slow ones, TeX included (a bare `pytest` runs the same set). The workers
# share each TeX build (tests/support/latex/texbuild.py: shared_folder).
test: $(STAMP)
	$(TEST_ENV) $(PYTEST)

# Everything, the slow tests too (the full LaTeX matrices; CI runs this).
test-all: $(STAMP)
	$(TEST_ENV) PITH_SLOW=1 $(PYTEST)

# The edit loop: everything but the TeX and slow tests, with one worker more again: without TeX
# most of its time is waiting (2 idle cores, back to back: 31.5 and 30.7 s with 3 workers, 27.1
# and 28.9 s with 4).
CHECK_WORKERS = $(shell $(PYTHON) -c 'import os; print((os.cpu_count() or 1) + 2)')
CHECK_SET = -m "not tex and not slow"
check: $(STAMP)
	$(TEST_ENV) $(PY) -m pytest -n $(CHECK_WORKERS) --dist worksteal -p no:anyio -q $(CHECK_SET)

# The suite under Debian 12's own python3 from apt (3.11.2: older than 3.11.4, where tarfile's
# extraction filters came), in its own venv: make check's set, then the arXiv upload
# tests (a proof build unpacks the archive) with their TeX. .ci/run runs it beside test-all.
DEBIAN_PYTHON ?= /usr/bin/python3
test-debian-python:
	@$(DEBIAN_PYTHON) -c 'import sys; print("make: the suite under", sys.executable, sys.version.split()[0])'
	$(MAKE) --no-print-directory check PYTHON=$(DEBIAN_PYTHON) VENV=.venv-debian
	$(MAKE) --no-print-directory check PYTHON=$(DEBIAN_PYTHON) VENV=.venv-debian \
	  CHECK_SET="-m 'not slow' tests/latex/test_arxiv_upload.py tests/latex/test_inject_manuscripts.py"

# TeX Live as the TeX tests use it, from Debian's or Ubuntu's packages: `make test` skips the
# TeX tests without it (and says how many); .ci/run installs it with this target.
# texlive-science, cm-super: what real ML papers load (algorithm2e, siunitx, T1 Type 1 fonts), as
# arXiv has them; the title-block tests build a thmtools paper.
# fonts-linuxlibertine: acmart under XeLaTeX/LuaLaTeX needs Libertine OpenType fonts, which
# Debian's TeX Live packages leave out. latexml: the arXiv HTML view tests (pith.sty.ltxml).
TEX_PACKAGES = texlive-latex-base texlive-latex-recommended texlive-latex-extra \
  texlive-publishers texlive-pictures texlive-luatex texlive-xetex texlive-bibtex-extra biber \
  texlive-fonts-recommended texlive-fonts-extra texlive-plain-generic latexmk ghostscript \
  poppler-utils fonts-linuxlibertine latexml texlive-science cm-super
SUDO = $(if $(filter 0,$(shell id -u)),,sudo)
tex:
	$(SUDO) apt-get update -q
	$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $(TEX_PACKAGES)

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
	rm -rf $(VENV) .venv-debian build dist .pytest_cache .mypy_cache .ruff_cache
