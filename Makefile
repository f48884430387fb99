# Front door. Bootstraps a tool venv with tox (.tools/), then calls tox.
#   make test            the linters (make lint), then the project's own tests
#   make lint            ruff over the tree, mypy over backends/harness and tools
#   make test-xnnpack    every XNNPACK flow over the suites -> reports/xnnpack.json + .md
#   make summary         merge reports/ (or REPORTS="a.json dir/") -> reports/summary.md
#   make page            the same reports as one HTML page -> reports/index.html
#   make test-xnnpack SUITE=operators SHARD=2/4   one shard of one suite
#                        -> reports/xnnpack-operators-shard2of4.json + .md
# Backends are the folders backends/<name>/ that hold a flows.py: nothing to add here.
PYTHON ?= python3
TOOLS := .tools
TOX := $(TOOLS)/bin/tox
BACKENDS := $(sort $(patsubst backends/%/flows.py,%,$(wildcard backends/*/flows.py)))
SUITES := $(sort $(patsubst backends/suite/%/,%,$(dir $(wildcard backends/suite/*/test_*.py))))
REPORTS ?= reports
ARGS ?=
# Earlier runs for the page's history: BASELINE="old/" (one run), HISTORY=folder (one
# subfolder or report file per run).
BASELINE ?=
HISTORY ?=

# One check for every target that takes BACKEND=<name>.
require_backend = if [ -z "$(filter $(BACKEND),$(BACKENDS))" ]; then \
	  echo "make: BACKEND='$(BACKEND)' is not a backend; known backends: $(BACKENDS)" >&2; exit 2; fi

SUITE ?=
SHARD ?=
# reports/<backend>[-<suite>][-shard<K>of<N>].json
report_name = $(1)$(if $(SUITE),-$(SUITE))$(if $(SHARD),-shard$(subst /,of,$(SHARD)))
# A suite is a folder of backends/suite/; the backend's own tests go with the operators.
suite_paths = backends/suite/$(SUITE) $(if $(filter operators,$(SUITE)),$(wildcard backends/$(1)/test))

.PHONY: help lint test check-chromium test-all summary page bench native-runner warm warm-stop update-expectations update-budgets update-durations core-aten generated-cases clean test-% sweep check-declared fuzz-inputs

help: ## list the targets
	@echo "make test                 make lint, then the project's own tests (tox -e test); with ARGS"
	@echo "                          only the tests (LINT_FIRST=yes or LINT_FIRST=no decides instead);"
	@echo "                          needs Chromium on PATH (apt-get install -y chromium) unless ARGS leaves"
	@echo "                          out the browser tests (test/test_page_browser.py) or CHROMIUM_CHECK=no"
	@echo "make lint                 ruff over the tree, mypy over backends/harness and tools (tox -e lint)"
	@for b in $(BACKENDS); do printf '%-26srun the %s flows; writes reports/%s.json and .md\n' "make test-$$b" "$$b" "$$b"; done
	@echo "make test-all             every backend above (unavailable ones reported as such), then make summary"
	@echo "make summary              merge \$$REPORTS (default reports/) into reports/summary.md"
	@echo "make page                 the same as one HTML page, reports/index.html (BASELINE=, HISTORY= add history)"
	@echo "SUITE=<suite> SHARD=K/N"
	@echo "                          with make test-<backend>: one suite ($(SUITES)), the K-th of"
	@echo "                          N shards balanced by backends/<name>/durations.json; upstream"
	@echo "                          (ExecuTorch's own model tests) runs only when named so"
	@echo "                          -> reports/<backend>[-<suite>][-shard<K>of<N>].json and .md"
	@echo "make fuzz-inputs MINUTES=N  the property-based fuzzers of every reader of outside input"
	@echo "                          (test/test_fuzz_*.py), about N minutes per target"
	@echo "make bench                the same operator cases under ExecuTorch's suite and ours: ratios (ARGS='--full')"
	@echo "make native-runner [NATIVE_ENV=xnnpack]"
	@echo "                          build the native C++ runner (--runner '*=native') against that env's"
	@echo "                          executorch wheel -> .build/native-runner/<key>/etsuite-native-runner"
	@echo "make warm [WARM_ENV=xnnpack]  start this checkout's warm process (then ETSUITE_WARM=1 or"
	@echo "                          pytest --warm); make warm-stop stops it"
	@echo "make check-declared [BACKEND=<name>]"
	@echo "                          run every case an expectations file names at the pinned seed (.ci/seed)"
	@echo "                          (DECLARED=fail_mismatch,tolerance DECLARED_SAMPLE=K/N PASSING_SAMPLE=K/N)"
	@echo "make sweep BACKEND=<name> SEEDS='1 2 3' [ARGS=--declared]"
	@echo "                          the same selection at each seed -> reports/sweep/; what depends on the seed"
	@echo "make update-expectations BACKEND=<name> [UPDATE_FROM='reports/sweep/<name>-seed*.json']"
	@echo "                          rewrite backends/<name>/expectations.toml from reports/<name>.json"
	@echo "                          (or, from a killed run, the finished tests of reports/<name>.partial.jsonl)"
	@echo "make update-budgets BACKEND=<name> [BUDGET_HOST=<class>] [UPDATE_FROM='reports/<name>-*.json']"
	@echo "                          write backends/<name>/budgets.toml from reports/<name>.json: per case"
	@echo "                          and flow, share - 0.05, bytes x 1.25, and with BUDGET_HOST ms x 2"
	@echo "                          (one in-process call: at least + 5 ms); run with --budget-host"
	@echo "make update-durations BACKEND=<name>"
	@echo "                          record test durations from \$$REPORTS in backends/<name>/durations.json"
	@echo "make core-aten [CORE_ATEN_FROM=reports/portable.json]"
	@echo "                          rewrite the core ATen snapshot (backends/suite/core_aten.toml) from a"
	@echo "                          portable run of the operator suite"
	@echo "make generated-cases      rewrite the generated tier's case list (backends/suite/generated/"
	@echo "                          opinfo_cases.toml) from the portable env's torch OpInfo database"
	@echo "make clean                remove reports/, .tox/, .build/ and .tools/"
	@echo "ARGS='...'                extra pytest arguments, e.g. ARGS='-k conv --flow xnnpack'"

