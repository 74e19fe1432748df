"""Parsers of the gluster CLI's text output and the bulk-volume planning helpers.

Every sample below was captured from glusterfs 10.3 (Debian) running the 3-peer pool of
scripts/gluster-pool.sh; they are the shapes the modules meet on real hosts.
"""
from __future__ import annotations

import pytest

from ansible_collections.storageperf.k8s.plugins.module_utils.gluster import cli as G

# `gluster --mode=script volume list` with three volumes (stdout), and with none (message on stderr, rc 0).
VOLUME_LIST = "spbench0001\nspbench0002\nspbench0003\n"
VOLUME_LIST_EMPTY_STDERR = "No volumes present in cluster\n"

# `gluster --mode=script peer status` on peer 1, all connected.
PEER_STATUS = ('Number of Peers: 2\n\nHostname: 10.244.77.12\nUuid: 29fc98ec-4669-4d42-9cf1-c1200a44aeed\nState: Peer in Cluster (Connec'
               'ted)\n\nHostname: 10.244.77.13\nUuid: 59292227-dbfd-49c4-8c9a-2f7db24c9ea8\nState: Peer in Cluster (Connected)\n')

# `gluster --mode=script peer status` on peer 1 while peer 3's glusterd restarts.
PEER_STATUS_DISCONNECTED = ('Number of Peers: 2\n\nHostname: 10.244.77.12\nUuid: 29fc98ec-4669-4d42-9cf1-c1200a44aeed\nState: Peer in Cluster (Connec'
                            'ted)\n\nHostname: 10.244.77.13\nUuid: 59292227-dbfd-49c4-8c9a-2f7db24c9ea8\nState: Peer in Cluster (Disconnected)\n\n')

# `gluster --mode=script volume get all all`
VOLUME_GET_ALL = ('Option                                   Value                                  \n------                                '
                  '   -----                                  \ncluster.server-quorum-ratio              51 (DEFAULT)                       '
                  '    \ncluster.enable-shared-storage            disable (DEFAULT)                      \ncluster.op-version              '
                  '         100000                                 \ncluster.max-op-version                   100000                       '
                  '          \ncluster.brick-multiplex                  disable (DEFAULT)                      \ncluster.max-bricks-per-pro'
                  'cess           250 (DEFAULT)                          \nglusterd.vol_count_per_thread            100 (DEFAULT)          '
                  '                \ncluster.localtime-logging                disable (DEFAULT)                      \ncluster.daemon-log-l'
                  'evel                 INFO (DEFAULT)                         \ncluster.brick-graceful-cleanup           disable (DEFAULT)'
                  '                      \n')

VOLUME_GET_MULTIPLEX_ON = (
    "Option                                   Value                                  \n"
    "------                                   -----                                  \n"
    "cluster.brick-multiplex                  on                                     \n"
)

# `gluster --mode=script volume info spbench0001`
VOLUME_INFO = (' \nVolume Name: spbench0001\nType: Replicate\nVolume ID: 6032d9c9-6643-43b8-9619-715cf1681c86\nStatus: Started\nSnapshot'
               ' Count: 0\nNumber of Bricks: 1 x 3 = 3\nTransport-type: tcp\nBricks:\nBrick1: 10.244.77.11:/work/main/.cache/gluster-poo'
               'l/peer1/bricks/spbench0001\nBrick2: 10.244.77.12:/work/main/.cache/gluster-pool/peer2/bricks/spbench0001\nBrick3: 10.244'
               '.77.13:/work/main/.cache/gluster-pool/peer3/bricks/spbench0001\nOptions Reconfigured:\ncluster.granular-entry-heal: on\n'
               'storage.fips-mode-rchecksum: on\ntransport.address-family: inet\nnfs.disable: on\nperformance.client-io-threads: off\n')


def test_volume_list_names_in_order():
    assert G.parse_volume_list(VOLUME_LIST) == ["spbench0001", "spbench0002", "spbench0003"]


def test_volume_list_empty_pool_is_no_volumes():
    assert G.parse_volume_list("", VOLUME_LIST_EMPTY_STDERR) == []
    # older releases print the message on stdout: it must not become a volume called "No volumes ..."
    assert G.parse_volume_list(VOLUME_LIST_EMPTY_STDERR) == []


def test_peer_status_connected():
    peers = G.parse_peer_status(PEER_STATUS)
    assert [p["hostname"] for p in peers] == ["10.244.77.12", "10.244.77.13"]
    assert all(p["connected"] for p in peers)
    assert all(len(p["uuid"]) == 36 for p in peers)
    assert peers[0]["state"] == "Peer in Cluster (Connected)"


