# The two commands of the README: `make demo` and `make test`. Everything else supports them.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Reinstall when the declared or the locked dependencies change.
STAMP := $(VENV)/.installed

# Tests use the PostgreSQL and Redis that answer on this machine (CI has both).
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/test
TEST_REDIS_URL ?= redis://127.0.0.1:6379/15
# The suite runs on three processes, on two cores: much of a stack test's time is spent waiting
# on the stack (a job's start, a worker's tick) and the third process fills it (30 minutes
# instead of 41 measured on this machine, with the CPU busy 99% of the time; the README has the
# figures). A test file runs whole on one process (--dist loadfile), so
# its module fixtures start once, and the files that share a costly session fixture run
# together (tests/scheduling.py names them). Each process has its own test database
# (pytest-django adds the worker's name), and each stack its own database and queues.
TEST_PROCESSES ?= 3
# Every process a test run or the demo starts imports the project's modules (Django's apps in each
# web, worker, beat and manage.py process, the trainers in each replica) and pytest rewrites each
# test module's asserts. With bytecode writing off (PYTHONDONTWRITEBYTECODE, which some machines
# and images set), each of them compiles those sources again; on, the first writes __pycache__
# and the rest read it. The project's packages are compiled before the suite (PROJECT_SOURCES),
# so replicas, which run as users who cannot write here, read them compiled too.
unexport PYTHONDONTWRITEBYTECODE
PROJECT_SOURCES := config controlplane vertexplan contract localvertex trainers client/vcp callbacks
# The inner loop (`make test-fast`): no stack, no browser, no separate environment, no trainer
# runs, no slow file (the markers are declared in pyproject.toml; tests/conftest.py applies
# stack, browser and environment from the fixtures a test uses).
FAST_TESTS ?= not integration and not stack and not browser and not environment and not trainers and not slow

.PHONY: demo test test-fast lint venv envs xla-env triton-env ds-ops clean bench client

# Environments too big to build for every clone are built once per machine under ENV_CACHE, in
# a folder named by the Python version and the hash of their requirements, and shared by every
# clone: a fresh clone links to it in seconds instead of unpacking gigabytes again.
ENV_CACHE ?= $(HOME)/.cache/vertex-control-plane
PY_TAG := $(shell $(PYTHON) -c 'import sys; print("py%d%d" % sys.version_info[:2])')

# The project's own dependencies (pyproject's, with the extras trainers, jax, ray and dev),
# installed once per machine into DEPS_PACKAGES (pip --target, into a temporary folder renamed
# when complete); .venv is a small virtual environment that adds that folder to its path, with
# the project installed editable and the dependencies' scripts (celery, gunicorn, ruff...)
# pointed at it (config/deps_venv.py). The folder is named by the pinned list itself, so an
# edit of pyproject.toml that changes no dependency reuses it.
DEPS_KEY := $(shell { $(PYTHON) config/deps_venv.py requirements; cat constraints.txt; } | sha256sum | cut -c1-16)
DEPS_PACKAGES := $(ENV_CACHE)/deps-$(PY_TAG)-$(DEPS_KEY)

venv: $(STAMP)

# The environment's own pip installs the dependencies too: the machine's may be older than
# their packages' metadata.
$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# Python 3.11's venv brings setuptools 65, which would shadow the dependencies' own (the
	# project's build needs 69 or later: tests/house/test_wheel.py builds its wheel with it).
	$(BIN)/python -m pip uninstall --quiet --yes setuptools

# Each build goes into a folder of its own, renamed when complete: two clones building at once
# (a test that builds what it misses, in another checkout) each finish, and the first rename wins.
$(DEPS_PACKAGES): | $(BIN)/python
	mkdir -p $(ENV_CACHE)
	$(PYTHON) config/deps_venv.py requirements > $@.requirements
	# torch is pinned to the CPU build (2.13.0): an unpinned torch would pull CUDA wheels.
	set -e; partial=$@.partial.$$$$; \
	$(BIN)/python -m pip install --quiet --target $$partial -c constraints.txt -r $@.requirements; \
	mv -T $$partial $@ 2>/dev/null || rm -rf $$partial

$(STAMP): pyproject.toml constraints.txt | $(BIN)/python $(DEPS_PACKAGES)
	$(PYTHON) config/deps_venv.py link $(VENV) $(DEPS_PACKAGES)
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $(STAMP)

