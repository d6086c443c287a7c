# Front door over CMake: `make` builds everything (Release), `make test`
# builds what the tests need and runs them, `make bench` runs the benchmark
# on the GPU.
BUILD_DIR ?= build
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
GENERATOR := $(shell command -v ninja >/dev/null 2>&1 && echo Ninja || echo "Unix Makefiles")
PYTHON ?= python3
# Extra configure arguments, e.g. CMAKE_ARGS=-DCUDAToolkit_ROOT=/opt/cuda
CMAKE_ARGS ?=
# Extra ctest arguments for `make test`, e.g. CTEST_ARGS="-R NoDriver"
CTEST_ARGS ?=
BENCH_ARGS ?=

.PHONY: all configure test bench install clean

all: configure
	cmake --build $(BUILD_DIR) --parallel $(JOBS)

# Configures when the build directory has no build system yet, which covers
# a configure that stopped with an error: the next `make` runs it again (with
# the generator that configure recorded in its cache).
configure:
	@if [ -f $(BUILD_DIR)/build.ninja ] || [ -f $(BUILD_DIR)/Makefile ]; then :; \
	elif [ -f $(BUILD_DIR)/CMakeCache.txt ]; then \
		cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_ARGS); \
	else \
		cmake -S . -B $(BUILD_DIR) -G "$(GENERATOR)" -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_ARGS); \
	fi

# The configure writes tests_off.txt, with the reason, when it left the tests out.
test: configure
	@if [ -f $(BUILD_DIR)/tests_off.txt ]; then \
		echo "make test: the tests are off: $$(cat $(BUILD_DIR)/tests_off.txt). Nothing was tested."; \
		exit 1; \
	fi
	cmake --build $(BUILD_DIR) --parallel $(JOBS) --target scatterptx_test_programs
	@$(PYTHON) scripts/run_tests.py $(BUILD_DIR) $(CTEST_ARGS)

bench: all
	$(BUILD_DIR)/bench/scatterptx-bench $(BENCH_ARGS)

install: all
	cmake --install $(BUILD_DIR) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD_DIR)
