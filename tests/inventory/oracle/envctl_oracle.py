# envctl_oracle - an Ansible stdout callback for tests/inventory/run.
#
# ansible-core 2.14 ships no JSON stdout callback (that one is in the
# ansible.posix collection), so the harness loads this one: it prints, at
# the end of the run, one JSON object mapping each task's name to an object
# mapping each host to that task's result there: {"ok": true, "msg": the
# native value of debug's msg, "text": str() of it} or {"ok": false,
# "error": the message}.  "text" is the string an environment variable
# set from that value holds, which is what envctl must write.
from __future__ import annotations

import json

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = '''
    name: envctl_oracle
    type: stdout
    short_description: one JSON object of per-host results, for envctl's tests
    description: Prints each host's task result as JSON once the run ends.
'''


def _text(v):
    return str(v)


def _plain(v):
    # AnsibleUnsafeText and friends down to JSON's own types.
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, int):
        return int(v)
    if isinstance(v, float):
        return float(v)
    if isinstance(v, str):
        return str(v)
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return {"__type__": type(v).__name__, "__str__": str(v)}


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = 'stdout'
    CALLBACK_NAME = 'envctl_oracle'

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.results = {}

    def _record(self, result, ok):
        r = result._result
        name = result._host.get_name()
        task = self.results.setdefault(result._task.get_name(), {})
        if ok and 'msg' in r:
            task[name] = {"ok": True, "msg": _plain(r['msg']),
                          "text": _text(r['msg'])}
        else:
            task[name] = {"ok": False, "error": str(r.get('msg', r))}

    def v2_runner_on_ok(self, result):
        self._record(result, True)

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._record(result, False)

    def v2_runner_on_unreachable(self, result):
        self._record(result, False)

    def v2_runner_on_skipped(self, result):
        self._record(result, False)

    def v2_playbook_on_stats(self, stats):
        self._display.display(json.dumps(self.results, sort_keys=True))
