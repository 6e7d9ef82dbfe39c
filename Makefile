# The two entry points are `make demo` and `make test`; each installs what it needs, and only
# that: every target depends on the dependency group it uses (deps-GROUP, scripts/install-deps.sh
# GROUP, whose header lists what each group holds); `make deps` installs them all (CI).
SHELL := /bin/bash
JOBS ?= $(shell nproc)
VENV_PY := .venv/bin/python
DEPS_GROUPS := demo test tsan clang format release bench chaos image

.PHONY: demo deps configure build test unit-test system-test asan-test tsan-build tsan-test sanitize-test \
        clang-build clang-check \
        model-check bench chaos format format-check clean release-build bench-smoke \
        $(addprefix deps-,$(DEPS_GROUPS))

deps:
	@scripts/install-deps.sh $(DEPS_GROUPS)

$(addprefix deps-,$(DEPS_GROUPS)): deps-%:
	@scripts/install-deps.sh $*

# The dev build (debug) with its tests.
configure: deps-test
	cmake --preset dev -DIC_BUILD_TESTS=ON >/dev/null

build: configure
	cmake --build --preset dev -j $(JOBS)

# Builds only what scripts/demo.py runs (the charge-recovery binary; moto and the fake bank are
# Python), not the tests. A dev build that was never configured is configured without its tests,
# so the demo needs no test library; `make test` then turns them on, which adds the tests'
# targets and recompiles nothing of the application. A dev build configured with them keeps them.
demo: deps-demo
	cmake --preset dev $$([ -f build/dev/CMakeCache.txt ] || echo -DIC_BUILD_TESTS=OFF) >/dev/null
	cmake --build --preset dev -j $(JOBS) --target charge-recovery
	$(VENV_PY) -m scripts.demo

unit-test: build
	ctest --preset dev -j $(JOBS)

model-check: deps-test
	model/run.sh

system-test: build
	scripts/run-pytest.sh

test: unit-test model-check system-test deploy-check

# The deployment artifacts under deploy/: hadolint, kubeconform against Kubernetes' and KEDA's
# schemas (offline), systemd-analyze verify, promtool check + test rules, and the runtime
# image's exact file set run in a chroot (deploy/check.sh says what each step proves).
.PHONY: deploy-check
deploy-check: build
	deploy/check.sh

# The OCI image without a container engine or a base image: the release binary's runtime rootfs
# assembled by umoci into build/image/charge-recovery.oci.tar, with SBOMs (scripts/build-image.sh).
# image-test packs the dev build instead and runs the unpacked image against the local stack.
.PHONY: image image-test
image: deps-image
	scripts/build-image.sh

image-test: build deps-image
	IC_IMAGE_BINARY=build/dev/src/app/charge-recovery scripts/build-image.sh
	IC_BUILD_DIR=$(CURDIR)/build/dev $(VENV_PY) -m pytest -q -p no:cacheprovider tests/deploy/test_oci_image.py

# One clang-16 build, preset clang in build/clang, serves asan-test, clang-check and fuzz: every
# target compiled once with ASan + UBSan (no recovery), libFuzzer's coverage and -Wthread-safety
# -Wconversion. The unit tests link ASan + UBSan only; the fuzz targets link libFuzzer too.
# asan-test builds just the unit tests and runs them under ASan + UBSan.
asan-test: deps-clang
	cmake --preset clang >/dev/null
	cmake --build --preset asan -j $(JOBS)
	ctest --preset asan -j $(JOBS) -LE integration

tsan-build: deps-tsan
	cmake --preset tsan >/dev/null
	cmake --build --preset tsan -j $(JOBS) --target ic_unit_tests

tsan-test: tsan-build
	ctest --preset tsan -j $(JOBS) -LE integration

sanitize-test: asan-test tsan-test

# clang-16 with -Wthread-safety -Wconversion over src/, the unit tests and the fuzz targets (the
# integration tests and the bench are compiled by dev and release, and not compiled twice), its
# unit tests under ASan + UBSan (so it does all that asan-test does), then clang-tidy over src/
# (about 2 min on two idle cores; TIDY_FILES='(src|tests)/' checks the tests too, in a build
# configured with -DIC_UNITY_TESTS=OFF). CI runs clang-check's halves and tsan-test, which
# together are sanitize-test.
TIDY_FILES ?= src/
clang-build: deps-clang
	cmake --preset clang >/dev/null
	cmake --build --preset clang -j $(JOBS)

