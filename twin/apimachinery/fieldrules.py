"""Field rules of kube-apiserver 1.32 the schema walk alone does not catch, as pure functions.

Decoding (the caller answers 400 BadRequest "<Kind> in version \"v1\" cannot be handled as a <Kind>: <error>"):
- resource.Quantity: ParseQuantity's own grammar (k8s.io/apimachinery/pkg/api/resource/quantity.go); a string
  the loose regular expression accepts may still fail on its suffix ("10Gii") or its number ("1.2.3").
- []byte fields (Secret.data, ConfigMap.binaryData): standard base64 as Go's encoding/json decodes it, with the
  byte offset Go's decoder reports ("illegal base64 data at input byte 4").

Validation (422 Invalid, causes as field.Error writes them: FieldValueInvalid / Required / NotSupported /
Forbidden, field paths with `[key]` for map keys), from pkg/apis/core/validation/validation.go,
apimachinery's util/validation and apis/meta/v1/validation, and pkg/apis/storage/validation:
- Secret and ConfigMap keys (IsConfigMapKey), Secret types' required keys;
- Service names (DNS-1035 labels), pod spec.nodeName (DNS-1123 subdomain), nodeSelector and service selector labels;
- quantities: container requests/limits (standard resource names, >= 0, request <= limit), PVC
  spec.resources[storage] (> 0), PV spec.capacity;
- label selectors (matchLabels, matchExpressions keys and operators) and node selector requirements;
- updates: PVC spec after creation (only resources.requests.storage of a bound claim may change, never below
  status.capacity), PV persistentVolumeSource and volumeMode, Secret type.

Every function returns a list of causes ({reason, message, field}); nothing here reads the store.
"""
from __future__ import annotations

import json
import re
from decimal import ROUND_CEILING, Decimal, InvalidOperation
from typing import Any
from collections.abc import Iterable

# ---------------------------------------------------------------------------------------------
# causes, worded as k8s.io/apimachinery/pkg/util/validation/field.Error.ErrorBody writes them
# ---------------------------------------------------------------------------------------------


def _dict(v: Any) -> dict:
    return v if isinstance(v, dict) else {}


def _value(v: Any) -> str:
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return str(v)
    return json.dumps(v, sort_keys=True)


def invalid(field: str, value: Any, msg: str) -> dict:
    return {"reason": "FieldValueInvalid", "field": field, "message": f"Invalid value: {_value(value)}: {msg}"}


def required(field: str, detail: str = "") -> dict:
    return {"reason": "FieldValueRequired", "field": field, "message": "Required value" + (f": {detail}" if detail else "")}


def not_supported(field: str, value: Any, allowed: Iterable[str]) -> dict:
    return {"reason": "FieldValueNotSupported", "field": field,
            "message": f"Unsupported value: {_value(value)}: supported values: " + ", ".join(f'"{a}"' for a in allowed)}


def forbidden(field: str, msg: str) -> dict:
    return {"reason": "FieldValueForbidden", "field": field, "message": f"Forbidden: {msg}"}


def too_long(field: str, limit: int) -> dict:
    return {"reason": "FieldValueTooLong", "field": field, "message": f"Too long: may not be more than {limit} bytes"}


IMMUTABLE = "field is immutable"

# ---------------------------------------------------------------------------------------------
# resource.Quantity
# ---------------------------------------------------------------------------------------------
ERR_FORMAT = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
ERR_SUFFIX = "unable to parse quantity's suffix"
ERR_NUMERIC = "unable to parse numeric part of quantity"

_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_SUFFIX_CHARS = set("eEinumkKMGTP")


class QuantityError(ValueError):
    pass


