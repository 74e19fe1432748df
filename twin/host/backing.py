"""Host directories behind the twin's PersistentVolumes, so programs run by twin/host/exec_runner.py measure
real media: PMEM volumes live in memory, disk volumes on the machine's disk.

- PMEM (driver localplugin.csi.alibabacloud.com, volumeAttributes volumeType PMEM, the driver's default):
  one ext4 filesystem per twin on a loop device over a sparse file in /dev/shm, so the data is in RAM like
  on a persistent-memory DIMM and, unlike tmpfs, O_DIRECT works (fio direct=1, InnoDB's O_DIRECT flush).
  Created on first use (mkfs + losetup + mount under <twin dir>/backing/pmem), torn down at twin stop
  (umount, losetup -d, file removed). No loop devices -> PmemUnavailable, which the kubelet reports as the
  container's failure ("failed to run: ...").
- Everything else (diskplugin cloud disks, local LVM, Trident ...): a directory under <twin dir>/backing/disk
  on whatever disk holds the twin directory.
One subdirectory per PV (its name); subdirectories of PVs that no longer exist are removed on the next call.
Deviations: no quota (a PV can outgrow its capacity), mountOptions (dax) are not applied, all nodes share
one PMEM filesystem. Size of the PMEM file: cluster.settings["pmem_backing_bytes"], else
$TWIN_PMEM_BACKING_BYTES, else 16 GiB capped at 60 % of /dev/shm's free space (sparse: RAM is used only
for what is written).

bind(cluster) is called by twin/fleet/cluster.py at start; volume_dir(pv) by the kubelet (kubelet_volumes.py).
"""
from __future__ import annotations

import hashlib
import logging
import os
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Any

log = logging.getLogger("twin")

LOCAL_DRIVER = "localplugin.csi.alibabacloud.com"
SHM = Path("/dev/shm")
DEFAULT_PMEM_BYTES = 16 << 30
_cluster: Any = None
_lock = threading.Lock()
_pmem: PmemFilesystem | None = None


class PmemUnavailable(RuntimeError):
    """The memory-backed filesystem cannot be made here (no loop devices, not root, no /dev/shm)."""


def bind(cluster: Any) -> None:
    """Remember the cluster (its directory and settings) and tear the backing down when it stops."""
    global _cluster, _pmem
    _cluster = cluster
    _pmem = None
    hooks = getattr(cluster, "on_stop", None)
    if hooks is not None:
        hooks.append(teardown)


def root() -> Path:
    if _cluster is None:
        raise RuntimeError("twin.host.backing is not bound to a cluster: twin/fleet/cluster.py calls backing.bind(cluster) at start")
    return Path(_cluster.dir).resolve() / "backing"


def is_pmem(pv: dict) -> bool:
    csi = (pv.get("spec") or {}).get("csi") or {}
    attrs = csi.get("volumeAttributes") or {}
    return csi.get("driver") == LOCAL_DRIVER and attrs.get("volumeType", "PMEM") == "PMEM"


def medium(pv: dict) -> str:
    """'pmem' (memory-backed ext4) or 'disk' (a directory on the twin directory's disk)."""
    return "pmem" if is_pmem(pv) else "disk"


def volume_dir(pv: dict) -> str:
    """The host directory holding the PV's data (created on first use)."""
    name = pv["metadata"]["name"]
    with _lock:
        base = _pmem_fs().mountpoint if is_pmem(pv) else root() / "disk"
        base.mkdir(parents=True, exist_ok=True)
        _forget_deleted(base, keep=name)
        d = base / name
        d.mkdir(exist_ok=True)
    return str(d)


def _forget_deleted(base: Path, keep: str) -> None:
    """Remove the data of PVs deleted since the last call (the real driver deletes the LV / disk)."""
    store = getattr(_cluster, "store", None)
    if store is None:
        return
    pv_rt = store.rt("", "v1", "persistentvolumes")
    for d in base.iterdir():
        if d.name == keep or d.name == "lost+found" or d.name.startswith(".deleted-") or not d.is_dir():
            continue
        if not store.exists(pv_rt, None, d.name):
            # out of the event loop: a 10G fio file on a disk mounted with discard takes minutes to free
            doomed = d.with_name(".deleted-" + d.name)
            os.replace(d, doomed)
            threading.Thread(target=shutil.rmtree, args=(doomed, True), daemon=True).start()


