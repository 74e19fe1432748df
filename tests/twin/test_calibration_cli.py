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


def test_each_size_is_compared_with_the_seed_table_for_that_size(tmp_path):
    on_1000 = {"create": 640.0, "publish": 170.0, "unpublish": 160.0, "snapshot": 160.0, "clone": 410.0,
               "delete_clone": 300.0, "delete_snapshot": 125.0, "delete_volume": 320.0}
    saved = tmp_path / "figures-1000.json"
    saved.write_text(json.dumps({"volumes": 1000, "seed002": {"ontap-nas": {"on": on_1000}}}))
    printed = _tables(_run("--from-json", str(saved), "--markdown", "--time-scale", "0.1").stdout)
    title = "#### Seed 002: ontap-nas, 1000 volumes (250 pods x 4 PVCs), concurrency OFF vs ON"
    assert title in printed, sorted(printed)
    rows = {row[0]: row for row in printed[title][2:]}
    # seed ON at 1000 volumes: publish 2m47s (not 10 x the 100-volume 21 s), create 10m30s, delete snapshot 2m04s
    assert rows["publish"][4:7] == ["2m47s", "2m50s", "1.02"]
    assert rows["create"][4] == "10m30s" and rows["delete_snapshot"][4] == "2m04s"
    assert rows["create"][1] == "57m31s"

    old = tmp_path / "figures-100.json"  # saved before runs recorded their size: 100 volumes
    old.write_text(json.dumps({"seed002": FIGURES["seed002"]}))
    printed = _tables(_run("--from-json", str(old), "--markdown").stdout)
    rows = {row[0]: row for row in printed["#### Seed 002: ontap-nas, 100 volumes (25 pods x 4 PVCs), concurrency OFF vs ON"][2:]}
    assert rows["publish"][4] == "21s"


@pytest.mark.parametrize("args", [["--volumes", "500"], ["--volumes", "10", "--only", "seed002"]])
def test_a_size_the_seed_has_no_table_for_is_refused_before_a_twin_starts(args):
    out = subprocess.run([str(VENV_BIN / "python"), str(SCRIPT), *args], cwd=REPO, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 2, out
    assert f"--volumes {args[1]}" in out.stderr
    assert "--volumes 100 or --volumes 1000" in out.stderr, out.stderr
    assert "twin up" not in out.stdout + out.stderr


def test_seed_tables_are_per_size(cli):
    assert set(cli.SEED002) == {100, 1000}
    for n, table in cli.SEED002.items():
        assert set(table) == {"ontap-nas", "ontap-nas-economy", "ontap-san", "ontap-san-economy"}, n
        for steps in table.values():
            assert set(steps) <= set(cli.STEPS)
            assert all(off >= on > 0 for off, on in steps.values())
    assert set(cli.SEED002[100]["ontap-nas"]) == set(cli.SEED002[1000]["ontap-nas"])
    # the seed's point: ON throughput at 1000 holds or beats 100 for publish, snapshot, delete snapshot
    for step in ("publish", "snapshot", "delete_snapshot"):
        assert 1000 / cli.SEED002[1000]["ontap-nas"][step][1] >= 100 / cli.SEED002[100]["ontap-nas"][step][1]
    with pytest.raises(ValueError, match="--volumes 250"):
        cli.seed_table(250)
