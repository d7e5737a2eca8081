"""A launch that never started serving is an error when its log ends in a wait that blocks start-up
(library `blocks_start`: Ray's placement group), and only when the input has ended for good (scan, the
pipe, run), not in watch, whose file may still grow."""

from __future__ import annotations

from pathlib import Path

from logdoctor.doctor import Doctor
from logdoctor.framing import Line
from logdoctor.library.matcher import Library
from logdoctor.model import Finding
from tests.test_e2e import run

HEADER = [
    "INFO 04-25 20:33:00 [api_server.py:1043] vLLM API server version 0.8.5.post1",
    "INFO 04-25 20:33:00 [api_server.py:1044] args: Namespace(subparser='serve', model_tag='Qwen/Qwen2.5-32B', "
    "model='Qwen/Qwen2.5-32B', tensor_parallel_size=4, pipeline_parallel_size=1, distributed_executor_backend='ray')",
    "INFO 04-25 20:33:20 [ray_utils.py:335] No current placement group found. Creating a new placement group.",
]
SPECS = "[{'node:10.0.0.5': 0.001, 'GPU': 1.0}, {'GPU': 1.0}, {'GPU': 1.0}, {'GPU': 1.0}]"


def waiting(seconds: int) -> str:
    return (
        f"INFO 04-25 20:34:00 [ray_utils.py:231] Waiting for creating a placement group of specs for {seconds} "
        f"seconds. specs={SPECS}. Check `ray status` to see if you have enough resources."
    )


WAITS = [waiting(10), waiting(30), waiting(70)]


def diagnose(library: Library, texts: list[str], ended: bool = True) -> tuple[Doctor, list[Finding]]:
    doctor = Doctor(library)
    emitted: list[Finding] = []
    for number, text in enumerate(texts, 1):
        emitted += doctor.feed(Line("-", number, text))
    emitted += doctor.flush()
    if ended:
        emitted += doctor.end_of_input()
    return doctor, emitted


def test_a_log_that_ends_waiting_for_the_placement_group_is_an_error(library: Library) -> None:
    doctor, emitted = diagnose(library, [*HEADER, *WAITS])
    (finding,) = doctor.report()
    assert (finding.rule, finding.severity, finding.primary) == ("distributed.ray-placement-group-waiting", "error", True)
    assert finding.title.startswith("The server never started: the log ends while vLLM is waiting")
    assert "(70 s so far)" in finding.title  # the last sighting's wait
    assert finding.fix.steps[0].startswith(
        "This launch needs 4 GPUs (--tensor-parallel-size 4 x --pipeline-parallel-size 1) and asked Ray for 4 GPU bundles"
    )
    assert doctor.saw_error
    # A stream reported the warning at once, and amends it when the input ends.
    assert [(f.kind, f.severity) for f in emitted][-1] == ("update", "error")


def test_a_log_that_may_still_grow_keeps_the_wait_a_warning(library: Library) -> None:
    doctor, _ = diagnose(library, [*HEADER, *WAITS], ended=False)  # watch: its file may grow, the wait may end
    (finding,) = doctor.report()
    assert finding.severity == "warning" and not doctor.saw_error


def test_a_wait_the_launch_got_past_is_not_why_it_never_started(library: Library) -> None:
    went_on = [*HEADER, *WAITS, "INFO 04-25 20:35:00 [model_runner.py:1] Starting to load model Qwen/Qwen2.5-32B..."]
    (finding,) = diagnose(library, went_on)[0].report()
    assert finding.severity == "warning"
    served = [*HEADER, *WAITS, "INFO:     Application startup complete."]
    assert [f.severity for f in diagnose(library, served)[0].report() if f.rule.startswith("distributed.")] == ["warning"]


def test_a_launch_with_an_error_keeps_its_error_as_the_root_cause(library: Library) -> None:
    texts = [*HEADER, *WAITS, "ValueError: Cannot provide a placement group of placement_group_specs="
             f"{SPECS} within 1800 seconds. See `ray status` and `ray list nodes` to make sure the cluster has "
             "enough resources."]
    findings = diagnose(library, texts)[0].report()
    (primary,) = [f for f in findings if f.primary]
    assert primary.rule != "distributed.ray-placement-group-waiting"
    assert [f.severity for f in findings if f.rule == "distributed.ray-placement-group-waiting"] == ["warning"]


def test_scan_and_the_pipe_exit_1_on_a_launch_that_never_got_its_gpus(tmp_path: Path) -> None:
    log = tmp_path / "pending.log"
    log.write_text("\n".join([*HEADER, *WAITS]) + "\n")
    scanned = run("scan", str(log))
    assert scanned.returncode == 1 and b"The server never started" in scanned.stdout
    piped = run(stdin=log.read_bytes())
    assert piped.returncode == 1
    shown = b" ".join(piped.stderr.split())  # the report wraps its lines
    assert b"ERROR distributed.ray-placement-group-waiting: The server never started" in shown
    assert b"(now the root cause)" in shown and b"Other failures above" not in shown  # one failure, amended
