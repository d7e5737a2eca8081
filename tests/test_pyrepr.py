from __future__ import annotations

import math
import random
import time

import pytest

from logdoctor.launch.pyrepr import (
    Call,
    EnumMember,
    Opaque,
    ReprError,
    Symbol,
    parse,
    parse_leading,
    parse_prefix,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1", 1),
        ("-1", -1),
        ("+7", 7),
        ("10_000", 10000),
        ("0x1f", 31),
        ("0.95", 0.95),
        ("1e-05", 1e-05),
        ("-2.5E+3", -2500.0),
        ("inf", math.inf),
        ("-inf", -math.inf),
        ("True", True),
        ("False", False),
        ("None", None),
        ("...", ...),
        ("'a'", "a"),
        ('"it\'s"', "it's"),
        ("'say \"hi\"'", 'say "hi"'),
        (r"'it\'s \\ \n \t \x00 \u1234 \U0001f600 \101'", "it's \\ \n \t \x00 \u1234 \U0001f600 A"),
        (r"'\q'", "\\q"),
        ("b'bytes'", b"bytes"),
        (r"b'\x00\xff\n'", b"\x00\xff\n"),
        ("[]", []),
        ("[1, 2, [3]]", [1, 2, [3]]),
        ("()", ()),
        ("(1,)", (1,)),
        ("(1, 2)", (1, 2)),
        ("(1)", 1),
        ("{}", {}),
        ("{'a': 1, 'b': [2]}", {"a": 1, "b": [2]}),
        ("{'a', 'b'}", frozenset({"a", "b"})),
        ("set()", frozenset()),
        ("frozenset({1, 2})", frozenset({1, 2})),
        ("[1, 2,]", [1, 2]),
        ("torch.bfloat16", Symbol("torch.bfloat16")),
        ("LoadFormat.AUTO", Symbol("LoadFormat.AUTO")),
        ("<MambaBackendEnum.TRITON: 'triton'>", EnumMember("MambaBackendEnum.TRITON", "triton")),
        ("<Level.HIGH: 3>", EnumMember("Level.HIGH", 3)),
        ("<function serve at 0x7f3a2b1c0d30>", Opaque("<function serve at 0x7f3a2b1c0d30>")),
        ("<function <lambda> at 0x1>", Opaque("<function <lambda> at 0x1>")),
        ("<bound method A.f of <A object at 0x1>>", Opaque("<bound method A.f of <A object at 0x1>>")),
        ("<class 'int'>", Opaque("<class 'int'>")),
        ("<f(x) -> int>", Opaque("<f(x) -> int>")),
        ("Foo()", Call("Foo")),
        ("Foo(1, 'a', k=None)", Call("Foo", (1, "a"), {"k": None})),
        ("a.B(x=C(y=[1, {'z': D()}]))", Call("a.B", (), {"x": Call("C", (), {"y": [1, {"z": Call("D")}]})})),
        ("  {'a': 1}  ", {"a": 1}),
    ],
)
def test_parses(text: str, expected: object) -> None:
    assert parse(text) == expected


def test_nan() -> None:
    value = parse("{'nan': nan}")
    assert isinstance(value, dict)
    assert math.isnan(value["nan"])


def test_non_default_args_line() -> None:
    text = (
        "{'model_tag': 'nvidia/X', 'port': 8081, 'enable_prefix_caching': True, 'mamba_cache_mode': 'all', "
        "'gpu_memory_utilization': 0.95, 'speculative_config': {'method': 'ngram', 'num_speculative_tokens': 3}, "
        "'kv_transfer_config': KVTransferConfig(kv_connector='NixlConnector', engine_id='0c1d...', "
        "kv_buffer_device='cuda', kv_role='kv_both', kv_rank=None, kv_parallel_size=1, kv_ip='127.0.0.1', "
        "kv_port=14579, kv_connector_extra_config={}, kv_connector_module_path=None, enable_permute_local_kv=False, "
        "kv_load_failure_policy='recompute'), "
        "'compilation_config': {'level': 3, 'cudagraph_capture_sizes': [1, 2, 4]}, "
        "'api_key': '***', 'allowed_origins': ['*'], "
        "'lora_modules': [LoRAModulePath(name='sql', path='/x', base_model_name=None)], "
        "'mamba_backend': <MambaBackendEnum.TRITON: 'triton'>, 'dtype': torch.bfloat16, 'x': (1, 2), "
        "'s': {'a', 'b'}, 'e': set(), 'neg': -1, 'sci': 1e-05, 'inf': inf, 'big': 10_000, 'b': b'bytes', "
        "'esc': 'it\\'s \"q\" \\n'}"
    )
    value = parse(text)
    assert isinstance(value, dict)
    assert value["kv_transfer_config"] == Call(
        "KVTransferConfig",
        (),
        {
            "kv_connector": "NixlConnector",
            "engine_id": "0c1d...",
            "kv_buffer_device": "cuda",
            "kv_role": "kv_both",
            "kv_rank": None,
            "kv_parallel_size": 1,
            "kv_ip": "127.0.0.1",
            "kv_port": 14579,
            "kv_connector_extra_config": {},
            "kv_connector_module_path": None,
            "enable_permute_local_kv": False,
            "kv_load_failure_policy": "recompute",
        },
    )
    assert value["speculative_config"] == {"method": "ngram", "num_speculative_tokens": 3}
    assert value["lora_modules"] == [Call("LoRAModulePath", (), {"name": "sql", "path": "/x", "base_model_name": None})]
    assert value["mamba_backend"] == EnumMember("MambaBackendEnum.TRITON", "triton")
    assert value["dtype"] == Symbol("torch.bfloat16")
    assert value["s"] == {"a", "b"} and value["e"] == set()
    assert (value["x"], value["neg"], value["sci"], value["big"], value["b"]) == ((1, 2), -1, 1e-05, 10000, b"bytes")
    assert value["inf"] == math.inf
    assert value["esc"] == 'it\'s "q" \n'
    assert value["compilation_config"] == {"level": 3, "cudagraph_capture_sizes": [1, 2, 4]}


