from __future__ import annotations

import json

import pytest

from logdoctor.framing import MAX_LINE_CHARS, Framer, frame_bytes


def texts(data: bytes) -> list[str]:
    return [line.text for line in frame_bytes(data)]


def test_plain_lines_keep_source_and_1_based_numbers() -> None:
    lines = frame_bytes(b"one\ntwo\nthree", "server.log")
    assert [(line.source, line.number, line.text) for line in lines] == [
        ("server.log", 1, "one"),
        ("server.log", 2, "two"),
        ("server.log", 3, "three"),  # a last line without newline is not lost
    ]


def test_ansi_and_carriage_returns_are_removed() -> None:
    raw = b"\x1b[1;36m(APIServer pid=1)\x1b[0;0m \x1b[32mINFO\x1b[0m 11-30 19:41:07 [x.py:1] hi\r\n"
    assert texts(raw) == ["(APIServer pid=1) INFO 11-30 19:41:07 [x.py:1] hi"]


def test_progress_bar_redraws_keep_the_last_segment() -> None:
    assert texts(b"Loading 0%\rLoading 50%\rLoading 100%\r\n") == ["Loading 100%"]


def test_invalid_utf8_and_nul_bytes_are_replaced_not_raised() -> None:
    assert texts(b"bad \xff\xfe byte\x00 here\n") == ["bad \ufffd\ufffd byte\ufffd here"]


def test_chunk_boundaries_do_not_change_the_lines() -> None:
    data = "alpha\nbéta\r\n\x1b[31mgamma\x1b[0m\nlast".encode()
    framer = Framer("-")
    lines = []
    for i in range(len(data)):
        lines += framer.feed(data[i : i + 1])
    lines += framer.flush()
    assert [line.text for line in lines] == texts(data)


def test_cri_partials_are_joined_and_stream_kept() -> None:
    data = (
        b"2026-11-30T19:41:07.123456789Z stdout P first half \n"
        b"2026-11-30T19:41:07.223456789Z stderr F other stream\n"
        b"2026-11-30T19:41:07.323456789Z stdout F second half\n"
    )
    lines = frame_bytes(data)
    assert [(line.number, line.stream, line.text) for line in lines] == [
        (2, "stderr", "other stream"),
        (1, "stdout", "first half second half"),
    ]


def test_docker_json_file_lines_join_split_messages() -> None:
    rows = [
        {"log": "Traceback (most recent", "stream": "stderr", "time": "t"},
        {"log": " call last):\n", "stream": "stderr", "time": "t"},
        {"log": "\x1b[32mINFO\x1b[0m done\r\n", "stream": "stdout", "time": "t"},
    ]
    data = "".join(json.dumps(r) + "\n" for r in rows).encode()
    lines = frame_bytes(data)
    assert [(line.number, line.stream, line.text) for line in lines] == [
        (1, "stderr", "Traceback (most recent call last):"),
        (3, "stdout", "INFO done"),
    ]


def test_json_that_is_not_docker_framing_stays_plain() -> None:
    assert texts(b'{"message": "hello"}\n') == ['{"message": "hello"}']


def test_compose_prefixes_are_stripped_and_kept_as_origin() -> None:
    lines = frame_bytes(b"vllm-1  | INFO 11-30 19:41:07 [x.py:1] hi\nvllm-1  | Traceback\n")
    assert [(line.origin, line.text) for line in lines] == [
        ("vllm-1", "INFO 11-30 19:41:07 [x.py:1] hi"),
        ("vllm-1", "Traceback"),
    ]


def test_compose_detection_is_decided_per_source() -> None:
    # A plain log whose later line happens to look like `word | text` is not compose output.
    lines = frame_bytes(b"INFO 11-30 19:41:07 [x.py:1] hi\nrow  | cell\n")
    assert lines[1].text == "row  | cell"


@pytest.mark.parametrize(
    "raw",
    [
        b"2025-03-07T05:56:27.270Z INFO:     Started server process [1]\n",
        b"\xc2\xa0 | 2025-03-07T05:56:27.270Z | INFO:     Started server process [1]\n",
    ],
)
def test_collector_timestamps_are_removed(raw: bytes) -> None:
    assert texts(raw) == ["INFO:     Started server process [1]"]


def test_huge_lines_are_cut_for_analysis_and_marked() -> None:
    data = b"x" * (MAX_LINE_CHARS * 3) + b"\nnext\n"
    lines = frame_bytes(data)
    assert len(lines[0].text) == MAX_LINE_CHARS and lines[0].truncated
    assert lines[1].text == "next" and lines[1].number == 2


def test_huge_line_fed_in_chunks_is_cut_too() -> None:
    framer = Framer("-")
    out = []
    for _ in range(10):
        out += framer.feed(b"y" * MAX_LINE_CHARS)
    out += framer.feed(b"\nafter\n") + framer.flush()
    assert [len(line.text) for line in out] == [MAX_LINE_CHARS, 5] and out[0].truncated


