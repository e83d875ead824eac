"""One case run in both modes: as NeMo Gym's environment server runs it (with
the agent's response) and as Harbor runs it (no response, ever).

A ``verify`` that requires ``response`` passes locally with a response and
fails every published Harbor run (the runner refuses to call it: a contract
error, no reward, ``RewardFileNotFoundError``). Running both side by side
makes that plain for any case, not only for trials.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from verifier_tui.engine.advice import GIVE_RESPONSE, Advice
from verifier_tui.engine.model import MODE_NAMES, Outcome, RunResult, same_rewards
from verifier_tui.engine.record import record, replace
from verifier_tui.engine.task.config import refused_words
from verifier_tui.engine.verdict import rewards_json

if TYPE_CHECKING:
    from typing import Any

    from verifier_tui.engine.invocation import RunSpec
    from verifier_tui.engine.session import Session

SERVER, HARBOR = MODE_NAMES["server"], MODE_NAMES["harbor"]


def no_response(case: str) -> Advice:
    """Why the server mode was not run on ``case``: where its response would be
    (the case is named: a ``cases/<name>/`` placeholder left the reader to fill it in)."""
    return Advice(
        f"no response to run the {SERVER} with: the case {case} has none "
        f"(cases/{case}/response.json or response.txt); ",
        GIVE_RESPONSE,
    )


#: With no case chosen, "the case has none" spoke of a case there is not.
NO_CASE_NO_RESPONSE = Advice(
    f"no response to run the {SERVER} with: no case is chosen and no response; ",
    GIVE_RESPONSE,
)


def works(result: RunResult | None) -> bool | None:
    """Whether the verifier did its job: a reward written that Harbor can read
    (never in a task Harbor would refuse to load: it reads no reward of it)."""
    if result is None:
        return None
    return result.outcome is Outcome.REWARD_WRITTEN and result.verdict.ok and result.task_refused is None


def _rewards(result: RunResult) -> str:
    return rewards_json(result.verdict.rewards or {})[0]


@record
class BothModes:
    harbor: RunResult
    server: RunResult | None  # None: no response to run it with (``server_skipped`` says so)
    server_skipped: str | None = None

    @property
    def ran(self) -> list[RunResult]:
        """The runs made, in the order they ran (by number)."""
        return sorted((r for r in (self.server, self.harbor) if r is not None), key=lambda r: r.sequence)

    @property
    def exit_status(self) -> int:
        """Harbor mode's status when it failed (what every published run
        faces), else the server mode's; 0 when both wrote a reward."""
        if self.harbor.exit_status != 0:
            return self.harbor.exit_status
        return self.server.exit_status if self.server is not None else 0

    @property
    def same_rewards(self) -> bool | None:
        """Whether Harbor mode scored as the environment-server mode did (as
        Harbor's numbers, 1 == 1.0); None unless both wrote a reward Harbor reads."""
        if self.server is None or not works(self.harbor) or not works(self.server):
            return None
        return same_rewards(self.harbor.verdict.rewards or {}, self.server.verdict.rewards or {})

    def summary(self) -> str:
        """The finding in one sentence."""
        if self.harbor.task_refused is not None:  # as run says it: no mode's verdict is Harbor's
            return (
                f"{refused_words(self.harbor.task_refused)}; no published Harbor run of "
                "it scores, whatever the verifier does"
            )
        harbor, server = works(self.harbor), works(self.server)
        harbor_fails = _failure(self.harbor)
        if self.server is None:
            # Where the response would be and how to give one is server_skipped, said on the server
            # mode's own line (and as its own field): the finding under it said it all again.
            how = "works" if harbor else f"fails ({harbor_fails})"
            return f"in {HARBOR} the verifier {how}; the {SERVER} was not run: no response"
        if harbor and server and not self.same_rewards:
            # The finding both modes are for, as much as a contract error: a verify that reads
            # response scores each published run as Harbor mode does, not as the server does.
            return (
                f"the verifier works in both modes but scores otherwise in each: {_rewards(self.server)} in "
                f"{SERVER}, {_rewards(self.harbor)} in {HARBOR}, which is what every published Harbor run "
                "of this task would score on this workspace"
            )
        if harbor and server:
            return "the verifier works in both modes"
        if server and not harbor:
            return (
                f"the verifier works in {SERVER} (with a response) but fails in {HARBOR}: every published Harbor "
                f"run of this task would score {self.harbor.verdict.error or 'no reward'} ({harbor_fails})"
            )
        if harbor and not server:
            return f"the verifier works in {HARBOR} but fails in {SERVER} ({_failure(self.server)})"
        return f"the verifier fails in both modes: {HARBOR} ({harbor_fails}), {SERVER} ({_failure(self.server)})"

    def line(self) -> str:
        """Both modes in a line: ``environment-server mode ✓ 1.0 · Harbor mode ✗ contract error``
        (several rewards: ``✓ {"exact": 1.0, "words": 0.5}``)."""
        parts = []
        for label, result in ((SERVER, self.server), (HARBOR, self.harbor)):
            if result is None:
                parts.append(f"{label} - not run")
            elif works(result):
                # A lone ``reward`` by its value; any other as the JSON run --both-modes prints: the first
                # value alone made two modes that score otherwise on a second key (or on another lone key,
                # {"score": 1.0} against {"reward": 1.0}) read as one score.
                rewards = result.verdict.rewards or {}
                shown = str(rewards["reward"]) if list(rewards) == ["reward"] else _rewards(result)
                parts.append(f"{label} ✓ {shown}")
            else:
                parts.append(f"{label} ✗ {result.outcome.value}")
        return " · ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {
            "harbor": self.harbor.to_json(),
            "server": self.server.to_json() if self.server is not None else None,
            "server_skipped": self.server_skipped,
            "works": {"harbor": works(self.harbor), "server": works(self.server)},
            "same_rewards": self.same_rewards,
            "summary": self.summary(),
        }


