# The two entry points are `make demo` and `make test`; both bootstrap what they need.
SHELL := /bin/bash
JOBS ?= $(shell nproc)
VENV_PY := .venv/bin/python

.PHONY: demo deps build test unit-test system-test asan-test tsan-test sanitize-test clang-check \
        model-check bench format format-check clean release-build

deps:
	@scripts/install-deps.sh

build: deps
	cmake --preset dev >/dev/null
	cmake --build --preset dev -j $(JOBS)

demo: build
	$(VENV_PY) -m scripts.demo

unit-test: build
	ctest --preset dev -j $(JOBS)

model-check: deps
	model/run.sh

system-test: build
	scripts/run-pytest.sh

test: unit-test model-check system-test

asan-test: deps
	cmake --preset asan >/dev/null
	cmake --build --preset asan -j $(JOBS) --target ic_unit_tests
	ctest --preset asan -j $(JOBS) -LE integration

tsan-test: deps
	cmake --preset tsan >/dev/null
	cmake --build --preset tsan -j $(JOBS) --target ic_unit_tests
	ctest --preset tsan -j $(JOBS) -LE integration

sanitize-test: asan-test tsan-test

# clang-16 with -Wthread-safety -Wconversion, its unit tests, then clang-tidy over src/ (about
# 2 min on two idle cores; TIDY_FILES='(src|tests|bench)/' checks the whole tree in about 5).
TIDY_FILES ?= src/
clang-check: deps
	cmake --preset clang >/dev/null
	cmake --build --preset clang -j $(JOBS)
	ctest --preset clang -j $(JOBS) -LE 'system|integration'
	run-clang-tidy-16 -p build/clang -j $(JOBS) -quiet '$(CURDIR)/$(TIDY_FILES)'

bench: deps
	cmake --preset release >/dev/null
	cmake --build --preset release -j $(JOBS)
	scripts/run-bench.sh

format:
	git ls-files '*.cpp' '*.hpp' | xargs clang-format -i

format-check:
	git ls-files '*.cpp' '*.hpp' | xargs clang-format --dry-run --Werror

clean:
	rm -rf build

# The optimised build with every target (tests and benchmarks too), so CI catches what only -O3
# warns about (`make bench` builds the same preset).
release-build: deps
	cmake --preset release >/dev/null
	cmake --build --preset release -j $(JOBS)
