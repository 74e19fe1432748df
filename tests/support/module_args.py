"""Run a module's main() in-process with given arguments, as Ansible would, and read what it printed."""
from __future__ import annotations

import contextlib
import json
from unittest import mock

import pytest
from ansible.module_utils import basic

try:
    from ansible.module_utils.testing import patch_module_args
except ImportError:  # ansible-core 2.18 (meta/runtime.yml accepts it) has no such helper: the way it read arguments
    @contextlib.contextmanager
    def patch_module_args(args):
        with mock.patch.object(basic, "_ANSIBLE_ARGS", json.dumps({"ANSIBLE_MODULE_ARGS": args}).encode()):
            yield


def run_main(capsys, main, args, check_mode=False):
    """(exit code, result dict) of main() run with args (and _ansible_check_mode)."""
    if check_mode:
        args = dict(args, _ansible_check_mode=True)
    with patch_module_args(args), pytest.raises(SystemExit) as info:
        main()
    return info.value.code, json.loads(capsys.readouterr().out)
