"""A job at a glance, and a folder of jobs as a list: what each trial
recorded, counted and averaged as Harbor 0.26.0 does.

A trial is read for its overview from ``result.json`` alone (and
``config.json`` when there is no result yet, ``agent/exit-code.txt`` for an
agent that failed without an exception): no task is looked for, no log is
read, so thousands of trials read in a fraction of a second each batch.

Harbor's own figures mirrored here:

- ``TrialResult.recorded_exceptions`` / ``reward_valid``
  (harbor/models/trial/result.py): a trial's rewards count only when every
  recorded exception's policy says the reward is valid;
- ``JobStats.increment`` (harbor/models/job/result.py): trials grouped by
  ``<agent>__<model>__<dataset>`` (dataset ``adhoc`` without a source);
- ``Job._refresh_metrics_for_eval`` (harbor/job.py) with ``Mean``
  (harbor/metrics/mean.py, ``aggregate_reward_dicts``): the mean is taken
  over the trials with a valid reward only; with several reward keys a key a
  trial lacks counts as 0;
- ``compute_token_cost_totals``: tokens and cost from ``agent_result`` (or
  each step's).
"""

from __future__ import annotations

import json
import math
import os
from bisect import bisect_right
from functools import cached_property, partial
from itertools import takewhile
from pathlib import Path
from typing import TYPE_CHECKING

from verifier_tui.engine import untrusted
from verifier_tui.engine.harbor.folders import NOT_A_TRIAL, RESULT, job_paths, result_shape, rewards_of, sub_folders
from verifier_tui.engine.harbor.reading import TimeSpan, not_ended, parse_time, read_json, read_text_tail
from verifier_tui.engine.model import reward_float
from verifier_tui.engine.record import field, record, replace
from verifier_tui.engine.task.target import CONFIG, kind_within
from verifier_tui.engine.verdict import reward_pairs

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping
    from datetime import datetime
    from decimal import Decimal
    from typing import Any

PASSED = "passed"
BELOW_ONE = "reward below 1"
#: A reward value that is no number ("1.0", {"x": 1}, NaN): Harbor's verifier refuses one
#: (VerifierOutputParseError) and writes NaN as null, so only another writer put it in result.json.
NOT_A_NUMBER = "reward not a number"
NO_REWARD = "no reward"  # finished, nothing raised, and no reward recorded (a verifier disabled for the job)
AGENT_FAILED = "agent failed"
NOT_FINISHED = "not finished"
UNREADABLE = "cannot be read"  # the folder or its result.json (no permission, a link): how it ended is not known
#: The outcomes that are not an exception, in the order they are counted.
PLAIN_OUTCOMES = (PASSED, BELOW_ONE, NOT_A_NUMBER, NO_REWARD, AGENT_FAILED, NOT_FINISHED, UNREADABLE)
_FOLDER_KEY = "folder "  # JobOverview.names' key of a task's folder name (a task table's key is JSON: never this)
_NO_TASK = json.dumps({})  # TrialRow.task_config of a trial whose config.json (and result.json) could not be read
# --------------------------------------------------------------------------
# One trial.


@record(frozen=True)
class TrialRow:
    """One trial as the overview shows it."""

    name: str
    path: Path
    task: str
    outcome: str  # one of PLAIN_OUTCOMES or Harbor's exception type
    rewards: dict[str, Any] | None
    reward_valid: bool
    exception_types: tuple[str, ...]
    eval_key: str  # Harbor's <agent>__<model>__<dataset>
    agent: str | None
    model: str | None
    started_at: datetime | None
    duration_s: float | None
    finished_at: datetime | None = None
    n_input_tokens: int | None = None
    n_cache_tokens: int | None = None
    n_output_tokens: int | None = None
    cost_usd: float | None = None
    agent_exit_code: int | None = None
    steps: int = 0
    problem: str | None = None  # why result.json could not be read, or what in it is not of Harbor's shape
    # Which task Harbor was asked for (config.json's task table, as JSON), and
    # whether ``task`` is the name result.json recorded or the task folder's.
    task_config: str = ""
    task_recorded: bool = True
    named_by_folder: bool = False  # no file named its task: ``task`` is the trial folder's (``problem`` says why)
    #: result.json is there but is no file Harbor writes or cannot be read (a link, a FIFO, too big, too
    #: deep, not JSON): not the missing or cut-short one of a trial Harbor was stopped in. ``problem`` says which.
    result_unusable: bool = False

    @property
    def failed(self) -> bool:
        return self.outcome != PASSED

    @property
    def reward_text(self) -> str:
        if not self.rewards:
            return "-"
        if len(self.rewards) == 1:
            return reward_number(next(iter(self.rewards.values())))
        return reward_pairs(self.rewards, lambda k, v: f"{k}={reward_number(v)}", " ")

    @property
    def outcome_words(self) -> str:
        if self.outcome == AGENT_FAILED and self.agent_exit_code is not None:
            return f"agent exited {self.agent_exit_code}"
        return self.outcome

    @property
    def mark(self) -> str:
        """✓ passed, · scored below 1 or not finished, ? not readable, ✗ an exception or a failed agent."""
        if self.outcome == UNREADABLE:
            return "?"
        return "✓" if self.outcome == PASSED else "·" if self.outcome in (BELOW_ONE, NO_REWARD, NOT_FINISHED) else "✗"

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "path": str(self.path),
            "task": self.task,
            "outcome": self.outcome,
            "rewards": self.rewards,
            "reward_valid": self.reward_valid,
            "exception_types": list(self.exception_types),
            "agent": self.agent,
            "model": self.model,
            "started_at": self.started_at.isoformat() if self.started_at else None,
            "duration_s": self.duration_s,
            "n_input_tokens": self.n_input_tokens,
            "n_cache_tokens": self.n_cache_tokens,
            "n_output_tokens": self.n_output_tokens,
            "cost_usd": self.cost_usd,
            "agent_exit_code": self.agent_exit_code,
            "steps": self.steps,
            "problem": self.problem,
        }


