"""The official Alibaba Cloud Tea SDKs (alibabacloud_cs20151215, alibabacloud_ecs20140526) pointed at the twin.

They sign with V3 (ACS3-HMAC-SHA256) and deserialise answers into their response models; `unset_fields` lists
the model attributes an answer left empty, which is how tests hold the twin to the official response models.
"""
from __future__ import annotations

from typing import Any

from alibabacloud_cs20151215.client import Client as CsClient
from alibabacloud_ecs20140526.client import Client as EcsClient
from alibabacloud_tea_openapi.utils_models import Config
from darabonba.model import DaraModel

from tests.support.twin import Twin


def _config(twin: Twin, endpoint_key: str, **overrides: Any) -> Config:
    c = twin.cloud["alibaba"]
    scheme, _, hostport = c[endpoint_key].partition("://")
    return Config(**dict(dict(access_key_id=c["access_key_id"], access_key_secret=c["access_key_secret"],
                              region_id=c["region"], endpoint=hostport, protocol=scheme), **overrides))


def cs_client(twin: Twin, **overrides: Any) -> CsClient:
    return CsClient(_config(twin, "cs_endpoint", **overrides))


def ecs_client(twin: Twin, **overrides: Any) -> EcsClient:
    return EcsClient(_config(twin, "ecs_endpoint", **overrides))


def unset_fields(model: Any, path: str = "") -> list[str]:
    """Dotted paths of the model's attributes that the answer did not fill (None), recursing into sub-models
    and the first item of lists of sub-models; dict-typed bodies (maps) are not models and count as set."""
    if isinstance(model, list):
        return unset_fields(model[0], path + "[0]") if model else []
    if not isinstance(model, DaraModel):
        return []
    out = []
    for name, value in vars(model).items():
        if name.startswith("_"):
            continue
        where = f"{path}.{name}" if path else name
        if value is None:
            out.append(where)
        else:
            out.extend(unset_fields(value, where))
    return out
