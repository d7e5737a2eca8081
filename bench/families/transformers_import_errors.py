"""Generate the patterns for transformers' "<X> requires the <library> library" ImportErrors.

    python bench/families/transformers_import_errors.py /work/pkg-src/transformers-4.43.4 \
        /work/pkg-src/transformers-5.24.0 [more unpacked transformers wheels ...] [--write]

transformers keeps one message template per optional dependency in `transformers/utils/import_utils.py`
(`SENTENCEPIECE_IMPORT_ERROR`, `PROTOBUF_IMPORT_ERROR`, `AV_IMPORT_ERROR`, ...; module-level string
constants whose first line is "{0} requires the <library> library but it was not found in your
environment."). `requires_backends` raises `ImportError` with them when a tokenizer, processor or model
class needs a package that is not installed. This script reads every template of every wheel given, keeps
the first sentence as the message to match (with `{0}`, the class name, as a capture), takes the install
command from the template where it gives one (else from PIP_NAMES below), and writes one pattern per
distinct message into the generated block of patterns/model.toml (`--write`), or prints it.

Unpack a wheel with `pip download --no-deps transformers==X -d DIR && unzip DIR/*.whl -d DIR/transformers-X`.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

TARGET = Path(__file__).resolve().parents[2] / "patterns" / "model.toml"
BEGIN = "# ---- BEGIN GENERATED: transformers optional-library ImportErrors"
END = "# ---- END GENERATED: transformers optional-library ImportErrors ----"

# Templates that give no `pip install <name>` line: the PyPI name of the library they name.
PIP_NAMES = {
    "SENTENCEPIECE": "sentencepiece",
    "PROTOBUF": "protobuf",
    "FAISS": "faiss-cpu",
    "PYTORCH": "torch",
    "TORCHVISION": "torchvision",
    "TENSORFLOW": "tensorflow",
    "DETECTRON2": "detectron2 (built from its repository)",
    "FLAX": "flax",
    "FTFY": "ftfy",
    "LEVENSHTEIN": "python-Levenshtein",
    "TENSORFLOW_PROBABILITY": "tensorflow-probability",
    "TENSORFLOW_TEXT": "tensorflow-text",
    "PANDAS": "pandas",
    "NUMEXPR": "numexpr",
    "NLTK": "nltk",
    "TORCHCODEC": "torchcodec",
    "TORCHAUDIO": "torchaudio",
    "CYTHON": "Cython",
    "JIEBA": "jieba",
    "RJIEBA": "rjieba",
    "PEFT": "peft",
    "JINJA": "jinja2",
    "RICH": "rich",
    "DECORD": "decord",
}

# Libraries a vLLM user meets (tokenizers, multimodal processors): named in the pattern's explanation.
CONTEXT = {
    "SENTENCEPIECE": "SentencePiece-based tokenizers (Llama 1/2, Mistral v1, Gemma, T5, ...) need it to load tokenizer.model",
    "PROTOBUF": "converting a SentencePiece tokenizer.model to a fast tokenizer parses it with protobuf",
    "TOKENIZERS": "every fast tokenizer is implemented in it",
    "AV": "video inputs of multimodal processors are decoded with it",
    "DECORD": "video inputs of multimodal processors are decoded with it",
    "CV2": "some image and video processors use it",
    "VISION": "image processors of multimodal models use it",
    "TORCHVISION": "fast image processors of multimodal models use it",
    "TIMM": "some vision towers are built from it",
    "LIBROSA": "audio processors of speech models use it",
    "SOUNDFILE": "audio processors of speech models read audio with it",
    "SOXR": "audio processors of speech models resample with it",
    "AUDIO": "audio processors of speech models need these",
    "TORCHAUDIO": "audio feature extractors use it",
    "SPEECH": "audio feature extractors use it",
    "MISTRAL_COMMON": "Mistral-format tokenizers (tekken.json) are loaded with it",
    "JINJA": "chat templates are rendered with it",
    "SCIPY": "some processors use it",
    "ACCELERATE": "device-map loading uses it",
    "PEFT": "adapter loading uses it",
}


@dataclass
class Template:
    name: str  # constant name without _IMPORT_ERROR
    sentence: str  # first sentence, "{0} requires ..."
    pip: list[str] = field(default_factory=list)
    versions: list[str] = field(default_factory=list)


def templates_of(root: Path) -> dict[str, str]:
    path = root / "transformers" / "utils" / "import_utils.py"
    tree = ast.parse(path.read_text())
    found: dict[str, str] = {}
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id.endswith("_IMPORT_ERROR")
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            found[node.targets[0].id.removesuffix("_IMPORT_ERROR")] = node.value.value
    return found


def first_sentence(text: str) -> str:
    text = " ".join(text.split())
    match = re.match(r"(\{0\} requires .*?(?:environment|installed))[.,]", text)
    return match.group(1) if match else text.split(". ")[0]


def pip_command(name: str, text: str) -> list[str]:
    commands = [c.strip().rstrip("`.") for c in re.findall(r"pip install [^`\n]+", text)]
    commands = [c for c in commands if c != "pip install" and not c.endswith("pip install")]
    if commands:
        return list(dict.fromkeys(commands))
    if name in PIP_NAMES:
        return [f"pip install {PIP_NAMES[name]}"]
    return []


def collect(roots: list[Path]) -> list[Template]:
    by_sentence: dict[str, Template] = {}
    for root in roots:
        version = root.name.split("-", 1)[-1]
        for name, text in templates_of(root).items():
            sentence = first_sentence(text)
            entry = by_sentence.setdefault(sentence, Template(name, sentence))
            for command in pip_command(name, text):
                if command not in entry.pip:
                    entry.pip.append(command)
            if version not in entry.versions:
                entry.versions.append(version)
    return sorted(by_sentence.values(), key=lambda t: (t.name, t.sentence))


def slug(template: Template, used: set[str]) -> str:
    base = template.name.lower().replace("_", "-")
    candidate, n = base, 2
    while candidate in used:
        candidate, n = f"{base}-{n}", n + 1
    used.add(candidate)
    return candidate


def regex_for(sentence: str) -> str:
    body = sentence.replace("{0} ", "", 1)
    escaped = re.escape(body).replace(r"\ ", r"\s+")
    # Other placeholders ({ACCELERATE_MIN_VERSION}, ...) are filled in when the error is raised.
    escaped = re.sub(r"\\\{\w+\\\}", r"\\S+", escaped)
    return r"(?P<what>[\w.]+)\s+" + escaped


def library_of(sentence: str) -> str:
    match = re.search(r"requires (?:the |thes )?(.+?) (?:library|package)", sentence)
    if match:
        return match.group(1).replace("🤗 ", "")
    match = re.search(r"requires (.+?)(?:,| which| but| >=)", sentence)
    return match.group(1) if match else "a library"


def toml_literal(text: str) -> str:
    assert "'''" not in text
    return "'''" + text + "'''"


def render(template: Template, pattern_id: str) -> str:
    library = library_of(template.sentence)
    install = " or ".join(f"`{c}`" for c in template.pip) or f"install {library}"
    context = CONTEXT.get(template.name)
    why = f" ({context})" if context else ""
    example_sentence = template.sentence.replace("{0}", "LlamaTokenizer" if "SENTENCE" in template.name else "Qwen2VLProcessor")
    example_sentence = re.sub(r"\{\w+\}", "0.26.0", example_sentence)
    versions = ", ".join(template.versions)
    first = template.pip[0] if template.pip else f"install {library}"
    install_text = install.replace('"', "'")
    example_1 = toml_literal(
        "ImportError: " + example_sentence + ". Checkout the instructions on the installation page of its repo"
        " and follow the ones that match your environment."
    )
    tail = f"You can install it with: `{first}`" if template.pip else "You may need to restart your runtime after installation."
    example_2 = toml_literal("ImportError: \n" + example_sentence + ". " + tail)
    near_miss = toml_literal("ModuleNotFoundError: No module named '" + re.sub(r"\W", "_", library.lower()) + "_helper'")
    first_cmd = template.pip[0] if template.pip else f"pip install {library}"
    return f"""[[pattern]]