def reward_number(value: Any) -> str:
    if isinstance(value, bool):
        return str(value)
    if not isinstance(value, (int, float)) or (isinstance(value, float) and not math.isfinite(value)):
        # "1.0" quoted: never taken for the number; NaN and Infinity as the file holds them, as the mean of
        # such a reward is said (mean_errors), never Python's nan and inf beside it
        return json.dumps(value)
    if abs(value) >= LONG:
        # A float as an integer (.1f wrote all 309 digits of 1e308, 401 digits filled the trials table): one way.
        return count_words(value)
    if isinstance(value, float):
        return f"{value:.1f}" if value.is_integer() else f"{value:.4g}"
    return str(value)


def _exceptions(result: dict[str, Any], steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``recorded_exceptions``: the trial's own first, then each step's."""
    found = [result.get("exception_info")] + [s.get("exception_info") for s in steps]
    return [e for e in found if isinstance(e, dict) and isinstance(e.get("exception_type"), str)]


def _valid_by_policy(exception: dict[str, Any]) -> bool:
    """The policy Harbor 0.26.0 wrote beside the exception; without one (an
    older Harbor) the unknown-type default, which keeps the reward."""
    policy = exception.get("policy")
    value = policy.get("has_valid_reward") if isinstance(policy, dict) else None
    return value if isinstance(value, bool) else True


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


#: A number this large or larger (past 18 digits: no job's, but a result.json
#: may say anything) is written short by :func:`count_words`, a float as an integer.
LONG = 10**18


def count_words(count: float | Decimal) -> str:
    """A token count as a reader takes it in: ``2,000``; one of :data:`LONG`
    or more as ``1.000e+400``, not hundreds of digits and commas filling the
    screen (a reward too: ``-1.000e+308``, by :func:`reward_number`)."""
    from decimal import Decimal

    return f"{count:,}" if -LONG < count < LONG else f"{Decimal(count):.3e}"


def cost_words(cost: float) -> str:
    """A cost in dollars: ``$0.0200`` under a dollar, ``$2.50`` above; one of a
    million or more (no job's, but a result.json may say anything) as
    ``$1.000e+300``, not hundreds of digits filling the line (as count_words).
    An infinite one (Infinity recorded, an integer past any float, or a sum
    past the largest float) is no number, said as a mean that is none."""
    from decimal import Decimal

    if cost == math.inf:  # (_tokens keeps no negative cost, nor NaN)
        return NO_NUMBER.format("past the largest float")
    if cost >= 1e6:
        return f"${Decimal(cost):.3e}"  # the exponent written as count_words writes it
    return f"${cost:.2f}" if cost >= 1 else f"${cost:.4f}"


def _tokens(
    result: dict[str, Any], steps: list[dict[str, Any]]
) -> tuple[int | None, int | None, int | None, float | None]:
    """``compute_token_cost_totals``: the trial's ``agent_result``, else every step's."""
    contexts = [result.get("agent_result")]
    if not isinstance(contexts[0], dict):
        contexts = [s.get("agent_result") for s in steps]
    totals: list[Any] = [None, None, None, None]
    for context in contexts:
        if not isinstance(context, dict):
            continue
        for index, key in enumerate(("n_input_tokens", "n_cache_tokens", "n_output_tokens", "cost_usd")):
            value = context.get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
                # Counts are Harbor's ints (a count that is no int is not summed); the cost its float, an integer
                # past any float an infinity (reward_float): summed or written as dollars, it raised OverflowError.
                if index < 3 and isinstance(value, int):
                    totals[index] = (totals[index] or 0) + value
                elif index == 3:
                    totals[index] = (totals[index] or 0.0) + reward_float(value)
    return totals[0], totals[1], totals[2], totals[3]


def _agent_exit_code(folder: Path) -> int | None:
    """``agent/exit-code.txt``: the oracle's ``solve.sh`` exit code when it
    failed, which Harbor records nowhere else (agents/oracle.py)."""
    text = read_text_tail(folder / "agent" / "exit-code.txt", 64, beneath=folder)
    try:
        return int(text.strip()) if text is not None else None
    except ValueError:
        return None


def read_trial_row(folder: Path) -> TrialRow:
    """One trial folder, read for the overview; never raises for what the folder holds."""
    result = read_json(folder / RESULT, beneath=folder)
    data = result.data if result.ok and isinstance(result.data, dict) else {}
    config = data.get("config")
    config_problem = None  # why config.json, read for want of result.json's copy, could not be
    if not isinstance(config, dict):
        loaded = read_json(folder / CONFIG, beneath=folder)
        config = loaded.data if loaded.ok and isinstance(loaded.data, dict) else {}
        config_problem = loaded.problem if not loaded.ok else None
    task = untrusted.table(config, "task")
    # Names of another kind than Harbor writes (a number, a list) are read as
    # absent, as the trial's own reading does (folders.Trial.task_name): the
    # trial is never listed under a task ``12345`` its screen does not name.
    recorded, named = (value if isinstance(value, str) else None for value in (data.get("task_name"), task.get("name")))
    task_name = recorded or named or (Path(task["path"]).name if isinstance(task.get("path"), str) else None)
    unnamed = not task_name
    if unnamed:
        # No file names the task (result.json cut short or missing, config.json
        # too): Harbor names a trial's folder after its task's folder
        # (``<name, 32 characters at most>__<7 characters>``, TrialConfig's
        # trial_name), so the trial is counted under that, never under "?".
        task_name = folder_task(folder.name)
    info = untrusted.table(data, "agent_info")
    agent_config = untrusted.table(config, "agent")
    agent = info.get("name") or agent_config.get("name")
    model_info = untrusted.table(info, "model_info")
    model = model_info.get("name") or agent_config.get("model_name")
    rewards = rewards_of(data.get("verifier_result"))
    steps, problems = result_shape(data)
    exceptions = _exceptions(data, steps)
    # reward_valid: rewards recorded, every exception's policy keeps them, and
    # Harbor reading result.json back would take each value as a number.
    valid = (
        bool(rewards)
        and all(harbor_number(v) is not None for v in (rewards or {}).values())
        and all(_valid_by_policy(e) for e in exceptions)
    )
    if steps and rewards is None:
        # A multi-step trial scores each step; its own verifier_result stays null.
        rewards = rewards_of(steps[-1].get("verifier_result")) or None
    started = parse_time(data.get("started_at"))
    finished = parse_time(data.get("finished_at"))
    exit_code = _agent_exit_code(folder)
    types = tuple(dict.fromkeys(e["exception_type"] for e in exceptions))
    if result.state == "unreadable":
        outcome = UNREADABLE
    elif not_ended(result) is not None:
        outcome = NOT_FINISHED
    elif types:
        outcome = types[0]
    elif exit_code not in (None, 0):
        outcome = AGENT_FAILED
    elif not rewards:
        outcome = NO_REWARD
    elif not rewards_are_numbers(rewards):
        outcome = NOT_A_NUMBER
    elif all(v >= 1 for v in rewards.values()):
        outcome = PASSED
    else:
        outcome = BELOW_ONE
    tokens = _tokens(data, steps)
    return TrialRow(
        name=folder.name,  # Harbor's <trials_dir>/<trial_name>, and what --trial and the user open
        path=folder,
        task=str(task_name or "?"),
        outcome=outcome,
        rewards=rewards,
        reward_valid=valid,
        exception_types=types,
        eval_key=_eval_key(str(agent or "?"), model, data.get("source")),
        agent=agent if isinstance(agent, str) else None,
        model=model if isinstance(model, str) else None,
        started_at=started,
        # none where no clock measured one (year 1 to 9999, a finish before the start), as the trial's phases
        duration_s=TimeSpan(started, finished).duration_s,
        finished_at=finished,
        n_input_tokens=_int(tokens[0]),
        n_cache_tokens=_int(tokens[1]),
        n_output_tokens=_int(tokens[2]),
        cost_usd=tokens[3],
        agent_exit_code=exit_code,
        steps=len(steps),
        problem=_problem(result.problem if not result.ok else "; ".join(problems), config_problem, unnamed),
        named_by_folder=unnamed,
        result_unusable=result.state in ("unreadable", "invalid"),
        task_config=json.dumps(task, sort_keys=True, default=str),
        task_recorded=bool(recorded),
    )


def rewards_are_numbers(rewards: Mapping[str, Any]) -> bool:
    """Whether each recorded reward is a number Harbor scores: NaN and Infinity are
    not (another writer's: Harbor's verifier refuses a reward that is not finite, and
    its result.json writes null). NaN is below nothing (``nan >= 1`` is not), Infinity
    passed nothing Harbor scored: both end as :data:`NOT_A_NUMBER`, on every face."""
    return all(isinstance(v, int) or (isinstance(v, float) and math.isfinite(v)) for v in rewards.values())


def _task_key(row: TrialRow) -> str:
    """What matches a trial whose result.json recorded no name to the name
    its task's other trials recorded: its config.json task table; when no
    file named its task, the task folder its own folder is named after
    (Harbor's ``<task folder>__<7 characters>``), which theirs are named after too."""
    return _FOLDER_KEY + folder_task(row.name) if row.named_by_folder else row.task_config


def folder_task(trial: str) -> str:
    """The task folder a trial folder named ``trial`` is named after."""
    return trial.rpartition("__")[0] or trial


def _problem(result_problem: str | None, config_problem: str | None, unnamed: bool) -> str | None:
    """A trial's ``problem``: why result.json could not be read (or what in it
    is not of Harbor's shape), then, when no file named its task, config.json's and that."""
    if not unnamed:
        return result_problem or None
    said = "; ".join(p for p in (result_problem, config_problem) if p)
    return f"{said or 'no file names its task'}: its task is named by the trial's folder"


def _eval_key(agent: str, model: Any, source: Any) -> str:
    """``JobStats.format_agent_evals_key``."""
    dataset = source if isinstance(source, str) and source else "adhoc"
    return f"{agent}__{model}__{dataset}" if isinstance(model, str) and model else f"{agent}__{dataset}"


# --------------------------------------------------------------------------
# Folders.


def first_trials(folder: Path) -> list[Path]:
    """Up to two trial folders of ``folder``, found without listing
    the rest: whether a job has one trial is known at once on any job."""
    found: list[Path] = []
    try:
        with os.scandir(folder) as scan:
            for entry in scan:
                if entry.is_dir(follow_symlinks=False) and kind_within(entry.path, "trial") == "trial":
                    found.append(Path(entry.path))
                    if len(found) == 2:
                        break
    except OSError:
        return found
    return found


def trial_rows(folders: Iterable[Path], notes: list[str] | None = None) -> Iterator[TrialRow]:
    """The rows of the trial folders among ``folders`` (a job's
    :func:`~.folders.sub_folders`), one at a time (a screen reads them
    between its frames); each other folder is a line added to ``notes``, in
    ``open_job``'s words (Harbor writes only trial folders in a job), and so
    is each trial no file of which names its task, or whose result.json is
    no file Harbor writes (its row says only ``cannot be read`` or ``not
    finished``: a link, never followed, would go unsaid), with why."""
    for folder in folders:
        if kind_within(folder, "trial") != "trial":
            if notes is not None:
                notes.append(f"{folder.name}: {NOT_A_TRIAL}")
            continue
        row = read_trial_row(folder)
        if (row.named_by_folder or row.result_unusable) and notes is not None:  # as test JOB says it of a trial
            notes.append(f"{folder.name}: {row.problem}")
        yield row


# --------------------------------------------------------------------------
# A job's figures.


@record
class TaskRow:
    """One task of a job: its trials, how many passed, Harbor's mean, errors."""

    task: str
    trials: int = 0
    passed: int = 0
    errors: int = 0
    rewards: list[dict[str, Any]] = field(default_factory=list)  # the valid rewards, for the mean (summed_in order)
    ended: list[float] = field(default_factory=list)  # when each of ``rewards``' trials finished (summed_in)

    def count(self, row: TrialRow) -> None:
        """Count the trial ``row`` of this task in."""
        self.trials += 1
        self.passed += row.outcome == PASSED
        self.errors += bool(row.exception_types)
        if row.reward_valid and row.rewards is not None:
            summed_in(self.rewards, self.ended, row)
            self.__dict__.pop("_figures", None)  # worked out again from the rewards as they are now

    @cached_property
    def _figures(self) -> tuple[dict[str, float], dict[str, str]]:
        """:attr:`means` and :attr:`mean_errors`, worked out once from the rewards (:meth:`count`
        forgets them): each cell of the task's row, and each sort key, asks for them, and a task
        whose trials scored 300,000 reward keys took a quarter of a second each time."""
        means, errors = mean_of(self.rewards), mean_errors(self.rewards)
        keys = {key for reward in self.rewards for key in reward}
        if len(keys) == 1:
            key = keys.pop()
            return {key: means["mean"]}, ({key: errors["mean"]} if "mean" in errors else {})
        return means, errors

    @property
    def means(self) -> dict[str, float]:
        """Harbor's mean of the task's valid rewards, by reward key (Harbor
        calls a lone key's ``mean``: its name is kept here, so two jobs
        scoring different keys are not taken for one measure)."""
        return self._figures[0]

    @property
    def mean_errors(self) -> dict[str, str]:
        """The keys of :attr:`means` whose mean Harbor cannot compute (:func:`mean_errors`)."""
        return self._figures[1]

    @property
    def mean(self) -> float | None:
        """Harbor's mean when the task's rewards have one key; with several, None: no one number is the mean."""
        means = self.means
        return next(iter(means.values())) if len(means) == 1 else None

    def to_json(self) -> dict[str, Any]:
        means = as_recorded(self.means, self.mean_errors)
        return {
            "task": self.task,
            "trials": self.trials,
            "passed": self.passed,
            "mean": next(iter(means.values())) if len(means) == 1 else None,
            "means": means,
            "mean_errors": self.mean_errors,  # why a mean (null in means) is no number
            "errors": self.errors,
        }


def as_recorded(means: dict[str, float], errors: dict[str, str]) -> dict[str, float | None]:
    """``means`` as --json gives them: a mean that is no number (``errors``,
    :func:`mean_errors`) is null, as Harbor's job result.json records an
    infinity (pydantic writes none), never the string ``"inf"`` where a
    number is documented; ``mean_errors`` says why."""
    return {key: None if key in errors else value for key, value in means.items()}


def summed_in(rewards: list[dict[str, Any]], ended: list[float], row: TrialRow) -> None:
    """Put ``row``'s rewards among ``rewards`` in the order Harbor sums them:
    the order the trials finished (``ended`` holds when each did, alike
    ordered), a tie or a trial with no ``finished_at`` after those read
    before it. Harbor 0.26 adds a trial's rewards as it ends
    (``Job._on_trial_completed``, ``_live_rewards``) and writes the job's
    result.json with the mean over them, and a float sum depends on its order
    (1e308, -1e308, 1e308, -1e308 gives 0.0; 1e308 twice first, inf)."""
    when = row.finished_at.timestamp() if row.finished_at is not None else math.inf
    at = bisect_right(ended, when)
    ended.insert(at, when)
    rewards.insert(at, row.rewards or {})


#: A mean Harbor's Mean metric raises on (:func:`mean_errors`), in place of the number.
CANNOT_COMPUTE = "Harbor cannot compute it ({})"
#: A mean that is no number, in place of the number, with why in parentheses (the figures around it are
#: separated by commas): every face says it so (the reward line, the task tables, compare, the jobs list).
NO_NUMBER = "no number ({})"
#: Why, when a job's result.json records the mean as null (the jobs list, which reads only that).
RECORDED_NULL = "its result.json records null"
#: Why, when finite rewards' sum passed the largest float (:data:`OVERFLOWED`).
OVERFLOWS = "Harbor's sum overflows to {}; " + RECORDED_NULL
#: Why, when a job's result.json records a mean that is an integer past any float (another writer's).
TOO_LARGE = "an integer too large for a float"
#: A mean a job's result.json records as null, as the jobs list says it.
NULL_MEAN = NO_NUMBER.format(RECORDED_NULL)
#: The :func:`mean_errors` figures of finite rewards whose sum overflowed: a
#: sum of finite floats passes the largest float to ±inf only, never to nan.
OVERFLOWED = ("inf", "-inf")


def mean_error_words(error: str) -> str:
    """A :func:`mean_errors` value in words: the exception Harbor raises, or
    that the mean is no number, with why when the sum overflowed, else with
    the figure (a reward that is itself no finite number, as its file spells it)."""
    if error.endswith("Error"):
        return CANNOT_COMPUTE.format(error)
    return NO_NUMBER.format(OVERFLOWS.format(error) if error in OVERFLOWED else error)


def mean_words(row: TaskRow | None, named: bool = False) -> str:
    """``0.500``, or each key's (``a 1.000, b 0.500``) when there are several or ``named``."""
    means = row.means if row is not None else {}
    errors = row.mean_errors if row is not None else {}
    if len(means) == 1 and not named:
        key, value = next(iter(means.items()))
        return mean_number(value, errors.get(key))
    return reward_pairs(means, partial(_mean_pair, errors)) or "-"


def mean_number(value: float, error: str | None) -> str:
    """A mean as every face writes it: ``0.750``, or why Harbor has no number for it (:func:`mean_error_words`)."""
    return mean_error_words(error) if error is not None else mean_figure(value)


def mean_figure(value: float | Decimal, signed: bool = False) -> str:
    """A mean (or, ``signed``, a difference of two) as every face writes it:
    ``0.750`` (``+0.250``); one of :data:`LONG` or more as :func:`count_words`
    writes it (``5.000e+307``): ``.3f`` wrote all 308 digits of 1e308 / 2."""
    # (Not math.isfinite: it takes a Decimal past any float, B - A of 1e308 and -1e308, for an infinity.)
    if not -LONG < value < LONG and value == value and value not in (math.inf, -math.inf):
        return ("+" if signed and value >= 0 else "") + count_words(value)
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def _mean_pair(errors: dict[str, str], key: str, value: float) -> str:
    return f"{key} {mean_number(value, errors.get(key))}"


def ordered_counts(outcomes: dict[str, int]) -> list[tuple[str, int]]:
    """How trials ended: passed, below 1, each exception type (most first), agent failures, not finished."""
    plain = [(o, outcomes[o]) for o in (PASSED, BELOW_ONE, NOT_A_NUMBER, NO_REWARD) if outcomes.get(o)]
    errors = sorted(
        ((o, n) for o, n in outcomes.items() if o not in PLAIN_OUTCOMES), key=lambda item: (-item[1], item[0])
    )
    rest = [(o, outcomes[o]) for o in (AGENT_FAILED, NOT_FINISHED, UNREADABLE) if outcomes.get(o)]
    return plain + errors + rest


def harbor_number(value: Any) -> float | None:
    """A reward value as Harbor 0.26.0 reads ``result.json`` back (resuming a
    job: pydantic's lax ``float | int``): a number, or a string that parses as
    one ("1.0" is 1.0); None for anything else, which makes Harbor skip the
    trial, leaving it out of its mean."""
    if isinstance(value, (int, float)):
        return reward_float(value)
    try:
        return float(value) if isinstance(value, str) else None
    except ValueError:
        return None


def mean_of(rewards: list[dict[str, Any]]) -> dict[str, float]:
    """Harbor's ``Mean`` over these reward dicts (``aggregate_reward_dicts``):
    one key gives ``{"mean": x}``; several give each key's mean, a key a trial
    lacks counted as 0. Nothing to average: ``{}`` (Harbor records no metric)."""
    if not rewards:
        return {}
    keys = sorted({key for reward in rewards for key in reward})

    def number(value: Any) -> float:
        return harbor_number(value) or 0.0

    if len(keys) <= 1:
        values = [number(next(iter(r.values()), 0)) for r in rewards]
        return {"mean": sum(values) / len(values)}
    return {key: sum(number(r.get(key, 0)) for r in rewards) / len(rewards) for key in keys}


def mean_errors(rewards: list[dict[str, Any]]) -> dict[str, str]:
    """The means of :func:`mean_of` (keyed alike) that Harbor cannot compute,
    with the exception it raises, or that are no number, with the figure:
    Harbor 0.26's Mean is ``sum(values) / len(values)`` on the numbers as
    pydantic kept them, and an integer past any float (a 401-digit reward)
    makes that raise OverflowError, where mean_of's floats (reward_float) give
    an infinity, said as if computed. Finite floats whose running sum passes
    the largest float (1e308 twice) give ``inf`` or ``-inf`` (never nan),
    which Harbor's job result.json records as null (pydantic writes no
    infinity). A reward that is itself no finite number (``NaN`` or
    ``Infinity`` in a trial's result.json: another writer's) gives the mean
    as JSON spells it, ``NaN``, ``Infinity`` or ``-Infinity``. The sum is in
    the order of ``rewards``: :func:`summed_in` puts them in the order the
    trials finished (``finished_at``), as Harbor sums them while the job runs
    (each time a trial ends it writes the job's result.json). Once the job
    ends, Harbor sums once more over the trials resumed from an earlier run
    (in the order the folder lists them), then the others in its plan's
    order (``Job.run``), which no file keeps."""
    if not rewards:
        return {}
    keys = sorted({key for reward in rewards for key in reward})

    def number(value: Any) -> float | int:
        exact = isinstance(value, int) and not isinstance(value, bool)
        return value if exact else harbor_number(value) or 0.0

    columns = {"mean": [next(iter(r.values()), 0) for r in rewards]} if len(keys) <= 1 else {}
    columns = columns or {key: [r.get(key, 0) for r in rewards] for key in keys}
    errors = {}
    for key, values in columns.items():
        try:
            mean = sum(number(v) for v in values) / len(values)
        except OverflowError:
            errors[key] = "OverflowError"
            continue
        if math.isfinite(mean):
            continue
        finite = all(math.isfinite(number(v)) for v in values)
        # Overflowed: Harbor's figure (inf, -inf). Else a reward is no finite number (NaN, Infinity in a
        # result.json, which Harbor never writes: pydantic writes null), said as JSON spells it.
        errors[key] = str(mean) if finite else json.dumps(mean)
    return errors


@record
class JobOverview:
    """Counts, Harbor's means and per-task rows of a job, built as its trials are read."""

    rows: list[TrialRow] = field(default_factory=list)
    outcomes: dict[str, int] = field(default_factory=dict)  # outcome -> count
    tasks: dict[str, TaskRow] = field(default_factory=dict)  # task -> TaskRow
    evals: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # eval key -> [valid reward dicts]
    ended: dict[str, list[float]] = field(default_factory=dict)  # eval key -> when each trial finished (summed_in)
    left_out: int = 0  # trials Harbor's mean leaves out (no valid reward)
    #: What of the job's folder is no trial, a line each in ``test JOB``'s
    #: words: a link to a folder (never followed), a folder that is no trial;
    #: and each trial no file of which names its task, or whose result.json cannot be used, with why.
    #: Found as the folder is listed and read (:func:`read_overviews`), never by listing it again.
    notes: list[str] = field(default_factory=list)
    tokens: list[int | float | None] = field(default_factory=lambda: [None, None, None, None])

    #: config.json's task table (as JSON) -> the name a trial's result.json recorded for it.
    names: dict[str, str] = field(default_factory=dict)
    #: The task tables of the trials added under their folder's name, no trial having recorded another yet.
    unnamed: set[str] = field(default_factory=set)

    def add(self, rows: Iterable[TrialRow]) -> bool:
        """Count these trials in. A trial Harbor did not finish goes under the
        name another trial of its config.json task recorded (:func:`read_overviews`
        says why); when that trial comes after it, the rows added before are
        named again and the tasks counted again. Returns whether that happened."""
        renamed = False
        for row in rows:
            if row.task_recorded:
                renamed |= self._name(row.task_config, row.task)
                # the task's folder, as Harbor names the trial's folder after it
                renamed |= self._name(_FOLDER_KEY + folder_task(row.name), row.task)
            else:
                key = _task_key(row)
                self.unnamed.add(key)
                if self.names.get(key):
                    row = replace(row, task=self.names[key])
            self.rows.append(row)
            self.outcomes[row.outcome] = self.outcomes.get(row.outcome, 0) + 1
            self._count_task(row)
            if row.reward_valid and row.rewards is not None:  # valid: rewards recorded, never None
                summed_in(self.evals.setdefault(row.eval_key, []), self.ended.setdefault(row.eval_key, []), row)
            else:
                self.left_out += 1
            for index, value in enumerate((row.n_input_tokens, row.n_cache_tokens, row.n_output_tokens, row.cost_usd)):
                if value is not None:
                    self.tokens[index] = (self.tokens[index] or 0) + value
        self.__dict__.pop("_figures", None)  # worked out again from the rewards as they are now
        return renamed

    def _name(self, key: str, name: str) -> bool:
        """Learn the name a trial recorded for its task (``key``: its task
        table, or its task's folder; the first name, for every job read
        together); rename the trials added before under their task's folder.
        An empty task table (no config.json read) names nothing. Two names
        recorded for one folder name (two tasks of one name in two datasets)
        leave a trial named by its folder alone under that folder: it could
        be either."""
        known = self.names.get(key)
        if key == _NO_TASK or known == name or known == "":
            return False
        if known is not None:
            if not key.startswith(_FOLDER_KEY):
                return False
            name = ""
        self.names[key] = name
        if key not in self.unnamed:
            return False
        self.rows = [
            replace(r, task=name or folder_task(r.name)) if not r.task_recorded and _task_key(r) == key else r
            for r in self.rows
        ]
        self.tasks = {}
        for row in self.rows:
            self._count_task(row)
        return True

    def _count_task(self, row: TrialRow) -> None:
        task = self.tasks.get(row.task)
        if task is None:
            task = self.tasks[row.task] = TaskRow(row.task)
        task.count(row)

    @property
    def total(self) -> int:
        return len(self.rows)

    def counts(self) -> list[tuple[str, int]]:
        return ordered_counts(self.outcomes)

    def exception_types(self) -> list[str]:
        return [o for o, _n in self.counts() if o not in PLAIN_OUTCOMES]

    @cached_property
    def _figures(self) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, str]]]:
        """:meth:`means` and :meth:`mean_errors`, worked out once from the rewards (:meth:`add`
        forgets them), as a task's are (:attr:`TaskRow._figures`): each line that says them asks."""
        groups = sorted(self.evals.items())
        return (
            {key: mean_of(rewards) for key, rewards in groups},
            {key: errors for key, rewards in groups if (errors := mean_errors(rewards))},
        )

    def means(self) -> dict[str, dict[str, float]]:
        """Harbor's mean per evals group, per key."""
        return self._figures[0]

    def mean_errors(self) -> dict[str, dict[str, str]]:
        """The evals groups with a mean Harbor cannot compute (:func:`mean_errors`), per key."""
        return self._figures[1]

    def recorded_means(self) -> dict[str, dict[str, float | None]]:
        """:meth:`means` as --json gives them (:func:`as_recorded`): run JOB's and compare's, one shape."""
        errors = self.mean_errors()
        return {key: as_recorded(means, errors.get(key, {})) for key, means in self.means().items()}

    def reward_lines(self, name: Callable[[str], str] = str) -> list[str]:
        """Each evals group's mean as Harbor records it, then what Harbor leaves out, in words
        (each group's name, and how each trial left out ended, as ``name`` gives it: a face's, in a name's room)."""
        lines = []
        errors = self.mean_errors()
        for key, means in self.means().items():
            counted = len(self.evals[key])
            values = reward_pairs(means, partial(_mean_pair, errors.get(key, {})))
            lines.append(f"{name(key)}: {values} over {counted} trial{'s' * (counted != 1)} with a valid reward")
        if not self.evals and self.rows:
            lines.append("no trial has a valid reward: Harbor records no mean")
        several = any(len(m) > 1 for m in self.means().values())
        if several:
            lines.append("with several reward keys, a key a trial lacks counts as 0 in Harbor's mean")
        if self.left_out:
            all_rows = [(r.rewards if r.reward_valid else None) or {"reward": 0} for r in self.rows]
            with_zeros = mean_of(all_rows) if not several else {}
            # Not said when that mean is no number either (1e308 twice: the sum overflows with the zeros too): it
            # read "would be inf", a figure no mean is.
            if with_zeros and not mean_errors(all_rows):
                counted_as_zero = f"; counting them as 0 the mean would be {mean_figure(with_zeros['mean'])}"
            else:
                counted_as_zero = ""
            why: dict[str, int] = {}
            for row in self.rows:
                if not row.reward_valid:
                    why[row.outcome_words] = why.get(row.outcome_words, 0) + 1
            reasons = ", ".join(
                f"{n} {name(outcome)}" for outcome, n in sorted(why.items(), key=lambda i: (-i[1], i[0]))
            )
            lines.append(
                f"Harbor's mean leaves out {self.left_out} trial{'s' * (self.left_out != 1)} with no "
                f"valid reward ({reasons}){counted_as_zero}"
            )
        return lines

    def token_words(self) -> str | None:
        n_in, n_cache, n_out, cost = self.tokens
        if n_in is None and n_out is None and cost is None:
            return None
        parts = []
        if n_in is not None:
            parts.append(f"{count_words(n_in)} input tokens" + (f" ({count_words(n_cache)} cached)" if n_cache else ""))
        if n_out is not None:
            parts.append(f"{count_words(n_out)} output tokens")
        if cost is not None:
            parts.append(cost_words(cost) if math.isfinite(cost) else f"cost {cost_words(cost)}")
        return ", ".join(parts)

    def agents(self) -> list[str]:
        """Each agent the trials name (with its model). A trial whose agent is
        not known (its files could not be read) names none: "?" read as an agent."""
        return list(dict.fromkeys(r.agent + (f" ({r.model})" if r.model else "") for r in self.rows if r.agent))

    def still_running(self, not_ended: str | None) -> str | None:
        """Why the job, read to its end, looks still running (or stopped):
        ``not_ended``, why Harbor has not ended it (:func:`job_not_ended`),
        and its trials not finished. None: it has ended. Every face says it
        (:data:`STILL_RUNNING`), with the figures that are the job as read."""
        unfinished = self.outcomes.get(NOT_FINISHED, 0)
        trials = f"{unfinished} trial{'s' * (unfinished != 1)} {NOT_FINISHED}" if unfinished else None
        return "; ".join(why for why in (not_ended, trials) if why) or None

    def to_json(self) -> dict[str, Any]:
        return {
            "trials": self.total,
            "outcomes": dict(self.counts()),
            "means": self.recorded_means(),
            "mean_errors": self.mean_errors(),
            "left_out_of_mean": self.left_out,
            "reward_notes": self.reward_lines(),
            "n_input_tokens": self.tokens[0],
            "n_cache_tokens": self.tokens[1],
            "n_output_tokens": self.tokens[2],
            "cost_usd": self.tokens[3],
            "agents": self.agents(),
            "tasks": [t.to_json() for t in self.tasks.values()],
            "trial_rows": [r.to_json() for r in self.rows],
        }


