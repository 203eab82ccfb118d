# The course's two entry points: `make lab` and `make test`.
# Both create .venv when it is missing and (re)install when pyproject.toml changes.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
NOTEBOOKS := $(sort $(wildcard notebooks/[0-9][0-9]_*.ipynb))
# JupyterLab refuses to run as root without --allow-root (containers, CI).
ROOT_FLAG := $(shell [ "$$(id -u)" = 0 ] && echo --allow-root)

.PHONY: setup lab test test-fast nbval nbval-cpus site browser-deps hub-deps hub-demo bench clean figures

setup: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# The pin matters: torch 2.13.0 is the CPU build on this machine; anything else pulls CUDA.
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e ".[dev]"
	# Build matplotlib's font cache now, not in a notebook's first cell (it writes to stderr).
	MPLBACKEND=Agg $(PY) -c "import matplotlib.pyplot"
	@touch $(STAMP)

# The server's root is the repository (the nbgrader course directory, so the formgrader works);
# the browser opens on notebooks/.
lab: $(STAMP)
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/jupyter lab $(ROOT_FLAG) --ServerApp.root_dir=. \
	  --LabApp.default_url=/lab/tree/notebooks

# Debian's Chromium for the browser tests (Playwright drives it; it never downloads a browser).
browser-deps:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "chromium is missing: sudo apt-get install -y chromium" >&2; exit 1; fi; }

# JupyterHub's proxy for the hub test and `make hub-demo`: configurable-http-proxy from npm, under
# .hub/ (git-ignored); Node.js and npm from Debian when missing. Version 5 needs Node 20+; older: 4.x.
CHP := .hub/node_modules/.bin/configurable-http-proxy
hub-deps: $(CHP)

$(CHP):
	@command -v npm >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null; \
	  else echo "npm is missing: sudo apt-get install -y nodejs npm" >&2; exit 1; fi; }
	@mkdir -p .hub
	if node -e 'process.exit(+process.versions.node.split(".")[0] >= 20 ? 0 : 1)'; then v=5; else v=4; fi; \
	  npm install --prefix .hub --no-audit --no-fund --loglevel=error "configurable-http-proxy@$$v"
	@touch $(CHP)

# The hub test's class, by hand (root: it makes Unix accounts): JupyterHub on http://127.0.0.1:8000
# with an instructor and three students, 07_exercise released; Ctrl-C removes it all again.
hub-demo: $(STAMP) hub-deps
	$(PY) tests/hub/hub_class.py --port 8000

# nbgrader calls alembic from PATH: the venv's bin comes first.
test: $(STAMP) browser-deps hub-deps
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(PY) -m pytest -p no:cacheprovider --nbval --nbval-sanitize-with tests/nbval_sanitize.cfg tests $(NOTEBOOKS)
	$(MAKE) --no-print-directory nbval-cpus

# Unit tests only (no notebooks, no browser): the quick loop while editing course_lib.
test-fast: $(STAMP)
	$(PY) -m pytest -p no:cacheprovider -m "not browser and not slow" tests

NBVAL := $(PY) -m pytest -p no:cacheprovider -q --nbval --nbval-sanitize-with tests/nbval_sanitize.cfg
nbval: $(STAMP)
	$(NBVAL) $(NOTEBOOKS)

# The same stored outputs on other CPUs' maths paths: MKL's reproducible mode and oneDNN held to AVX2
# change the matrix kernels (an AVX-512 machine then computes as an older or another vendor's CPU does).
nbval-cpus: $(STAMP)
	MKL_CBWR=COMPATIBLE $(NBVAL) $(NOTEBOOKS)
	ONEDNN_MAX_CPU_ISA=AVX2 $(NBVAL) $(NOTEBOOKS)

# The course's conceptual figures in res/: deterministic SVG drawn by course_lib.plots.diagrams.
# They are committed (markdown shows them before anything runs); redraw after changing the diagrams.
# nbgrader releases only the assignment's folder: the exercise shows its own copies (figures/), kept
# byte-identical to res/ (tests/plots/test_figures.py checks it).
figures: $(STAMP)
	$(PY) -m course_lib.plots.figures res
	for f in notebooks/07_exercise/figures/*.svg; do cp res/$$(basename $$f) $$f; done

# The course website, offline, into build/site/ (index.html at its root): the notebooks as stored, the
# exercise as released, docs/, the API reference. site/build.py says how; tests/site/ checks it in Chromium.
site: $(STAMP)
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(PY) site/build.py

bench: $(STAMP)
	$(PY) benchmarks/encoder_throughput.py
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(PY) benchmarks/autograde_speed.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis screenshots
