# Front door over CMake: `make` builds (Release), `make test` runs the test
# suite, `make bench` runs the benchmark on the GPU.
BUILD_DIR ?= build
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
GENERATOR := $(shell command -v ninja >/dev/null 2>&1 && echo Ninja || echo "Unix Makefiles")

.PHONY: all configure test bench install clean

all: configure
	cmake --build $(BUILD_DIR) --parallel $(JOBS)

configure:
	@test -f $(BUILD_DIR)/CMakeCache.txt || \
		cmake -S . -B $(BUILD_DIR) -G "$(GENERATOR)" -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)

test: all
	ctest --test-dir $(BUILD_DIR) --output-on-failure

bench: all
	$(BUILD_DIR)/bench/scatterptx-bench $(BENCH_ARGS)

install: all
	cmake --install $(BUILD_DIR) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD_DIR)
