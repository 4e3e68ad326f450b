# The two commands of the README: `make demo` and `make test`. Everything else supports them.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Reinstall when the declared or the locked dependencies change.
STAMP := $(VENV)/.installed

# Tests use the PostgreSQL and Redis that answer on this machine (CI has both).
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/test
TEST_REDIS_URL ?= redis://127.0.0.1:6379/15
# The suite runs on two processes: most integration tests wait on the stack they drive, and the
# other process's tests fill that time. A test file runs whole on one process (--dist loadfile),
# so its module fixtures start once; each process has its own test database (pytest-django adds
# the worker's name), and each stack its own database and queues.
TEST_PROCESSES ?= 2

.PHONY: demo test lint venv xla-env triton-env clean bench client

venv: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# torch is pinned to the CPU build (2.13.0): an unpinned torch would pull CUDA wheels.
	$(BIN)/python -m pip install --quiet -c constraints.txt -e ".[trainers,jax,ray,dev]"
	touch $(STAMP)

# The PyTorch/XLA trainer's own environment (python -m trainers.xla): torch_xla pins torch 2.9,
# which cannot live beside the project's torch 2.13. The versions of requirements-tpu-xla.txt
# (Dockerfile.tpu-xla), without the [tpu] extra: libtpu is only for real TPUs, the CPU PJRT
# device needs nothing more. PIP_CONSTRAINT is emptied because a machine-wide pip constraint
# (e.g. /etc/xdg/pip/constraints.txt) may cap torch at the project's version. The trainers
# are installed editable without dependencies (the project's would bring torch 2.13 back).
# tests/trainers/xla builds it when it is missing.
XLA_VENV := $(VENV)/xla
XLA_STAMP := $(XLA_VENV)/.installed

xla-env: $(XLA_STAMP)

$(XLA_STAMP): requirements-tpu-xla.txt pyproject.toml
	test -x $(XLA_VENV)/bin/python || $(PYTHON) -m venv $(XLA_VENV)
	sed 's/^torch_xla\[tpu\]/torch_xla/' requirements-tpu-xla.txt > $(XLA_VENV)/requirements-cpu.txt
	PIP_CONSTRAINT= $(XLA_VENV)/bin/python -m pip install --quiet -r $(XLA_VENV)/requirements-cpu.txt
	PIP_CONSTRAINT= $(XLA_VENV)/bin/python -m pip install --quiet --no-deps -e .
	touch $(XLA_STAMP)

demo: venv
	$(BIN)/python -m config.demo $(DEMO_ARGS)

lint: venv
	$(BIN)/ruff check .
	# The house: the apps' layers and the SDK boundaries (pyproject.toml, [tool.importlinter]).
	$(BIN)/lint-imports

test: venv lint
	DATABASE_URL=$(TEST_DATABASE_URL) REDIS_URL=$(TEST_REDIS_URL) \
	CELERY_BROKER_URL=$(TEST_REDIS_URL) DEBUG=true \
	$(BIN)/python -m pytest -n $(TEST_PROCESSES) --dist loadfile $(PYTEST_ARGS)

bench: venv
	$(BIN)/python -m bench

clean:
	rm -rf var .pytest_cache .ruff_cache

# The Python client in client/, generated from the API's schema: rerun after changing the API
# (tests/client/test_client_drift.py fails while the checked-in client is behind the server).
CLIENT_PACKAGE := client/vertex_control_plane_client
client: venv
	DEBUG=true $(BIN)/python manage.py spectacular --format openapi-json --file client/openapi.json
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/openapi-python-client generate \
	    --path client/openapi.json --config client/generator.yaml --meta none \
	    --output-path $(CLIENT_PACKAGE) --overwrite

# The Triton environment (requirements-triton.txt says why it is apart). Tests that serve or
# validate a Triton model repository build it when it is missing. PIP_CONSTRAINT is emptied:
# the machine's pip constraints cap torch for the project's environment, not this one.
TRITON_VENV := $(VENV)/triton
TRITON_STAMP := $(TRITON_VENV)/.installed
triton-env: $(TRITON_STAMP)

$(TRITON_STAMP): requirements-triton.txt
	test -x $(TRITON_VENV)/bin/python || $(PYTHON) -m venv $(TRITON_VENV)
	PIP_CONSTRAINT= $(TRITON_VENV)/bin/python -m pip install --quiet -r requirements-triton.txt
	touch $(TRITON_STAMP)
