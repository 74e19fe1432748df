"""Decoding of Kubernetes protobuf request bodies (application/vnd.kubernetes.protobuf).

kubectl's generators (`kubectl create namespace|configmap|secret|deployment|service|job|role...`)
and `kubectl drain` (evictions) send their objects as protobuf, as client-go's typed clients do.
The body is the magic b"k8s\\x00" and a runtime.Unknown envelope {typeMeta, raw}, whose raw bytes
are the object's generated.proto message. The twin turns it into the JSON object the real server
would have decoded, so the request then takes the JSON path.

protobuf_fields.json holds, per message, field number -> [jsonName, type(, message)] for the
served API groups plus meta/v1, resource, intstr and runtime. It was read from the gzipped
FileDescriptorProtos that client-go registers in the kubectl 1.32 binary:
`python -m twin.apiserver.protobuf regenerate /path/to/kubectl` rewrites it.

Go encodes value fields even when zero, and JSON then omits the omitempty ones: zero strings,
false booleans and zero integers are dropped here unless the schema marks the field required or
the field is a pointer whose zero means something (replicas: 0).
"""
from __future__ import annotations

import base64
import functools
import json
import sys
import zlib
from datetime import datetime, UTC
from pathlib import Path
from typing import Any

MAGIC = b"k8s\x00"
_TABLE = Path(__file__).with_name("protobuf_fields.json")
# pointer fields whose zero value is meaningful (kept in JSON)
KEEP_ZERO = {"replicas", "parallelism", "completions", "backoffLimit", "revisionHistoryLimit",
             "terminationGracePeriodSeconds", "activeDeadlineSeconds", "gracePeriodSeconds", "ttlSecondsAfterFinished",
             "value", "intVal", "containerPort", "port", "seconds", "expirationSeconds", "priority",
             "automountServiceAccountToken", "immutable", "suspend", "allowVolumeExpansion", "enableServiceLinks",
             "hostUsers", "allowPrivilegeEscalation", "privileged", "runAsNonRoot", "readOnlyRootFilesystem",
             "runAsUser", "runAsGroup", "fsGroup", "exitCode", "ready", "restartCount", "attachRequired",
             "podInfoOnMount", "requiresRepublish", "storageCapacity", "seLinuxMount", "orphanDependents",
             "minAvailable", "maxUnavailable", "allocateLoadBalancerNodePorts", "manualSelector", "optional",
             "defaultMode", "mode"}
_GROUP_PKG = {"": "core"}


class ProtobufError(ValueError):
    pass


@functools.lru_cache(maxsize=1)
def _table() -> dict[str, dict[int, list]]:
    raw = json.loads(_TABLE.read_text())
    return {msg: {int(n): f for n, f in fields.items()} for msg, fields in raw.items()}


