# stormwatch: thin wrapper around scripts/build.sh (CMake) and ctest; the
# Makefile, CI (.ci/run) and docker/Dockerfile all build through
# scripts/build.sh. `make` builds build/stormwatch; `make test` installs
# missing Debian packages, builds and runs every test (and, with CI=true, the
# suite again under ASan+UBSan, and the daemon's pure unit tests under
# ThreadSanitizer); `make demo` sets everything up and runs the
# main job on its embedded default, then shows the alerts as Alertmanager holds
# them (scripts/demo-alertmanager.sh, when it is installed); `make bench` runs
# the benchmarks.

BUILD      ?= build
ASAN       ?= build-asan
TSAN       ?= build-tsan
BUILD_TYPE ?= RelWithDebInfo
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE      ?= cmake
# Three times the cores: the Kafka scenario tests mostly wait on the mock
# cluster and their daemons (progress-based waits); the CPU-bound tests are
# few and short (test_fuzz_short runs alone: RUN_SERIAL).
# No label summary: ctest's "N% tests passed" line (then "Total Test time")
# stays the last thing `make test` prints.
CTEST_ARGS ?= --output-on-failure --no-label-summary --timeout 900 -j $(shell expr $(JOBS) \* 3)
# Left out of the sanitizer pass: test_fuzz_short (label fuzz) runs
# scripts/fuzz.sh, whose libFuzzer build is already ASan+UBSan; a second
# run would only repeat it. Twice the cores there (the last -j counts): the
# sanitized daemons need several times the CPU.
ASAN_CTEST_ARGS ?= -LE '^fuzz$$' -j $(shell expr $(JOBS) \* 2)
ASAN_ENV = ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1
# ThreadSanitizer: only the daemon's pure modules' unit tests (label tsan:
# test_ledger, test_snapcodec, test_sched), built from their sources alone.
# They start no librdkafka thread: Debian's librdkafka uses C11 threads that
# TSan cannot follow, so a daemon-wide TSan run would only report noise.
TSAN_ENV = TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1

BUILD_SH = CMAKE='$(CMAKE)' scripts/build.sh -j $(JOBS)
# The builds the tests make themselves (scripts/fuzz.sh's tree, the .deb
# build of test_install, older releases) compile through ccache as well when
# it is installed (unless SW_CCACHE=0), shared across clones as in
# scripts/build.sh: CMake reads CMAKE_C_COMPILER_LAUNCHER from the
# environment when it configures a new build directory.
CCACHE_ENV = env $$(if [ "$${SW_CCACHE:-auto}" != 0 ] && command -v ccache >/dev/null 2>&1; then \
  echo CMAKE_C_COMPILER_LAUNCHER=ccache CCACHE_BASEDIR=$${CCACHE_BASEDIR:-$(CURDIR)} \
  CCACHE_NOHASHDIR=$${CCACHE_NOHASHDIR:-true}; fi)
# The tests are configured when their libraries (cmocka, jansson) are
# installed; `make test` requires them (install-deps.sh test installs them).
TESTS_AUTO = $$(pkg-config --exists cmocka jansson 2>/dev/null && echo ON || echo OFF)

# No "Entering/Leaving directory" lines from the sub-makes.
MAKEFLAGS += --no-print-directory

.PHONY: all build deps deps-build test test-asan test-tsan demo bench bench-kafka soak fuzz clean help install package

# make install: PREFIX (the paths the installed files name) and DESTDIR (a
# staging root, as packagers use); INSTALL_STRIP=1 strips the binary.
PREFIX  ?= /usr/local
DESTDIR ?=
INSTALL_STRIP ?=
# make package: the .deb (prefix /usr) from its own build directory.
DEB_BUILD ?= build-deb

all: build

help:
	@echo "make             build $(BUILD)/stormwatch (and the tests when cmocka and jansson are installed)"
	@echo "make test        install missing packages, build, run all tests (CI=true: then again under ASan+UBSan, and TSan for the daemon's pure units)"
	@echo "make test-asan   install missing packages, run the test suite under ASan+UBSan ($(ASAN))"
	@echo "make test-tsan   the daemon's pure unit tests under ThreadSanitizer ($(TSAN))"
	@echo "make demo        install missing packages, build, run 'stormwatch demo', then notify -> Alertmanager"
	@echo "make bench       run the benchmarks (bench/run.sh; BASELINE=REV pairs them with REV's build)"
	@echo "make bench-kafka run the Kafka benchmark (bench/kafka.sh)"
	@echo "make soak        run the soak test (bench/soak.sh)"
	@echo "make fuzz        long libFuzzer run of every target (scripts/fuzz.sh --long)"
	@echo "make install     build and install under PREFIX (default /usr/local), into DESTDIR if set"
	@echo "make package     build the Debian package (cpack -G DEB) in $(DEB_BUILD)"
	@echo "make clean       remove the build directories"
	@echo "Variables: BUILD=$(BUILD) ASAN=$(ASAN) BUILD_TYPE=$(BUILD_TYPE) JOBS=$(JOBS) CMAKE=$(CMAKE)"

