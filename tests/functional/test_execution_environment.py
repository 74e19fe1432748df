"""The execution environment and the requirement files: the EE gets the collection's runtime needs on a pinned
community EE base image, and nothing of the twin, the tests or the controller pin of development.

`ansible-builder create` writes the build context only; no image is built (no registry is reachable here). What the
image's builder stage would compute from it (the introspection of the installed collections) runs here too."""
from __future__ import annotations

import ast
import fnmatch
import importlib.metadata
import re
import shutil
import subprocess
import sys

import yaml
from bindep.depends import Depends
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from tests.support.twin import REPO, VENV_BIN

BASE_REPOSITORY = "ghcr.io/ansible-community/community-ee-base"
TWIN_ONLY = {"aiohttp", "jsonpatch", "kubernetes-validate", "cryptography"}
DEV_ONLY = {"ansible-core", "ansible-runner", "pytest", "hypothesis", "molecule", "ansible-lint", "ansible-builder"}
# what scripts/setup.sh and the tests need on a Debian machine, never inside an EE
TEST_PACKAGES = {"python3-venv", "unzip", "iproute2", "e2fsprogs", "util-linux", "fio", "sysbench", "mariadb-server",
                 "mariadb-client", "glusterfs-server", "glusterfs-client", "chromium"}


def _requirements(name):
    """{normalised distribution name: line} of one requirements file, without its -r includes."""
    out = {}
    for line in (REPO / name).read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("-"):
            out[re.split(r"[=<>!~;\[ ]", line, maxsplit=1)[0].lower().replace("_", "-")] = line
    return out


def _third_party_imports(tree):
    """Top-level names of the modules that Python files under `tree` import, standard library and Ansible left out."""
    names = set()
    for path in (REPO / tree).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return {n for n in names if n not in sys.stdlib_module_names and n not in ("ansible", "ansible_collections", tree)}


def _distributions(modules):
    by_module = importlib.metadata.packages_distributions()
    return {m: {d.lower().replace("_", "-") for d in by_module.get(m, [])} for m in modules}


def _direct_dependencies(dists):
    deps = set()
    for d in dists:
        for req in importlib.metadata.requires(d) or []:
            if "extra ==" not in req:
                deps.add(re.split(r"[=<>!~;\[ (]", req, maxsplit=1)[0].lower().replace("_", "-"))
    return deps


def test_runtime_requirements_are_what_the_plugins_import():
    runtime = set(_requirements("requirements.txt"))
    # urllib3 comes with kubernetes; boto3 (reports_upload) is the optional runtime of requirements-s3.txt
    provided = runtime | _direct_dependencies(runtime) | set(_requirements("requirements-s3.txt"))
    for module, dists in _distributions(_third_party_imports("plugins")).items():
        assert dists & provided, f"plugins import {module} ({dists or 'not installed'}), which requirements.txt lacks"
    imported = set().union(*_distributions(_third_party_imports("plugins")).values())
    assert runtime <= imported, f"requirements.txt lists what no plugin imports: {sorted(runtime - imported)}"
    assert not runtime & (TWIN_ONLY | DEV_ONLY), "twin or development packages in the collection's runtime"
    # the shipped unit tests' own list (ansible-test units installs it) keeps up with the runtime
    assert runtime <= set(_requirements("tests/unit/requirements.txt"))


def test_twin_requirements_cover_the_twin_and_stay_out_of_the_runtime():
    twin = set(_requirements("requirements-twin.txt"))
    assert TWIN_ONLY <= twin
    have = twin | set(_requirements("requirements.txt"))
    for module, dists in _distributions(_third_party_imports("twin")).items():
        assert dists & have, f"twin imports {module} ({dists}), which neither requirements file names"


def test_dev_requirements_include_both_and_pin_the_controller():
    text = (REPO / "requirements-dev.txt").read_text().splitlines()
    assert "-r requirements.txt" in text and "-r requirements-twin.txt" in text
    dev = _requirements("requirements-dev.txt")
    assert dev["ansible-core"].startswith("ansible-core==")
    assert dev["ansible-builder"] == "ansible-builder==3.2.0"


def _setup_functions():
    """{name: body} of scripts/setup.sh's shell functions."""
    text = (REPO / "scripts" / "setup.sh").read_text()
    return dict(re.findall(r"^(\w+)\(\) \{\n(.*?)^\}", text, re.M | re.S))


