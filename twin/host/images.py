"""The twin's image catalogue (twin/host/images.yaml): which images it can pull and what really runs for each.

An image reference is normalised as containerd does (docker.io/library/ for short names, tag latest when
none is given); the first catalogue entry whose repository and tag globs match decides. An image with no
entry cannot be pulled: the kubelet reports ErrImagePull with the message a registry's answer produces,
then ImagePullBackOff.
"""
from __future__ import annotations

import fnmatch
import functools
import hashlib
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import yaml

CATALOGUE = Path(__file__).with_name("images.yaml")
ANNOTATION_PREFIX = "storageperf.io/twin-runtime-"
KINDS = ("mysql", "fio", "sysbench", "shell", "simulated")


@dataclass(frozen=True)
class Entry:
    repositories: tuple[str, ...]
    tags: tuple[str, ...]
    runs: str
    program: str = ""
    version: tuple[str, ...] = ()


@dataclass(frozen=True)
class Ref:
    registry: str
    repository: str  # with its registry: docker.io/library/mysql
    tag: str
    digest: str

    @property
    def full(self) -> str:
        return f"{self.repository}@{self.digest}" if self.digest else f"{self.repository}:{self.tag}"


def parse(image: str) -> Ref:
    """containerd's normalisation of an image reference."""
    name, _, digest = (image or "").partition("@")
    last = name.rsplit("/", 1)[-1]
    tag = ""
    if ":" in last:
        name, tag = name[: len(name) - len(last)] + last.split(":", 1)[0], last.split(":", 1)[1]
    first = name.split("/", 1)[0]
    if "/" not in name:
        name = f"docker.io/library/{name}"
    elif not ("." in first or ":" in first or first == "localhost"):
        name = f"docker.io/{name}"
    return Ref(name.split("/", 1)[0], name, tag or ("" if digest else "latest"), digest)


_TAG_TOKENS = {"#": "[0-9]+", "*": ".*", "?": ".", "{": "(?:", ",": "|", "}": ")"}


@functools.cache
def tag_pattern(glob: str) -> re.Pattern[str]:
    """A tag pattern of the catalogue: `#` a number, `{a,b,}` one of the alternatives (an empty one makes the part
    optional), `*` and `?` as in globs; everything else literal."""
    depth, out = 0, []
    for ch in glob:
        depth += (ch == "{") - (ch == "}")
        if depth < 0:
            raise ValueError(f"{CATALOGUE}: tag pattern {glob!r} closes a brace it never opened")
        out.append(_TAG_TOKENS[ch] if ch in _TAG_TOKENS and (ch != "," or depth) else re.escape(ch))
    if depth:
        raise ValueError(f"{CATALOGUE}: tag pattern {glob!r} leaves a brace open")
    return re.compile("".join(out))


def _tag_matches(tag: str, globs: tuple[str, ...]) -> bool:
    return any(tag_pattern(t).fullmatch(tag) for t in globs)


@functools.cache
def catalogue() -> tuple[Entry, ...]:
    data = yaml.safe_load(CATALOGUE.read_text()) or {}
    out = []
    for i, e in enumerate(data.get("images") or []):
        if e.get("runs") not in KINDS:
            raise ValueError(f"{CATALOGUE}: images[{i}].runs must be one of {', '.join(KINDS)}, not {e.get('runs')!r}")
        entry = Entry(tuple(e["repositories"]), tuple(str(t) for t in e.get("tags") or ["*"]), e["runs"],
                      e.get("program", ""), tuple(e.get("version") or ()))
        for t in entry.tags:
            tag_pattern(t)  # a malformed pattern fails here, naming itself, not at the first pull
        out.append(entry)
    return tuple(out)


def lookup(image: str) -> Entry | None:
    ref = parse(image)
    for e in catalogue():
        if any(fnmatch.fnmatchcase(ref.repository, r) for r in e.repositories):
            if ref.digest or _tag_matches(ref.tag, e.tags):
                return e
            return None  # the repository exists, that tag does not
    return None


def pull_error(image: str) -> str:
    """What the kubelet's Failed event says after `Failed to pull image "<image>": `, as containerd words it."""
    ref = parse(image)
    known = any(fnmatch.fnmatchcase(ref.repository, r) for e in catalogue() for r in e.repositories)
    full = ref.full
    if known or ref.registry == "docker.io":
        return (f"rpc error: code = NotFound desc = failed to pull and unpack image \"{full}\": failed to resolve "
                f"reference \"{full}\": {full}: not found")
    path = ref.repository.split("/", 1)[1] if "/" in ref.repository else ref.repository
    return (f"rpc error: code = Unknown desc = failed to pull and unpack image \"{full}\": failed to resolve reference "
            f"\"{full}\": failed to do request: Head \"https://{ref.registry}/v2/{path}/manifests/{ref.digest or ref.tag}\": "
            f"dial tcp: lookup {ref.registry.split(':')[0]}: no such host")


@functools.cache
def runtime(image: str, real: bool = True) -> str:
    """One line saying what runs for the image: 'MariaDB ... (mariadbd)', or 'simulated'."""
    e = lookup(image)
    if e is None:
        return ""
    if e.runs == "simulated" or not real or not e.version:
        return "simulated (no process)"
    try:
        out = subprocess.run(list(e.version), capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        out = ""
    text = " ".join(line.strip() for line in out.splitlines() if line.strip())
    return f"{e.program} on the host: {text or 'version unknown'}"


def image_id(image: str, what_runs: str) -> str:
    """containerStatuses[].imageID: a digest reference, distinct per program version that really ran."""
    ref = parse(image)
    return f"{ref.repository}@sha256:{hashlib.sha256(f'{ref.full} {what_runs}'.encode()).hexdigest()}"