def read_overview(folder: Path) -> JobOverview:
    return read_overviews(folder)[0]


def until(cancelled: Callable[[], bool] | None, folders: list[Path]) -> Iterable[Path]:
    """``folders`` until ``cancelled`` says so, asked before each: a thread
    reading them goes on when its worker is cancelled, and the process waits
    for it as it ends (``q`` would wait for the whole reading)."""
    return folders if cancelled is None else takewhile(lambda _folder: not cancelled(), folders)


def read_overviews(*folders: Path, cancelled: Callable[[], bool] | None = None) -> list[JobOverview]:
    """Each job's overview, a trial Harbor did not finish counted under the
    name another trial of the same task recorded, in any of these jobs.
    ``cancelled`` is asked before each trial: once it says so, no more trial
    is read and no more folder listed (what was read is returned, for a
    caller that no longer wants it). Raises OSError when a folder cannot be listed.

    Harbor names a task by its task.toml's ``[task] name`` when it has one,
    else by its folder (``Task.__init__``, harbor/models/task/task.py), and
    records that in result.json only: a killed trial's config.json gives the
    folder, which would make one task two."""
    found: list[tuple[list[TrialRow], list[str]]] = []
    for folder in folders:
        if cancelled is not None and cancelled():
            found.append(([], []))
            continue
        children, notes = sub_folders(folder)  # notes: its links to folders
        found.append((list(trial_rows(until(cancelled, children), notes)), notes))
    together = JobOverview()  # every job's trials, for the names they recorded
    together.add(row for rows, _notes in found for row in rows)
    overviews = []
    for rows, notes in found:
        overview = JobOverview(names=dict(together.names), notes=notes)
        overview.add(rows)
        overviews.append(overview)
    return overviews


