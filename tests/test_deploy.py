"""The Dockerfile and the Kubernetes examples agree with each other and with the CLI.

No container engine or cluster is needed: the Dockerfile's ENTRYPOINT/CMD and every logdoctor
container in examples/kubernetes/*.yaml are read as data. Each container's command line (Kubernetes'
command/args over the image's ENTRYPOINT/CMD) must be one `logdoctor watch` accepts, watch paths that
are mounted (and written by someone), keep its state on a writable mount, and serve the metrics port
it declares and probes.
"""

from __future__ import annotations

import contextlib
import fnmatch
import io
import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
import yaml

from logdoctor import __version__
from logdoctor.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent
DOCKERFILE = ROOT / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"
EXAMPLES = ROOT / "examples" / "kubernetes"
EXPECTED_MANIFESTS = ("daemonset.yaml", "pod-sidecar.yaml")
IMAGE = f"ghcr.io/example/logdoctor:{__version__}"
BASE_IMAGE = "python:3.11-slim"
IMAGE_UID = 10001
STATE_FOLDER = "/var/lib/logdoctor"

# `logdoctor [--format F] [--patterns DIR] watch PATH [PATH ...] [--state FILE] [--format json|text]
#  [--metrics-port N] [--poll SECONDS] [--patterns DIR]`: every option takes a value.
GLOBAL_OPTIONS = {"--format", "--patterns"}
WATCH_OPTIONS = {"--state", "--format", "--metrics-port", "--poll", "--patterns"}
# Volume types a container cannot write to, whatever its volumeMount says.
READ_ONLY_VOLUMES = {"configMap", "secret", "downwardAPI", "projected", "image"}
POD_SPEC_PATHS = {
    "Pod": ("spec",),
    "Deployment": ("spec", "template", "spec"),
    "DaemonSet": ("spec", "template", "spec"),
    "StatefulSet": ("spec", "template", "spec"),
    "ReplicaSet": ("spec", "template", "spec"),
    "Job": ("spec", "template", "spec"),
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
}


# --- the Dockerfile --------------------------------------------------------------------------------


