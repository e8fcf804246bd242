# The front door: make, make demo, make check, make install.
# The build itself is CMake (build/ and, sanitized, build-asan/).

BUILD      ?= build
BUILD_ASAN ?= build-asan
PREFIX     ?= /usr/local
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_ARGS ?=

.PHONY: all deps build build-asan demo check check-plain check-asan install bench clean

all: build

deps:
	@scripts/deps.sh --check 2>/dev/null || scripts/deps.sh

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_INSTALL_PREFIX=$(PREFIX) $(CMAKE_ARGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j$(JOBS)

$(BUILD_ASAN)/CMakeCache.txt:
	cmake -S . -B $(BUILD_ASAN) -DAGC_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug $(CMAKE_ARGS)

build-asan: deps $(BUILD_ASAN)/CMakeCache.txt
	cmake --build $(BUILD_ASAN) -j$(JOBS)

# Runs agentgc's main job on a demo home made by the fixture generator.
demo: build
	scripts/demo.sh $(BUILD)

check-plain: build
	cd $(BUILD) && ctest --output-on-failure

check-asan: build-asan
	cd $(BUILD_ASAN) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure

# Every test, normally and under AddressSanitizer + UndefinedBehaviorSanitizer.
check: check-plain check-asan

install: build
	cmake --install $(BUILD)

bench: build
	bench/run.sh $(BUILD)

clean:
	rm -rf $(BUILD) $(BUILD_ASAN)