$(TOX):
	$(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/pip install --quiet "tox==4.67.15" "tox-uv==1.37.1"

# make test runs the page's browser tests (test/test_page_browser.py), which fail without
# Chromium: say so in one line before the tool venv and tox start, not with 11 errors three
# minutes later. Checked when ARGS is empty or names test/ or the browser tests;
# CHROMIUM_CHECK=no (or yes) decides instead. Looks for what tools/headless.py finds:
# $ETSUITE_CHROMIUM if set, else any of its CANDIDATES on PATH.
CHROMIUM_NAMES := chromium chromium-browser google-chrome google-chrome-stable
CHROMIUM_CHECK ?= $(if $(or $(if $(ARGS),,all),$(filter test test/ ./test ./test/,$(ARGS)),$(findstring test_page_browser,$(ARGS))),yes,no)
# (`|| :`: make 4.3 prints the output of a $(shell) that exits 127, instead of returning it)
find_chromium = $(shell for name in $${ETSUITE_CHROMIUM:-$(CHROMIUM_NAMES)}; do command -v "$$name" || :; done)
NO_CHROMIUM := make test needs Chromium for the page's browser tests (test/test_page_browser.py): \
  apt-get install -y chromium (or name it in ETSUITE_CHROMIUM; CHROMIUM_CHECK=no skips this check)

# The whole run (what CI runs) is linted first: a finding stops it in seconds, not after
# the tests. A focused run (ARGS=...) is not, so that work in progress can be tested;
# LINT_FIRST=yes or LINT_FIRST=no decides instead.
LINT_FIRST ?= $(if $(ARGS),no,yes)

lint: $(TOX)
	$(TOX) -e lint

test: check-chromium $(TOX) $(if $(filter yes,$(LINT_FIRST)),lint)
	$(TOX) -e test -- $(or $(ARGS),test)

# $(error) stops make with the one line (make's own "Error 2" line would be a second one).
check-chromium:
	@$(if $(filter yes,$(CHROMIUM_CHECK)),$(if $(find_chromium),,$(error $(NO_CHROMIUM))))

test-%: $(TOX)
	@if [ -z "$(filter $*,$(BACKENDS))" ]; then \
	  echo "make: unknown backend '$*'; known backends: $(BACKENDS)" >&2; exit 2; fi
	@if [ -n "$(SUITE)" ] && [ -z "$(filter $(SUITE),$(SUITES))" ]; then \
	  echo "make: unknown suite '$(SUITE)'; known suites: $(SUITES)" >&2; exit 2; fi
	@mkdir -p reports
	$(TOX) -e $* -- $(if $(SUITE),$(call suite_paths,$*)) $(if $(SHARD),--shard $(SHARD)) \
	  $(if $(SUITE)$(SHARD),--json-report-file=reports/$(call report_name,$*).json) $(ARGS); status=$$?; \
	report=reports/$(call report_name,$*).json; [ -f $$report ] || report=reports/$(call report_name,$*).partial.jsonl; \
	$(TOX) -e summary -- $$report --output reports/$(call report_name,$*).md; \
	exit $$status

# Every backend, one after the other; a backend that cannot run here still writes its
# report (its flows listed as unavailable) instead of stopping the others.
test-all: $(TOX)
	@failed=""; for b in $(BACKENDS); do \
	  $(MAKE) --no-print-directory test-$$b ARGS="--allow-unavailable $(ARGS)" || failed="$$failed $$b"; \
	done; \
	$(MAKE) --no-print-directory summary; \
	if [ -n "$$failed" ]; then echo "make test-all: backends with failures:$$failed" >&2; exit 1; fi

summary: $(TOX)
	$(TOX) -e summary -- $(REPORTS) --output reports/summary.md

page: $(TOX)
	$(TOX) -e summary -- $(REPORTS) --page reports/index.html \
	  $(if $(BASELINE),--baseline $(BASELINE)) $(if $(HISTORY),--history $(HISTORY))

MINUTES ?= 10
fuzz-inputs: $(TOX)
	ETSUITE_FUZZ_SECONDS=$$(( $(MINUTES) * 60 )) $(TOX) -e test -- -n 0 -p no:cacheprovider \
	  --time-limit $$(( $(MINUTES) * 120 + 300 )) $(wildcard test/test_fuzz_*.py) $(ARGS)

bench: $(TOX)
	$(TOX) -e bench -- $(ARGS)

# The native runner (docs/how-to/run-programs-elsewhere.md): the C++ source of
# backends/harness/remote/cpp/ built against the executorch wheel of a backend's
# environment (NATIVE_ENV, default xnnpack) with that environment's CMake (PyPI's, from the
# executorch extra). The `native` runner kind builds it on first use too; this builds it
# ahead and prints its path.
NATIVE_ENV ?= xnnpack
native-runner: $(TOX)
	$(TOX) -q -e $(NATIVE_ENV) --notest
	.tox/$(NATIVE_ENV)/bin/python -m etsuite.backends.harness.remote.native

# The warm process (docs/how-to/use-the-warm-process.md): `make warm` starts the one of a backend's
# environment (WARM_ENV, default xnnpack) for this checkout; runs then use it with
# ETSUITE_WARM=1 (or pytest --warm), e.g. ETSUITE_WARM=1 make test-xnnpack ARGS=...
WARM_ENV ?= xnnpack
warm: $(TOX)
	$(TOX) -q -e $(WARM_ENV) --notest
	.tox/$(WARM_ENV)/bin/python -m pytest --warm --collect-only -q -p no:cacheprovider \
	  backends/suite/operators/test_add.py >/dev/null

warm-stop:
	@if [ -x .tox/$(WARM_ENV)/bin/python ]; then .tox/$(WARM_ENV)/bin/python -m pytest --warm-stop; \
	else echo "make warm-stop: no .tox/$(WARM_ENV) environment"; fi

# The declared-entries check (backends/harness/declared.py): every case an expectations
# file names, run at the seed pinned in .ci/seed (or $ETSUITE_SEED), for the backends that
# lower on a Linux CPU host (BACKEND=<name>: one). DECLARED=<statuses and kinds> narrows
# what runs every time; DECLARED_SAMPLE=K/N and PASSING_SAMPLE=K/N add rotating slices of
# the other declared cases and of the undeclared ones. -> reports/declared-<backend>.json, .md
# The backends whose declared verdicts exist: an expectations file is written from a run
# here (make update-expectations), so a backend has one once its flows lower on this host.
CHECK_BACKENDS := $(sort $(patsubst backends/%/expectations.toml,%,$(wildcard backends/*/expectations.toml)))
DECLARED ?= all
DECLARED_SAMPLE ?=
PASSING_SAMPLE ?=
# The suites the check covers: every folder of backends/suite (a backend not yet run on
# one has a [[skip]] for it in its expectations file, which the check cannot prove stale),
# except the opt-in `upstream` (OPT_IN_SUITES in backends/harness/collection.py): its
# full-size models take minutes per case, beyond CI's budget; CHECK_SUITES=upstream checks it.
CHECK_SUITES ?= $(filter-out upstream,$(SUITES))
# The flows that may be unavailable on the check's host (Arm's VGF flows need Arm's model
# converter, which is not on PyPI); any other unavailable flow fails the check (exit 7),
# as does a backend whose check ran nothing (pytest's exit 5) with DECLARED=all or a
# sample (with DECLARED narrowed and no sample, a backend may have no entry of those kinds).
CHECK_UNAVAILABLE_OK ?= arm_vgf_*
RAN_NOTHING_FAILS = $(if $(or $(filter all,$(DECLARED)),$(DECLARED_SAMPLE),$(PASSING_SAMPLE)),yes,no)
check-declared: $(TOX)
	@$(if $(BACKEND),$(call require_backend))
	@mkdir -p reports
	@seed=$${ETSUITE_SEED:-$$(cat .ci/seed)}; failed=""; \
	for b in $(or $(BACKEND),$(CHECK_BACKENDS)); do \
	  echo "make check-declared: $$b at seed $$seed"; \
	  ETSUITE_SEED=$$seed $(TOX) -e $$b -- --declared $(DECLARED) \
	    --may-be-unavailable '$(CHECK_UNAVAILABLE_OK)' \
	    $(if $(DECLARED_SAMPLE),--declared-sample $(DECLARED_SAMPLE)) \
	    $(if $(PASSING_SAMPLE),--passing-sample $(PASSING_SAMPLE)) \
	    --json-report-file=reports/declared-$$b.json $(ARGS) \
	    $(foreach suite,$(CHECK_SUITES),backends/suite/$(suite)) \
	    $$([ -d backends/$$b/test ] && echo backends/$$b/test); status=$$?; \
	  if [ $$status -eq 5 ] && [ $(RAN_NOTHING_FAILS) = yes ]; then \
	    echo "make check-declared: $$b ran nothing (pytest exit 5)" >&2; failed="$$failed $$b"; \
	  elif [ $$status -eq 5 ]; then echo "make check-declared: $$b has no entry of $(DECLARED)"; \
	  elif [ $$status -ne 0 ]; then failed="$$failed $$b"; fi; \
	  report=reports/declared-$$b.json; [ -f $$report ] || report=reports/declared-$$b.partial.jsonl; \
	  $(TOX) -q -e summary -- $$report --output reports/declared-$$b.md >/dev/null || true; \
	done; \
	if [ -n "$$failed" ]; then \
	  echo "make check-declared: a declared verdict no longer holds (or a sampled case fails) in:$$failed; see reports/declared-<backend>.md" >&2; exit 1; fi; \
	echo "make check-declared: every declared verdict checked holds"

# A seed sweep: the same selection at several seeds, then what changed with the seed.
SEEDS ?= 1 2 3
sweep: $(TOX)
	@$(call require_backend)
	@mkdir -p reports/sweep
	@for seed in $(SEEDS); do \
	  $(TOX) -e $(BACKEND) -- --seed $$seed --allow-unavailable \
	    --json-report-file=reports/sweep/$(BACKEND)-seed$$seed.json $(ARGS); \
	  echo "make sweep: $(BACKEND) at seed $$seed: pytest exit $$? -> reports/sweep/$(BACKEND)-seed$$seed.json"; \
	done
	$(TOX) -e stability -- $(foreach s,$(SEEDS),reports/sweep/$(BACKEND)-seed$(s).json) \
	  --output reports/sweep/$(BACKEND)-stability.md

# The reports to rewrite from: a sweep's, one per seed (default: reports/<backend>.json).
UPDATE_FROM ?=
update-expectations: $(TOX)
	@$(call require_backend)
	$(TOX) -e expectations -- --backend $(BACKEND) $(UPDATE_FROM)

update-budgets: $(TOX)
	@$(call require_backend)
	$(TOX) -e budgets -- --backend $(BACKEND) $(if $(BUDGET_HOST),--host $(BUDGET_HOST)) $(UPDATE_FROM)

update-durations: $(TOX)
	@$(call require_backend)
	$(TOX) -e durations -- --backend $(BACKEND) $(REPORTS)

# The core ATen snapshot (tools/report/core_aten.py): which operator tests hold each core ATen
# overload, from a portable run of the operator suite, e.g.
#   make test-portable SUITE=operators ARGS="-n 2" && make core-aten CORE_ATEN_FROM=reports/portable-operators.json
CORE_ATEN_FROM ?= reports/portable.json
core-aten: $(TOX)
	$(TOX) -e core-aten -- $(CORE_ATEN_FROM)

# The generated tier's case list (backends/suite/generated/opinfo_cases.py): which OpInfo
# samples of the core ATen ops are cases, and why the others are left out, from the torch
# of the portable environment. Run it after a torch upgrade that test_generated_cases.py
# says changed OpInfo.
generated-cases: $(TOX)
	$(TOX) -q -e portable --notest
	.tox/portable/bin/python -m etsuite.backends.suite.generated.opinfo_cases

clean:
	rm -rf reports .tox .build $(TOOLS)
