# The course's two entry points: `make lab` (a student's set-up, then JupyterLab) and `make test`
# (the developer's set-up, then every test). Both create .venv when it is missing and install again
# when pyproject.toml or the torch installer changes. `make setup` sets up what `make lab` needs and
# serves nothing. TORCH_INDEX=cpu|cuXYZ|pip|<index URL>|<wheel folder> overrides the choice of
# PyTorch build (tools/install_torch.py says what it chose, and why).

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
DEV_STAMP := $(VENV)/.installed-dev
SITE_STAMP := $(VENV)/.installed-site
NOTEBOOKS := $(sort $(wildcard notebooks/[0-9][0-9]_*.ipynb))
# JupyterLab refuses to run as root without --allow-root (containers, CI).
ROOT_FLAG := $(shell [ "$$(id -u)" = 0 ] && echo --allow-root)

.PHONY: setup setup-dev lab test test-fast nbval nbval-cpus site browser-deps sandbox-deps trace-deps hub-deps a11y-deps hub-demo bench clean figures
.PHONY: instructor release

setup: $(STAMP)
setup-dev: $(DEV_STAMP)

# The student's environment: PyTorch (tools/install_torch.py: the CPU build unless there is an
# NVIDIA GPU), then the course and its `lab` extra (JupyterLab, nbgrader). Nothing for tests.
# Last, matplotlib builds its font cache here rather than in a notebook's first cell (it writes to stderr).
$(STAMP): pyproject.toml tools/install_torch.py
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null || { \
	  echo "The course needs Python 3.11 or newer as $(PYTHON) (make PYTHON=python3.12 lab picks another)." >&2; exit 1; }
	@test -x $(PY) || $(PYTHON) -m venv $(VENV) || { rm -rf $(VENV); \
	  echo "Could not create $(VENV). On Debian and Ubuntu: sudo apt-get install python3-venv" >&2; exit 1; }
	$(PY) -m pip install -q --upgrade pip
	$(PY) tools/install_torch.py
	$(PY) -m pip install -q -e ".[lab]"
	MPLBACKEND=Agg $(PY) -c "import matplotlib.pyplot"
	@touch $(STAMP)

# The developer's environment: the above, plus the `dev` extra (pytest, nbval, Playwright,
# transformers for the parity tests, JupyterHub for the hub test) and the instructor's grader
# (grader/, a package of its own that a student's `make lab` never installs).
$(DEV_STAMP): $(STAMP) grader/pyproject.toml
	$(PY) -m pip install -q -e ".[dev]" -e grader
	@touch $(DEV_STAMP)

# The instructor's environment (docs/instructors.md, step 0): the student's (`make setup`), plus the
# grader (grader/, course_grader) and bubblewrap, which confines the grader's parts. No test tools.
# The course directory becomes private (0700) first: it will hold the class's seeds and student data.
INSTRUCTOR_STAMP := $(VENV)/.installed-instructor
instructor: $(INSTRUCTOR_STAMP) sandbox-deps
	chmod 700 .
	@echo "The course directory is now yours alone (chmod 700: other accounts cannot enter it)."
	@echo "Next: source $(VENV)/bin/activate, then docs/instructors.md, section '1. Make the student version':"
	@echo "  python -m course_grader new-seeds, then nbgrader generate_assignment 07_exercise."
	@echo "A Moodle or Canvas class: docs/customising.md, 'The class list' (Canvas: roster-from-canvas)"
	@echo "and 'The LMS round trip, without hand work'."

$(INSTRUCTOR_STAMP): $(STAMP) grader/pyproject.toml
	$(PY) -m pip install -q -e grader
	@touch $(INSTRUCTOR_STAMP)

# A version a course can keep: dist/course-<version>-<commit>/ (git-ignored) with the commit's files as a
# tar.gz, the course_lib and course_grader wheels built from it, RELEASE.txt and SHA256SUMS (tools/release.py).
# COMMIT=<id> releases another commit than HEAD (one from CHANGELOG.md, say).
COMMIT ?= HEAD
release: $(STAMP)
	$(PY) tools/release.py --commit $(COMMIT)

# The website's builder: the above, plus the `site` extra (Sphinx, MyST-NB, the book theme).
$(SITE_STAMP): $(STAMP)
	$(PY) -m pip install -q -e ".[site]"
	@touch $(SITE_STAMP)

# The server's root is the repository (the nbgrader course directory, so the formgrader works);
# the browser opens on notebooks/.
# LAB_ARGS adds options: make lab LAB_ARGS="--no-browser --port 8899"
lab: $(STAMP)
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/jupyter lab $(ROOT_FLAG) --ServerApp.root_dir=. \
	  --LabApp.default_url=/lab/tree/notebooks $(LAB_ARGS)

# Debian's Chromium for the browser tests (Playwright drives it; it never downloads a browser).
browser-deps:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "chromium is missing: sudo apt-get install -y chromium" >&2; exit 1; fi; }