# The PyTorch/XLA trainer's own environment (python -m trainers.xla): torch_xla pins torch 2.9,
# which cannot live beside the project's torch 2.13. The versions of requirements-tpu-xla.txt
# (Dockerfile.tpu-xla), without the [tpu] extra: libtpu is only for real TPUs, the CPU PJRT
# device needs nothing more. PyPI has no CPU build of torch 2.9 for Linux, so its wheel brings
# the CUDA libraries (about 7 GB installed): installed once into XLA_PACKAGES (pip --target,
# into a temporary folder renamed when complete). Each clone's .venv/xla is a small virtual
# environment that adds that folder to its path and has the trainers installed editable
# without dependencies (the project's would bring torch 2.13 back). PIP_CONSTRAINT is emptied
# because a machine-wide pip constraint (e.g. /etc/xdg/pip/constraints.txt) may cap torch at
# the project's version. `make test` builds it first (envs); a test that needs it and finds it
# missing builds it (tests/make_env.py).
XLA_VENV := $(VENV)/xla
XLA_STAMP := $(XLA_VENV)/.installed
XLA_PACKAGES := $(ENV_CACHE)/xla-$(PY_TAG)-$(shell sha256sum requirements-tpu-xla.txt | cut -c1-16)

xla-env: $(XLA_STAMP)

$(XLA_PACKAGES):
	mkdir -p $(ENV_CACHE)
	rm -rf $@.partial
	sed 's/^torch_xla\[tpu\]/torch_xla/' requirements-tpu-xla.txt > $@.requirements
	PIP_CONSTRAINT= $(PYTHON) -m pip install --quiet --target $@.partial -r $@.requirements
	mv $@.partial $@

$(XLA_STAMP): requirements-tpu-xla.txt pyproject.toml | $(XLA_PACKAGES)
	rm -rf $(XLA_VENV)
	$(PYTHON) -m venv $(XLA_VENV)
	echo "import site; site.addsitedir('$(XLA_PACKAGES)')" > \
	    "$$($(XLA_VENV)/bin/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))')/xla-packages.pth"
	PIP_CONSTRAINT= $(XLA_VENV)/bin/python -m pip install --quiet --no-deps -e .
	touch $(XLA_STAMP)

# The demo's compose page offers every preset, PyTorch/XLA and Triton packaging among them: it
# builds the environments they run in first, as `make test` does (shared per machine, built once).
demo: venv envs
	$(BIN)/python -m compileall -q -j 0 $(PROJECT_SOURCES) > /dev/null
	$(BIN)/python -m config.demo $(DEMO_ARGS)

lint: venv
	$(BIN)/ruff check .
	# The house: the apps' layers and the SDK boundaries (pyproject.toml, [tool.importlinter]).
	$(BIN)/lint-imports

# The environments some tests run in are built before the suite starts, not inside a test.
envs: xla-env triton-env ds-ops

# DeepSpeed's CPU communication op, built once per environment as a team's image ships its ops
# prebuilt (DS_BUILD_OPS): DeepSpeed would otherwise build it in every job that starts an
# engine (290 s, and 696 s for this target, measured on this 2-core machine while other test
# runs shared it; about 90 s on idle cores by an earlier note). The emulator gives each job's
# replicas a copy
# (localvertex/replicas/torch_extensions.py, from `<the environment>/torch-extensions`). Built
# once per machine beside the dependencies it is built from (DS_OPS, named after them: its
# build file names their paths, which every clone shares) into a temporary folder renamed when
# complete; each clone's .venv/torch-extensions links to it.
TORCH_EXTENSIONS := $(VENV)/torch-extensions
DS_OPS := $(DEPS_PACKAGES)-torch-extensions
ds-ops: $(TORCH_EXTENSIONS)

$(DS_OPS): | $(STAMP)
	set -e; partial=$@.partial.$$$$; \
	TORCH_EXTENSIONS_DIR=$$partial $(BIN)/python -c \
	    "from deepspeed.ops.op_builder.cpu import ShareMemCommBuilder; ShareMemCommBuilder().load()"; \
	touch $$partial/.built; \
	mv -T $$partial $@ 2>/dev/null || rm -rf $$partial

