"""PATCH (json, merge, strategic merge, server-side apply) and apply-create, with managedFields.

The patch arithmetic lives in twin/apimachinery/patch.py and field ownership in managedfields.py; here they
meet the stored object and the kind's schema, and the result goes through the same update as a PUT.
"""
from __future__ import annotations

from typing import Any

from ..apimachinery import errors
from ..apimachinery.patch import PatchError, json_patch, merge_patch, strategic_merge_patch
from ..registry.resources import ResourceType
from . import managedfields
from .deletion import Deletion

# metadata an apply configuration may carry but does not set (the server does); name and namespace
# must match the request, resourceVersion is a precondition
_SERVER_SET = ("uid", "creationTimestamp", "generation", "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds")


class Patching(Deletion):
    """Deletion plus PATCH and server-side apply."""

    def patch(self, rtype: ResourceType, ns: str | None, name: str, patch_type: str, patch: Any, *,
              subresource: str | None = None, dry_run: bool = False, strict: bool = False,
              field_manager: str | None = None, force: bool = False, raw: bool = False) -> Any:
        """PATCH: json | merge | strategic | apply (server-side apply), on the object or its status."""
        cur = self.get(rtype, ns, name)
        schema = self.schema(rtype)
        managed = None
        try:
            if patch_type == "json":
                patched = json_patch(cur, patch)
            elif patch_type == "merge":
                if not isinstance(patch, dict):
                    raise PatchError("merge patch must be an object")
                patched = merge_patch(cur, patch)
            elif patch_type == "strategic":
                if rtype.crd:
                    raise errors.unsupported_media(
                        "the body of the request was in an unknown format - accepted media types include: "
                        "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml")
                patched = strategic_merge_patch(cur, patch, schema)
            elif patch_type == "apply":
                config = _apply_config(rtype, patch)
                w = self.writer(rtype, field_manager or "", subresource)
                patched, managed, changed = managedfields.apply(cur, config, schema, w, force)
                if not changed and managed == (cur["metadata"].get("managedFields") or []):
                    return self._result(rtype, cur, None, raw)  # a re-apply of the same configuration
            else:
                raise errors.unsupported_media(f"unsupported patch type {patch_type}")
        except PatchError as e:
            raise errors.ApiError(422, "Invalid", f"the server rejected our request due to an error in our request: {e}",
                                  errors._details(name, rtype.group, rtype.kind)) from e
        if not isinstance(patched, dict) or not isinstance(patched.get("metadata", {}), dict):
            raise errors.ApiError(422, "Invalid", "the server rejected our request due to an error in our request: "
                                                  "the patched object is not valid (metadata must be an object)",
                                  errors._details(name, rtype.group, rtype.kind))
        # a patch carries a resourceVersion precondition only when the client put one in the patch
        pmd = patch.get("metadata", {}) if isinstance(patch, dict) else {}
        pmd_rv = pmd.get("resourceVersion") if isinstance(pmd, dict) else None
        if patch_type == "json" or not pmd_rv:
            rv_after = (patched.get("metadata") or {}).get("resourceVersion")
            if patch_type != "json" or rv_after == cur["metadata"]["resourceVersion"] or rv_after is None:
                patched.setdefault("metadata", {})["resourceVersion"] = cur["metadata"]["resourceVersion"]
        return self.update(rtype, ns, name, patched, subresource=subresource, dry_run=dry_run, strict=strict, raw=raw,
                           field_manager=field_manager if managed is None else None, managed=managed)

    def apply_create(self, rtype: ResourceType, ns: str | None, name: str, patch: Any, *,
                     field_manager: str | None = None, **kw: Any) -> Any:
        """Server-side apply of an object that does not exist yet: create it from the applied configuration."""
        config = _apply_config(rtype, patch)
        writer = self.writer(rtype, field_manager or "", None)
        obj, managed, _ = managedfields.apply(None, config, self.schema(rtype), writer, False)
        obj.setdefault("metadata", {})["name"] = name
        return self.create(rtype, ns, obj, managed=managed, **kw)


def _apply_config(rtype: ResourceType, applied: Any) -> dict:
    """The apply configuration as the merge takes it: an object of the request's kind, without managedFields."""
    if not isinstance(applied, dict):
        raise errors.bad_request("the body of the request was not a JSON object")
    if applied.get("kind") and applied["kind"] != rtype.kind:
        raise errors.bad_request(f"the kind in the apply configuration ({applied['kind']}) does not match "
                                 f"the resource ({rtype.kind})")
    md = applied.get("metadata")
    if md is not None and not isinstance(md, dict):
        raise errors.bad_request("metadata in the apply configuration must be an object")
    if md and md.get("managedFields") is not None:
        raise errors.bad_request("metadata.managedFields must be nil")
    config = dict(applied)
    if md is not None:
        config["metadata"] = {k: v for k, v in md.items() if k not in _SERVER_SET and k != "managedFields"}
    return config
