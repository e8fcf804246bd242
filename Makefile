# The front door: make, make demo, make check, make install, make deb.
# The build itself is CMake (build/ and, sanitized, build-asan/).

BUILD      ?= build
BUILD_ASAN ?= build-asan
PREFIX     ?= /usr/local
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
# Tests run side by side, one more than the CPUs: many of them wait on processes and timers.
TEST_JOBS  ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 2) + 1 )))
CMAKE_ARGS ?=
# INSTALL_FIXTURE=1: make install also puts the test-home generator in
# PREFIX/libexec/agentgc/agentgc-fixture (never on PATH).
INSTALL_FIXTURE ?=

.PHONY: all deps build build-asan demo tour check check-plain check-asan install deb bench clean

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

# Rewrites the README's tour from a fresh `make demo` run (a test fails while they differ).
tour: build
	scripts/readme-tour.sh $(BUILD)

check-plain: build
	cd $(BUILD) && ctest --output-on-failure -j$(TEST_JOBS)

check-asan: build-asan
	cd $(BUILD_ASAN) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j$(TEST_JOBS)

# Every test, normally and under AddressSanitizer + UndefinedBehaviorSanitizer.
check: check-plain check-asan

# The prefix is set again on every install: a build dir configured earlier for another
# PREFIX would otherwise install there (CMake keeps it in its cache), and agentgc.pc
# names it.
install: deps
	cmake -S . -B $(BUILD) -DCMAKE_INSTALL_PREFIX=$(PREFIX) \
	  -DAGC_INSTALL_FIXTURE=$(if $(INSTALL_FIXTURE),ON,OFF) $(CMAKE_ARGS)
	cmake --build $(BUILD) -j$(JOBS)
	cmake --install $(BUILD)

# The Debian packages agentgc, libagentgc0 and libagentgc-dev, built from a copy of the
# source in $(BUILD)/deb (dpkg-buildpackage writes its results into the parent dir).
# make check builds and tests them too (tests/pkg/deb-test.sh, about half a minute).
deb: deps
	scripts/deb.sh $(BUILD)/deb

# The benchmark (not part of make check): bench/REPORT.md from homes cached outside the
# clone; BENCH_QUICK=1 for a short run at smaller sizes (bench/run.sh lists the settings).
bench: build
	@scripts/deps.sh --check --bench 2>/dev/null || scripts/deps.sh --bench
	bench/run.sh $(BUILD)

clean:
	rm -rf $(BUILD) $(BUILD_ASAN)