def _pip_inputs(body):
    """The files that a function's pip commands read: their -r/-c files and, in turn, those files' own."""
    todo = re.findall(r"pip install .*?-[rc] (\S+)(?: -c (\S+))?", body)
    todo = [f for pair in todo for f in pair if f]
    seen = []
    while todo:
        name = todo.pop()
        seen.append(name)
        todo += [ln.split()[1] for ln in (REPO / name).read_text().splitlines() if ln.startswith(("-r ", "-c "))]
    return seen


def test_setup_stamp_hashes_every_requirements_file_it_installs():
    """Each venv is reinstalled when any file its pip commands read changes: constraints.txt too."""
    stamped = {}
    functions = _setup_functions()
    # the venvs of one requirements file each: the helper hashes exactly the file it installs
    single = functions.pop("install_single_venv")
    assert 'local dir=$1 files=("$2")' in single and 'venv_is_current "$dir" .requirements.sha "${files[@]}"' in single
    assert 'pip" install -q -r "${files[0]}"' in single and 'hash_of "${files[@]}" > "$dir/.requirements.sha"' in single
    for body in functions.values():
        for venv, requirements in re.findall(r"install_single_venv (\S+) (\S+) ", body):
            stamped[venv] = [requirements]
    for body in functions.values():
        venv = re.search(r"venv_is_current (\S+) ", body)
        if venv:
            hashed = re.search(r"local files=\(([^)]*)\)", body).group(1).split()
            inputs = _pip_inputs(body)
            assert inputs, f"no pip install -r in the function that installs {venv.group(1)}"
            for name in inputs:
                assert any(fnmatch.fnmatch(name, pattern) for pattern in hashed), (venv.group(1), name, hashed)
            stamped[venv.group(1)] = inputs
    assert "constraints.txt" in stamped[".venv"] and "requirements.txt" in stamped[".venv"]
    assert stamped[".venv-oldest"] == ["requirements-oldest.txt"]
    assert stamped[".venv-release"] == ["requirements-release.txt"]


def _requirement_lines(name):
    return [Requirement(line) for line in (ln.split("#", 1)[0].strip() for ln in (REPO / name).read_text().splitlines())
            if line and not line.startswith("-")]


def test_runtime_requirements_are_ranges_and_constraints_pin_each_inside_its_range():
    """Ranges let an EE hold other collections too; constraints.txt keeps this repository's own venv exact."""
    runtime = {r.name.lower(): r for r in _requirement_lines("requirements.txt")}
    pins = {r.name.lower(): r for r in _requirement_lines("constraints.txt")}
    assert set(pins) == set(runtime)
    for name, req in runtime.items():
        ops = {s.operator for s in req.specifier}
        assert ops == {">=", "<"}, f"{req}: a lower bound that is tested and an upper one below the next major"
        exact = [s.version for s in pins[name].specifier if s.operator == "=="]
        assert len(pins[name].specifier) == 1 and exact, f"constraints.txt pins {name} exactly: {pins[name]}"
        assert exact[0] in req.specifier, f"constraints.txt's {name}=={exact[0]} is outside requirements.txt's {req}"
    # the EE and every other collection's EE read requirements.txt, never the pins
    assert "constraints" not in (REPO / "requirements.txt").read_text().split("#")[0]


def test_every_accepted_ansible_core_has_a_sanity_ignore_file_and_the_oldest_is_installed_for_sanity():
    floor = re.fullmatch(r">=(\d+)\.(\d+)\.0", yaml.safe_load((REPO / "meta" / "runtime.yml").read_text())
                         ["requires_ansible"])
    assert floor, "requires_ansible is >=X.Y.0"
    oldest = (int(floor.group(1)), int(floor.group(2)))
    newest = tuple(int(x) for x in _requirements("requirements-dev.txt")["ansible-core"].split("==")[1].split(".")[:2])
    ignores = {p.name for p in (REPO / "tests" / "sanity").glob("ignore-*.txt")}
    assert ignores == {f"ignore-{oldest[0]}.{m}.txt" for m in range(oldest[1], newest[1] + 1)}
    (core,) = _requirement_lines("requirements-oldest.txt")
    (version,) = [s.version for s in core.specifier if s.operator == "=="]
    assert core.name == "ansible-core" and tuple(int(x) for x in version.split(".")[:2]) == oldest
    for meta in (REPO / "roles").glob("*/meta/main.yml"):
        assert yaml.safe_load(meta.read_text())["galaxy_info"]["min_ansible_version"] == "%d.%d" % oldest, meta


