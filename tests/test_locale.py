"""The translation catalogs: complete, up to date with the table of named errors, compiled from
their `.po`, and every translation filling the same placeholders as the English message. Also
the README's Turkish envelope section against the English one."""

from __future__ import annotations

import gettext
import io
import re
import shutil
import string
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from taskfs import catalogs, i18n
from taskfs.catalogs import Entry, PoError, compile_mo, read_po, write_po
from taskfs.core import yamlio
from taskfs.errors import MESSAGES, problem

ROOT = Path(__file__).resolve().parent.parent
TURKISH = ROOT / "taskfs" / "locale" / "tr" / "LC_MESSAGES" / "taskfs.po"


def entries(path: Path) -> dict[str, Entry]:
    """The error messages' entries by code (the other entries' contexts hold a colon)."""
    found = [
        e
        for e in read_po(path.read_text(encoding="utf-8"))
        if e.context is not None and ":" not in e.context
    ]
    by_code = {e.context: e for e in found if e.context is not None}
    assert len(by_code) == len(found), "a code appears twice"
    return by_code


def placeholders(template: str) -> set[tuple[str, str | None, str]]:
    return {
        (name, conversion, spec or "")
        for _text, name, spec, conversion in string.Formatter().parse(template)
        if name is not None
    }


def test_the_template_is_made_from_the_table_of_named_errors() -> None:
    assert catalogs.TEMPLATE.read_text(encoding="utf-8") == catalogs.pot_text(), (
        "run python -m taskfs.catalogs"
    )
    template = entries(catalogs.TEMPLATE)
    assert {code: e.msgid for code, e in template.items()} == MESSAGES


def test_every_code_has_a_turkish_translation_of_its_current_message() -> None:
    turkish = entries(TURKISH)
    assert sorted(turkish) == sorted(MESSAGES)
    for code, english in MESSAGES.items():
        entry = turkish[code]
        assert entry.msgid == english, f"{code}: the .po translates an older message (msgmerge)"
        assert entry.msgstr, f"{code} is not translated"
        assert not entry.fuzzy, f"{code} is marked fuzzy"
        assert entry.msgstr != english or english == "{reason}", f"{code} is still English"


@pytest.mark.parametrize("code", sorted(MESSAGES))
def test_a_translation_fills_exactly_the_english_placeholders(code: str) -> None:
    english = MESSAGES[code]
    turkish = entries(TURKISH)[code].msgstr
    assert placeholders(turkish) == placeholders(english)
    values = {name: f"<{name}>" for name, _conversion, _spec in placeholders(english)}
    filled = turkish.format(**values)
    assert all(value in filled or f"'{value}'" in filled for value in values.values())


def test_the_shipped_catalogs_are_compiled_from_their_po() -> None:
    for po in catalogs.po_files():
        compiled = compile_mo(read_po(po.read_text(encoding="utf-8")))
        assert po.with_suffix(".mo").read_bytes() == compiled, (
            f"{po}: run python -m taskfs.catalogs"
        )
    assert TURKISH in catalogs.po_files()


def test_gettext_reads_every_translation_from_the_shipped_catalog() -> None:
    with TURKISH.with_suffix(".mo").open("rb") as handle:
        catalog = gettext.GNUTranslations(handle)
    assert catalog.info()["language"] == "tr"
    for code, entry in entries(TURKISH).items():
        assert catalog.pgettext(code, MESSAGES[code]) == entry.msgstr


@pytest.mark.skipif(shutil.which("msgfmt") is None, reason="GNU gettext is not installed")
def test_gnu_msgfmt_accepts_the_po_and_compiles_the_same_bytes(tmp_path: Path) -> None:
    out = tmp_path / "gnu.mo"
    subprocess.run(
        ["msgfmt", "--check", "--no-hash", "-o", str(out), str(TURKISH)],
        check=True,
        capture_output=True,
    )
    assert out.read_bytes() == TURKISH.with_suffix(".mo").read_bytes()


texts = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\x00"))


