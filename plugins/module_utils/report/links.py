# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Links between the report pages: relative paths from the directory a page is written to.

    href("reports/prod-a/<run_id>/report.html", "reports/fleet-<ts>")   # "../prod-a/<run_id>/report.html"
    page_beside("reports/prod-a/<run_id>/result.json")                    # ".../<run_id>/report.html"

reports_upload copies a reports directory into a bucket as it is, and people copy it around: a link that is a
relative path holds wherever the tree goes, an absolute one never leaves the machine that wrote it. A page links to
another only once that page exists (a run whose report.html was not drawn, a document read from a bucket, is text
without a link), so no page of the tree points at nothing.
"""
from __future__ import annotations

import os
from typing import Any
from urllib.parse import quote

# the page a benchmark run's directory holds beside its result.json (render.FILENAMES["html"]), and an advice
# run's beside its advice-<stamp>.json (advice_render.FILENAMES["html"])
REPORT_PAGE = "report.html"
ADVICE_PAGE = "advice.html"


def href(target: str | None, from_dir: str) -> str | None:
    """The link from a page in from_dir to the file target, relative and URL-quoted; None when target is not a file
    here."""
    if not target or not os.path.isfile(target):
        return None
    rel = os.path.relpath(os.path.abspath(target), os.path.abspath(from_dir))
    return quote(rel.replace(os.sep, "/"))


def page_beside(document: str | None, page: str = REPORT_PAGE) -> str | None:
    """The page in the directory of a document (its result.json, or the directory itself), or None without one."""
    if not document:
        return None
    folder = document if os.path.isdir(document) else os.path.dirname(document)
    return os.path.join(folder, page)


def linked(cell: dict[str, Any], target: str | None) -> dict[str, Any]:
    """The cell (tables.py's model) with its href, which render.table_html and table_markdown write as a link."""
    return dict(cell, href=target) if target else cell