def _bindep_packages(profiles):
    return {rule[0] for rule in Depends((REPO / "bindep.txt").read_text()).active_rules(profiles)}


def test_bindep_gives_the_ee_runtime_packages_only_and_setup_everything_it_tests_with():
    fedora_ee = _bindep_packages(["default", "platform:rpm", "platform:redhat", "platform:fedora"])
    assert fedora_ee == {"python3"}
    debian_tests = _bindep_packages(["test", "platform:dpkg", "platform:debian"])
    assert TEST_PACKAGES | {"python3"} <= debian_tests
    assert not TEST_PACKAGES & _bindep_packages(["default", "platform:dpkg", "platform:debian"])
    # scripts/setup.sh selects the Debian packages with its own sed, test profile included
    sed_expr = re.search(r"sed -n '([^']+)' bindep.txt", (REPO / "scripts" / "setup.sh").read_text()).group(1)
    selected = subprocess.run(["sed", "-n", sed_expr, str(REPO / "bindep.txt")], check=True, capture_output=True,
                              text=True).stdout.split()
    assert set(selected) == debian_tests


def _build_context(tmp_path):
    """The EE's build context as `ansible-builder create` writes it, from a copy of the files the EE names."""
    src = tmp_path / "src"
    src.mkdir()
    for name in ("execution-environment.yml", "requirements.txt", "bindep.txt"):
        shutil.copy(REPO / name, src / name)
    subprocess.run([str(VENV_BIN / "ansible-galaxy"), "collection", "build", "--force", "--output-path",
                    str(src / "build"), str(REPO)], check=True, capture_output=True, text=True)
    ctx = tmp_path / "context"
    subprocess.run([str(VENV_BIN / "ansible-builder"), "create", "-f", str(src / "execution-environment.yml"),
                    "-c", str(ctx), "--output-filename", "Containerfile"], cwd=src, check=True, capture_output=True,
                   text=True)
    return ctx


def _base_image():
    return yaml.safe_load((REPO / "execution-environment.yml").read_text())["images"]["base_image"]["name"]


def test_base_image_is_pinned_to_the_ansible_core_line_the_tests_run():
    """A tag of the community image (<ansible-core version>-<build>) or a digest, never a moving :latest; its
    ansible-core is of requirements-dev.txt's line and meets meta/runtime.yml's requires_ansible."""
    image = _base_image()
    repository, sep, ref = image.partition("@sha256:") if "@" in image else image.rpartition(":")
    assert repository == BASE_REPOSITORY and sep, image
    if sep == ":":
        tag = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)-(\d+)", ref)
        assert tag, f"{image}: a tag such as 2.19.5-1 (ansible-core 2.19.5, first image build), not {ref!r}"
        core = tuple(int(x) for x in tag.groups()[:3])
        dev = _requirements("requirements-dev.txt")["ansible-core"].split("==")[1]
        assert core[:2] == tuple(int(x) for x in dev.split(".")[:2]), f"{image} carries another line than {dev}"
        requires = yaml.safe_load((REPO / "meta" / "runtime.yml").read_text())["requires_ansible"]
        assert ".".join(map(str, core)) in SpecifierSet(requires), (image, requires)
    else:
        assert re.fullmatch(r"[0-9a-f]{64}", ref), image
    assert "latest" not in image


