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


def test_action_plugin_relays_finished_steps_at_once_and_the_running_one_every_few_seconds(tmp_path, monkeypatch):
    from ansible_collections.storageperf.k8s.plugins.action import bench_measure as action

    shown = []
    monkeypatch.setattr(action.display, "display", lambda msg, *a, **kw: shown.append(msg))
    now = [100.0]
    path = tmp_path / "progress.json"
    relay = action.Relay(str(path), 2.0, "localhost", clock=lambda: now[0])
    write = P.ProgressFile(str(path), {"benchmark": "csi_lifecycle"})
    step = {"step": "create_volume", "label": "Create Volume", "unit": "vol", "total": 10, "errors": 0, "rate": 1.0}

    relay.poll()  # nothing written yet
    write(dict(step, done=1, elapsed_s=1.0, final=False))
    relay.poll()
    now[0] += 2
    write(dict(step, done=2, elapsed_s=3.0, final=False))
    relay.poll()  # changed, but shown 2 s ago: not yet
    now[0] += 4
    relay.poll()
    write(dict(step, done=10, elapsed_s=7.0, final=True))
    relay.poll()
    relay.poll()  # the finished step is shown once
    assert shown == [
        "bench_measure [localhost]: csi_lifecycle · Create Volume: 1/10 vol done, 1.00 vol/s, 1.0s",
        "bench_measure [localhost]: csi_lifecycle · Create Volume: 2/10 vol done, 1.00 vol/s, 3.0s",
        "bench_measure [localhost]: csi_lifecycle · Create Volume: 10/10 vol done, 1.00 vol/s, 7.0s (step finished)",
    ]
