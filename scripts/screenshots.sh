#!/usr/bin/env bash
# Regenerate docs/screenshots/{bench,fio,sysbench,fleet,history,advice}.png (1280 px wide) and <page>-1920.png (1920 px wide), in
# headless Chromium, from the pages the layout test builds and checks
# (tests/functional/test_report_html.py::test_page_reads_well_at_1280_and_1920).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=$PWD/.venv/bin:$PATH ANSIBLE_CONFIG=$PWD/ansible.cfg ANSIBLE_COLLECTIONS_PATH=$PWD/collections \
       PYTHONPATH=$PWD/collections:$PWD STORAGEPERF_SCREENSHOTS=docs/screenshots
bash scripts/install-collection.sh >/dev/null
python -m pytest tests/functional/test_report_html.py -q -p no:cacheprovider -k reads_well_at
