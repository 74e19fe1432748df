"""ontap_volume_info's ZAPI session asks system-get-ontapi-version first and speaks the server's ONTAPI, capped."""
from __future__ import annotations

import pytest

from ansible_collections.storageperf.k8s.plugins.module_utils.trident import ontap as O

zapi = pytest.importorskip("netapp_lib.api.zapi.zapi")


def client_of(server_minor, answers=None):
    """An OntapZapi whose NaServer answers from memory; returns (client, [(api, version asked)])."""
    client = O.OntapZapi("127.0.0.1:9", "admin", "pw", https=False)
    seen = []

    def invoke(element, tunneling):
        seen.append((element.get_name(), client.server.get_api_version()))
        if element.get_name() == "system-get-ontapi-version":
            return zapi.NaElement.create_node_with_children(
                "results", **{"major-version": "1", "minor-version": str(server_minor)})
        return zapi.NaElement.create_node_with_children("results", version="NetApp Release 9.x")

    client.server.invoke_successfully = invoke
    return client, seen


@pytest.mark.parametrize("server_minor, session", [(150, (1, 150)), (170, (1, 170)), (281, (1, 170))])
def test_asks_the_version_first_then_speaks_it_capped(server_minor, session):
    client, seen = client_of(server_minor)
    assert client.version() == "NetApp Release 9.x"
    assert seen == [("system-get-ontapi-version", O.PROBE_VERSION), ("system-get-version", session)]
    assert client.ontapi == (1, server_minor) and client.calls == 2
    client.version()
    assert seen[2:] == [("system-get-version", session)]  # asked once per session


def test_an_answer_without_the_version_fails_with_a_message():
    client, _ = client_of(150)

    def invoke(element, tunneling):
        return zapi.NaElement("results")

    client.server.invoke_successfully = invoke
    with pytest.raises(O.OntapError, match="without major-version and minor-version"):
        client.version()
