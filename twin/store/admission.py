"""The write path's checks before storage: kind and apiVersion of the body, defaulting, validation.

As in the real API server: decode (unknown fields dropped or, under fieldValidation=Strict,
rejected), defaulting, validation, and on update the immutability rules; the 400 and 422
answers are the real server's.
"""
from __future__ import annotations

from ..registry import defaulters
from ..apimachinery import errors
from .. import validation
from ..registry.resources import Registry, ResourceType


def typed(rtype: ResourceType, obj: dict) -> dict:
    """obj with kind and apiVersion first, as the real server writes objects (lists strip that prefix)."""
    out = {"kind": rtype.kind, "apiVersion": rtype.api_version}
    for k, v in obj.items():
        if k != "kind" and k != "apiVersion":
            out[k] = v
    return out


def check_kind(rtype: ResourceType, obj: dict) -> None:
    kind = obj.get("kind")
    if kind and kind != rtype.kind:
        raise errors.bad_request(f"the kind of the object in the request ({kind}) does not match the kind of "
                                 f"the resource ({rtype.kind})")
    av = obj.get("apiVersion")
    if av and av != rtype.api_version and not (rtype.crd and av.split("/")[0] == rtype.group):
        group = av.rpartition("/")[0]
        if group != rtype.group:
            raise errors.bad_request(f"the API version in the data ({av}) does not match the expected API "
                                     f"version ({rtype.api_version})")


def admit(registry: Registry, rtype: ResourceType, obj: dict, strict: bool, old: dict | None = None,
          internal: bool = False) -> list[str]:
    """Decode-check, default and validate obj in place, as the real server's write path does."""
    if not rtype.crd:
        defaulters.apply(rtype.kind, obj)
    try:
        if rtype.crd:
            warnings = validation.check(obj, strict=strict, schema=registry.schema(rtype), crd=True)
        else:
            warnings = validation.check(obj, strict=strict)
        if old is not None and not internal and not rtype.crd:
            causes = validation.update_causes(old, obj)
            if causes:
                raise validation.Invalid(causes)
    except validation.DecodeError as e:
        raise errors.bad_request(f'{rtype.kind} in version "{rtype.version}" cannot be handled as a '
                                 f'{rtype.kind}: {e}') from e
    except validation.Invalid as e:
        raise errors.invalid(rtype, (obj.get("metadata") or {}).get("name", ""), e.causes) from e
    return warnings