# SECURITY.md and the README promise this bound: "A physical line is analysed up to 64 KiB".
DOCUMENTED_LINE_LIMIT = 64 * 1024


@pytest.mark.parametrize(("extra", "truncated"), [(0, False), (1, True)])
def test_a_line_is_analysed_up_to_the_documented_limit(extra: int, truncated: bool) -> None:
    (line,) = frame_bytes(b"x" * (DOCUMENTED_LINE_LIMIT + extra) + b"\n")
    assert (len(line.text), line.truncated) == (DOCUMENTED_LINE_LIMIT, truncated)


def _cri_pieces(*pieces: str) -> bytes:
    """One message that the container runtime split into `pieces` (all but the last tagged P)."""
    tags = ["P"] * (len(pieces) - 1) + ["F"]
    return "".join(
        f"2026-11-30T19:41:07.1Z stdout {tag} {piece}\n" for tag, piece in zip(tags, pieces, strict=True)
    ).encode()


def test_joined_pieces_are_cut_only_past_the_limit() -> None:
    half = MAX_LINE_CHARS // 2
    (exact,) = frame_bytes(_cri_pieces("a" * half, "b" * (MAX_LINE_CHARS - half)))
    assert len(exact.text) == MAX_LINE_CHARS and not exact.truncated
    (longer,) = frame_bytes(_cri_pieces("a" * half, "b" * (MAX_LINE_CHARS - half + 1)))
    assert len(longer.text) == MAX_LINE_CHARS and longer.truncated


def test_a_message_still_in_pieces_at_the_end_is_emitted_whole_not_truncated() -> None:
    lines = frame_bytes(
        b"2026-11-30T19:41:07.1Z stdout P Traceback (most recent \n" + b'{"log": "cut off", "stream": "stderr"}\n'
    )
    assert [(line.stream, line.text, line.truncated) for line in lines] == [
        ("stdout", "Traceback (most recent ", False),
        ("stderr", "cut off", False),
    ]


def test_complete_docker_json_messages_of_one_stream_are_separate_lines() -> None:
    rows = [{"log": "first\n", "stream": "stdout"}, {"log": "second\n", "stream": "stdout"}]
    data = "".join(json.dumps(r) + "\n" for r in rows).encode()
    assert [(line.number, line.text) for line in frame_bytes(data)] == [(1, "first"), (2, "second")]


def test_only_dockers_compact_json_is_container_framing() -> None:
    # json-file writes `{"log":...}`; a program's own JSON written with blanks is that program's text.
    assert texts(b'{ "log": "hello\\n", "stream": "stdout" }\n') == ['{ "log": "hello\\n", "stream": "stdout" }']


def test_a_prefix_before_a_traceback_is_learned_once_it_repeats() -> None:
    framer = Framer("-")
    lines = framer.feed(b"> [1] Traceback (most recent call last):\n> [2] served\n")
    # Seen once: the traceback's own line loses it, the other lines keep it.
    assert [line.text for line in lines] == ["Traceback (most recent call last):", "> [2] served"]
    assert not framer.irregular
    lines = framer.feed(b"> [3] Traceback (most recent call last):\n> [4] served\n")
    assert [line.text for line in lines] == ["Traceback (most recent call last):", "served"]
    assert framer.irregular


def test_a_learned_prefix_makes_the_source_irregular() -> None:
    framer = Framer("-")
    framer.feed(b"worker-3 >> (APIServer pid=1) INFO 11-30 19:41:07 [x.py:1] hi\n")
    assert framer.irregular  # a sieve must read every line of it


def test_a_compose_log_of_equal_length_lines_is_not_read_as_wrapped() -> None:
    # Every line has the same length: with its compose prefix each starts like nothing a record starts
    # with, but its message starts with a record header, so none is the wrapped rest of the line before.
    data = b"".join(b"vllm-1  | INFO 11-30 19:41:07 [x.py:1] request %04d finished in 12 ms\n" % i for i in range(6))
    lines = frame_bytes(data)
    assert len(lines) == 6 and all(line.text.startswith("INFO ") for line in lines)


def _wrapped_at(width: int) -> bytes:
    """Two different lines cut at `width`, each followed by its rest: the framer learns the wrap width."""
    return b"".join(
        b"%-*s\nrest of line %d\n" % (width, b"(APIServer pid=1) ERROR message %d" % i, i) for i in range(2)
    )


def test_skipping_lines_releases_a_line_held_for_its_wrapped_rest() -> None:
    framer = Framer("-")
    framer.feed(_wrapped_at(70))
    held = b"(APIServer pid=1) ERROR held".ljust(70) + b"\n"
    assert framer.feed(held) == []  # it may go on in the next line
    # The caller read past the next lines unseen: the held line is complete.
    (released,) = framer.skip(2)
    assert (released.number, released.text) == (5, held.decode().rstrip("\n"))
    assert framer.lines_seen == 7 and not framer.partial