def test_namespace() -> None:
    text = (
        "Namespace(subparser='serve', model_tag='m', config='', host=None, port=8000, allowed_origins=['*'], "
        "tensor_parallel_size=2, dispatch_function=<function serve at 0x7f3a2b1c0d30>)"
    )
    value = parse(text)
    assert isinstance(value, Call) and value.name == "Namespace"
    assert value.kwargs["tensor_parallel_size"] == 2
    assert value.kwargs["config"] == ""
    assert value.kwargs["dispatch_function"] == Opaque("<function serve at 0x7f3a2b1c0d30>")


def test_unhashable_keys_and_items_fall_back() -> None:
    assert parse("{[1]: 2, 'a': 3}") == (([1], 2), ("a", 3))
    assert parse("{Foo(a=1): 2}") == ((Call("Foo", (), {"a": 1}), 2),)
    assert parse("{[1], [2]}") == [[1], [2]]


@pytest.mark.parametrize(
    ("text", "position"),
    [
        ("", 0),
        ("{'a' 1}", 5),
        ("[1 2]", 3),
        ("{'a': 1, 'b'}", 12),
        ("{'a', 'b': 1}", 9),
        ("[1, 2)", 5),
        ("'a' 'b'", 4),
        ("@", 0),
        ("1.2.3", 3),
        ("'bad \\x4z'", 5),
        ("b'\u00e9'", 2),
        ("1j", 0),
    ],
)
def test_malformed_raises_with_position(text: str, position: int) -> None:
    with pytest.raises(ReprError) as raised:
        parse(text)
    assert raised.value.position == position


@pytest.mark.parametrize("text", ["{'a': 1", "{'a': 'x", "[1, 2", "Foo(a=1", "<function f", "'abc", "{'a': "])
def test_strict_parse_rejects_truncated(text: str) -> None:
    with pytest.raises(ReprError):
        parse(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{'a': 1, 'b': 'xyz'", {"a": 1, "b": "xyz"}),
        ("{'a': 1, 'b': 'xy", {"a": 1}),
        ("{'a': 1, 'b': 22", {"a": 1}),  # 22 may have been 220
        ("{'a': 1, 'b': 22 ", {"a": 1, "b": 22}),
        ("{'a': 1, 'b'", {"a": 1}),
        ("{'a': 1, 'b':", {"a": 1}),
        ("{'a': 1, ", {"a": 1}),
        ("{'a': 1, 'b': [2, 3", {"a": 1, "b": [2]}),
        ("{'a': 1, 'b': [2, 3,", {"a": 1, "b": [2, 3]}),
        (
            "{'k': KVTransferConfig(kv_connector='Nixl', kv_role='kv_b",
            {"k": Call("KVTransferConfig", (), {"kv_connector": "Nixl"})},
        ),
        ("{'f': <function serve at 0x7f", {}),
        ("{'x', 'y", frozenset({"x"})),
        ("[[[1, 2], [3", [[[1, 2], []]]),
        ("Namespace(a=1, b=Tr", Call("Namespace", (), {"a": 1})),
        ("{'s': 'a\\", {}),
        ("{'s': '\\u12", {}),
    ],
)
def test_parse_prefix_keeps_complete_items(text: str, expected: object) -> None:
    read = parse_prefix(text)
    assert read.truncated
    assert read.value == expected


