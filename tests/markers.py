"""In-band expectations for fixture logs, and one command to re-bless them.

A family fixture marks the line where each launch's root cause starts (the primary finding's first
line) with a suffix: `<the line as logged>  #=PRIMARY=# <pattern id>`. The marker is stripped before
the log is diagnosed, so logdoctor sees the raw log. The test compares the primaries it finds with the
markers; when a change is intended, re-bless and review the diff:

    python -m tests.markers --bless            # rewrite the markers of fixtures/families/*.log
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from logdoctor.doctor import Doctor
from logdoctor.framing import frame_bytes
from logdoctor.library.matcher import Library

FAMILIES = Path(__file__).resolve().parent.parent / "fixtures" / "families"
MARKER = re.compile(rb"  #=PRIMARY=# (?P<rule>[\w.-]+)(?P<end>\r?)$")


def strip_markers(data: bytes) -> tuple[bytes, dict[int, str]]:
    """The raw log, and {line number: expected primary pattern}."""
    lines = data.split(b"\n")
    expected: dict[int, str] = {}
    for index, line in enumerate(lines):
        match = MARKER.search(line)
        if match:
            expected[index + 1] = match["rule"].decode()
            lines[index] = line[: match.start()] + match["end"]
    return b"\n".join(lines), expected


def primaries(raw: bytes, library: Library, source: str) -> dict[int, str]:
    doctor = Doctor(library)
    for line in frame_bytes(raw, source):
        doctor.feed(line)
    doctor.flush()
    return {f.lines[0]: f.rule for f in doctor.report() if f.primary}


def bless(path: Path, library: Library) -> bool:
    """Rewrite the file's markers from what logdoctor finds now; True when they changed."""
    data = path.read_bytes()
    raw, before = strip_markers(data)
    found = primaries(raw, library, str(path))
    lines = raw.split(b"\n")
    for number, rule in found.items():
        line = lines[number - 1]
        end = b"\r" if line.endswith(b"\r") else b""
        lines[number - 1] = line[: len(line) - len(end)] + f"  #=PRIMARY=# {rule}".encode() + end
    path.write_bytes(b"\n".join(lines))
    return found != before


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bless", action="store_true", help="rewrite the markers from the current results")
    parser.add_argument("files", nargs="*", type=Path)
    args = parser.parse_args()
    library = Library.load()
    files = args.files or sorted(FAMILIES.glob("*.log"))
    for path in files:
        if args.bless:
            print(f"{path}: {'markers changed' if bless(path, library) else 'unchanged'}")
        else:
            raw, expected = strip_markers(path.read_bytes())
            found = primaries(raw, library, str(path))
            print(f"{path}: {'ok' if found == expected else f'expected {expected}, found {found}'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