def _pmem_fs() -> PmemFilesystem:
    global _pmem
    if _pmem is None:
        fs = PmemFilesystem(root() / "pmem", _pmem_bytes())
        fs.create()
        _pmem = fs
    return _pmem


def _pmem_bytes() -> int:
    settings = getattr(_cluster, "settings", None) or {}
    for value in (settings.get("pmem_backing_bytes"), os.environ.get("TWIN_PMEM_BACKING_BYTES")):
        if value:
            return int(value)
    try:
        st = os.statvfs(SHM)
        free = st.f_bavail * st.f_frsize
    except OSError:
        return DEFAULT_PMEM_BYTES
    return max(256 << 20, min(DEFAULT_PMEM_BYTES, int(free * 0.6)))


def teardown() -> None:
    """Unmount and free the PMEM filesystem (at twin stop; also safe to call twice)."""
    global _pmem
    with _lock:
        if _pmem is not None:
            _pmem.destroy()
            _pmem = None


class PmemFilesystem:
    """ext4 on a loop device over a sparse file in /dev/shm, mounted at `mountpoint`."""

    def __init__(self, mountpoint: Path, size: int) -> None:
        self.mountpoint = mountpoint
        self.size = size
        digest = hashlib.sha1(str(mountpoint).encode()).hexdigest()[:12]
        self.image = SHM / f"storageperf-twin-pmem-{digest}.img"
        self.device = ""

    def create(self) -> None:
        self._clear_stale()
        for tool in ("losetup", "mkfs.ext4", "mount", "umount"):
            if shutil.which(tool) is None:
                raise PmemUnavailable(f"PMEM volumes need {tool} (util-linux / e2fsprogs) on this machine")
        if not SHM.is_dir():
            raise PmemUnavailable("PMEM volumes need /dev/shm (a tmpfs) on this machine")
        self.mountpoint.mkdir(parents=True, exist_ok=True)
        with open(self.image, "wb") as f:
            f.truncate(self.size)
        try:
            # few inodes and a lazily zeroed journal: the file stays sparse until data is written
            _run("mkfs.ext4", "-q", "-F", "-i", "1048576", "-E", "lazy_itable_init=0,lazy_journal_init=1",
                 "-L", "twin-pmem", str(self.image))
            try:
                self.device = _run("losetup", "--find", "--show", str(self.image)).strip()
            except subprocess.CalledProcessError as e:
                raise PmemUnavailable(
                    "PMEM volumes need a loop device (memory-backed ext4 with O_DIRECT) and none could be set up: "
                    f"{e.stderr.strip() or e}. Run the twin as root on a machine with /dev/loop-control "
                    "(a container needs --privileged or the loop devices passed in)") from None
            _run("mount", "-t", "ext4", "-o", "noatime", self.device, str(self.mountpoint))
        except Exception:
            self.destroy()
            raise
        log.info("PMEM volumes: ext4 on %s (%s, %d MiB sparse) at %s", self.device, self.image,
                 self.size >> 20, self.mountpoint)

    def _clear_stale(self) -> None:
        """A twin killed with SIGKILL leaves its mount and loop device behind: reclaim them."""
        if os.path.ismount(self.mountpoint):
            subprocess.run(["umount", "-l", str(self.mountpoint)], capture_output=True)
        if self.image.exists():
            out = subprocess.run(["losetup", "-j", str(self.image)], capture_output=True, text=True).stdout
            for line in out.splitlines():
                dev = line.split(":", 1)[0]
                if dev.startswith("/dev/"):
                    subprocess.run(["losetup", "-d", dev], capture_output=True)
            self.image.unlink(missing_ok=True)

    def destroy(self) -> None:
        if os.path.ismount(self.mountpoint):
            # lazy if busy: a process still dying must not keep the mount (and the memory) forever
            if subprocess.run(["umount", str(self.mountpoint)], capture_output=True).returncode:
                subprocess.run(["umount", "-l", str(self.mountpoint)], capture_output=True)
        if self.device:
            subprocess.run(["losetup", "-d", self.device], capture_output=True)  # autoclear once unused
            self.device = ""
        self.image.unlink(missing_ok=True)


def _run(*argv: str) -> str:
    return subprocess.run(list(argv), check=True, capture_output=True, text=True).stdout