def test_parse_prefix_of_complete_text_is_not_truncated() -> None:
    read = parse_prefix("{'a': [1, 2]}")
    assert read.value == {"a": [1, 2]} and not read.truncated


@pytest.mark.parametrize("text", ["{'a': 1}}", "{'a' 1", "{'a': @"])
def test_parse_prefix_still_rejects_malformed(text: str) -> None:
    with pytest.raises(ReprError):
        parse_prefix(text)


def test_parse_leading_reports_the_end() -> None:
    text = "KernelConfig(x=[1, 2]), extra=1"
    value, end = parse_leading(text)
    assert value == Call("KernelConfig", (), {"x": [1, 2]})
    assert text[end:] == ", extra=1"
    assert parse_leading(text, end + 8) == (1, len(text))


@pytest.mark.parametrize("opener", ["[", "(", "{'a': ", "Foo(", "Foo(x="])
def test_deep_nesting_is_a_repr_error_not_a_recursion_error(opener: str) -> None:
    text = opener * 10_000
    with pytest.raises(ReprError) as raised:
        parse(text)
    assert "nesting" in raised.value.message
    with pytest.raises(ReprError):
        parse_prefix(text)


def test_depth_limit_is_configurable() -> None:
    assert parse("[[[1]]]", max_depth=3) == [[[1]]]
    with pytest.raises(ReprError):
        parse("[[[1]]]", max_depth=2)
    nested = "[" * 500 + "]" * 500
    assert parse(nested, max_depth=1000) is not None


def test_size_limit() -> None:
    with pytest.raises(ReprError) as raised:
        parse("'" + "a" * (2 * 1024 * 1024) + "'")
    assert "limit" in raised.value.message
    assert parse("'abcd'", max_length=6) == "abcd"
    with pytest.raises(ReprError):
        parse("'abcde'", max_length=6)


def test_huge_integer_is_rejected_quickly() -> None:
    with pytest.raises(ReprError):
        parse("1" * 100_000)


@pytest.mark.parametrize(
    "text",
    [
        "[" + "'a\\'b', " * 40_000 + "]",
        "{" + ", ".join(f"'k{i}': Foo(x={i})" for i in range(20_000)) + "}",
        "<" + "->" * 100_000 + ">",
        "<" + "<" * 50_000 + ">" * 50_000 + ">",
        "'" + "\\n" * 100_000 + "'",
    ],
)
def test_time_is_linear(text: str) -> None:
    started = time.perf_counter()
    parse(text, max_depth=64)
    assert time.perf_counter() - started < 2.0


def _random_value(rng: random.Random, depth: int) -> object:
    scalars: list[object] = [
        rng.randint(-(10**12), 10**12),
        rng.uniform(-1e6, 1e6),
        rng.choice([1e-05, 1e300, -0.0, math.inf, -math.inf]),
        rng.choice([True, False, None]),
        "".join(rng.choice("ab'\"\\\n\t\x00\u1234 é{}[](),:<>") for _ in range(rng.randint(0, 8))),
        bytes(rng.randint(0, 255) for _ in range(rng.randint(0, 6))),
    ]
    if depth >= 4 or rng.random() < 0.4:
        return rng.choice(scalars)
    size = rng.randint(0, 4)
    kind = rng.choice(["list", "tuple", "dict", "set"])
    if kind == "list":
        return [_random_value(rng, depth + 1) for _ in range(size)]
    if kind == "tuple":
        return tuple(_random_value(rng, depth + 1) for _ in range(size))
    if kind == "set":
        return {rng.choice(scalars[:4] + [scalars[4]]) for _ in range(size)}
    return {rng.choice([rng.randint(0, 99), scalars[4], (1, "k")]): _random_value(rng, depth + 1) for _ in range(size)}


def test_round_trip_of_random_literals() -> None:
    rng = random.Random(20261130)
    for _ in range(400):
        value = _random_value(rng, 0)
        assert parse(repr(value)) == value, repr(value)


def test_an_octal_escape_past_one_byte_in_bytes_is_refused() -> None:
    """Found by fuzzing (fuzz/run.py header): `b'\\666'` raised UnicodeEncodeError."""
    with pytest.raises(ReprError):
        parse(r"b'\666'")
    assert parse(r"b'\377'") == b"\xff"


def test_a_unicode_escape_past_the_last_code_point_is_refused() -> None:
    """Found by fuzzing (fuzz/run.py header): `'\\U88888888'` raised OverflowError."""
    with pytest.raises(ReprError):
        parse(r"'\U88888888'")
    assert parse(r"'\U0001F600'") == "\U0001f600"