@given(st.lists(st.tuples(st.from_regex(r"[a-z_]{1,20}", fullmatch=True), texts, texts)))
def test_po_files_round_trip_and_compile_to_what_gettext_reads(
    rows: list[tuple[str, str, str]],
) -> None:
    header = Entry(None, "", "Content-Type: text/plain; charset=UTF-8\n")
    unique = {(code, msgid): msgstr for code, msgid, msgstr in rows if msgid}
    written = [
        header,
        *(Entry(c, i, s, comment="#, python-brace-format") for (c, i), s in unique.items()),
    ]
    assert read_po(write_po(written)) == [
        Entry(e.context, e.msgid, e.msgstr, e.fuzzy) for e in written
    ]
    catalog = gettext.GNUTranslations(io.BytesIO(compile_mo(written)))
    for (code, msgid), msgstr in unique.items():
        assert catalog.pgettext(code, msgid) == (msgstr or msgid)


def test_fuzzy_entries_are_not_compiled() -> None:
    po = (
        'msgid ""\nmsgstr "Content-Type: text/plain; charset=UTF-8\\n"\n\n'
        '#, fuzzy, python-brace-format\nmsgctxt "a"\nmsgid "one"\nmsgstr "bir"\n\n'
        '#~ msgid "old"\n#~ msgstr "eski"\n\n'
        'msgctxt "b"\nmsgid ""\n"two "\n"lines"\nmsgstr "iki "\n"satır"\n'
    )
    found = read_po(po)
    assert [(e.context, e.msgid, e.msgstr, e.fuzzy) for e in found[1:]] == [
        ("a", "one", "bir", True),
        ("b", "two lines", "iki satır", False),
    ]
    catalog = gettext.GNUTranslations(io.BytesIO(compile_mo(found)))
    assert catalog.pgettext("a", "one") == "one"
    assert catalog.pgettext("b", "two lines") == "iki satır"


@pytest.mark.parametrize(
    "text",
    [
        'msgid "a"\n',
        'msgid "a"\nmsgid_plural "as"\nmsgstr[0] "b"\n',
        '"dangling"\n',
        'msgid unquoted\nmsgstr ""\n',
        'msgid "a"\nmsgstr "b"\nmsgstr "c"\n',
        'msgctxt "a"\n',
    ],
)
def test_a_po_this_reader_does_not_understand_is_refused(text: str) -> None:
    with pytest.raises(PoError):
        read_po(text)


# The docs: the envelope page and the named errors in English, and the same in Turkish.


def doc(name: str) -> str:
    return (ROOT / "docs" / name).read_text(encoding="utf-8")


def first_cells(table_text: str) -> set[str]:
    cells = re.findall(r"^\| ([^|]+) \|", table_text, re.M)
    return {name for cell in cells for name in re.findall(r"`([^`]+)`", cell)}


def yaml_keys(section: str) -> set[str]:
    example = yamlio.load(section.split("```yaml\n", 1)[1].split("```", 1)[0].encode())
    return set(example) | {f"acceptanceCheck.{key}" for key in example["acceptanceCheck"]}


def test_the_envelope_and_its_errors_are_also_in_turkish() -> None:
    english = doc("envelope.md")
    keys = english.split("\n## Named errors\n", 1)[0]
    codes = doc("errors.md")
    turkish = doc("languages.md").split("\n## Zarf (Türkçe)\n", 1)[1]
    tr_keys, tr_codes = turkish.split("### Adlandırılmış hatalar", 1)
    assert "acceptanceCheck.passFailCommand" in first_cells(keys)
    assert first_cells(tr_keys) == first_cells(keys)
    assert "objective_required" in first_cells(codes)
    assert first_cells(tr_codes) == first_cells(codes) == set(MESSAGES)
    assert yaml_keys(tr_keys) == yaml_keys(keys)
    assert "(languages.md#zarf-türkçe)" in english


@pytest.mark.parametrize("broken", ["{0}", "{value.real}", "{", "{value:>>>}"])
def test_a_translation_that_cannot_be_filled_gives_way_to_the_english(
    monkeypatch: pytest.MonkeyPatch, broken: str
) -> None:
    monkeypatch.setattr(i18n, "translate", lambda code, template: broken)
    found = problem("invalid_task_id", value="-bad")
    assert found.message == MESSAGES["invalid_task_id"].format(value="-bad", near_text="")
    assert found.data == {"value": "-bad"}
