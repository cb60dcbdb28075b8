"""The Markdown is navigable and says what the code does: every relative link
resolves, and the documented guardrail order is the actuator's."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from yarn_advisor.advisor.act.outcomes import Block

ROOT = Path(__file__).resolve().parents[2]
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


def _markdown() -> list[Path]:
    files = subprocess.run(["git", "ls-files", "*.md"], cwd=ROOT, capture_output=True,
                           text=True, check=True).stdout.split()
    return [ROOT / f for f in files]


def test_every_relative_link_in_the_markdown_resolves() -> None:
    broken = []
    for md in _markdown():
        text = re.sub(r"```.*?```", "", md.read_text(), flags=re.S)  # code is not links
        for target in LINK.findall(text):
            if target.startswith(("http://", "https://", "mailto:", "#")):
                continue
            path = target.split("#", 1)[0]
            if not (md.parent / path).exists():
                broken.append(f"{md.relative_to(ROOT)}: {target}")
    assert broken == []


def test_the_readme_stays_short() -> None:
    assert len((ROOT / "README.md").read_bytes()) <= 10_500


def test_the_documented_guardrail_order_is_the_actuators() -> None:
    """docs/operating.md names every Block reason, in the enum's (checking) order."""
    text = (ROOT / "docs" / "operating.md").read_text()
    section = text[text.index("## Acting on the RM"):]
    named = [b for b in re.findall(r"`([a-z_]+)`", section) if b in {x.value for x in Block}]
    first = list(dict.fromkeys(named))
    assert first == [b.value for b in Block]
