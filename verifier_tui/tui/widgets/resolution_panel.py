"""How the runner will import and call the verifier, from its ``--explain``
document (shown as soon as the runner writes it, before verify returns):
sys.path in order with each entry's role, where nemo_gym.verifiers resolves
and any shadowed copy, the signature of verify, and each parameter's binding,
with contract problems highlighted and explained in words."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from verifier_tui.engine.advice import worded
from verifier_tui.engine.diagnosis import shadow_text, shadows
from verifier_tui.tui.display import HEAD, MUTED, content, key_words
from verifier_tui.tui.widgets import redraw
from verifier_tui.tui.widgets.reward_panel import IN_COMMAND
from verifier_tui.words.resolution import (
    HEADING,
    PLAIN,
    PROBLEM,
    QUIET,
    STRONG,
    WARN,
    Line,
    binding_lines,
    environment_lines,
    interpreter_lines,
    nemo_gym_lines,
    problem_head,
    sys_path_lines,
)
from verifier_tui.words.run import LISTED, MODE_NAMES, more_text
from verifier_tui.words.text import one_line

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from verifier_tui.engine.readback import Explanation
    from verifier_tui.tui.display import Display

_PROBLEM = "bold $error"
_WARN = "$warning"
#: What the panel says before the runner's explanation comes.
WAITING = "Resolution appears as soon as the runner starts."
_STYLES = {HEADING: HEAD, QUIET: MUTED, STRONG: "bold", PROBLEM: _PROBLEM, WARN: _WARN, PLAIN: ""}


class ResolutionPanel(VerticalScroll):
    _drawn: Callable[[Sequence[str]], Content] | None = None
    """What the panel shows, drawn under the given notes: drawn again when only the notes change."""

    def compose(self) -> ComposeResult:
        yield Static(Content(WAITING), id="resolution-body")

    def show_message(self, text: str, notices: Sequence[str] = (), style: str = MUTED) -> None:
        def drawn(notes: Sequence[str]) -> Content:
            parts: list[Any] = [(f"⚠ {worded(n, key_words)}\n", _WARN) for n in notes]
            return content(*parts, (text, style))

        self._draw(drawn, notices)

    def show(self, explain: Explanation, mode: str, fmt: Display, notices: Sequence[str] = ()) -> None:
        self._draw(lambda notes: resolution_content(explain, mode, fmt, notes), notices)

    def notices_now(self, notices: Sequence[str]) -> None:
        """The notes as they are now over what the panel shows: the task read again (a case's
        expected.json saved unusable another way) may run nothing that would say them."""
        if self._drawn is not None:
            redraw.update(self.query_one("#resolution-body", Static), self._drawn(notices))

    def _draw(self, drawn: Callable[[Sequence[str]], Content], notices: Sequence[str]) -> None:
        self._drawn = drawn
        redraw.update(self.query_one("#resolution-body", Static), drawn(notices))


def resolution_content(explain: Explanation, mode: str, fmt: Display, notices: Sequence[str] = ()) -> Content:
    """Most telling first: contract problems, then how verify is called, where
    nemo_gym.verifiers resolves, and sys.path in full."""
    parts: list[Any] = [(f"⚠ {fmt.words(n)}\n", _WARN) for n in notices]
    if explain.error:
        parts.append((f"The runner could not explain this run: {fmt.text(explain.error)}\n", _PROBLEM))
        return content(*parts)
    if explain.from_contract:
        parts.append(
            (
                "The task's own runner does not report its resolution (R runs ours, which does): below is "
                "what the runner contract places, not what the runner reported; verify's signature and "
                "bindings are unknown.\n",
                _WARN,
            )
        )
    parts += _problems(explain, mode, fmt)
    parts += _verify(explain, mode, fmt)
    parts += _nemo_gym(explain, fmt)
    parts += _interpreter(explain, fmt)
    parts += _sys_path(explain, fmt)
    parts += _environment(explain, fmt)
    return content(*parts)


def _problems(explain: Explanation, mode: str, fmt: Display) -> list[Any]:
    parts: list[Any] = []
    problems = explain.problems
    for problem in problems[:LISTED]:
        # in explain's words: the verifier's own code raising as verify was looked up (exit 1) is no contract problem
        parts += [(f"✗ {problem_head(explain)}", _PROBLEM), (fmt.words(problem), _PROBLEM), "\n"]
        hint = _hint(problem, mode)
        if hint:
            parts.append((f"  {hint}\n", ""))
    if len(problems) > LISTED:
        parts.append((f"✗ {more_text(len(problems) - LISTED, 'contract problems', IN_COMMAND)}\n", _PROBLEM))
    return parts


def _verify(explain: Explanation, mode: str, fmt: Display) -> list[Any]:
    parts: list[Any] = []
    failure = explain.import_error
    if failure is not None:
        parts.append(("✗ the module raised while being imported: ", _PROBLEM))
        # one line, its \n written out (ValueError('first\nsecond')), as explain says it
        parts.append((f"{fmt.text(one_line(failure.said))}\n", _PROBLEM))
        parts.append(("  its traceback is in stderr; e opens the failing line\n", MUTED))
    return parts + _styled(binding_lines(explain, mode, fmt.text, IN_COMMAND))


def _nemo_gym(explain: Explanation, fmt: Display) -> list[Any]:
    return _styled(nemo_gym_lines(explain, fmt.path))


def _interpreter(explain: Explanation, fmt: Display) -> list[Any]:
    return _styled(interpreter_lines(explain, fmt.path, version=not fmt.deterministic))


def _sys_path(explain: Explanation, fmt: Display) -> list[Any]:
    parts = _styled(sys_path_lines(explain, fmt.path, IN_COMMAND))
    for shadow in shadows(explain):
        parts.append((f"  ⚠ {fmt.text(shadow_text(shadow, fmt.path))}\n", _WARN))
    return parts


def _styled(lines: list[Line]) -> list[Any]:
    """The printer's lines (:mod:`verifier_tui.words.resolution`) in this panel's styles."""
    return [part for line in lines for part in [*((text, _STYLES[kind]) for text, kind in line), "\n"]]


def _environment(explain: Explanation, fmt: Display) -> list[Any]:
    # the rows that differ from machine to machine are kept out of snapshots; values as task.toml wrote them
    lines = environment_lines(explain.environment, one_line, this_machine=not fmt.deterministic)
    return _styled([[(worded(text, fmt.action), kind) for text, kind in line] for line in lines])


def _hint(problem: str, mode: str) -> str | None:
    """What to do about a contract problem, in words."""
    if "'response'" in problem and mode == "harbor":
        return (
            "Harbor never passes a response. Give the parameter a default (response=None) so the task "
            f"also runs under Harbor, or press m to run with a response ({MODE_NAMES['server']})."
        )
    if "no callable verify" in problem or "not callable" in problem:
        return "The runner calls a top-level callable named verify; define it at module level."
    return None