clang-check: clang-test tidy

# clang-check's two halves, which CI runs apart: tidy needs no quiet machine, so it runs in CI's
# background compile; clang-test runs the ASan + UBSan unit tests in the foreground.
.PHONY: clang-test tidy
clang-test: clang-build
	ctest --preset clang -j $(JOBS) -LE 'system|integration'

tidy: clang-build
	run-clang-tidy-16 -p build/clang -j $(JOBS) -quiet '$(CURDIR)/$(TIDY_FILES)'

# The libFuzzer targets of fuzz/ (the clang preset's build, ASan/UBSan), FUZZ_SECONDS each, two
# at a time; prints the executions per target. Crash inputs go to build/fuzz/artifacts (see
# scripts/run-fuzz.sh).
FUZZ_SECONDS ?= 60
.PHONY: fuzz fuzz-smoke
fuzz: deps-clang
	FUZZ_SECONDS=$(FUZZ_SECONDS) scripts/run-fuzz.sh

# The CI smoke: every target for 20 s, about 1 min after clang-check has built them (about 4
# min with the build on two cores).
fuzz-smoke: deps-clang
	FUZZ_SECONDS=20 scripts/run-fuzz.sh

release-build: deps-release
	cmake --preset release >/dev/null
	cmake --build --preset release -j $(JOBS)

# The microbenchmarks, then bench/run.py: every run of bench/runs/ on the stacks it needs,
# build/bench/results.json, and from it build/bench/report.md and PNG plots (about 20 min;
# BENCH_BIG=1 adds memory at 100k charges, about 4 min more). `python -m bench.report --from
# build/bench/results.json` renders the report again without running anything.
BENCH_BIG ?=
bench: release-build deps-bench
	scripts/run-bench.sh
	$(VENV_PY) -m bench.run $(if $(BENCH_BIG),--big)

# CI's variant: the bench's own tests (bench/tests: the network proxy, the report), then tiny
# counts on ElasticMQ + dynalite and fast+fast, with one small production drain over TLS
# (about a minute).
bench-smoke: release-build deps-bench
	$(VENV_PY) -m pytest -q -p no:cacheprovider bench/tests
	$(VENV_PY) -m bench.run --smoke

# Our consumer beside the Powertools and Spring reference designs on issue 36's workload:
# ElasticMQ + dynalite, the fake bank, 2,000 charges + 30 % duplicates per drain, each consumer's
# cold and warm drains, 2 rounds (bench/compare/run.py, ≈15 min; build/bench/compare/report.md;
# docs/performance.md, "Side by side with the Powertools and Spring designs"). Not part of `make
# bench`: it needs what `make deps` does not install (a JDK and Maven, the reference's own venv,
# the Spring jar's Maven dependencies), which bench/compare/install.sh brings. COMPARE_ARGS
# passes options, e.g. COMPARE_ARGS='--tls' (every call over TLS) or '--rounds 3'.
COMPARE_ARGS ?=
.PHONY: bench-compare
bench-compare: release-build deps-bench
	bench/compare/install.sh
	$(VENV_PY) -m bench.compare.run $(COMPARE_ARGS)

format: deps-format
	git ls-files '*.cpp' '*.hpp' | xargs clang-format -i

format-check: deps-format
	git ls-files '*.cpp' '*.hpp' | xargs clang-format --dry-run --Werror

clean:
	rm -rf build

# Fault campaign over the local stack (docs/chaos.md): CHARGES per scenario, SEED replays a run,
# SCENARIOS picks some (comma-separated; SCENARIOS=stalls: issue 34's stall-* scenarios). Exits
# non-zero if a checker fails.
CHARGES ?= 1000
chaos: build deps-chaos
	$(VENV_PY) -m tools.chaos --charges $(CHARGES) $(if $(SEED),--seed $(SEED)) $(if $(SCENARIOS),--scenarios $(SCENARIOS))
