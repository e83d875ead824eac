"""The runner's phases file is in reach of the verifier, which may write
anything into it: each line of any shape is read to the runner's, or dropped,
and the replay's phases are lined up against the sandbox's without raising."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers.harbor import SEPARATE, replay_trial, sandbox_trial
from tests.helpers.hostile import ANY_FIELD, bounded, contents, put
from tests.helpers.tasks import make_task
from tests.strategies import utf8_text
from verifier_tui.engine.harbor.phases import PHASES, local_phases, where_they_part
from verifier_tui.engine.invocation import PHASES_FILE
from verifier_tui.engine.readback import PHASE_LINE_SHAPE
from verifier_tui.engine.record import replace
from verifier_tui.engine.results import read_phases

PHASE_LINES = st.fixed_dictionaries(
    {
        "phase": st.sampled_from([name for name, _label in PHASES]) | utf8_text(max_size=8),
        "status": st.sampled_from(["ok", "failed", "started"]) | ANY_FIELD,
    },
    optional={key: ANY_FIELD for key in PHASE_LINE_SHAPE if key not in ("phase", "status")},
)
FILES = (
    st.lists(PHASE_LINES.map(json.dumps) | utf8_text(max_size=30), max_size=12).map(
        lambda lines: ("bytes", "\n".join(lines).encode())
    )
    | contents()
)


@pytest.fixture(scope="module")
def replayed(tmp_path_factory):
    """A trial of a verifier that scores, replayed once: its phases are the sandbox's side."""
    root = tmp_path_factory.mktemp("phases")
    demo = make_task(root / "runs" / "tasks" / "demo", toml=SEPARATE)
    trial = sandbox_trial(root / "runs" / "jobs" / "j", demo, root, workspace={}, mode="separate", capture=True)
    return replay_trial(trial)[1]


# Most of an example's time is drawing the file (the replay is made once): 40 keep it brief on a busy machine.
@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(found=FILES)
def test_a_phases_file_of_any_shape_gives_phases_lined_up_with_the_sandboxs(found, replayed, tmp_path):
    stage = tmp_path / "stage"
    put(stage / "inputs" / PHASES_FILE, found)
    spec = SimpleNamespace(phases=True, explain_only=False, runner=None)
    prepared = SimpleNamespace(spec=spec, stage=SimpleNamespace(root=stage, inputs_dir=stage / "inputs"), path_map=[])
    lines = bounded(read_phases, prepared)
    assert lines is not None
    assert all(isinstance(line["phase"], str) and isinstance(line["status"], str) for line in lines)
    report = local_phases(replace(replayed.local, phases=lines), task_root=tmp_path)
    assert all(isinstance(phase.detail, str) for phase in report.phases)
    where_they_part(replayed.phases, report)
