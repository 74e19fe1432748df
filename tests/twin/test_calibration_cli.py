"""benchmarks/calibration.py's command line: its help names only options it has, and --markdown prints the tables
as docs/calibration.md holds them (rendered here from saved figures, so no twin has to run)."""
from __future__ import annotations

import importlib.util
import itertools
import json
import re
import subprocess

import pytest

from tests.support.twin import REPO, VENV_BIN

SCRIPT = REPO / "benchmarks" / "calibration.py"

FIGURES = {  # the shape `--json` writes, figures in cluster seconds
    "seed000": {"serial": 199.0, "parallel": 40.0, "max_attaching_serial": 1, "max_attaching_parallel": 32,
                "detach": 177.0},
    "snapshot": {"default": 143.0, "tuned": 18.0},
    "seed002": {"ontap-nas": {
        "off": {"create": 416.0, "publish": 144.0, "unpublish": 145.0, "snapshot": 186.0, "clone": 460.0,
                "delete_clone": 130.0, "delete_snapshot": 126.0, "delete_volume": 127.0},
        "on": {"create": 42.0, "publish": 24.0, "unpublish": 30.0, "snapshot": 29.0, "clone": 45.0,
               "delete_clone": 38.0, "delete_snapshot": 19.0, "delete_volume": 30.0}}},
}


@pytest.fixture(scope="module")
def cli():
    spec = importlib.util.spec_from_file_location("calibration_cli", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(*args):
    return subprocess.run([str(VENV_BIN / "python"), str(SCRIPT), *args], cwd=REPO, check=True, capture_output=True,
                          text=True, timeout=120)


def test_help_names_only_options_the_parser_knows(cli):
    known = set(cli.build_parser()._option_string_actions)
    text = _run("--help").stdout
    # `...` quotes other programs' command lines (python -m twin fault --name ...), not this one's
    own = re.sub(r"`[^`]*`", "", text, flags=re.S)
    named = set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", own))
    assert named, text
    assert named <= known, f"the help names options calibration.py does not have: {sorted(named - known)}"
    assert "--markdown" in named


def _tables(text):
    """{title: [header cells]} of every titled Markdown table, with each table's rows checked for shape."""
    tables, title = {}, None
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("#"):
            title = line
        elif line.startswith("|") and (i == 0 or not lines[i - 1].startswith("|")):
            block = list(itertools.takewhile(lambda row: row.startswith("|"), lines[i:]))
            cells = [[c.strip() for c in row.strip("|").split("|")] for row in block]
            # GFM separator cells are dashes with optional alignment colons (`---:`, `:---:`)
            assert all(re.fullmatch(r":?-+:?", c) for c in cells[1]), f"no separator row under {title}"
            assert {len(c) for c in cells} == {len(cells[0])}, f"ragged table under {title}"
            tables[title] = cells
    return tables


def test_markdown_prints_the_tables_as_the_docs_hold_them(tmp_path):
    saved = tmp_path / "figures.json"
    saved.write_text(json.dumps(FIGURES))
    out = _run("--from-json", str(saved), "--markdown", "--time-scale", "0.01")
    assert not out.stdout.lstrip().startswith("{"), "raw figures mixed into the Markdown"
    printed = _tables(out.stdout)
    documented = _tables((REPO / "docs" / "calibration.md").read_text())
    titles = ["#### Seed 000: attach-stress, 28 pods x 2 disks on one node, scale 0 -> 28",
              "#### Seed 002: ontap-nas, 100 volumes (25 pods x 4 PVCs), concurrency OFF vs ON"]
    snapshot_title = next(t for t in printed if t.startswith("#### external-snapshotter #1344"))
    for title in titles + [snapshot_title]:
        assert title in printed, f"{title} missing from: {sorted(printed)}"
        assert title in documented
        assert printed[title][0] == documented[title][0], f"columns of {title} differ from the docs"
    seed000 = {row[0]: row for row in printed[titles[0]][2:]}
    assert seed000["serial (gates off)"][1:3] == ["3m19s", "3m19s"]
    assert seed000["serial / parallel"][2] == "5.0x"
    nas = {row[0]: row for row in printed[titles[1]][2:]}
    assert nas["create"][2] == "6m56s" and nas["create"][5] == "42s"

    plain = _run("--from-json", str(saved), "--time-scale", "0.01").stdout
    assert "## Seed 000" in plain and "#### Seed 000" not in plain
