# stormwatch: thin wrapper around CMake. `make` builds build/stormwatch;
# `make test` installs missing Debian packages, builds and runs every test
# (and, with CI=true, the whole suite again under ASan+UBSan); `make demo`
# sets everything up and runs the main job on its embedded default;
# `make bench` runs the benchmarks (bench/run.sh).

BUILD     ?= build
ASAN      ?= build-asan
JOBS      ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE     ?= cmake
# Twice the cores: the Kafka scenario tests mostly wait on broker timeouts.
CTEST_ARGS ?= --output-on-failure --timeout 900 -j $(shell expr $(JOBS) \* 2)

.PHONY: all build deps deps-build test test-asan demo bench fuzz clean help

all: build

help:
	@echo "make          build $(BUILD)/stormwatch"
	@echo "make test     install missing packages, build, run all tests (CI=true: also under ASan+UBSan)"
	@echo "make demo     install missing packages, build, run 'stormwatch demo'"
	@echo "make bench    run the benchmarks (bench/run.sh)"
	@echo "make test-asan  run the test suite under ASan+UBSan"

deps-build:
	@scripts/install-deps.sh build

deps:
	@scripts/install-deps.sh test

$(BUILD)/CMakeCache.txt:
	$(CMAKE) -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo

build: $(BUILD)/CMakeCache.txt
	$(CMAKE) --build $(BUILD) -j $(JOBS)

test: deps
	$(MAKE) build
	cd $(BUILD) && ctest $(CTEST_ARGS)
ifeq ($(CI),true)
	$(MAKE) test-asan
endif

test-asan: deps
	$(CMAKE) -S . -B $(ASAN) -DCMAKE_BUILD_TYPE=Debug -DSW_SANITIZE=ON
	$(CMAKE) --build $(ASAN) -j $(JOBS)
	cd $(ASAN) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
		ctest $(CTEST_ARGS)

demo: deps-build
	$(MAKE) build
	$(BUILD)/stormwatch demo

bench: deps
	$(MAKE) build
	bench/run.sh

clean:
	rm -rf $(BUILD) $(ASAN) build-dev build-tests build-tests-asan
