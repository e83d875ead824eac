"""Names the tool reads from files it did not write (a case folder's, a
task.toml's ``[task] name``, a trial's, a job's) in the headless commands'
text: a line break in one is written as ``\\n`` on its row and cannot forge
another, a bidi control is shown as ``<U+202E>`` and never obeyed; ``--json``
keeps every name as it is (JSON escapes it)."""

from __future__ import annotations

import json
import sys

from tests.harbor.conftest import real  # noqa: F401 - the genuine Harbor jobs, copied
from tests.harbor.job_copies import copy_job_files, copy_trial
from tests.helpers import make_task, no_traceback, run_tool, write

PY = sys.executable
RLO = "\u202e"
#: A name that, printed as it is, would add a passing row of its own to a table.
FORGED = 'good\n✓  forged  {"reward": 1.0}  {"reward": 1.0}'


def test_a_case_or_task_name_with_a_line_break_stays_on_its_row(tmp_path, env):
    toml = f'version = "1.0"\n[task]\nname = "org/demo\\n✓  forged-task{RLO}"\n'
    task = make_task(tmp_path / "tasks" / "demo", toml=toml, cases={FORGED: {"a.txt": ""}, f"b{RLO}c": {"a.txt": ""}})
    for case in (task / "cases").iterdir():
        write(case / "expected.json", '{"rewards": {"reward": 1.0}}')
    done = run_tool(env, "test", task, "--python", PY, cwd=tmp_path)
    no_traceback(done)
    lines = done.stdout.splitlines()
    assert lines[0].startswith("task org/demo\\n✓  forged-task<U+202E> · verifier"), lines
    header, *rows = (line.split() for line in lines[1:4])
    assert header[0] == "case" and [row[1] for row in rows] == ["b<U+202E>c", "good\\n✓"], lines
    assert not any(line.startswith("✓  forged") for line in lines), lines
    assert RLO not in done.stdout
    cases = json.loads(run_tool(env, "test", task, "--python", PY, "--json", cwd=tmp_path).stdout)["cases"]
    assert sorted(c["case"] for c in cases) == sorted([FORGED, f"b{RLO}c"])


def named(name: str):
    def edit(result: dict) -> None:
        result["trial_name"] = name
        result["task_name"] = f"separate-mode\n{RLO}"
        result["agent_info"]["name"] = f"oracle\n✓  forged-agent{RLO}"

    return edit


def test_trial_and_task_names_from_a_job_stay_on_their_rows(real, env, tmp_path):  # noqa: F811
    job = copy_job_files(real, real / "jobs" / "names", source="separate-mode", name=f"names\n{RLO}forged-job")
    copy_trial(real, job, "separate-mode__good000", source="separate-mode")
    evil = copy_trial(real, job, "separate-mode__evil000", source="separate-mode")
    trial_name = "evil\n✓  separate-mode__forged  1.0  1.0  same" + RLO
    for file in ("config.json", "result.json"):
        data = json.loads((evil / file).read_text())
        data["trial_name"] = trial_name
        if file == "result.json":
            named(trial_name)(data)
        (evil / file).write_text(json.dumps(data))

    tested = run_tool(env, "test", job, "--python", PY, cwd=tmp_path)
    no_traceback(tested)
    lines = tested.stdout.splitlines()
    assert lines[0].startswith("job names\\n<U+202E>forged-job · 2 trial(s)"), lines
    assert [line.split()[1] for line in lines[2:4]] == ["evil\\n✓", "separate-mode__good000"], lines
    assert "2 agree, 0 differ, 0 not compared" in lines
    assert not any(line.lstrip().startswith("✓  separate-mode__forged") for line in lines), lines

    overview = run_tool(env, "run", job, cwd=tmp_path)  # several trials, none chosen: the overview
    no_traceback(overview)
    assert not any("forged-agent" in line and "oracle" not in line for line in overview.stdout.splitlines())
    assert not any(
        line.lstrip().startswith(("✓  separate-mode__forged", "✓  forged")) for line in overview.stdout.splitlines()
    )

    for done in (tested, overview, run_tool(env, "run", evil, "--python", PY, cwd=tmp_path)):
        assert RLO not in done.stdout + done.stderr
    header = run_tool(env, "run", evil, "--python", PY, cwd=tmp_path).stdout.splitlines()[0]
    assert header.startswith("trial evil\\n✓  separate-mode__forged  1.0  1.0  same<U+202E> · task separate-mode\\n")

    data = json.loads(run_tool(env, "test", job, "--python", PY, "--json", cwd=tmp_path).stdout)
    assert data["name"] == f"names\n{RLO}forged-job"
    assert [t["trial"]["name"] for t in data["trials"]] == [trial_name, "separate-mode__good000"]
