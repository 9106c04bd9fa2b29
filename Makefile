# ifcore — two commands do everything: `make run` and `make test`.
BUILD   ?= build
JOBS    ?= $(shell nproc)
CMAKE_FLAGS ?=

# Debian packages the project needs (see ../DESIGN in docs/ARCHITECTURE.md).
PACKAGES := build-essential cmake pkg-config liburcu-dev libexpected-dev libmnl-dev \
            libcli11-dev libfmt-dev nlohmann-json3-dev libsqlite3-dev sqlite3 libgtest-dev libgmock-dev \
            libbenchmark-dev libgoogle-perftools-dev linux-libc-dev iproute2 \
            python3-pyroute2 libnl-utils net-tools util-linux \
            clang-14 libclang-rt-14-dev \
            libsystemd-dev systemd man-db groff-base dpkg-dev

.PHONY: all deps build test run micro clean format asan asan-configure fuzz-smoke tsan fuzz \
        install deb

all: build

deps:
	@missing=""; for p in $(PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	echo "ifcore: installing missing packages:$$missing"; \
	if [ "$$(id -u)" != 0 ]; then \
	  echo "ifcore: these Debian packages are missing and installing them needs root:$$missing" >&2; \
	  echo "ifcore: run 'sudo make deps' or install them with apt-get" >&2; exit 1; \
	fi; \
	export DEBIAN_FRONTEND=noninteractive; \
	apt-get update -qq && apt-get install -y --no-install-recommends $$missing

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	$(MAKE) fuzz-smoke

# Installing (README, "Install"): what `make install` puts under PREFIX (DESTDIR prepended,
# for staging); only the installed targets are built.
PREFIX  ?= /usr/local
DESTDIR ?=
INSTALL_TARGETS := ifcore_shared ifcore_static ifc ifcored ifcore-run ifcore-bench ifcore-preload
install: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=$(PREFIX) $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j $(JOBS) --target $(INSTALL_TARGETS)
	DESTDIR=$(DESTDIR) cmake --install $(BUILD)

# Debian packages (libifcoreN, libifcore-dev, ifcore) for /usr, built in their own tree
# with CPack; the .deb files are left in DEB_BUILD.
DEB_BUILD ?= build-deb
deb: deps
	cmake -S . -B $(DEB_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr $(CMAKE_FLAGS)
	cmake --build $(DEB_BUILD) -j $(JOBS) --target $(INSTALL_TARGETS)
	cd $(DEB_BUILD) && cpack -G DEB
	@ls $(DEB_BUILD)/*.deb

# The main job: ifcore-bench's default suite (every scenario on the embedded, daemon and
# kernel paths, the sweep up to 100 000, the ablation); figures also in JSON and SVG.
run: build
	$(BUILD)/bin/ifcore-bench --json $(BUILD)/bench.json --plot $(BUILD)/bench.svg

micro: build
	$(BUILD)/bin/ifcore-micro

# Sanitizer build in its own tree, with clang 14: ASan + LSan + UBSan (undefined behaviour
# aborts), and libFuzzer's coverage instrumentation, so the same tree holds the fuzzers
# (-DIFCORE_FUZZ=ON). `make asan` builds everything there and runs every test, the fuzzers'
# smoke runs included; `make test` builds only the fuzzers there and runs their smoke runs
# (FUZZ_SMOKE_SECONDS each, ctest label fuzz-smoke), so a later `make asan` reuses the
# libraries it compiled. (IFCORE_SANITIZE=address is the same sanitizers with gcc.)
ASAN_BUILD := build-asan
FUZZ_SMOKE_SECONDS ?= 5
# -O1 as ASan's documentation advises: the tests run several times faster than at -O0 and
# the reports keep their stacks; Debug keeps the assertions.
asan-configure: deps
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DIFCORE_FUZZ=ON \
	  -DCMAKE_CXX_FLAGS_DEBUG="-g -O1" -DCMAKE_C_FLAGS_DEBUG="-g -O1" \
	  -DIFCORE_FUZZ_SMOKE_SECONDS=$(FUZZ_SMOKE_SECONDS) \
	  -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 $(CMAKE_FLAGS)

asan: asan-configure
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ctest --output-on-failure -j $(JOBS)

fuzz-smoke: asan-configure
	cmake --build $(ASAN_BUILD) -j $(JOBS) --target ifcore-fuzz
	cd $(ASAN_BUILD) && ctest --output-on-failure -j $(JOBS) -L fuzz-smoke

# ThreadSanitizer build in its own tree, over the tests that run threads: the engine's
# concurrency, finalizer and legacy-wait tests (core), the link watch (linkstate), the
# daemon with its clients over the socket and the rings (rtnl), and ifcore-stress's short
# run (stress). TSan's deadlock detector checks the lock order on the way. liburcu is not
# instrumented: see tests/tsan.supp and src/base/tsan.h. Only what those tests run is built
# (ifc and ifcore-run are not among it).
TSAN_TESTS  := core_tests linkstate_tests rtnl_tests
TSAN_LABELS := $(TSAN_TESTS) stress
tsan: deps
	cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DIFCORE_SANITIZE=thread $(CMAKE_FLAGS)
	cmake --build build-tsan -j $(JOBS) --target $(TSAN_TESTS) ifcore-stress ifcored
	cd build-tsan && ctest --output-on-failure -j $(JOBS) -L '^($(subst $(eval) ,|,$(TSAN_LABELS)))$$'

# libFuzzer (tests/fuzz, README "Fuzzing"): clang 14 with libclang-rt-14-dev's runtime, in its
# own tree. Each target runs FUZZ_SECONDS from the seed corpus (tests/fuzz/corpus/NAME, read
# only) plus the inputs it found before (FUZZ_BUILD/corpus/NAME); a crash stops the run and
# leaves its input in FUZZ_BUILD/artifacts/NAME/. FUZZ_TARGETS picks targets.
FUZZ_SECONDS ?= 60
FUZZ_BUILD   ?= build-fuzz
FUZZ_TARGETS ?= wire engine ring shim
FUZZ_FLAGS   ?=
# The engine frees through call_rcu, after its input has returned: libFuzzer's leak check
# per input would scan the heap after nearly every one (a tenth of the speed). Leaks are
# still caught when the engine is torn down at exit.
FUZZ_FLAGS_engine := -detect_leaks=0
fuzz: deps
	cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DIFCORE_FUZZ=ON \
	  -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 $(CMAKE_FLAGS)
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target ifcore-fuzz
	@for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(FUZZ_BUILD)/corpus/$$t $(FUZZ_BUILD)/artifacts/$$t; \
	  extra=""; if [ $$t = engine ]; then extra="$(FUZZ_FLAGS_engine)"; fi; \
	  echo "ifcore: fuzzing $$t for $(FUZZ_SECONDS) s"; \
	  $(FUZZ_BUILD)/bin/ifcore-fuzz-$$t -max_total_time=$(FUZZ_SECONDS) -timeout=25 \
	    -print_final_stats=1 -artifact_prefix=$(FUZZ_BUILD)/artifacts/$$t/ $$extra $(FUZZ_FLAGS) \
	    $(FUZZ_BUILD)/corpus/$$t tests/fuzz/corpus/$$t tests/fuzz/regressions/$$t \
	    || { echo "ifcore: $$t failed; its input is in $(FUZZ_BUILD)/artifacts/$$t/" \
	              "(keep it: README, Fuzzing)" >&2; exit 1; }; \
	done

format:
	find include src tests bench -name '*.h' -o -name '*.cc' | xargs clang-format -i

clean:
	rm -rf $(BUILD) build-asan build-tsan $(FUZZ_BUILD) $(DEB_BUILD)
