# The README's two commands are `make demo` and `make test`; every other target is a piece of them.
SHELL := /bin/bash
export ANSIBLE_CONFIG := $(CURDIR)/ansible.cfg
export ANSIBLE_COLLECTIONS_PATH := $(CURDIR)/collections
VENV := $(CURDIR)/.venv/bin

.PHONY: setup collection demo test lint sanity units twin-tests functional integration molecule release clean

setup:
	bash scripts/setup.sh all

collection:
	bash scripts/install-collection.sh

demo:
	bash scripts/setup.sh demo
	bash scripts/demo.sh

test: setup
	bash scripts/test.sh

lint units twin-tests functional sanity integration molecule: setup
	bash scripts/test.sh $@

# make release VERSION=major|minor|patch|X.Y.Z: bump, changelog, build, galaxy-importer, commit and tag (docs/releasing.md)
release:
	bash scripts/release.sh "$(VERSION)"

clean:
	-$(VENV)/python -m twin down --dir .twin
	rm -rf build collections/ansible_collections/storageperf tests/output .pytest_cache