$(TORCH_EXTENSIONS): | $(DS_OPS)
	ln -sfn $(DS_OPS) $(TORCH_EXTENSIONS)

# TorchInductor's compile cache (keyed by torch on the graph, its version and its settings) kept
# per machine beside the environments: the serving tests compile the same small models each
# run, about half their time when the cache is cold. Replicas keep their own (a replica user
# cannot write the host's; localvertex/replicas/sandbox.py).
INDUCTOR_CACHE ?= $(ENV_CACHE)/torchinductor
# JAX's persistent compilation cache for the JAX trainer tests' own processes (keyed by the
# compiled program and jax's version), per machine too: a cold cache costs those tests about
# twice their CPU (test_meshes.py: 120 CPU-seconds cold, 59 warm). Never given to the
# emulator's replicas (a team's cache is its own).
JAX_TEST_CACHE ?= $(ENV_CACHE)/jax-compile

test: venv lint envs
	$(BIN)/python -m compileall -q -j 0 $(PROJECT_SOURCES) > /dev/null
	DATABASE_URL=$(TEST_DATABASE_URL) REDIS_URL=$(TEST_REDIS_URL) \
	CELERY_BROKER_URL=$(TEST_REDIS_URL) DEBUG=true TORCHINDUCTOR_CACHE_DIR=$(INDUCTOR_CACHE) \
	TEST_JAX_CACHE_DIR=$(JAX_TEST_CACHE) \
	$(BIN)/python -m pytest -n $(TEST_PROCESSES) --dist loadfile $(PYTEST_ARGS)

test-fast: venv
	$(BIN)/python -m compileall -q -j 0 $(PROJECT_SOURCES) > /dev/null
	DATABASE_URL=$(TEST_DATABASE_URL) REDIS_URL=$(TEST_REDIS_URL) \
	CELERY_BROKER_URL=$(TEST_REDIS_URL) DEBUG=true \
	$(BIN)/python -m pytest -n $(TEST_PROCESSES) --dist loadfile -m "$(FAST_TESTS)" $(PYTEST_ARGS)

bench: venv
	$(BIN)/python -m bench

clean:
	rm -rf var .pytest_cache .ruff_cache

# The Python client in client/, generated from the API's schema: rerun after changing the API
# (tests/integration/client/test_client_drift.py fails while the checked-in client is behind the server).
# The schema is generated against PostgreSQL, as the server runs: the database backend sets the
# integer fields' bounds.
CLIENT_PACKAGE := client/vertex_control_plane_client
client: venv
	DEBUG=true DATABASE_URL=$(TEST_DATABASE_URL) $(BIN)/python manage.py spectacular --format openapi-json --file client/openapi.json
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/openapi-python-client generate \
	    --path client/openapi.json --config client/generator.yaml --meta none \
	    --output-path $(CLIENT_PACKAGE) --overwrite

# The Triton environment (requirements-triton.txt says why it is apart), built as the XLA one
# is: its packages once per machine in TRITON_PACKAGES, a small .venv/triton that adds them to
# its path (the trainers are imported from the repository root, not installed). Tests that
# serve or validate a Triton model repository build it when it is missing. PIP_CONSTRAINT is
# emptied: the machine's pip constraints cap torch for the project's environment, not this one.
TRITON_VENV := $(VENV)/triton
TRITON_STAMP := $(TRITON_VENV)/.installed
TRITON_PACKAGES := $(ENV_CACHE)/triton-$(PY_TAG)-$(shell sha256sum requirements-triton.txt | cut -c1-16)
triton-env: $(TRITON_STAMP)

$(TRITON_PACKAGES):
	mkdir -p $(ENV_CACHE)
	rm -rf $@.partial
	PIP_CONSTRAINT= $(PYTHON) -m pip install --quiet --target $@.partial -r requirements-triton.txt
	mv $@.partial $@

$(TRITON_STAMP): requirements-triton.txt | $(TRITON_PACKAGES)
	rm -rf $(TRITON_VENV)
	$(PYTHON) -m venv $(TRITON_VENV)
	echo "import site; site.addsitedir('$(TRITON_PACKAGES)')" > \
	    "$$($(TRITON_VENV)/bin/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))')/triton-packages.pth"
	touch $(TRITON_STAMP)