def _split(s: str) -> tuple[str, str]:
    """parseQuantityString: (number, suffix), or QuantityError(ERR_FORMAT)."""
    pos, end = 0, len(s)
    if pos < end and s[0] in "+-":
        pos += 1
    while pos < end and s[pos].isdigit() and s[pos].isascii():
        pos += 1
    if pos < end and s[pos] == ".":
        pos += 1
        while pos < end and s[pos].isdigit() and s[pos].isascii():
            pos += 1
    number, start = s[:pos], pos
    while pos < end and s[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and s[pos] in "+-":
        pos += 1
    while pos < end and s[pos].isdigit() and s[pos].isascii():
        pos += 1
    if pos < end:
        raise QuantityError(ERR_FORMAT)
    return number, s[start:]


def parse_quantity(text: str) -> tuple[Decimal, str]:
    """resource.ParseQuantity: (value, format) with format BinarySI, DecimalSI or DecimalExponent."""
    s = text.strip()
    if not s:
        raise QuantityError(ERR_FORMAT)
    number, suffix = _split(s)
    if suffix in _BINARY:
        scale, fmt = Decimal(2) ** _BINARY[suffix], "BinarySI"
    elif suffix in _DECIMAL:
        scale, fmt = Decimal(10) ** _DECIMAL[suffix], "DecimalSI"
    elif len(suffix) > 1 and suffix[0] in "eE" and re.fullmatch(r"[-+]?[0-9]+", suffix[1:]):
        scale, fmt = Decimal(10) ** int(suffix[1:]), "DecimalExponent"
    else:
        raise QuantityError(ERR_SUFFIX)
    digits = number.lstrip("+-")
    if digits in ("", "."):  # inf.Dec.SetString refuses an empty or lone-point number
        raise QuantityError(ERR_NUMERIC)
    try:
        value = Decimal(digits) * scale
    except InvalidOperation as e:
        raise QuantityError(ERR_NUMERIC) from e
    return (-value if number.startswith("-") else value), fmt


def quantity_error(v: Any) -> str | None:
    """The decode error of a quantity field's JSON value, or None."""
    if not isinstance(v, str):
        return None
    try:
        parse_quantity(v)
    except QuantityError as e:
        return str(e)
    return None


def _canonical(value: Decimal, fmt: str) -> str:
    """Quantity.String() (CanonicalizeBytes): the shortest exact suffix form; fractions round up to nano."""
    if value == 0:
        return "0"
    sign, mag = ("-" if value < 0 else ""), abs(value)
    if fmt == "BinarySI" and mag >= 1024 and mag == mag.to_integral_value():
        n, exp = int(mag), 0
        while n % 1024 == 0 and exp < 60:
            n, exp = n // 1024, exp + 10
        suffix = {0: ""} | {e: s for s, e in _BINARY.items()}
        return f"{sign}{n}{suffix[exp]}"
    nanos = (mag * Decimal(10) ** 9).to_integral_value(rounding=ROUND_CEILING)
    n, exp = int(nanos), -9
    while n % 1000 == 0 and exp < 18:
        n, exp = n // 1000, exp + 3
    if fmt == "DecimalExponent":
        return f"{sign}{n}" + (f"e{exp}" if exp else "")
    suffix = {e: s for s, e in _DECIMAL.items()}
    return f"{sign}{n}{suffix[exp]}"


def _quantity(v: Any) -> tuple[Decimal, str] | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return Decimal(str(v)), "DecimalSI"
    try:
        return parse_quantity(v) if isinstance(v, str) else None
    except QuantityError:
        return None


def canonical_quantity(v: Any) -> str:
    q = _quantity(v)
    return _canonical(*q) if q else str(v)


# ---------------------------------------------------------------------------------------------
# base64 of []byte fields, as Go's encoding/base64 StdEncoding reports it
# ---------------------------------------------------------------------------------------------
_B64 = set(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")


def base64_error(text: str) -> str | None:
    """None when Go's base64.StdEncoding.Decode accepts text, else its CorruptInputError message."""
    src = text.encode()
    si, n = 0, len(src)
    while True:
        j = 0
        while j < 4:
            if si == n:
                if j == 0:
                    return None
                return f"illegal base64 data at input byte {si - j}"
            c = src[si]
            si += 1
            if c in _B64:
                j += 1
                continue
            if c in (0x0A, 0x0D):
                continue
            if c != 0x3D or j < 2:  # not '=', or padding too early
                return f"illegal base64 data at input byte {si - 1}"
            if j == 2:  # "==" expected: the first '=' is consumed
                while si < n and src[si] in (0x0A, 0x0D):
                    si += 1
                if si == n:
                    return f"illegal base64 data at input byte {n}"
                if src[si] != 0x3D:
                    return f"illegal base64 data at input byte {si - 1}"
                si += 1
            while si < n and src[si] in (0x0A, 0x0D):
                si += 1
            if si < n:
                return f"illegal base64 data at input byte {si}"
            return None


def decode_errors(obj: dict) -> list[str]:
    """Decode errors of a built-in object's []byte maps (Secret.data, ConfigMap.binaryData)."""
    kind = obj.get("kind")
    key = {"Secret": "data", "ConfigMap": "binaryData"}.get(kind or "")
    data = obj.get(key) if key else None
    if not isinstance(data, dict):
        return []
    out = []
    for v in data.values():
        err = base64_error(v) if isinstance(v, str) else None
        if err:
            out.append(err)
    return out


# ---------------------------------------------------------------------------------------------
# names, keys and labels (k8s.io/apimachinery/pkg/util/validation)
# ---------------------------------------------------------------------------------------------
_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE_FMT = "(" + _QUALIFIED_NAME_FMT + ")?"
_CONFIG_KEY_FMT = "[-._a-zA-Z0-9]+"


def _full(fmt: str, value: str) -> bool:
    return re.fullmatch(fmt, value) is not None


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    return msg + " (e.g. " + ",  or ".join(f"'{e}'" for e in examples) + f", regex used for validation is '{fmt}')"


def max_len_error(n: int) -> str:
    return f"must be no more than {n} characters"


def _checked(value: str, limit: int, fmt: str, msg: str, *examples: str) -> list[str]:
    """The length and pattern messages of one IsX function of k8s.io/apimachinery/pkg/util/validation."""
    errs = [max_len_error(limit)] if len(value) > limit else []
    return errs + ([] if _full(fmt, value) else [regex_error(msg, fmt, *examples)])


def is_dns1123_subdomain(value: str) -> list[str]:
    return _checked(value, 253, _DNS1123_SUBDOMAIN_FMT, "a lowercase RFC 1123 subdomain must consist of lower case "
                    "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
                    "example.com")


def is_dns1035_label(value: str) -> list[str]:
    return _checked(value, 63, _DNS1035_LABEL_FMT, "a DNS-1035 label must consist of lower case alphanumeric "
                    "characters or '-', start with an alphabetic character, and end with an alphanumeric character",
                    "my-name", "abc-123")


def is_label_value(value: str) -> list[str]:
    return _checked(value, 63, _LABEL_VALUE_FMT, "a valid label must be an empty string or consist of alphanumeric "
                    "characters, '-', '_' or '.', and must start and end with an alphanumeric character",
                    "MyValue", "my_value", "12345")


def is_qualified_name(value: str) -> list[str]:
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs += ["prefix part " + m for m in is_dns1123_subdomain(prefix)]
    else:
        return ["a qualified name " + regex_error(
            "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
            "character", _QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part " + max_len_error(63))
    if not _full(_QUALIFIED_NAME_FMT, name):
        errs.append("name part " + regex_error(
            "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
            "character", _QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc"))
    return errs


def is_config_map_key(value: str) -> list[str]:
    errs = _checked(value, 253, _CONFIG_KEY_FMT, "a valid config key must consist of alphanumeric characters, '-', "
                    "'_' or '.'", "key.name", "KEY_NAME", "key-name")
    if value == ".":
        errs.append("must not be '.'")
    elif value == "..":
        errs.append("must not be '..'")
    elif value.startswith(".."):
        errs.append("must not start with '..'")
    return errs


def labels(value: Any, field: str) -> list[dict]:
    """metav1 validation.ValidateLabels."""
    if not isinstance(value, dict):
        return []
    out = []
    for k, v in value.items():
        out += [invalid(field, k, m) for m in is_qualified_name(k)]
        if isinstance(v, str):
            out += [invalid(field, v, m) for m in is_label_value(v)]
    return out


def _requirement(e: dict, f: str, ops: tuple[str, ...]) -> list[dict]:
    """ValidateLabelSelectorRequirement, and ValidateNodeSelectorRequirement when Gt and Lt are in ops."""
    op, values, out = e.get("operator"), e.get("values") or [], []
    if op in ("In", "NotIn"):
        if not values:
            out.append(required(f"{f}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
    elif op in ("Exists", "DoesNotExist"):
        if values:
            out.append(forbidden(f"{f}.values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
    elif op in ("Gt", "Lt") and op in ops:
        if len(values) != 1:
            out.append(required(f"{f}.values", "must be specified single value when `operator` is 'Lt' or 'Gt'"))
    else:
        out.append(invalid(f"{f}.operator", op or "", "not a valid selector operator"))
    return out + [invalid(f"{f}.key", e.get("key") or "", m) for m in is_qualified_name(e.get("key") or "")]


def label_selector(sel: Any, field: str) -> list[dict]:
    """metav1 validation.ValidateLabelSelector."""
    if not isinstance(sel, dict):
        return []
    out = labels(sel.get("matchLabels"), f"{field}.matchLabels")
    for i, e in enumerate(sel.get("matchExpressions") or []):
        if isinstance(e, dict):
            out += _requirement(e, f"{field}.matchExpressions[{i}]", ())
    return out


def _node_affinity(spec: dict, field: str) -> list[dict]:
    na = (spec.get("affinity") or {}).get("nodeAffinity") if isinstance(spec.get("affinity"), dict) else None
    if not isinstance(na, dict):
        return []
    out: list[dict] = []
    req = na.get("requiredDuringSchedulingIgnoredDuringExecution")
    if isinstance(req, dict):
        base = f"{field}.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
        for i, term in enumerate(req.get("nodeSelectorTerms") or []):
            for j, e in enumerate((term or {}).get("matchExpressions") or []):
                if isinstance(e, dict):
                    out += _requirement(e, f"{base}[{i}].matchExpressions[{j}]", ("Gt", "Lt"))
    return out


# ---------------------------------------------------------------------------------------------
# quantities in specs
# ---------------------------------------------------------------------------------------------
_STANDARD_CONTAINER_RESOURCES = ("cpu", "memory", "ephemeral-storage")
NEGATIVE = "must be greater than or equal to 0"


def _container_resource_name(name: str, field: str) -> list[dict]:
    out = [invalid(field, name, m) for m in is_qualified_name(name)]
    if "/" not in name and name not in _STANDARD_CONTAINER_RESOURCES and not name.startswith("hugepages-"):
        out.append(invalid(field, name, "must be a standard resource for containers"))
    return out


def resource_requirements(res: Any, field: str) -> list[dict]:
    """core validation.ValidateResourceRequirements (names, non-negative, request <= limit)."""
    if not isinstance(res, dict):
        return []
    out: list[dict] = []
    limits = _dict(res.get("limits"))
    requests = _dict(res.get("requests"))
    for part, values in (("limits", limits), ("requests", requests)):
        for name, v in values.items():
            f = f"{field}.{part}[{name}]"
            out += _container_resource_name(name, f)
            q = _quantity(v)
            if q and q[0] < 0:
                out.append(invalid(f, _canonical(*q), NEGATIVE))
    for name, v in requests.items():
        q, lim = _quantity(v), _quantity(limits.get(name)) if name in limits else None
        if q and lim and q[0] > lim[0]:
            out.append(invalid(f"{field}.requests", _canonical(*q),
                               f"must be less than or equal to {name} limit of {_canonical(*lim)}"))
    return out


def pvc_storage(spec: dict, field: str) -> list[dict]:
    """ValidatePersistentVolumeClaimSpec: spec.resources[storage] is positive (its absence is checked elsewhere)."""
    v = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
    q = _quantity(v)
    if q is None or q[0] > 0:
        return []
    return [invalid(f"{field}.resources[storage]", _canonical(*q), "must be greater than zero")]


def pv_capacity(spec: dict) -> list[dict]:
    out = []
    for name, v in (spec.get("capacity") or {}).items():
        q = _quantity(v)
        if q and q[0] <= 0:
            if q[0] < 0:
                out.append(invalid(f"spec.capacity[{name}]", int(q[0]), "must be a valid resource quantity"))
            out.append(invalid(f"spec.capacity[{name}]", _canonical(*q), "must be greater than zero"))
    return out


# ---------------------------------------------------------------------------------------------
# kinds
# ---------------------------------------------------------------------------------------------
def pod_spec(spec: Any, field: str) -> list[dict]:
    """The ValidatePodSpec rules not in validation.py: nodeName, nodeSelector, node affinity, resources."""
    if not isinstance(spec, dict):
        return []
    out: list[dict] = []
    node = spec.get("nodeName")
    if isinstance(node, str) and node:
        out += [invalid(f"{field}.nodeName", node, m) for m in is_dns1123_subdomain(node)]
    out += labels(spec.get("nodeSelector"), f"{field}.nodeSelector")
    out += _node_affinity(spec, field)
    for part in ("initContainers", "containers"):
        for i, c in enumerate(spec.get(part) or []):
            if isinstance(c, dict):
                out += resource_requirements(c.get("resources"), f"{field}.{part}[{i}].resources")
    return out


_SECRET_REQUIRED_KEYS = {
    "kubernetes.io/dockerconfigjson": (".dockerconfigjson",),
    "kubernetes.io/dockercfg": (".dockercfg",),
    "kubernetes.io/tls": ("tls.crt", "tls.key"),
    "kubernetes.io/ssh-auth": ("ssh-privatekey",),
}


def secret(obj: dict) -> list[dict]:
    """ValidateSecret: keys (stringData merges into data before validation), and the keys each type needs."""
    data: dict = {}
    for part in ("data", "stringData"):
        if isinstance(obj.get(part), dict):
            data.update(obj[part])
    out = []
    for k in data:
        out += [invalid(f"data[{k}]", k, m) for m in is_config_map_key(k)]
    stype = obj.get("type") or "Opaque"
    for k in _SECRET_REQUIRED_KEYS.get(stype, ()):
        if k not in data:
            out.append(required(f"data[{k}]"))
    if stype == "kubernetes.io/service-account-token" and \
            not ((obj.get("metadata") or {}).get("annotations") or {}).get("kubernetes.io/service-account.name"):
        out.append(required("metadata.annotations[kubernetes.io/service-account.name]"))
    if stype == "kubernetes.io/basic-auth" and "username" not in data and "password" not in data:
        out += [required("data[username]"), required("data[password]")]
    return out


def config_map(obj: dict) -> list[dict]:
    out = []
    data = _dict(obj.get("data"))
    for k in data:
        out += [invalid(f"data[{k}]", k, m) for m in is_config_map_key(k)]
    for k in _dict(obj.get("binaryData")):
        out += [invalid(f"binaryData[{k}]", k, m) for m in is_config_map_key(k)]
        if k in data:
            out.append(invalid(f"binaryData[{k}]", k, "duplicate of key present in data"))
    return out


def causes(obj: dict) -> list[dict]:
    """The kind-specific rules of this module for a decoded, defaulted built-in object."""
    kind = obj.get("kind") or ""
    spec = _dict(obj.get("spec"))
    if kind == "Secret":
        return secret(obj)
    if kind == "ConfigMap":
        return config_map(obj)
    if kind == "Pod":
        return pod_spec(spec, "spec")
    if kind == "PodTemplate":
        return pod_spec((obj.get("template") or {}).get("spec"), "template.spec")
    if kind in ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job"):
        out = pod_spec((spec.get("template") or {}).get("spec"), "spec.template.spec")
        for i, t in enumerate(spec.get("volumeClaimTemplates") or [] if kind == "StatefulSet" else []):
            out += pvc_storage((t or {}).get("spec") or {}, f"spec.volumeClaimTemplates[{i}].spec")
        return out
    if kind == "PersistentVolumeClaim":
        return pvc_storage(spec, "spec") + label_selector(spec.get("selector"), "spec.selector")
    if kind == "PersistentVolume":
        return pv_capacity(spec)
    if kind == "Service":
        name = (obj.get("metadata") or {}).get("name")
        out = [invalid("metadata.name", name, m) for m in is_dns1035_label(name)] if isinstance(name, str) and name else []
        return out + labels(spec.get("selector"), "spec.selector")
    return []


# ---------------------------------------------------------------------------------------------
# updates
# ---------------------------------------------------------------------------------------------
_PVC_SPEC_MESSAGE = ("spec is immutable after creation except resources.requests and volumeAttributesClassName for "
                     "bound claims")


def _storage(pvc: dict, where: str = "requests") -> Any:
    if where == "requests":
        return (((pvc.get("spec") or {}).get("resources") or {}).get("requests") or {}).get("storage")
    return ((pvc.get("status") or {}).get("capacity") or {}).get("storage")


def _size(v: Any) -> Decimal:
    q = _quantity(v)
    return q[0] if q else Decimal(0)


def storage_request(pvc: dict) -> Decimal | None:
    """spec.resources.requests.storage of a claim as a number (None when absent or not a quantity)."""
    q = _quantity(_storage(pvc))
    return q[0] if q else None


def pvc_update(old: dict, new: dict) -> list[dict]:
    """ValidatePersistentVolumeClaimUpdate (RecoverVolumeExpansionFailure on, as in 1.32)."""
    ospec, nspec = dict(old.get("spec") or {}), dict(new.get("spec") or {})
    if not ospec.get("volumeName"):
        ospec["volumeName"] = nspec.get("volumeName")
    for s in (ospec, nspec):
        s.pop("volumeAttributesClassName", None)
        s.setdefault("volumeName", None)
    if (new.get("status") or {}).get("phase") == "Bound" and isinstance((nspec.get("resources") or {}).get("requests"), dict):
        resources = dict(nspec["resources"])
        resources["requests"] = dict(resources["requests"], storage=_storage(old))
        nspec["resources"] = resources
    out = []
    if ospec != nspec:
        out.append(forbidden("spec", _PVC_SPEC_MESSAGE))
    old_size, new_size = _size(_storage(old)), _size(_storage(new))
    if new_size < old_size and new_size <= _size(_storage(old, "status")):
        out.append(forbidden("spec.resources.requests.storage", "field can not be less than status.capacity"))
    if (old.get("spec") or {}).get("volumeMode") != (new.get("spec") or {}).get("volumeMode"):
        out.append(invalid("volumeMode", (new.get("spec") or {}).get("volumeMode"), IMMUTABLE))
    return out


_PV_NOT_SOURCE = ("capacity", "accessModes", "claimRef", "persistentVolumeReclaimPolicy", "storageClassName",
                  "mountOptions", "volumeMode", "nodeAffinity", "volumeAttributesClassName")


def pv_update(old: dict, new: dict) -> list[dict]:
    """ValidatePersistentVolumeUpdate: the volume source, volumeMode and a set node affinity stay."""
    ospec, nspec = old.get("spec") or {}, new.get("spec") or {}
    out = []
    source = [{k: v for k, v in s.items() if k not in _PV_NOT_SOURCE} for s in (ospec, nspec)]
    if source[0] != source[1]:
        out.append(forbidden("spec.persistentvolumesource", "spec.persistentvolumesource is immutable after creation"))
    if ospec.get("volumeMode") != nspec.get("volumeMode"):
        out.append(invalid("volumeMode", nspec.get("volumeMode"), IMMUTABLE))
    if ospec.get("nodeAffinity") is not None and ospec.get("nodeAffinity") != nspec.get("nodeAffinity"):
        out.append(invalid("nodeAffinity", nspec.get("nodeAffinity"),
                           IMMUTABLE + ", except for updating from beta label to GA"))
    return out


def update_causes(old: dict, new: dict) -> list[dict]:
    """Update rules of this module (validation.update_causes has the others)."""
    kind = new.get("kind")
    if kind == "PersistentVolumeClaim":
        return pvc_update(old, new)
    if kind == "PersistentVolume":
        return pv_update(old, new)
    if kind == "Secret" and (old.get("type") or "Opaque") != (new.get("type") or "Opaque"):
        return [invalid("type", new.get("type") or "Opaque", IMMUTABLE)]
    return []