# --------------------------------------------------------------------------
# Filters and order of the trials.

SORTS = ("name", "outcome", "reward", "duration", "task")


def select_rows(
    rows: list[TrialRow],
    *,
    failures: bool = False,
    outcome: str | None = None,
    task: str | None = None,
    sort: str = "name",
) -> list[TrialRow]:
    """The trials to show: only the failures, one outcome (an exception
    type), one task; in one of :data:`SORTS`."""
    chosen = [
        r
        for r in rows
        if (not failures or r.failed)
        and (outcome is None or outcome in (r.outcome, *r.exception_types))
        and (task is None or r.task == task)
    ]
    keys = {
        "name": lambda r: r.name,
        "outcome": lambda r: (r.outcome == PASSED, r.outcome, r.name),
        "reward": lambda r: (r.rewards is not None, _first(r.rewards), r.name),
        "duration": lambda r: (-(r.duration_s or 0.0), r.name),
        "task": lambda r: (r.task, r.name),
    }
    return sorted(chosen, key=keys[sort])


def _first(rewards: dict[str, Any] | None) -> float:
    value = next(iter(rewards.values()), 0) if rewards else 0
    return float(value) if isinstance(value, (int, float)) else 0.0


#: How a job Harbor has not ended is said, before why (:meth:`JobOverview.still_running`) and :data:`AS_READ`.
STILL_RUNNING = "still running, or stopped: "
AS_READ = " · this is the job as read"