def _failure(result: RunResult) -> str:
    if result.outcome is Outcome.REWARD_WRITTEN and not result.verdict.ok:
        return f"{result.verdict.error}: {result.verdict.message}"
    problems = result.explain.problems if result.explain is not None else ()
    if result.outcome is Outcome.CONTRACT_ERROR and problems:
        return f"contract error: {problems[0]}"
    return result.outcome_words


def mode_specs(session: Session) -> tuple[RunSpec, RunSpec | None, str | None]:
    """``(harbor, server, why no server)``: the session's choices with no
    response, and with the session's response (else the case's).
    The case's expected.json judges only the run with the case's own inputs."""
    base = session.spec()
    case = session.case if session.case is not None and base.workspace == session.case.workspace else None
    response = session.response or (session.case.response if session.case else None)
    # a case with no response is judged in Harbor mode: that run is the case's own
    harbor = replace(base, response=None, expected=case.expected if case and case.response is None else None)
    if response is None:
        return harbor, None, no_response(session.case.name) if session.case is not None else NO_CASE_NO_RESPONSE
    expected = case.expected if case is not None and case.response == response else None
    return harbor, replace(base, response=response, expected=expected), None


def run_both_modes(session: Session) -> BothModes:
    """Both runs, one after the other, blocking (the headless ``run --both-modes``)."""
    harbor_spec, server_spec, skipped = mode_specs(session)
    server = session.run(server_spec, trigger="command line") if server_spec is not None else None
    harbor = session.run(harbor_spec, trigger="command line")
    return BothModes(harbor, server, skipped)


async def arun_both_modes(session: Session, *, last: str = "harbor") -> BothModes:
    """The same from asyncio (the TUI); cancelling it ends the run in flight.
    ``last``: the mode run second, so that the run the TUI shows (its current
    mode's) is the newest, with the highest run number."""
    harbor_spec, server_spec, skipped = mode_specs(session)
    done: dict[str, RunResult] = {}
    for mode in ("harbor", "server") if last == "server" else ("server", "harbor"):
        spec = server_spec if mode == "server" else harbor_spec
        if spec is not None:
            done[mode] = await session.arun(spec, trigger="both modes")
    return BothModes(done["harbor"], done.get("server"), skipped)
