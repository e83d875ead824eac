"""One side of a trial, in a scrolling panel: the sandbox as Harbor recorded
it, or the local replay. Each shows its verdict, where it failed (e opens
that line when the panel has the focus), its reward files and its output."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from verifier_tui.engine.model import at_line
from verifier_tui.engine.task.config import REFUSED_RESULT
from verifier_tui.tui.display import HEAD, MUTED, content
from verifier_tui.tui.widgets.reward_panel import pretty
from verifier_tui.words.run import not_a_file, stuck_line
from verifier_tui.words.text import one_line, one_name
from verifier_tui.words.trial import read_from, verdict_words, workspace_words

if TYPE_CHECKING:
    from verifier_tui.engine.failing import Location
    from verifier_tui.engine.harbor.trial_session import Replayed, TrialSession
    from verifier_tui.engine.model import RewardFile
    from verifier_tui.tui.trial_display import TrialDisplay


class SidePanel(VerticalScroll):
    """A side's panel; ``failing`` is the line ``e`` opens from it."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.failing: Location | None = None

    def compose(self) -> ComposeResult:
        yield Static(Content(""), classes="side-body")

    def _update(self, parts: list[Any]) -> None:
        self.query_one(".side-body", Static).update(content(*parts))

    def show_sandbox(self, opened: TrialSession, fmt: TrialDisplay) -> None:
        walk = opened.walk
        side = walk.sandbox
        verdict = side.verdict
        source = read_from(verdict)
        style = "bold $success" if verdict.rewards is not None else "bold $error"
        if not verdict.finished:
            style = "bold $warning"
        parts: list[Any] = [
            ("Harbor scored " if verdict.finished else "Harbor: ", MUTED),
            (verdict_words(verdict), style),
            (f"  from {source}\n" if source else "\n", MUTED),
        ]
        if verdict.message and verdict.rewards is None:
            parts.append((f"  {fmt.text(verdict.message)}\n", MUTED))
        if side.disagreement:
            parts.append((f"⚠ {fmt.text(side.disagreement)}\n", "bold $warning"))
        self.failing = None
        if side.failure is not None:
            shown = fmt.path(side.failure.local_path) if side.failure.local_path else side.failure.sandbox_path
            parts += [
                ("failed at ", MUTED),
                (side.failure.at(shown), "bold"),
                (" (e opens it)\n" if side.failure.local_path else " (not a file of the task)\n", MUTED),
            ]
            if side.failure.local_path is not None:
                self.failing = (side.failure.local_path, side.failure.line)
        parts += _reward_files(side.reward_files, "verifier/ holds no reward file")
        parts.append(("\nverifier/test-stdout.txt", HEAD))
        parts.append((" (stdout and stderr merged; /tests and /app as local paths)\n", MUTED))
        parts.append(fmt.text(side.mapped_output).rstrip("\n") or (side.output_words, MUTED))
        parts.append(("\n\nfacts\n", HEAD))
        for fact in walk.facts.sentences(one_name):
            parts.append(f"  {fmt.text(one_line(fact))}\n")
        for note in [*walk.notes, *walk.trial.absent]:
            parts.append((f"  note: {one_line(fmt.text(note))}\n", "$warning"))
        self._update(parts)

    def show_local(self, opened: TrialSession, replayed: Replayed, fmt: TrialDisplay, stream: str = "stderr") -> None:
        """``stream``: the output shown, ``stderr`` or ``stdout`` (the other is one key away: o)."""
        local = replayed.local
        self.failing = replayed.failure
        if local is None:
            from verifier_tui.tui.widgets.agreement_panel import NO_REPLAY_KEYS

            keys = [("\n\n" + NO_REPLAY_KEYS, "bold $accent")] if opened.walk.location.found else []
            self._update([("no replay yet: ", "bold $warning"), fmt.words(replayed.skipped or ""), *keys])
            return
        from verifier_tui.engine.harbor.agreement import local_verdict

        verdict = local_verdict(local)
        style = "bold $success" if verdict is not None and verdict.rewards is not None else "bold $error"
        # A task Harbor would not load gets no verdict, whatever the replay wrote (as a task's run says "none")
        words = REFUSED_RESULT if local.task_refused is not None else verdict_words(verdict)
        parts: list[Any] = [
            ("Harbor would score ", MUTED),
            (words, "bold $error" if local.task_refused is not None else style),
            (f"  {fmt.text(local.outcome_words)} · {fmt.duration(local.duration_s)}\n", MUTED),
            ("workspace: ", MUTED),
            (fmt.text(workspace_words(opened)) + "\n", ""),
        ]
        stuck = stuck_line(local.stack, fmt.path)
        if stuck is not None:
            opens = " (e opens it)" if replayed.failure is not None else ""
            parts += [(fmt.text(stuck), "bold $warning"), (f"{opens}\n", MUTED)]
        elif replayed.failure is not None:
            path, line = replayed.failure
            parts += [("failed at ", MUTED), (at_line(fmt.path(path), line), "bold"), (" (e opens it)\n", MUTED)]
        parts += _reward_files(local.reward_files, "no reward file was written")
        for notice in local.notices:
            parts.append((f"note: {one_line(fmt.text(notice))}\n", "$warning"))
        other = "stdout" if stream == "stderr" else "stderr"
        captured = local.stderr if stream == "stderr" else local.stdout
        hidden = local.stdout if stream == "stderr" else local.stderr
        size = f"{hidden.total_bytes:,} bytes" if hidden.total_bytes else "empty"
        parts += [(f"\n{stream}", HEAD), (f"  (o shows {other}: {size})\n", MUTED)]
        parts.append(fmt.text(captured.text).rstrip("\n") or ("(empty)", MUTED))
        self._update(parts)

    def show_message(self, text: str, style: str = MUTED) -> None:
        self.failing = None
        self._update([(text, style)])


def _reward_files(files: list[RewardFile], none: str) -> list[Any]:
    if not files:
        return [(f"{none}\n", MUTED)]
    parts: list[Any] = []
    for reward_file in files:
        parts.append((f"{reward_file.name}  ", HEAD))
        if reward_file.kind != "file":
            parts.append((f"{not_a_file(reward_file)}\n", "$warning"))
            continue
        parts.append(pretty(reward_file.name, reward_file.text or "") + "\n")
    return parts