def job_not_ended(folder: Path) -> str | None:
    """Why Harbor has not ended the job ``folder``, None when it has. Harbor
    writes the job's result.json as trials end (``updated_at``) and sets its
    ``finished_at`` once the last one has: without it the job is still
    running, or was stopped."""
    result = read_json(folder / RESULT, beneath=folder)
    if result.state == "missing":
        return "the job has no result.json yet"
    return not_ended(result, "the job's result.json")  # the rule a trial's is read by too


# --------------------------------------------------------------------------
# A folder of jobs.


@record(frozen=True)
class JobSummary:
    """One job of a jobs folder, from its own ``config.json`` and ``result.json``
    (``JobResult``: totals Harbor kept as it ran), not from its trials' results."""

    name: str
    path: Path
    started_at: datetime | None
    agents: tuple[str, ...]
    n_total: int | None
    n_completed: int | None
    n_errored: int | None
    outcomes: dict[str, int]  # as the job's overview counts them
    means: dict[str, dict[str, float | None]]  # evals key -> Harbor's metric (None: recorded null, no number)
    problem: str | None = None
    #: The means (keyed as ``means``, where they are None) the file writes as ``NaN`` or ``Infinity``, which
    #: Harbor never writes (pydantic writes null), as JSON spells them: said so, never as a figure.
    written_no_number: dict[str, dict[str, str]] = field(default_factory=dict)
    config_problem: str | None = None  # why config.json (its agents) could not be read: a link, a FIFO, not JSON
    trial_folders: int | None = None  # without Harbor's n_total (no result.json yet): the trial folders it holds

    @property
    def trials_words(self) -> str:
        total = self.n_total if self.n_total is not None else self.trial_folders
        return "-" if total is None else str(total)

    @property
    def ended_words(self) -> str:
        if self.problem:
            return self.problem
        return ", ".join(f"{n} {outcome}" for outcome, n in ordered_counts(self.outcomes)) or "-"

    @property
    def mean_words(self) -> str:
        values = {f"{group} {key}": v for group, means in self.means.items() for key, v in means.items()}
        written = {f"{group} {key}": v for group, means in self.written_no_number.items() for key, v in means.items()}
        # A mean recorded null (Harbor's figure was inf or nan) is said as the job's overview says one, not "-",
        # which says the job had no valid reward at all (no metric); one written NaN or Infinity as the overview
        # says the mean of such a reward.

        def said(key: str, value: float | None) -> str:
            if value is not None:
                return mean_number(value, None)
            return mean_error_words(written[key]) if key in written else NULL_MEAN

        return reward_pairs(values, said, " / ") or "-"

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "path": str(self.path),
            "started_at": self.started_at.isoformat() if self.started_at else None,
            "agents": list(self.agents),
            "n_total_trials": self.n_total,
            "n_completed_trials": self.n_completed,
            "n_errored_trials": self.n_errored,
            "outcomes": dict(ordered_counts(self.outcomes)),
            "means": self.means,
            "problem": self.problem,
            "trial_folders": self.trial_folders,
        }


