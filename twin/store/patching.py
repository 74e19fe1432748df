"""PATCH (json, merge, strategic merge, server-side apply) and apply-create, with managedFields.

The patch arithmetic lives in twin/apiserver/patch.py; here it meets the stored object, the kind's schema
and the field managers, and the result goes through the same update as a PUT.
"""
from __future__ import annotations

from typing import Any

from ..apiserver import errors
from .. import validation
from ..apiserver.patch import (PatchError, apply_merge, field_set, fields_minus, json_patch, merge_patch, remove_fields,
                               strategic_merge_patch)
from ..apiserver.resources import ResourceType
from .deletion import Deletion
from .objects import _clone, now_iso

_IDENTITY = ("apiVersion", "kind")
_META_IDENTITY = ("name", "namespace", "resourceVersion", "uid", "creationTimestamp", "generation", "managedFields",
                  "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds")


class Patching(Deletion):
    """Deletion plus PATCH and server-side apply."""

    def patch(self, rtype: ResourceType, ns: str | None, name: str, patch_type: str, patch: Any, *,
              subresource: str | None = None, dry_run: bool = False, strict: bool = False,
              field_manager: str | None = None, force: bool = False, raw: bool = False) -> Any:
        """PATCH: json | merge | strategic | apply (server-side apply), on the object or its status."""
        cur = self.get(rtype, ns, name)
        schema = self.registry.schema(rtype) if rtype.crd else validation.schema_for(rtype.api_version, rtype.kind)
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
                patched = self._apply(rtype, cur, patch, schema, field_manager or "unknown", subresource)
                if patched is cur:
                    return self._result(rtype, cur, None, raw)
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
        return self.update(rtype, ns, name, patched, subresource=subresource, dry_run=dry_run, strict=strict, raw=raw)

    def _apply(self, rtype: ResourceType, cur: dict, applied: Any, schema: Any, manager: str,
               subresource: str | None) -> dict:
        if not isinstance(applied, dict):
            raise PatchError("apply patch must be an object")
        if applied.get("kind") and applied["kind"] != rtype.kind:
            raise errors.bad_request(f"the kind in the apply configuration ({applied['kind']}) does not match "
                                     f"the resource ({rtype.kind})")
        config = {k: v for k, v in applied.items() if k not in _IDENTITY}
        cmd = config.get("metadata")
        if isinstance(cmd, dict):
            config["metadata"] = {k: v for k, v in cmd.items() if k not in _META_IDENTITY}
            if not config["metadata"]:
                config.pop("metadata")
        elif "metadata" in config:
            if cmd is not None:
                raise errors.bad_request("metadata in the apply configuration must be an object")
            config.pop("metadata")
        entries = [m for m in (cur["metadata"].get("managedFields") or []) if isinstance(m, dict)]
        mine = next((m for m in entries if m.get("manager") == manager and m.get("operation") == "Apply"
                     and (m.get("subresource") or None) == subresource), None)
        prev = (mine or {}).get("fieldsV1") or {}
        new_set = field_set(config, schema)
        removed = fields_minus(prev, new_set)
        others = [m.get("fieldsV1") or {} for m in entries if m is not mine and m.get("operation") == "Apply"]
        for o in others:
            removed = fields_minus(removed, o, keep_item_marks=True)  # what another manager still owns stays
        obj = remove_fields(cur, removed, schema) if removed else cur
        obj = apply_merge(obj, config, schema)
        if obj == cur and new_set == prev and mine is not None:
            return cur
        entry = {"manager": manager, "operation": "Apply", "apiVersion": rtype.api_version, "time": now_iso(),
                 "fieldsType": "FieldsV1", "fieldsV1": new_set}
        if subresource:
            entry["subresource"] = subresource
        mf = [m for m in entries if m is not mine] + [entry]
        obj = dict(obj)
        obj["metadata"] = dict(obj["metadata"], managedFields=mf)
        return obj

    def apply_create(self, rtype: ResourceType, ns: str | None, name: str, patch: dict, *,
                     field_manager: str | None = None, **kw: Any) -> Any:
        """Server-side apply of an object that does not exist yet: create it from the applied configuration."""
        if not isinstance(patch, dict):
            raise errors.bad_request("the body of the request was not a JSON object")
        body = _clone(patch)
        body.setdefault("metadata", {})["name"] = name
        config = {k: v for k, v in patch.items() if k not in _IDENTITY}
        if isinstance(config.get("metadata"), dict):
            config["metadata"] = {k: v for k, v in config["metadata"].items() if k not in _META_IDENTITY}
        schema = self.registry.schema(rtype) if rtype.crd else validation.schema_for(rtype.api_version, rtype.kind)
        body["metadata"]["managedFields"] = [{"manager": field_manager or "unknown", "operation": "Apply",
                                              "apiVersion": rtype.api_version, "time": now_iso(),
                                              "fieldsType": "FieldsV1", "fieldsV1": field_set(config, schema)}]
        return self.create(rtype, ns, body, **kw)
