"""DIR/env: the twin's throwaway credentials as a controller's environment.

A real controller gets its keys from its environment (an AWX credential type, `export`, RRSA), never from the
inventory, which is what users copy. The twin does the same: `python -m twin up` writes the variables the modules'
credential chains read into DIR/env (mode 0600), and tests, scripts/demo.sh and molecule put them into the
environment of ansible-playbook:

    set -a; . .twin/env; set +a

One `NAME=value` a line: the values are the twin's own random tokens (letters, digits, `-`, `_`), so the file is
both a shell script and trivially parsed (read()). A fleet (`--clusters N`) writes DIR/env and the same file in
every DIR/twin-K: one ACK account, and ONTAPs that share one credential (twin/fleet/front.py).
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

NAME = "env"
_PLAIN = re.compile(r"[A-Za-z0-9_.@:+/-]*")  # nothing a shell would expand or split


def variables(cloud_doc: dict[str, Any]) -> dict[str, str]:
    """The environment a controller needs for this cloud.json: ACK/ECS keys and the ONTAP user."""
    alibaba, ontap = cloud_doc["alibaba"], cloud_doc["ontap"]
    return {"ALIBABA_CLOUD_ACCESS_KEY_ID": alibaba["access_key_id"],
            "ALIBABA_CLOUD_ACCESS_KEY_SECRET": alibaba["access_key_secret"],
            "ONTAP_USERNAME": ontap["username"], "ONTAP_PASSWORD": ontap["password"]}


def render(cloud_doc: dict[str, Any]) -> str:
    lines = ["# The twin's throwaway credentials (twin/fleet/envfile.py): set -a; . <this file>; set +a"]
    for name, value in variables(cloud_doc).items():
        if not _PLAIN.fullmatch(value):
            raise ValueError(f"{name}: the twin made a value the env file cannot hold unquoted")
        lines.append(f"{name}={value}")
    return "\n".join(lines) + "\n"


def read(path: Path) -> dict[str, str]:
    """NAME=value lines of an env file (comments and blank lines skipped)."""
    lines = [line for line in Path(path).read_text().splitlines() if line.strip() and not line.startswith("#")]
    return dict(line.split("=", 1) for line in lines)