def _trial_folders(folder: Path) -> int | None:
    """How many trial folders a job holds, found as its overview finds them (a link never followed)."""
    try:
        children, _links = sub_folders(folder)
    except OSError:
        return None
    return sum(1 for child in children if kind_within(child, "trial") == "trial")


def _plain_name(name: Any) -> bool:
    """A trial name from result.json that names a folder of the job, never a path out of it."""
    return isinstance(name, str) and name not in ("", ".", "..") and "/" not in name and "\0" not in name


def _job_outcomes(folder: Path, evals: dict[str, Any], unfinished: int) -> dict[str, int]:
    """Each trial's outcome as :func:`read_trial_row` gives it, from the trial
    names ``JobStats`` files under each reward value and exception type.

    The stats alone cannot tell two things the overview tells, so only those
    are read from the trial's folder: an oracle that failed without an
    exception (``agent/exit-code.txt``, one small file per scored trial), and
    the first recorded of several exception types (its ``result.json``).
    """
    scores: dict[str, list[Any]] = {}
    raised: dict[str, list[str]] = {}
    for group in evals.values():
        if not isinstance(group, dict):
            continue
        for by_value in untrusted.table(group, "reward_stats").values():
            for value, trials in by_value.items() if isinstance(by_value, dict) else ():
                for trial in trials if isinstance(trials, list) else ():
                    if _plain_name(trial):
                        scores.setdefault(trial, []).append(value)
        for key, trials in untrusted.table(group, "exception_stats").items():
            kind = " ".join(key.split()) or "?"  # an exception's type: one word, whatever the file says
            for trial in trials if isinstance(trials, list) else ():
                if _plain_name(trial):
                    raised.setdefault(trial, []).append(kind)
    outcomes: dict[str, int] = {NOT_FINISHED: unfinished} if unfinished > 0 else {}
    for trial, kinds in raised.items():
        outcome = kinds[0] if len(kinds) == 1 else read_trial_row(folder / trial).outcome
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    for trial, values in scores.items():
        if trial in raised:
            continue
        exit_code = _agent_exit_code(folder / trial)
        if exit_code not in (None, 0):
            outcome = AGENT_FAILED
        else:
            outcome = PASSED if all(_at_least_one(v) for v in values) else BELOW_ONE
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    return outcomes


