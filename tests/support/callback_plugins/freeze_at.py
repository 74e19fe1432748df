"""Test-only callback: stop (SIGSTOP) ansible-playbook itself as the task named by $FREEZE_AT_TASK starts for the
$FREEZE_AT_NTH time, so that a test kills the controller at one exact point of a run (tests/functional/
test_rollout_interrupted.py). The previous task's workers have finished by then; the next one has not started."""
from __future__ import annotations

import os
import signal

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = """
name: freeze_at
type: aggregate
short_description: stop the controller at the start of a named task, for kill tests
description: Sends SIGSTOP to ansible-playbook when a task whose name contains FREEZE_AT_TASK starts the FREEZE_AT_NTH time.
"""


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "freeze_at"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.name = os.environ.get("FREEZE_AT_TASK", "")
        self.nth = int(os.environ.get("FREEZE_AT_NTH", "1"))
        self.seen = 0

    def v2_playbook_on_task_start(self, task, is_conditional):
        if self.name and self.name in task.get_name():
            self.seen += 1
            if self.seen == self.nth:
                os.kill(os.getpid(), signal.SIGSTOP)
