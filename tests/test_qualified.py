"""Fix steps that hold for some vLLM releases only (logdoctor/library/qualified.py)."""

from __future__ import annotations

import pytest

from logdoctor.api import diagnose_text
from logdoctor.library import qualified
from logdoctor.library.matcher import Library
from tests.conftest import make_pattern


@pytest.mark.parametrize(
    ("step", "version", "applies", "shown"),
    [
        ("[>=0.13] Pick one with --attention-backend.", "0.20.0", True, "Pick one with --attention-backend."),
        ("[>=0.13] Pick one with --attention-backend.", "0.11.0", False, None),
        ("[>=0.13] Pick one with --attention-backend.", None, True, "vLLM 0.13 and later: Pick one with --attention-backend."),
        ("[>=0.9,<0.18] Lower --swap-space.", None, True, "vLLM 0.9 and later, before 0.18: Lower --swap-space."),
        ("[<=0.6.6.post1] Old.", "0.6.6", True, "Old."),
        ("Unqualified.", "0.1", True, "Unqualified."),
    ],
)
def test_a_step_holds_for_its_releases(step: str, version: str | None, applies: bool, shown: str | None) -> None:
    assert qualified.applies(step, version) is applies
    if shown is not None:
        assert qualified.for_person(step, version) == shown


def test_an_unreadable_range_is_refused() -> None:
    with pytest.raises(ValueError, match="not a version range"):
        make_pattern(id="t.bad", match="boom", fix={"summary": "s", "steps": ["[>=banana] x"]},
                     examples={"match": ["ValueError: boom"]})


def test_a_finding_keeps_the_steps_of_the_launchs_release() -> None:
    pattern = make_pattern(
        id="t.steps", match="boom",
        fix={"summary": "s", "steps": ["[<0.18] Lower --swap-space.", "[>=0.18] Lower --cpu-offload-gb.", "Always."]},
        examples={"match": ["ValueError: boom"]},
    )
    library = Library([pattern])
    header = "INFO 11-30 10:00:00 [api_server.py:1] vLLM API server version {v}\n"
    new = diagnose_text(header.format(v="0.20.0") + "ValueError: boom\n", library)[0]
    assert new.fix.steps == ["Lower --cpu-offload-gb.", "Always."]
    unknown = diagnose_text("ValueError: boom\n", library)[0]
    assert unknown.fix.steps == ["vLLM before 0.18: Lower --swap-space.", "vLLM 0.18 and later: Lower --cpu-offload-gb.", "Always."]
