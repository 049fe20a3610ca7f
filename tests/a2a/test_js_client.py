"""A whole delegation through the A2A JavaScript SDK's own client (`@a2a-js/sdk`, pinned in
`tests/node/`), against a real `taskfs a2a serve`, the work done in the repository through the
command line: a text message becomes a request (input-required), the envelope on its id a task
whose history still opens with those words; a stream follows another task until it needs the
caller; a blocking send waits for the recipient's refusal; the task completes only after
passing evidence; list and cancel. Skipped without Node and the package (`.ci/run` installs
them; `TASKFS_REQUIRE_NODE` makes it fail instead)."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.a2a.serving import serving
from tests.helpers import ENVELOPE, git, taskfs_process
from tests.mcp.test_typescript import NODE_DIR, node


class JsClient:
    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        assert self._read() == {"ready": True}

    def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, f"the client ended (exit {self.proc.poll()})"
        answer: dict[str, Any] = json.loads(line)
        return answer

    def ask(self, **call: Any) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(call) + "\n")
        self.proc.stdin.flush()

    def answer(self) -> dict[str, Any]:
        answer = self._read()
        assert "thrown" not in answer, answer
        return answer

    def call(self, **call: Any) -> dict[str, Any]:
        self.ask(**call)
        return self.answer()


@contextmanager
def js_client(url: str, agent: str) -> Iterator[JsClient]:
    proc = subprocess.Popen(
        [node(), str(NODE_DIR / "a2a_client.mjs"), url, agent],
        cwd=NODE_DIR,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        yield JsClient(proc)
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


def envelope(task_id: str, **changes: Any) -> dict[str, Any]:
    data = {**ENVELOPE, "filesAndInterfaces": [f"src/{task_id}/**"], **changes}
    data["acceptanceCheck"] = {
        "passFailCommand": f"test -f src/{task_id}/done.txt",
        "endToEndVerification": "the file is there",
    }
    return data


def cli(repo: Path, *args: str) -> int:
    return taskfs_process(*args, cwd=repo).code


def until_exists(repo: Path, task_id: str) -> None:
    end = time.monotonic() + 60
    while cli(repo, "show", task_id) != 0:
        assert time.monotonic() < end, f"{task_id} was not opened"
        time.sleep(0.1)


def test_the_javascript_sdk_client_completes_a_delegation(repo: Path) -> None:
    node()
    with serving(repo, "builder") as served, js_client(served.url, "planner") as planner:
        opening = "Empty passwords get in: please fix the login."
        asked = planner.call(op="send", text=opening, contextId="auth-hardening")["task"]
        assert asked["state"] == "TASK_STATE_INPUT_REQUIRED"
        task_id = asked["id"]
        planner.ask(op="send", text="more", taskId=task_id, contextId="elsewhere")
        assert "thrown" in planner._read()  # another context than the task's is refused
        sent = planner.call(
            op="send", data=envelope(task_id), taskId=task_id, returnImmediately=True
        )["task"]
        assert sent["state"] == "TASK_STATE_SUBMITTED"
        assert sent["history"][0] == {"role": "user", "text": opening}

        # A stream of a second task, until it needs the caller.
        planner.ask(op="stream", data=envelope("second", id="second"))
        until_exists(repo, "second")
        assert cli(repo, "claim", "second", "--agent", "builder") == 0
        question = ("send", "second", "Which branch?", "--agent", "builder")
        assert cli(repo, *question, "--status", "needs_input") == 0
        events = planner.answer()["events"]
        assert events[0]["task"]["id"] == "second"
        assert [e["status"] for e in events if "status" in e][-1] == "TASK_STATE_INPUT_REQUIRED"

        # A blocking send waits until the recipient refuses it.
        planner.ask(op="send", data=envelope("third", id="third"))
        until_exists(repo, "third")
        assert cli(repo, "refuse", "third", "--agent", "builder", "--reason", "not mine") == 0
        assert planner.answer()["task"]["state"] == "TASK_STATE_REJECTED"

        # The work, in the repository: only passing evidence completes it.
        assert cli(repo, "claim", task_id, "--agent", "builder") == 0
        assert cli(repo, "check", task_id, "--agent", "builder") == 1
        assert cli(repo, "complete", task_id, "--agent", "builder") == 1
        (repo / "src" / task_id).mkdir(parents=True)
        (repo / "src" / task_id / "done.txt").write_text("done\n")
        git(repo, "add", "src")
        git(repo, "commit", "-q", "-m", "the work")
        assert cli(repo, "check", task_id, "--agent", "builder") == 0
        assert cli(repo, "complete", task_id, "--agent", "builder") == 0
        done = planner.call(op="get", id=task_id)["task"]
        assert done["state"] == "TASK_STATE_COMPLETED"
        assert "acceptance-evidence" in done["artifacts"]
        assert done["history"][0] == {"role": "user", "text": opening}

        listed = {t["id"]: t["state"] for t in planner.call(op="list")["tasks"]}
        assert listed == {
            task_id: "TASK_STATE_COMPLETED",
            "second": "TASK_STATE_INPUT_REQUIRED",
            "third": "TASK_STATE_REJECTED",
        }
        canceled = planner.call(op="cancel", id="second")["task"]
        assert canceled["state"] == "TASK_STATE_CANCELED"
    assert cli(repo, "audit") == 0