def dockerfile_instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) in order; continuation lines joined, comments dropped."""
    instructions: list[tuple[str, str]] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if pending and line.startswith("#"):
            continue  # a comment inside a continued instruction
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        full = (pending + line).strip()
        pending = ""
        keyword, _, rest = full.partition(" ")
        instructions.append((keyword.upper(), rest.strip()))
    assert not pending, "the Dockerfile ends inside a continued instruction"
    return instructions


def final_stage(instructions: list[tuple[str, str]]) -> list[tuple[str, str]]:
    starts = [i for i, (keyword, _) in enumerate(instructions) if keyword == "FROM"]
    assert starts, "the Dockerfile has no FROM"
    return instructions[starts[-1] :]


def only(stage: list[tuple[str, str]], keyword: str) -> str:
    found = [rest for kw, rest in stage if kw == keyword]
    assert found, f"the Dockerfile's final stage has no {keyword}"
    return found[-1]  # like docker: the last one wins


def json_array(keyword: str, rest: str) -> list[str]:
    try:
        value = json.loads(rest)
    except json.JSONDecodeError as exc:
        raise AssertionError(f"{keyword} is not in exec (JSON array) form: {rest!r} ({exc})") from exc
    assert isinstance(value, list) and value and all(isinstance(v, str) for v in value), (
        f"{keyword} must be a non-empty JSON array of strings, not {rest!r}"
    )
    return value


@dataclass(frozen=True)
class Image:
    instructions: list[tuple[str, str]]
    stage: list[tuple[str, str]]
    entrypoint: list[str]
    cmd: list[str]


def image() -> Image:
    instructions = dockerfile_instructions(DOCKERFILE.read_text("utf-8"))
    stage = final_stage(instructions)
    return Image(
        instructions,
        stage,
        json_array("ENTRYPOINT", only(stage, "ENTRYPOINT")),
        json_array("CMD", only(stage, "CMD")),
    )


# --- a logdoctor command line ---------------------------------------------------------------------


@dataclass(frozen=True)
class WatchLine:
    argv: list[str]
    paths: list[str]
    options: dict[str, str]

    @property
    def state(self) -> str:
        assert "--state" in self.options, f"{shlex.join(self.argv)}: no --state (offsets would not survive a restart)"
        return self.options["--state"]

    @property
    def metrics_port(self) -> int:
        assert "--metrics-port" in self.options, f"{shlex.join(self.argv)}: no --metrics-port"
        value = self.options["--metrics-port"]
        assert value.isdigit() and 0 < int(value) < 65536, f"--metrics-port {value!r} is not a port"
        return int(value)


def watch_line(argv: list[str]) -> WatchLine:
    """The documented interface of `logdoctor watch`, read without the CLI (so the mount and port
    checks do not depend on the subcommand's wiring; test_*_accepted_by_logdoctor checks the CLI)."""
    line = shlex.join(argv)
    assert argv and PurePosixPath(argv[0]).name == "logdoctor", f"{line}: does not run logdoctor"
    options: dict[str, str] = {}
    paths: list[str] = []
    subcommand = None
    tokens = iter(argv[1:])
    for token in tokens:
        if token.startswith("--"):
            name, eq, value = token.partition("=")
            known = WATCH_OPTIONS if subcommand else GLOBAL_OPTIONS
            assert name in known, f"{line}: unknown option {name}"
            if not eq:
                value = next(tokens, "")
                assert value and not value.startswith("--"), f"{line}: {name} needs a value"
            options[name] = value
        elif subcommand is None:
            subcommand = token
        else:
            paths.append(token)
    assert subcommand == "watch", f"{line}: the command is {subcommand!r}, not watch"
    assert paths, f"{line}: watch needs at least one PATH"
    return WatchLine(argv, paths, options)


def parsed_by_logdoctor(argv: list[str]) -> Any:
    """What `logdoctor.cli.build_parser()` makes of the command line (argv[0] is the program)."""
    errors = io.StringIO()
    try:
        with contextlib.redirect_stderr(errors):
            return build_parser().parse_args(argv[1:])
    except SystemExit as exc:
        pytest.fail(
            f"`{shlex.join(argv)}` is rejected by logdoctor's CLI (exit {exc.code}): {errors.getvalue().strip()}",
            pytrace=False,
        )


def assert_accepted_by_logdoctor(argv: list[str]) -> None:
    expected = watch_line(argv)
    args = parsed_by_logdoctor(argv)
    assert args.command == "watch", f"`{shlex.join(argv)}` parses as {args.command!r}, not watch"

    # Whatever the subparser names its destinations, it must hold the paths, state file and port given.
    def norm(value: Any) -> Any:
        return tuple(str(v) for v in value) if isinstance(value, list | tuple) else str(value)

    values = {norm(v) for v in vars(args).values()}
    assert tuple(expected.paths) in values, f"the parsed arguments {vars(args)} do not hold the paths {expected.paths}"
    assert expected.state in values, f"the parsed arguments {vars(args)} do not hold the state file {expected.state}"
    assert str(expected.metrics_port) in values, f"the parsed arguments {vars(args)} do not hold the metrics port"


# --- the manifests ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sidecar:
    where: str
    container: dict[str, Any]
    pod: dict[str, Any]
    argv: list[str]

    @property
    def mounts(self) -> list[dict[str, Any]]:
        return list(self.container.get("volumeMounts") or [])

    def volume(self, name: str) -> dict[str, Any]:
        for volume in self.pod.get("volumes") or []:
            if volume["name"] == name:
                return dict(volume)
        raise AssertionError(f"{self.where}: volumeMount {name!r} names no volume of the pod")

    def uid(self) -> int:
        for context in (self.container.get("securityContext"), self.pod.get("securityContext")):
            if context and context.get("runAsUser") is not None:
                return int(context["runAsUser"])
        return IMAGE_UID


def all_containers(pod: dict[str, Any]) -> list[dict[str, Any]]:
    return [*(pod.get("initContainers") or []), *(pod.get("containers") or [])]


def kubernetes_argv(container: dict[str, Any], entrypoint: list[str], cmd: list[str]) -> list[str]:
    """The process Kubernetes starts: `command` replaces ENTRYPOINT (and drops CMD), `args` replaces CMD."""
    command, args = container.get("command"), container.get("args")
    if command is not None:
        return [*command, *(args or [])]
    return [*entrypoint, *(cmd if args is None else args)]


def documents(manifest: str) -> list[dict[str, Any]]:
    with (EXAMPLES / manifest).open(encoding="utf-8") as handle:
        return [doc for doc in yaml.safe_load_all(handle) if doc is not None]


def sidecars(manifest: str) -> list[Sidecar]:
    img = image()
    found = []
    for doc in documents(manifest):
        path = POD_SPEC_PATHS.get(doc.get("kind", ""))
        if path is None:
            continue
        pod = doc
        for key in path:
            pod = pod[key]
        for container in all_containers(pod):
            if container.get("image", "").rsplit(":", 1)[0] != IMAGE.rsplit(":", 1)[0]:
                continue
            where = f"{manifest}: {doc['kind']}/{doc['metadata']['name']}, container {container['name']}"
            assert container["image"] == IMAGE, f"{where}: image {container['image']}, expected {IMAGE}"
            found.append(Sidecar(where, container, pod, kubernetes_argv(container, img.entrypoint, img.cmd)))
    assert found, f"{manifest}: no container runs {IMAGE}"
    return found


def static_prefix(path: str) -> str:
    """The part of a watched path before any glob character: what must be mounted."""
    parts = []
    for part in PurePosixPath(path).parts:
        if any(ch in part for ch in "*?["):
            break
        parts.append(part)
    return str(PurePosixPath(*parts))


def mount_of(sidecar: Sidecar, path: str) -> dict[str, Any] | None:
    """The volumeMount that holds `path` (the deepest one whose mountPath is the path or a parent)."""
    target = PurePosixPath(path)
    best = None
    for mount in sidecar.mounts:
        mount_path = PurePosixPath(mount["mountPath"])
        if target.is_relative_to(mount_path) and (
            best is None or len(mount_path.parts) > len(PurePosixPath(best["mountPath"]).parts)
        ):
            best = mount
    return best


def manifests() -> list[str]:
    # The expected files are listed too, so a missing one fails instead of leaving nothing to test.
    return sorted({*EXPECTED_MANIFESTS, *(p.name for p in EXAMPLES.glob("*.yaml"))})


# --- tests: the manifests --------------------------------------------------------------------------


@pytest.mark.parametrize("manifest", manifests())
def test_manifest_command_is_accepted_by_logdoctor(manifest: str) -> None:
    for sidecar in sidecars(manifest):
        assert_accepted_by_logdoctor(sidecar.argv)


@pytest.mark.parametrize("manifest", manifests())
def test_manifest_watched_paths_are_mounted_and_written_by_someone(manifest: str) -> None:
    for sidecar in sidecars(manifest):
        for path in watch_line(sidecar.argv).paths:
            assert PurePosixPath(path).is_absolute(), f"{sidecar.where}: watched path {path} is not absolute"
            mount = mount_of(sidecar, static_prefix(path))
            assert mount is not None, f"{sidecar.where}: watches {path}, which no volumeMount holds"
            volume = sidecar.volume(mount["name"])
            if "hostPath" in volume:
                continue  # the node's own files (the kubelet writes them)
            writers = [
                c["name"]
                for c in all_containers(sidecar.pod)
                if c is not sidecar.container
                and any(m["name"] == mount["name"] and not m.get("readOnly") for m in c.get("volumeMounts") or [])
            ]
            assert writers, (
                f"{sidecar.where}: watches {path} on volume {mount['name']!r}, which no other container writes"
            )


@pytest.mark.parametrize("manifest", manifests())
def test_manifest_state_folder_is_a_writable_mount(manifest: str) -> None:
    for sidecar in sidecars(manifest):
        folder = str(PurePosixPath(watch_line(sidecar.argv).state).parent)
        mount = mount_of(sidecar, folder)
        assert mount is not None, f"{sidecar.where}: the state folder {folder} is not a mounted volume"
        assert not mount.get("readOnly"), f"{sidecar.where}: the state folder {folder} is mounted read-only"
        volume = sidecar.volume(mount["name"])
        kind = next(k for k in volume if k != "name")
        assert kind not in READ_ONLY_VOLUMES, f"{sidecar.where}: the state folder is on a {kind} volume (read-only)"
        if kind == "persistentVolumeClaim":
            assert not volume[kind].get("readOnly"), f"{sidecar.where}: the state volume's claim is read-only"


@pytest.mark.parametrize("manifest", manifests())
def test_manifest_user_can_read_and_write_its_volumes(manifest: str) -> None:
    """hostPath folders hold root-owned files (the kubelet's logs are 0640, a DirectoryOrCreate folder is
    created 0755 by root): only uid 0 reads and writes them. Anything else runs as a non-root user."""
    for sidecar in sidecars(manifest):
        host_paths = [m["name"] for m in sidecar.mounts if "hostPath" in sidecar.volume(m["name"])]
        context = sidecar.container.get("securityContext") or {}
        if host_paths:
            assert sidecar.uid() == 0, f"{sidecar.where}: uid {sidecar.uid()} cannot use hostPath volumes {host_paths}"
        else:
            assert sidecar.uid() != 0, f"{sidecar.where}: runs as root without needing to"
            assert context.get("runAsNonRoot") is True, f"{sidecar.where}: securityContext.runAsNonRoot is not true"
        assert context.get("allowPrivilegeEscalation") is False, f"{sidecar.where}: allowPrivilegeEscalation"


@pytest.mark.parametrize("manifest", manifests())
def test_manifest_metrics_port_is_declared_and_probed(manifest: str) -> None:
    for sidecar in sidecars(manifest):
        port = watch_line(sidecar.argv).metrics_port
        ports = sidecar.container.get("ports") or []
        assert any(p.get("containerPort") == port for p in ports), (
            f"{sidecar.where}: --metrics-port {port} is not a declared containerPort ({ports})"
        )
        named = {p["name"]: p["containerPort"] for p in ports if "name" in p}
        probe = sidecar.container.get("livenessProbe")
        assert probe and "httpGet" in probe, f"{sidecar.where}: no livenessProbe on /healthz"
        for kind in ("livenessProbe", "readinessProbe", "startupProbe"):
            get = (sidecar.container.get(kind) or {}).get("httpGet")
            if get is None:
                continue
            probed = named.get(get["port"], get["port"])
            assert probed == port, f"{sidecar.where}: {kind} probes port {get['port']}, metrics are on {port}"
            assert get.get("path") == "/healthz", f"{sidecar.where}: {kind} probes {get.get('path')}, not /healthz"


def test_examples_hold_the_expected_manifests() -> None:
    assert set(EXPECTED_MANIFESTS) <= {p.name for p in EXAMPLES.glob("*.yaml")}


# --- tests: the Dockerfile -------------------------------------------------------------------------


def test_dockerfile_cmd_is_accepted_by_logdoctor() -> None:
    img = image()
    assert img.entrypoint == ["logdoctor"]
    assert_accepted_by_logdoctor([*img.entrypoint, *img.cmd])


def test_dockerfile_image_matches_its_cmd() -> None:
    img = image()
    line = watch_line([*img.entrypoint, *img.cmd])
    assert line.paths == ["/var/log/vllm"]
    assert str(PurePosixPath(line.state).parent) == STATE_FOLDER
    user = only(img.stage, "USER").split(":")[0]
    assert user == str(IMAGE_UID), f"USER {user}, expected {IMAGE_UID}"
    owned = [rest for kw, rest in img.stage if kw == "RUN" and STATE_FOLDER in rest and str(IMAGE_UID) in rest]
    assert owned, f"the final stage does not create {STATE_FOLDER} owned by {IMAGE_UID}"
    exposed = {p.split("/")[0] for kw, rest in img.stage if kw == "EXPOSE" for p in rest.split()}
    assert str(line.metrics_port) in exposed, f"EXPOSE {exposed} misses the metrics port {line.metrics_port}"
    healthcheck = only(img.stage, "HEALTHCHECK")
    url = re.search(r"http://(?:127\.0\.0\.1|localhost):(\d+)(/[^'\"\s]*)", healthcheck)
    assert url, f"HEALTHCHECK does not fetch a local URL: {healthcheck}"
    assert (int(url[1]), url[2]) == (line.metrics_port, "/healthz"), f"HEALTHCHECK fetches {url[0]}"
    assert "urllib" in healthcheck and not re.search(r"\b(curl|wget)\b", healthcheck), "the slim image has no curl"


def test_dockerfile_builds_a_wheel_and_installs_only_it() -> None:
    instructions = image().instructions
    froms = [i for i, (kw, _) in enumerate(instructions) if kw == "FROM"]
    assert len(froms) == 2, "expected a builder stage and a final stage"
    # The global ARG defaults (before the first FROM) are what FROM lines see.
    args = dict(rest.split("=", 1) for kw, rest in instructions[: froms[0]] if kw == "ARG" and "=" in rest)
    for i in froms:
        written = instructions[i][1].split()[0]
        base = re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: args[m[1] or m[2]], written)
        assert base == BASE_IMAGE, f"FROM {written} is {base}, expected {BASE_IMAGE}"
    builder = instructions[froms[0] : froms[1]]
    assert any(kw == "RUN" and "pip wheel" in rest for kw, rest in builder), "the builder stage builds no wheel"
    installs = [rest for kw, rest in final_stage(instructions) if kw == "RUN" and "pip install" in rest]
    assert installs and all(".whl" in r and "--no-cache-dir" in r for r in installs), installs
    assert not any(kw in ("COPY", "ADD") and "--from" not in rest for kw, rest in final_stage(instructions)), (
        "the final stage copies from the build context: it should install the wheel only"
    )


