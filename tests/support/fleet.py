"""Start and drive a fleet of cluster twins (`python -m twin up --clusters N`) from tests.

Each member is a Twin over its own directory (DIR/twin-K), so everything tests/support/twin.py offers
(kubectl, kubeconfig, cloud.json, playbooks) works per cluster.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from aliyunsdkcore.acs_exception.exceptions import ServerException
from aliyunsdkcore.client import AcsClient
from aliyunsdkcore.request import CommonRequest

from tests.support.twin import Twin


def _client(cloud: dict, secret: str | None = None) -> AcsClient:
    a = cloud["alibaba"]
    return AcsClient(ak=a["access_key_id"], secret=secret or a["access_key_secret"], region_id=a["region"],
                     auto_retry=False)


def cs(cloud: dict, path: str, query: dict | None = None, *, method: str = "GET", body: Any = None,
       secret: str | None = None) -> dict:
    """One signed ROA call to the ACK endpoint of a cloud.json, as plugins/module_utils/ack/aliyun.py sends it."""
    a = cloud["alibaba"]
    req = CommonRequest(domain=a["cs_endpoint"].split("//", 1)[1], version="2015-12-15", uri_pattern=path)
    req.set_method(method)
    req.set_protocol_type("http")
    req.add_header("Accept", "application/json")
    for k, v in (query or {}).items():
        req.add_query_param(k, str(v))
    if body is not None:
        req.add_header("Content-Type", "application/json")
        req.set_content(json.dumps(body).encode())
    return json.loads(_client(cloud, secret).do_action_with_exception(req) or b"{}")


def ecs(cloud: dict, action: str, params: dict | None = None) -> dict:
    """One signed RPC call to the ECS endpoint of a cloud.json."""
    a = cloud["alibaba"]
    req = CommonRequest(domain=a["ecs_endpoint"].split("//", 1)[1], version="2014-05-26", action_name=action)
    req.set_protocol_type("http")
    req.add_query_param("RegionId", a["region"])
    for k, v in (params or {}).items():
        req.add_query_param(k, str(v))
    return json.loads(_client(cloud).do_action_with_exception(req))


def cs_error(exc: ServerException) -> dict:
    """ACK's own error body, which the SDK leaves unparsed after 'ServerResponseBody:'."""
    return json.loads(exc.get_error_msg().split(":", 1)[1])


def list_all(cloud: dict, **query: Any) -> tuple[list[dict], list[dict]]:
    """Every cluster through DescribeClustersV1, page by page (page_size 100), and each page's page_info."""
    clusters: list[dict] = []
    infos: list[dict] = []
    number = 1
    while True:
        page = cs(cloud, "/api/v1/clusters", dict(query, page_size=100, page_number=number))
        clusters += page["clusters"]
        infos.append(page["page_info"])
        if number * 100 >= page["page_info"]["total_count"]:
            return clusters, infos
        number += 1


class Fleet:
    def __init__(self, directory: Path, *, clusters: int = 3, nodes: int = 2, time_scale: float = 0.01,
                 extra: list[str] | None = None) -> None:
        self.dir = Path(directory)
        self.front = Twin(self.dir, nodes=nodes, time_scale=time_scale,
                          extra=["--clusters", str(clusters), *(extra or [])])

    def up(self) -> Fleet:
        self.front.up()
        return self

    def down(self, cluster: str | None = None) -> None:
        if cluster:
            self.front.twin_cmd("down", "--cluster", cluster)
        else:
            self.front.down()

    def __enter__(self) -> Fleet:
        return self.up()

    def __exit__(self, *exc: object) -> None:
        self.down()

    @property
    def index(self) -> dict[str, Any]:
        return json.loads((self.dir / "fleet.json").read_text())

    @property
    def names(self) -> list[str]:
        return [c["name"] for c in self.index["clusters"]]

    def member(self, name: str) -> Twin:
        return Twin(self.dir / name)

    @property
    def members(self) -> list[Twin]:
        return [self.member(n) for n in self.names]

    def status(self) -> dict[str, Any]:
        return json.loads(self.front.twin_cmd("status").stdout)

    def twin_cmd(self, *args: str, check: bool = True):
        return self.front.twin_cmd(*args, check=check)