def test_ansible_builder_creates_a_context_on_the_pinned_base(tmp_path):
    ee = yaml.safe_load((REPO / "execution-environment.yml").read_text())
    assert ee["version"] == 3
    ctx = _build_context(tmp_path)
    containerfile = (ctx / "Containerfile").read_text()
    assert f'ARG EE_BASE_IMAGE="{_base_image()}"' in containerfile
    assert "FROM $EE_BASE_IMAGE AS base" in containerfile
    assert "fedora:40" not in containerfile
    # no controller pin: the base image's ansible-core, held to meta/runtime.yml's floor
    refs = re.search(r'ARG ANSIBLE_INSTALL_REFS="([^"]*)"', containerfile).group(1).split()
    requires = yaml.safe_load((REPO / "meta" / "runtime.yml").read_text())["requires_ansible"]
    assert refs == [f"ansible-core{requires}", "ansible-runner"]
    # the collection's own requirement files, as they are
    assert (ctx / "_build" / "requirements.txt").read_text() == (REPO / "requirements.txt").read_text()
    assert (ctx / "_build" / "bindep.txt").read_text() == (REPO / "bindep.txt").read_text()
    assert "COPY _build/requirements.txt requirements.txt" in containerfile
    assert "COPY _build/bindep.txt bindep.txt" in containerfile
    # the collection itself (this version's tarball) and its one dependency, installed from requirements.yml
    version = yaml.safe_load((REPO / "galaxy.yml").read_text())["version"]
    tarball = f"build/storageperf-k8s-{version}.tar.gz"
    galaxy = yaml.safe_load((ctx / "_build" / "requirements.yml").read_text())["collections"]
    assert {"name": tarball, "type": "file"} in galaxy
    assert {"name": "kubernetes.core", "version": ">=5.0.0"} in galaxy
    assert (ctx / "_build" / tarball).is_file()
    assert "ansible-galaxy collection install" in containerfile


def _introspect(tmp_path, ctx):
    """What the image's builder stage computes (introspect.py, from the context) once the galaxy stage has installed
    the context's tarball and kubernetes.core: {"pip"|"bindep": {collection: [lines]}}."""
    version = yaml.safe_load((REPO / "galaxy.yml").read_text())["version"]
    installed = tmp_path / "installed"
    subprocess.run([str(VENV_BIN / "ansible-galaxy"), "collection", "install", "--no-deps", "--force", "-p", str(installed),
                    str(ctx / "_build" / "build" / f"storageperf-k8s-{version}.tar.gz")], check=True,
                   capture_output=True, text=True)
    (installed / "ansible_collections" / "kubernetes").mkdir()
    (installed / "ansible_collections" / "kubernetes" / "core").symlink_to(
        REPO / "collections" / "ansible_collections" / "kubernetes" / "core")
    subprocess.run([sys.executable, str(ctx / "_build" / "scripts" / "introspect.py"), "introspect",
                    "--write-pip", str(tmp_path / "pip.txt"), "--write-bindep", str(tmp_path / "bindep.txt"),
                    str(installed)], check=True, capture_output=True, text=True)
    out = {}
    for kind in ("pip", "bindep"):
        for line in (tmp_path / f"{kind}.txt").read_text().splitlines():
            requirement, _, source = line.partition("  # from collection ")
            out.setdefault(kind, {}).setdefault(source, []).append(requirement)
    return out


def test_the_ee_builder_finds_the_runtime_files_in_the_shipped_collection(tmp_path):
    """The builder reads the installed collection's meta/execution-environment.yml: the files it names ship in the
    tarball and give the runtime ranges and, on the EE's Fedora, python3 alone."""
    found = _introspect(tmp_path, _build_context(tmp_path))
    ours = found["pip"]["storageperf.k8s"]
    runtime = [ln.split("#", 1)[0].strip() for ln in (REPO / "requirements.txt").read_text().splitlines()]
    # the builder leaves out what the base image owns (PyYAML comes with ansible-core)
    assert ours == [r for r in runtime if r and not r.lower().startswith("pyyaml")]
    assert not {Requirement(r).name.lower() for r in ours} & (TWIN_ONLY | DEV_ONLY)
    bindep = Depends("\n".join(found["bindep"]["storageperf.k8s"]))
    assert {r[0] for r in bindep.active_rules(["default", "platform:rpm", "platform:redhat", "platform:fedora"])} == \
        {"python3"}
    assert "kubernetes.core" in found["pip"]


def test_collection_names_its_ee_dependencies_for_other_ees():
    """Any EE that installs the collection finds the same runtime files through its meta/execution-environment.yml."""
    meta = yaml.safe_load((REPO / "meta" / "execution-environment.yml").read_text())["dependencies"]
    assert meta == {"python": "requirements.txt", "system": "bindep.txt"}