def test_peer_status_disconnected_peer_is_not_connected():
    peers = G.parse_peer_status(PEER_STATUS_DISCONNECTED)
    states = {p["hostname"]: p["connected"] for p in peers}
    assert states == {"10.244.77.12": True, "10.244.77.13": False}


def test_peer_status_other_names():
    out = ("Number of Peers: 1\n\nHostname: 10.0.0.12\nUuid: 7121cfb4-ce5c-4851-bba1-468c91b2cbae\n"
           "State: Peer in Cluster (Connected)\nOther names:\ngluster2.example.com\n")
    peers = G.parse_peer_status(out)
    assert peers[0]["other_names"] == ["gluster2.example.com"]
    assert peers[0]["connected"] is True


def test_peer_status_no_peers():
    assert G.parse_peer_status("Number of Peers: 0\n") == []


def test_volume_get_values_and_defaults():
    opts = G.parse_volume_get(VOLUME_GET_ALL)
    assert opts["cluster.brick-multiplex"] == {"value": "disable", "default": True}
    assert opts["cluster.max-bricks-per-process"] == {"value": "250", "default": True}
    assert opts["glusterd.vol_count_per_thread"] == {"value": "100", "default": True}
    assert opts["cluster.op-version"]["default"] is False
    assert "Option" not in opts and "------" not in opts


def test_volume_get_set_value():
    opts = G.parse_volume_get(VOLUME_GET_MULTIPLEX_ON)
    assert opts == {"cluster.brick-multiplex": {"value": "on", "default": False}}
    assert G.same_option_value("cluster.brick-multiplex", opts["cluster.brick-multiplex"]["value"], "enable")


def test_volume_info_bricks_and_options():
    info = G.parse_volume_info(VOLUME_INFO)
    vol = info["spbench0001"]
    assert vol["status"] == "Started"
    assert vol["type"] == "Replicate"
    assert len(vol["bricks"]) == 3 and vol["bricks"][0].startswith("10.244.77.11:")
    assert vol["options"]["nfs.disable"] == "on"


@pytest.mark.parametrize("have,want,drift", [
    ({"nfs.disable": "on"}, {"nfs.disable": True}, {}),
    ({"nfs.disable": "on"}, {"nfs.disable": "off"}, {"nfs.disable": "off"}),
    ({}, {"performance.quick-read": "off"}, {"performance.quick-read": "off"}),
    ({"performance.cache-size": "32MB"}, {"performance.cache-size": "32mb"}, {}),
])
def test_option_drift(have, want, drift):
    assert G.option_drift(have, want) == drift


def test_volume_names_padding_and_start():
    assert G.volume_names(None, "b", 3) == ["b0001", "b0002", "b0003"]
    assert G.volume_names(None, "b", 2, start=9999) == ["b09999", "b10000"]
    assert G.volume_names(["x", "y", "x"], None, None) == ["x", "y"]


def test_invalid_volume_names():
    assert G.invalid_volume_names(["ok_1", "-bad", "has space", "a" * 65]) == ["-bad", "has space", "a" * 65]


def test_bricks_per_peer_root_override():
    bricks = G.bricks_for("v1", ["a", "b"], "/data/", {"b": "/other"})
    assert bricks == ["a:/data/v1", "b:/other/v1"]


def test_cluster_option_validation():
    wanted, errors = G.desired_cluster_options(True, 250, 20)
    assert errors == []
    assert wanted == {"cluster.brick-multiplex": "on", "cluster.max-bricks-per-process": "250",
                      "glusterd.vol_count_per_thread": "20"}
    _, errors = G.desired_cluster_options(None, None, 201)
    assert errors and "vol_count_per_thread" in errors[0] and "5 and 200" in errors[0]
    _, errors = G.desired_cluster_options(None, -1, None)
    assert errors and "max_bricks_per_process" in errors[0]


def test_error_text_keeps_stderr_and_stdout():
    assert G.error_text("", "volume create: v: failed: Volume v already exists\n") == \
        "volume create: v: failed: Volume v already exists"
    assert G.error_text("", "") == "no output"


def test_cli_missing_command_names_the_fix():
    cli = G.GlusterCLI("/nonexistent/gluster-wrapper")
    with pytest.raises(G.GlusterError, match="gluster_cli"):
        cli.run("volume", "list")
