"""bench/progress.py: what the module writes and the action plugin prints."""
from __future__ import annotations

from ansible_collections.storageperf.k8s.plugins.module_utils.bench import progress as P


def test_progress_file_round_trip_keeps_finished_steps(tmp_path):
    path = tmp_path / "progress.json"
    write = P.ProgressFile(str(path), {"benchmark": "csi_lifecycle"})
    write.update(variant="concurrency on", repetition=1)
    write({"step": "create_volume", "label": "Create Volume", "unit": "vol", "total": 100, "done": 100, "errors": 0,
           "elapsed_s": 4.0, "rate": 25.0, "final": True})
    write({"step": "publish", "label": "Publish (Attach)", "unit": "vol", "total": 100, "done": 12, "errors": 1,
           "elapsed_s": 1.5, "rate": 8.0, "final": False})
    data = P.read(str(path))
    assert [p["step"] for p in data["finished"]] == ["create_volume"]
    assert data["current"]["step"] == "publish"
    line = P.line(data["current"])
    assert line == ("csi_lifecycle · concurrency on #1 · Publish (Attach): 12/100 vol done, 1 failed, "
                    "8.00 vol/s, 1.5s")
    assert P.line(data["finished"][0]).endswith("(step finished)")


def test_unreadable_progress_is_none(tmp_path):
    assert P.read(str(tmp_path / "missing.json")) is None
    (tmp_path / "bad.json").write_text("{")
    assert P.read(str(tmp_path / "bad.json")) is None


def test_writing_to_an_unwritable_place_never_raises(tmp_path):
    P.ProgressFile(str(tmp_path / "no" / "such" / "dir" / "p.json"))({"step": "x"})
