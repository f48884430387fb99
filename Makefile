# Front door. Bootstraps a tool venv with tox (.tools/), then calls tox.
#   make test            the project's own tests
#   make test-xnnpack    every XNNPACK flow over the suites -> reports/xnnpack.json + .md
#   make summary         merge reports/ (or REPORTS="a.json dir/") -> reports/summary.md
PYTHON ?= python3
TOOLS := .tools
TOX := $(TOOLS)/bin/tox
BACKENDS := portable xnnpack vulkan
REPORTS ?= reports
ARGS ?=

.PHONY: help test summary clean $(addprefix test-,$(BACKENDS))

help: ## list the targets
	@echo "make test                 run the project's own tests (tox -e test)"
	@for b in $(BACKENDS); do printf '%-26srun the %s flows; writes reports/%s.json and .md\n' "make test-$$b" "$$b" "$$b"; done
	@echo "make summary              merge \$$REPORTS (default reports/) into reports/summary.md"
	@echo "make clean                remove reports/, .tox/ and .tools/"
	@echo "ARGS='...'                extra pytest arguments, e.g. ARGS='-k conv --flow xnnpack'"

$(TOX):
	$(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/pip install --quiet "tox>=4.11"

test: $(TOX)
	$(TOX) -e test -- $(or $(ARGS),test)

$(addprefix test-,$(BACKENDS)): test-%: $(TOX)
	@mkdir -p reports
	$(TOX) -e $* -- $(ARGS); status=$$?; \
	$(TOX) -e summary -- $(or $(wildcard reports/$*.json reports/$*.partial.jsonl),reports/$*.json) --output reports/$*.md; \
	exit $$status

summary: $(TOX)
	$(TOX) -e summary -- $(REPORTS) --output reports/summary.md

clean:
	rm -rf reports .tox $(TOOLS)