# bubblewrap, which confines the grader's parts (course_grader.sandbox: it refuses to grade without it).
# From Debian/Ubuntu when root; an ordinary user is told the command. A student's `make lab` needs none.
sandbox-deps:
	@command -v bwrap >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null; \
	  else echo "bubblewrap is missing: sudo apt-get install -y bubblewrap" >&2; exit 1; fi; }

# strace, a test tool: the end-to-end tests trace every file the grader's commands open (tests/grading/trace_kit.py).
trace-deps:
	@command -v strace >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq strace >/dev/null; \
	  else echo "strace is missing: sudo apt-get install -y strace" >&2; exit 1; fi; }

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

# axe-core for the accessibility tests (tests/site/test_accessibility.py injects its axe.min.js into
# each page): from npm, by name and pinned version, under .a11y/ (git-ignored). Nothing downloads at test time.
# The stamp names the version: changing AXE_VERSION installs again (the tests refuse another version).
AXE_VERSION := 4.14.1
AXE_STAMP := .a11y/.axe-core-$(AXE_VERSION)
a11y-deps: $(AXE_STAMP)

$(AXE_STAMP):
	@command -v npm >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null; \
	  else echo "npm is missing: sudo apt-get install -y nodejs npm" >&2; exit 1; fi; }
	@mkdir -p .a11y
	npm install --prefix .a11y --save-exact --no-audit --no-fund --loglevel=error "axe-core@$(AXE_VERSION)"
	@touch $(AXE_STAMP)

# The hub test's class, by hand (root: it makes Unix accounts): JupyterHub on http://127.0.0.1:8000
# with an instructor and three students, 07_exercise released; Ctrl-C removes it all again.
hub-demo: $(DEV_STAMP) sandbox-deps hub-deps
	$(PY) tests/hub/hub_class.py --port 8000

# nbgrader calls alembic from PATH: the venv's bin comes first. Two workers (pytest-xdist) by default:
# much of the suite waits on browsers, kernels and the hub, so two share a 2-core machine well (22
# minutes where one took 33; three took 22 too). Each worker takes whole modules (--dist loadscope:
# a module's fixtures are made once), the longest first (tests/conftest.py). TEST_JOBS=0: one process.
TEST_JOBS ?= 2
test: $(DEV_STAMP) browser-deps sandbox-deps trace-deps hub-deps a11y-deps
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(PY) -m pytest -p no:cacheprovider -n $(TEST_JOBS) --dist loadscope \
	  --no-loadscope-reorder --nbval --nbval-sanitize-with tests/nbval_sanitize.cfg tests $(NOTEBOOKS)
	$(MAKE) --no-print-directory nbval-cpus

# The core tests (no notebooks, no browser, no sandbox, no nbgrader run, no hub; tests/conftest.py marks
# those modules slow): the quick loop while editing course_lib. nbgrader calls alembic from PATH.
test-fast: $(DEV_STAMP)
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(PY) -m pytest -p no:cacheprovider -m "not browser and not slow" tests

NBVAL := $(PY) -m pytest -p no:cacheprovider -q --nbval --nbval-sanitize-with tests/nbval_sanitize.cfg
nbval: $(DEV_STAMP)
	$(NBVAL) $(NOTEBOOKS)

# The same stored outputs on another CPU's maths path: MKL's reproducible mode and oneDNN held to AVX2
# change the matrix kernels (an AVX-512 machine then computes as an older or another vendor's CPU does,
# which differs in both libraries at once: one run with both, where there were two, saves CI 3 minutes).
nbval-cpus: $(DEV_STAMP)
	MKL_CBWR=COMPATIBLE ONEDNN_MAX_CPU_ISA=AVX2 $(NBVAL) $(NOTEBOOKS)

# The course's conceptual figures in res/: deterministic SVG drawn by course_lib.plots.diagrams.
# They are committed (markdown shows them before anything runs); redraw after changing the diagrams.
# nbgrader releases only the assignment's folder: the exercise shows its own copies (figures/), kept
# byte-identical to res/ (tests/plots/test_figures.py checks it).
figures: $(STAMP)
	$(PY) -m course_lib.plots.figures res
	for f in notebooks/07_exercise/figures/*.svg; do cp res/$$(basename $$f) $$f; done

# The course website, offline, into build/site/ (index.html at its root): the notebooks as stored, the
# exercise as released, docs/, the API reference. site/build.py says how; tests/site/ checks it in Chromium.
site: $(SITE_STAMP)
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(PY) site/build.py

bench: $(DEV_STAMP)
	$(PY) benchmarks/encoder_throughput.py
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(PY) benchmarks/autograde_speed.py
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(PY) benchmarks/grader_start_and_exit.py
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(PY) benchmarks/class_report.py
	$(PY) benchmarks/similarity_limits.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis screenshots .a11y