# wire format ---------------------------------------------------------------------------------
def _varint(b: bytes, i: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if i >= len(b):
            raise ProtobufError("truncated varint")
        x = b[i]
        i += 1
        result |= (x & 0x7F) << shift
        shift += 7
        if not x & 0x80:
            return result, i


def _fields(b: bytes) -> list[tuple[int, int, Any]]:
    out = []
    i = 0
    while i < len(b):
        key, i = _varint(b, i)
        num, wt = key >> 3, key & 7
        v: int | bytes  # varints decode to int, the other wire types stay bytes
        if wt == 0:
            v, i = _varint(b, i)
        elif wt == 2:
            n, i = _varint(b, i)
            v = b[i:i + n]
            i += n
        elif wt == 1:
            v = b[i:i + 8]
            i += 8
        elif wt == 5:
            v = b[i:i + 4]
            i += 4
        else:
            raise ProtobufError(f"unsupported wire type {wt}")
        out.append((num, wt, v))
    return out


def _signed(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def _scalar(t: str, wt: int, v: Any) -> Any:
    if t == "s":
        return bytes(v).decode("utf-8")
    if t == "y":
        return base64.b64encode(bytes(v)).decode()
    if t == "b":
        return bool(v)
    if t == "i" or t == "e":
        return _signed(v)
    if t == "z":
        return (v >> 1) ^ -(v & 1)
    if t in ("d", "x64", "sx64"):
        import struct
        return struct.unpack("<d" if t == "d" else "<q", v)[0]
    if t in ("f", "x32", "sx32"):
        import struct
        return struct.unpack("<f" if t == "f" else "<i", v)[0]
    raise ProtobufError(f"unsupported field type {t}")


def _packed(t: str, v: bytes) -> list:
    out = []
    i = 0
    while i < len(v):
        x, i = _varint(v, i)
        out.append(_scalar(t, 0, x))
    return out


_SPECIAL = {
    "k8s.io.apimachinery.pkg.apis.meta.v1.Time", "k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime",
    "k8s.io.apimachinery.pkg.api.resource.Quantity", "k8s.io.apimachinery.pkg.util.intstr.IntOrString",
    "k8s.io.apimachinery.pkg.runtime.RawExtension", "k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1",
    "k8s.io.apimachinery.pkg.apis.meta.v1.Duration",
}


def _special(msg: str, b: bytes) -> Any:
    f = {num: v for num, _, v in _fields(b)}
    if msg.endswith(".Time") or msg.endswith(".MicroTime"):
        secs = _signed(f.get(1, 0))
        if secs == -62135596800 or (secs == 0 and not f):
            return None  # the zero time.Time is JSON null
        ts = datetime.fromtimestamp(secs, tz=UTC)
        if msg.endswith(".MicroTime"):
            return ts.strftime("%Y-%m-%dT%H:%M:%S") + f".{f.get(2, 0) // 1000:06d}Z"
        return ts.strftime("%Y-%m-%dT%H:%M:%SZ")
    if msg.endswith(".Quantity"):
        return bytes(f.get(1, b"")).decode()
    if msg.endswith(".IntOrString"):
        return bytes(f.get(3, b"")).decode() if f.get(1, 0) == 1 else _signed(f.get(2, 0))
    if msg.endswith(".RawExtension") or msg.endswith(".FieldsV1"):
        raw = bytes(f.get(1, b""))
        return json.loads(raw) if raw else None
    if msg.endswith(".Duration"):
        ns = _signed(f.get(1, 0))
        return f"{ns / 1e9:g}s"
    return None


def decode_message(msg: str, b: bytes) -> Any:
    """One message as the JSON the real server would produce (omitempty zero values dropped)."""
    if msg in _SPECIAL:
        return _special(msg, b)
    table = _table().get(msg)
    if table is None:
        raise ProtobufError(f"no protobuf schema for {msg}")
    out: dict[str, Any] = {}
    for num, wt, v in _fields(b):
        fd = table.get(num)
        if fd is None:
            continue  # an unknown field: dropped, as Go's decoder drops it
        name, t = fd[0], fd[1]
        if t == "M":
            kt, vt, vref = fd[2], fd[3], fd[4]
            entry = {n: (w, x) for n, w, x in _fields(v)}
            key = _scalar(kt, *entry[1]) if 1 in entry else ""
            if 2 in entry:
                val = decode_message(vref, entry[2][1]) if vt == "m" else _scalar(vt, *entry[2])
            else:
                val = "" if vt in ("s", "y") else None
            out.setdefault(name, {})[key] = val
        elif t == "rm":
            out.setdefault(name, []).append(decode_message(fd[2], v))
        elif t.startswith("r"):
            st = t[1:]
            if wt == 2 and st not in ("s", "y"):
                out.setdefault(name, []).extend(_packed(st, v))
            else:
                out.setdefault(name, []).append(_scalar(st, wt, v))
        elif t == "m":
            val = decode_message(fd[2], v)
            if val is None:
                out.pop(name, None)
            else:
                out[name] = val
        else:
            val = _scalar(t, wt, v)
            if val in ("", 0, False) and not isinstance(val, float) and name not in KEEP_ZERO:
                continue
            out[name] = val
    return out


def _package(group: str, version: str) -> str:
    pkg = _GROUP_PKG.get(group, group.split(".")[0])
    return f"k8s.io.api.{pkg}.{version}"


def decode(body: bytes) -> dict:
    """A protobuf request body (magic + runtime.Unknown) -> the object as a JSON dict."""
    if not body.startswith(MAGIC):
        raise ProtobufError("the body does not start with the protobuf magic number")
    env = {num: v for num, _, v in _fields(body[len(MAGIC):])}
    tm = {num: bytes(v).decode() for num, _, v in _fields(env.get(1, b""))}
    api_version, kind = tm.get(1, ""), tm.get(2, "")
    if not kind:
        raise ProtobufError("the protobuf envelope names no kind")
    if env.get(4) and bytes(env[4]) not in (b"", b"application/vnd.kubernetes.protobuf"):
        raise ProtobufError(f"unsupported embedded content type {bytes(env[4])!r}")
    group, _, version = api_version.rpartition("/")
    msg = f"{_package(group, version)}.{kind}"
    if kind in ("DeleteOptions",) and msg not in _table():
        msg = f"k8s.io.apimachinery.pkg.apis.meta.v1.{kind}"
    obj = decode_message(msg, bytes(env.get(2, b"")))
    obj = {"apiVersion": api_version, "kind": kind, **obj}
    return obj


# regeneration of protobuf_fields.json from a kubectl binary -------------------------------------
_PROTO_FILES = [f"k8s.io/api/{p}/generated.proto" for p in (
    "core/v1", "apps/v1", "batch/v1", "storage/v1", "rbac/v1", "coordination/v1", "policy/v1", "scheduling/v1",
    "autoscaling/v1", "networking/v1", "authorization/v1", "authentication/v1")] + [
    "k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto", "k8s.io/apimachinery/pkg/api/resource/generated.proto",
    "k8s.io/apimachinery/pkg/util/intstr/generated.proto", "k8s.io/apimachinery/pkg/runtime/generated.proto",
    "k8s.io/apimachinery/pkg/runtime/schema/generated.proto"]
_TYPES = {1: "d", 2: "f", 3: "i", 4: "i", 5: "i", 6: "x64", 7: "x32", 8: "b", 9: "s", 11: "m", 12: "y", 13: "i",
          14: "e", 15: "sx32", 16: "sx64", 17: "z", 18: "z"}


def _descriptor_message(b: bytes) -> dict:
    m: dict[str, Any] = {"name": "", "fields": [], "nested": [], "map": False}
    for num, _, v in _fields(b):
        if num == 1:
            m["name"] = bytes(v).decode()
        elif num == 2:
            f: dict[str, Any] = {}
            for a, _, w in _fields(v):
                if a == 1:
                    f["name"] = bytes(w).decode()
                elif a in (3, 4, 5):
                    f[{3: "num", 4: "label", 5: "type"}[a]] = w
                elif a == 6:
                    f["tn"] = bytes(w).decode().lstrip(".")
            m["fields"].append(f)
        elif num == 3:
            m["nested"].append(_descriptor_message(v))
        elif num == 7:
            m["map"] = any(a == 7 and w for a, _, w in _fields(v))
    return m


def regenerate(binary: str, out: Path = _TABLE) -> int:
    data = Path(binary).read_bytes()
    files: dict[str, tuple[str, list[dict]]] = {}
    pos = 0
    while (pos := data.find(b"\x1f\x8b\x08", pos)) >= 0:
        try:
            raw = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data[pos:pos + 4_000_000])
            fs = _fields(raw)
            name = next((bytes(v).decode() for n, _, v in fs if n == 1), "")
            if name in _PROTO_FILES:
                pkg = next((bytes(v).decode() for n, _, v in fs if n == 2), "")
                files[name] = (pkg, [_descriptor_message(v) for n, _, v in fs if n == 4])
        except (zlib.error, ProtobufError, UnicodeDecodeError, IndexError):
            pass
        pos += 3
    table: dict[str, dict[int, list]] = {}

    def add(m: dict, prefix: str) -> None:
        full = f"{prefix}.{m['name']}"
        if m["map"]:
            return
        nested = {n["name"]: n for n in m["nested"]}
        fields: dict[int, list] = {}
        for f in m["fields"]:
            t, ref = _TYPES[f["type"]], f.get("tn", "")
            entry = nested.get(ref.split(".")[-1]) if t == "m" else None
            if entry is not None and entry["map"]:
                kv = {x["num"]: x for x in entry["fields"]}
                fields[f["num"]] = [f["name"], "M", _TYPES[kv[1]["type"]], _TYPES[kv[2]["type"]], kv[2].get("tn", "")]
            else:
                fields[f["num"]] = [f["name"], ("r" if f.get("label") == 3 else "") + t] + ([ref] if ref else [])
        table[full] = fields
        for n in m["nested"]:
            add(n, full)

    for pkg, msgs in files.values():
        for m in msgs:
            add(m, pkg)
    out.write_text(json.dumps(table, separators=(",", ":"), sort_keys=True))
    return len(table)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "regenerate":
        print(f"{regenerate(sys.argv[2])} messages written to {_TABLE}")
    else:
        print("usage: python -m twin.apiserver.protobuf regenerate /path/to/kubectl", file=sys.stderr)
        sys.exit(2)