def dockerignored(path: str, patterns: list[str]) -> bool:
    """Docker's rule, enough for this file: a path is excluded when it or a parent matches a pattern."""
    parts = PurePosixPath(path).parts
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    return any(
        fnmatch.fnmatchcase(p, pat.replace("**/", "*")) or fnmatch.fnmatchcase(p, pat)
        for p in prefixes
        for pat in patterns
    )


def test_dockerignore_keeps_the_build_inputs_and_drops_the_rest() -> None:
    patterns = [
        line.strip().rstrip("/")
        for line in DOCKERIGNORE.read_text("utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert not any(p.startswith("!") for p in patterns), "exceptions (!) are not modelled by this test"
    sources = [
        src.rstrip("/")
        for kw, rest in image().instructions
        if kw == "COPY" and "--from" not in rest
        for src in rest.split()[:-1]
        if not src.startswith("--")
    ]
    assert sources
    for source in sources:
        assert (ROOT / source).exists(), f"COPY {source}: not in the project"
        assert not dockerignored(source, patterns), f"COPY {source}: excluded by .dockerignore"
    for packaged in ("patterns/memory.toml", "logdoctor/launch/families.toml", "logdoctor/cli.py"):
        assert not dockerignored(packaged, patterns), f"{packaged} is excluded by .dockerignore"
    for dropped in (
        ".venv",
        ".git",
        "fixtures/real",
        "tests/test_deploy.py",
        "bench/accuracy.py",
        ".pytest_cache",
        "logdoctor/__pycache__/cli.cpython-311.pyc",
        "build/lib",
    ):
        assert dockerignored(dropped, patterns), f"{dropped} is not excluded by .dockerignore"


def test_the_wheel_lists_every_package_of_the_code_and_the_pattern_library() -> None:
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["setuptools"]
    code = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for init in (ROOT / "logdoctor").rglob("__init__.py")
        if "__pycache__" not in init.parts
    }
    assert set(config["packages"]) == code | {"logdoctor.patterns"}
    assert config["package-dir"] == {"logdoctor.patterns": "patterns"}
    assert sorted((ROOT / "patterns").glob("*.toml")), "the pattern library is the top-level patterns/"