id = "{pattern_id}"
title = "transformers needs the {library} package, which is not installed"
severity = "error"
role = "cause"
where = "exception"
exception = ["ImportError"]
match = {toml_literal(regex_for(template.sentence))}
explanation = \"\"\"transformers tried to build {{what}}, which needs {library}{why}, and the package is not installed in vLLM's environment. transformers treats it as an optional dependency, so installing vLLM or transformers does not pull it in.\"\"\"

[pattern.fix]
summary = "Install {library} in vLLM's environment: {install_text}."
steps = [
  "Run {install_text} in the same Python environment (or container image) as vLLM, then restart.",
  "In a container, add the same install step to the image (for example `RUN {first_cmd}` in the Dockerfile) so new containers have it.",
]

[pattern.source]
file = "transformers"
function = "utils/import_utils.py requires_backends ({template.name}_IMPORT_ERROR)"
versions = "*"
checked = "generated by bench/families/transformers_import_errors.py from transformers {versions} utils/import_utils.py"

[pattern.examples]
match = [
  {example_1},
  {example_2},
]
no_match = [
  {near_miss},
  {toml_literal("ImportError: cannot import name 'requires_backends' from 'transformers.utils'")},
]
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("roots", nargs="+", type=Path, help="unpacked transformers wheels")
    parser.add_argument("--write", action="store_true", help=f"rewrite the generated block of {TARGET}")
    args = parser.parse_args(argv)
    templates = collect(args.roots)
    used: set[str] = set()
    blocks = [render(t, f"model.transformers-requires-{slug(t, used)}") for t in templates]
    versions = ", ".join(r.name.split("-", 1)[-1] for r in args.roots)
    header = (
        f"{BEGIN} ----\n"
        f"# Generated by `python bench/families/transformers_import_errors.py <unpacked transformers wheels> --write`\n"
        f"# from transformers {versions} (utils/import_utils.py, *_IMPORT_ERROR templates): one pattern per distinct\n"
        f"# message. Do not edit by hand; edit the generator and run it again.\n\n"
    )
    block = header + "\n".join(blocks) + END + "\n"
    if not args.write:
        sys.stdout.write(block)
        return 0
    text = TARGET.read_text()
    if BEGIN in text:
        start = text.index(BEGIN)
        end = text.index(END) + len(END) + 1
        text = text[:start] + block + text[end:]
    else:
        text = text.rstrip("\n") + "\n\n" + block
    TARGET.write_text(text)
    print(f"wrote {len(blocks)} patterns into {TARGET}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
