"""The setting `ontap_serial` (an overloaded ONTAP): set and cleared on a running twin, refused when not a bool,
read per call by Trident's controller and per request by the ONTAP endpoint. Its effect on the CSI lifecycle's
OFF/ON speedup is measured through the benchmark in tests/functional/test_ontap_serial_bench.py."""
from __future__ import annotations

import base64
import json
import ssl
import urllib.request

from tests.twin.storage_helpers import admin, storage


def settings(twin, doc, check=True):
    return twin.twin_cmd("settings", "--set", json.dumps(doc), check=check)


def ontap_get(twin, path):
    cfg = twin.cloud["ontap"]
    auth = base64.b64encode(f"{cfg['username']}:{cfg['password']}".encode()).decode()
    req = urllib.request.Request(cfg["url"] + path, headers={"Authorization": "Basic " + auth})
    with urllib.request.urlopen(req, context=ssl.create_default_context(cafile=cfg["ca_cert"]), timeout=30) as r:
        return json.loads(r.read())


def test_a_setting_that_is_not_a_bool_is_refused_and_changes_nothing(twin):
    p = settings(twin, {"ontap_serial": "yes", "other": 1}, check=False)
    assert p.returncode != 0 and "settings.ontap_serial: expected true or false, got 'yes'" in p.stderr, p.stderr
    assert "other" not in admin(twin, "settings", {})
    assert storage(twin, "trident")["ontap_serial"] is False


def test_the_ontap_answers_one_request_at_a_time_only_while_set(twin):
    def serialized():
        return admin(twin, "ontap")["requests"]["serialized"]

    before = serialized()
    ontap_get(twin, "/api/cluster")
    assert serialized() == before
    assert json.loads(settings(twin, {"ontap_serial": True}).stdout)["ontap_serial"] is True
    assert storage(twin, "trident")["ontap_serial"] is True
    assert ontap_get(twin, "/api/cluster")["name"] == "twin-ontap"
    ontap_get(twin, "/api/storage/volumes?name=trident_*")
    assert serialized() == before + 2
    settings(twin, {"ontap_serial": False})
    ontap_get(twin, "/api/cluster")
    assert serialized() == before + 2 and storage(twin, "trident")["ontap_serial"] is False
