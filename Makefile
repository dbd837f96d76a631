# A thin wrapper around CMake and CTest; the real build is CMakeLists.txt.
#
#   make run      configure + build into build/, then run `build/tools/rotq demo`
#   make test     configure + build, then ctest and the Python tests
#   make install  PREFIX=/some/prefix (default /usr/local)
#   make gpu      on a machine with a GPU: scripts/gpu_runner.sh
#   make clean    remove build/
#
# Variables: BUILD (build folder), JOBS (parallel jobs, default: all cores),
# CMAKE_ARGS (extra configure arguments, e.g. CMAKE_ARGS=-DROTQ_CUDA=OFF),
# PYTHON (interpreter for the Python tests).

BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
CMAKE_ARGS ?=
PREFIX ?= /usr/local
PYTHON ?= python3

.PHONY: all configure build run test pytest install gpu clean help

all: build

help:
	@sed -n '2,12p' $(firstword $(MAKEFILE_LIST)) | sed 's/^# \{0,1\}//'

# Configuring every time is cheap (CMake only regenerates what changed) and
# picks up new sources and changed CMAKE_ARGS.
configure:
	cmake -S . -B $(BUILD) $(CMAKE_ARGS)

build: configure
	cmake --build $(BUILD) --parallel $(JOBS)

run: build
	$(BUILD)/tools/rotq demo

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)
	@$(MAKE) --no-print-directory pytest BUILD=$(BUILD) PYTHON=$(PYTHON)

# The Python package (python/) runs against the library just built. It is
# skipped, with a message, only when pytest or numpy is not installed.
pytest:
	@if [ ! -d python/tests ]; then \
	  echo "make test: no python/tests folder: no Python tests to run"; \
	elif ! $(PYTHON) -c 'import numpy, pytest' >/dev/null 2>&1; then \
	  echo "make test: SKIPPING the Python tests: $(PYTHON) lacks pytest and/or numpy" \
	       "(pip install numpy pytest)"; \
	else \
	  echo "ROTQ_LIBRARY=$(abspath $(BUILD))/librotq.so PYTHONPATH=python $(PYTHON) -m pytest -q python/tests"; \
	  ROTQ_LIBRARY="$(abspath $(BUILD))/librotq.so" PYTHONPATH="$(CURDIR)/python$${PYTHONPATH:+:$$PYTHONPATH}" \
	    $(PYTHON) -m pytest -q python/tests; \
	fi

install: build
	cmake --install $(BUILD) --prefix "$(PREFIX)"

gpu:
	bash scripts/gpu_runner.sh

clean:
	rm -rf $(BUILD)
