# Front door over CMake: `make` builds everything (Release), `make test`
# builds what the tests need and runs them, `make bench` runs the benchmark
# on the GPU, `make install` installs the library (PREFIX, default the
# configured prefix: /usr/local unless CMAKE_ARGS set another), `make fuzz`
# builds the fuzz targets with clang and runs each for FUZZ_SECONDS, `make
# sanitize` runs the tests under compute-sanitizer on a GPU machine, `make
# bad-inputs-doc` rewrites docs/bad_inputs.md.
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
FUZZ_BUILD_DIR ?= $(BUILD_DIR)/fuzzers
FUZZ_SECONDS ?= 60
PREFIX ?=
# Where `make sanitize` writes its logs and summary.txt; scripts/sanitize.sh
# lists the variables that shape the run (SANITIZE_TOOLS, SANITIZE_SHARDS...).
SANITIZE_LOG_DIR ?= $(BUILD_DIR)/sanitize

# scatterptx-bench's exit status when there is no usable GPU.
BENCH_EXIT_NO_GPU := 2

.PHONY: all configure test bench install fuzz sanitize bad-inputs-doc clean

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

# Without a GPU the bench says why and nothing is measured: that is not a
# build failure, so it ends `make bench` with status 0.
bench: configure
	cmake --build $(BUILD_DIR) --parallel $(JOBS) --target scatterptx-bench
	@$(BUILD_DIR)/bench/scatterptx-bench $(BENCH_ARGS); status=$$?; \
	if [ $$status -eq $(BENCH_EXIT_NO_GPU) ]; then \
		echo "make bench: nothing measured, no usable GPU on this machine (see above)."; \
	else \
		exit $$status; \
	fi

install: configure
	cmake --build $(BUILD_DIR) --parallel $(JOBS) --target scatterptx
	cmake --install $(BUILD_DIR) $(if $(PREFIX),--prefix $(PREFIX))

# docs/bad_inputs.md from the bad-input matrix (scripts/bad_inputs_doc.py);
# the ctest bad_inputs_doc_is_current fails until it is rewritten.
bad-inputs-doc: configure
	cmake --build $(BUILD_DIR) --parallel $(JOBS) --target scatterptx scatterptx_tests scatterptx_bad_inputs_table
	SCATTERPTX_LIBRARY=$(abspath $(BUILD_DIR))/libscatterptx.so PYTHONDONTWRITEBYTECODE=1 $(PYTHON) scripts/bad_inputs_doc.py \
		--table-program $(BUILD_DIR)/test/scatterptx_bad_inputs_table --test-program $(BUILD_DIR)/test/scatterptx_tests \
		--write docs/bad_inputs.md

# Its own build directory: clang, ASan and UBSan, the fuzz targets only.
fuzz:
	cmake -S . -B $(FUZZ_BUILD_DIR) -G "$(GENERATOR)" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DSCATTERPTX_BUILD_FUZZERS=ON -DSCATTERPTX_BUILD_TESTS=OFF -DSCATTERPTX_BUILD_BENCH=OFF \
		-DSCATTERPTX_BUILD_EXAMPLES=OFF $(CMAKE_ARGS)
	cmake --build $(FUZZ_BUILD_DIR) --parallel $(JOBS) --target scatterptx_fuzzers
	fuzz/run_fuzzers.sh $(FUZZ_BUILD_DIR)/fuzz $(FUZZ_SECONDS)

# On a machine with an sm_90+ GPU: builds, then runs the GoogleTest suite
# under memcheck, racecheck, synccheck and initcheck, in shards side by side,
# and reports errors, hazards and the kernel variants never launched.
sanitize: configure
	BUILD_DIR=$(BUILD_DIR) scripts/sanitize.sh $(SANITIZE_LOG_DIR)

clean:
	rm -rf $(BUILD_DIR)
