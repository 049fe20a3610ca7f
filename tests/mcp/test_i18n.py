"""`taskfs mcp` speaks the language of `TASKFS_LANG`: the same refusal, the same codes and data,
a message from the Turkish catalog."""

from __future__ import annotations

from pathlib import Path

import anyio

from tests.cli.test_i18n import in_turkish, without_message
from tests.mcp.test_server import envelope, serve, server_env


def test_the_mcp_server_honours_taskfs_lang(repo: Path, tmp_path: Path) -> None:
    english_env = server_env(tmp_path)
    assert not {"LANG", "LANGUAGE", "LC_ALL", "LC_MESSAGES", "TASKFS_LANG"} & set(english_env)
    turkish_env = {**english_env, "TASKFS_LANG": "tr"}
    bad = envelope(objective=None, id="-bad")

    async def both() -> None:
        async with (
            serve(repo, "planner", english_env) as english,
            serve(repo, "planner", turkish_env) as turkish,
        ):
            en = await english.call("agent_send", envelope=bad)
            tr = await turkish.call("agent_send", envelope=bad)
        assert en["ok"] is tr["ok"] is False
        codes = {e["code"]: e for e in en["errors"]}
        assert set(codes) == {"invalid_task_id", "objective_required"}
        assert without_message(en["errors"]) == without_message(tr["errors"])
        for error in tr["errors"]:
            assert error["message"] == in_turkish(error)
        assert codes["objective_required"]["message"].startswith("objective is missing")

    anyio.run(both)


def test_the_inbox_summary_line_is_in_the_servers_language(repo: Path, tmp_path: Path) -> None:
    """Issue 38, item 11: `agent_inbox`'s summary line (`badge`) was English under
    TASKFS_LANG=tr; its counts are the data, the line is for people."""
    from tests.cli.test_turkish import english_words

    turkish_env = {**server_env(tmp_path), "TASKFS_LANG": "tr"}

    async def look() -> dict[str, object]:
        async with serve(repo, "planner", turkish_env) as planner:
            await planner.ok("agent_send", envelope=envelope(id="t1"))
            async with serve(repo, "builder", turkish_env) as builder:
                return await builder.ok("agent_inbox")

    box = anyio.run(look)
    assert box["counts"]["toClaim"] == 1  # type: ignore[index]
    assert english_words(str(box["badge"])) == [], box["badge"]
    assert "1" in str(box["badge"])