deps-build:
	@scripts/install-deps.sh build

deps:
	@scripts/install-deps.sh test

build:
	$(BUILD_SH) -B $(BUILD) -t $(BUILD_TYPE) -- -DSW_BUILD_TESTS=$(TESTS_AUTO)

test: deps
	$(BUILD_SH) -B $(BUILD) -t $(BUILD_TYPE) -- -DSW_BUILD_TESTS=ON
	cd $(BUILD) && $(CCACHE_ENV) ctest $(CTEST_ARGS)
ifeq ($(CI),true)
	$(MAKE) test-asan
	$(MAKE) test-tsan
endif

test-asan: deps
	$(BUILD_SH) -B $(ASAN) -t Debug -- -DSW_SANITIZE=ON -DSW_BUILD_TESTS=ON
	cd $(ASAN) && $(CCACHE_ENV) $(ASAN_ENV) ctest $(CTEST_ARGS) $(ASAN_CTEST_ARGS)

test-tsan: deps
	$(BUILD_SH) -B $(TSAN) -t Debug --target sw_tsan_tests -- -DSW_TSAN=ON -DSW_BUILD_TESTS=ON
	cd $(TSAN) && $(TSAN_ENV) ctest $(CTEST_ARGS) -L '^tsan$$'

demo: deps-build
	$(BUILD_SH) -B $(BUILD) -t $(BUILD_TYPE) --target stormwatch -- -DSW_BUILD_TESTS=$(TESTS_AUTO)
	$(BUILD)/stormwatch demo
	scripts/demo-alertmanager.sh $(BUILD)/stormwatch

# make bench: BASELINE=REV pairs every row with a build of REV (default: the
# newest release tag before HEAD); BENCH_ARGS, e.g. --quick or --baseline-only.
bench:
	@scripts/install-deps.sh bench
	$(BUILD_SH) -B $(BUILD) -t $(BUILD_TYPE) --target stormwatch -- -DSW_BUILD_TESTS=$(TESTS_AUTO)
	BENCH_BIN=$(abspath $(BUILD))/stormwatch bench/run.sh $(BENCH_ARGS)

# Scripts of their own (bench/kafka.sh, bench/soak.sh): the targets build
# $(BUILD)/stormwatch, pass its path as SW_BIN and BENCH_BIN, and say so when
# a script is not there yet.
bench-kafka soak: deps-build
	@script=bench/$(if $(filter soak,$@),soak,kafka).sh; \
	  if [ ! -x "$$script" ]; then echo "make $@: $$script is not there (or not executable)" >&2; exit 1; fi
	$(BUILD_SH) -B $(BUILD) -t $(BUILD_TYPE) --target stormwatch -- -DSW_BUILD_TESTS=$(TESTS_AUTO)
	SW_BIN=$(abspath $(BUILD))/stormwatch BENCH_BIN=$(abspath $(BUILD))/stormwatch bench/$(if $(filter soak,$@),soak,kafka).sh

fuzz: deps
	scripts/fuzz.sh --long

install: deps-build
	$(BUILD_SH) -B $(BUILD) -t $(BUILD_TYPE) -- -DSW_BUILD_TESTS=$(TESTS_AUTO) -DCMAKE_INSTALL_PREFIX=$(PREFIX)
	DESTDIR='$(DESTDIR)' $(CMAKE) --install $(BUILD) $(if $(filter 1,$(INSTALL_STRIP)),--strip)

package: deps-build
	$(BUILD_SH) -B $(DEB_BUILD) -t $(BUILD_TYPE) -- -DSW_BUILD_TESTS=OFF -DCMAKE_INSTALL_PREFIX=/usr
	cd $(DEB_BUILD) && cpack -G DEB

clean:
	rm -rf $(BUILD) $(ASAN) $(TSAN) $(DEB_BUILD) build-fuzz build-dev build-tests build-tests-asan