def _at_least_one(value: Any) -> bool:
    """A reward value of ``reward_stats``: JSON made its keys strings."""
    try:
        return float(value) >= 1
    except (TypeError, ValueError):
        return False


def read_job_summary(folder: Path) -> JobSummary:
    config = read_json(folder / CONFIG, beneath=folder)
    result = read_json(folder / RESULT, beneath=folder)
    agents = config.get("agents") if config.ok else None
    names = (
        tuple(
            f"{a.get('name') or a.get('import_path') or '?'}" + (f" ({a['model_name']})" if a.get("model_name") else "")
            for a in agents
            if isinstance(a, dict)
        )
        if isinstance(agents, list)
        else ()
    )
    stats = result.get("stats") if result.ok else None
    stats = stats if isinstance(stats, dict) else {}
    evals = untrusted.table(stats, "evals")
    means: dict[str, dict[str, float | None]] = {}
    written: dict[str, dict[str, str]] = {}
    for key, group in evals.items():
        metrics = group.get("metrics") if isinstance(group, dict) else None
        first = metrics[0] if isinstance(metrics, list) and metrics and isinstance(metrics[0], dict) else {}
        # null is what pydantic writes for Harbor's inf or nan (a sum past the largest float): no number, kept.
        # A float the file writes NaN or Infinity (1e999), or an integer past any float (JSON has no bound;
        # reward_float makes it an infinity, never an OverflowError), is no number either, and said as
        # written: --json's means hold null for it, as documented, never the string "inf".
        numbers: dict[str, float | None] = {}
        odd: dict[str, str] = {}
        for k, v in first.items():
            if v is not None and (not isinstance(v, (int, float)) or isinstance(v, bool)):
                continue
            figure = None if v is None else reward_float(v)
            numbers[k] = figure if figure is None or math.isfinite(figure) else None
            if figure is not None and numbers[k] is None:
                odd[k] = json.dumps(v) if isinstance(v, float) else TOO_LARGE
        if numbers:
            means[str(key)] = numbers
        if odd:
            written[str(key)] = odd
    problem = None
    if result.state == "missing":
        problem = "no result.json: the job is running, or was stopped"
    elif not result.ok:
        problem = result.problem
    started = parse_time(result.get("started_at")) if result.ok else None
    if started is None:
        from datetime import datetime, timezone

        try:
            started = datetime.fromtimestamp(os.stat(folder).st_mtime, timezone.utc)
        except OSError:
            started = None
    n_total = _int(result.get("n_total_trials")) if result.ok else None
    n_completed = _int(stats.get("n_completed_trials"))
    unfinished = n_total - n_completed if n_total is not None and n_completed is not None else 0
    return JobSummary(
        name=folder.name,  # what the user opens (config.json's job_name may be any other)
        path=folder,
        started_at=started,
        agents=names,
        n_total=n_total,
        n_completed=n_completed,
        n_errored=_int(stats.get("n_errored_trials")),
        outcomes=_job_outcomes(folder, evals, unfinished),
        means=means,
        problem=problem,
        config_problem=None if config.ok or config.state == "missing" else config.problem,
        written_no_number=written,
        # Harbor's Job.run writes result.json (n_total_trials) first, then again as trials end, with a plain
        # write_text: a job without a usable one (stopped first, caught mid-write, copied without it) has its
        # trial folders to count, which its overview lists
        trial_folders=_trial_folders(folder) if n_total is None else None,
    )


def read_jobs(
    folder: Path, cancelled: Callable[[], bool] | None = None, notes: list[str] | None = None
) -> list[JobSummary]:
    """Every job of a jobs folder, the latest started first; ``cancelled`` is
    asked before each job (:func:`until`): once it says so, no more is read.
    ``notes`` gets what of the folder is no job (:func:`~.folders.job_paths`),
    then, in the order the jobs are listed, why a job's config.json could not
    be read: its row shows no agent, and a link would go unsaid."""
    from datetime import datetime, timezone

    jobs = [read_job_summary(job) for job in until(cancelled, job_paths(folder, notes))]
    oldest = datetime.min.replace(tzinfo=timezone.utc)
    jobs.sort(key=lambda job: (job.started_at or oldest, job.name), reverse=True)
    if notes is not None:
        notes += [f"{job.name}: {job.config_problem}" for job in jobs if job.config_problem]
    return jobs
