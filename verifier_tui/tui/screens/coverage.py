"""The coverage view (the main screen's ``g``): the verifier's source and its
helpers', each line marked with how many cases reached it, the lines no case
reached marked ✗; the highlighted line's cases named below. While it is open
every run asks for coverage and each run (a save re-runs every case) updates
it; ``e`` opens the highlighted line in the editor."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.reactive import var
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from verifier_tui.engine.coverage import (
    WITHOUT_A_CASE,
    Coverage,
    merge,
    not_measured_words,
    problem_words,
    runs_words,
    source_lines,
)
from verifier_tui.engine.model import Outcome
from verifier_tui.engine.task.cases import case_order
from verifier_tui.tui.display import HEAD, content
from verifier_tui.tui.keys import key
from verifier_tui.tui.screens.keyed import KeyedScreen
from verifier_tui.tui.workarounds import KeyFooter
from verifier_tui.words.run import OUTDATED_BY
from verifier_tui.words.text import one_line

if TYPE_CHECKING:
    from collections.abc import Callable

    from verifier_tui.engine.model import RunResult
    from verifier_tui.tui.display import Display

#: Its marks, as the help shows them.
MARKS = (
    (
        "each line of the source",
        (
            ("2/3", "two of the three cases reached it (move onto it: which)"),
            ("✗", "no case reached it"),
            ("·", "no case reached it yet: other cases are still running"),
            ("", "(no mark) not a line that runs: a comment, a blank, the rest of a statement"),
        ),
    ),
)


#: Rows the view lists, every file's names and lines together: a row costs the list about 0.1 ms each time a
#: run ends, and a generated helper of 200,000 lines (within what the runner measures) froze the screen for 14 s.
_ROWS_AT_MOST = 3_000
_LISTS_THEM = "verifier-tui run --coverage (or test --coverage) lists"


#: The key of the run on a task without cases, by the current choices: a case's name is never empty,
#: so no case shares it (``-`` did, and the view said ``reached by -``, a case the task does not have).
NO_CASE = ""


def _named(name: str) -> str:
    """A run of the view as the screen names it: its case, as the cases list names it."""
    return one_line(name) if name != NO_CASE else WITHOUT_A_CASE


class CoverageScreen(KeyedScreen):
    BINDINGS = [
        key("n", "next_missed", "next ✗", "Next line no case reached", "Move to it, after the highlighted line"),
        key("e", "edit", "edit", "Open the line in $EDITOR", "The highlighted line, in the editor (suspends the app)"),
        key("r", "rerun", "run all", "Run every case again", "Each case's coverage anew"),
        # In the footer, which has room for it even at 80 columns: the help says what 2/2, 1/2 and ✗ mean.
        key("?", "help", "help", "Help: keys and marks", "Every key, and what the marks mean"),
        key("escape", "close", "back", "Back", "To the main screen (runs stop asking for coverage)"),
        # as from a trial's file views and the help: q, which quits from the screens, here ended nothing
        key("q", "close", "back", "Back", "As esc", show=False),
    ]
    HELP_TITLE = "coverage: keys and marks"
    MARKS = MARKS

    by_case: var[dict[str, Coverage]] = var(dict, init=False)
    """Each case's coverage from its latest run (:data:`NO_CASE`: the current choices of a task without cases)."""

    def __init__(
        self,
        fmt: Display,
        verifier: Path | None,
        cases: int,
        open_line: Callable[[Path, int], None],
        rerun: Callable[[], None],
    ) -> None:
        super().__init__()
        self.fmt = fmt
        self.verifier = verifier
        self.cases = cases  # how many runs make the picture whole
        self.open_line = open_line
        self.rerun = rerun
        self.rows: list[tuple[Path, int]] = []  # each option's file and line
        self.missed: list[int] = []  # the options of the lines no case reached
        self.unlisted: list[Path] = []  # the files with lines no case reached that the view does not list
        self.measured = 0  # the lines that can run, every file's: none when the verifier does not compile
        self.ran_as: dict[str, int] = {}
        """The run (its sequence number) each case's coverage in :attr:`by_case` comes from."""
        self.outdated_through = 0
        """Runs up to this number ran the verifier's files before their last change."""
        self.refused: str | None = None
        """Why the last run asked for could not start (no verifier any more), until one runs."""

    def compose(self) -> ComposeResult:
        yield Static("Coverage: running every case…", id="coverage-header")
        yield OptionList(id="coverage-lines")
        yield Static(id="coverage-cases")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def take(self, result: RunResult) -> None:
        """A run ended: its case's coverage replaces that case's last."""
        coverage = result.coverage
        if coverage is None and result.outcome in (Outcome.COULD_NOT_START, Outcome.REFUSED_BY_SHIM):
            coverage = Coverage({}, f"no coverage: the run {result.outcome.value}")  # in, not still running
        if coverage is not None:  # (None: a run started before the view asked for coverage)
            self.refused = None
            self.by_case[result.inputs.case or NO_CASE] = coverage
            self.ran_as[result.inputs.case or NO_CASE] = result.sequence
            self.mutate_reactive(CoverageScreen.by_case)

    def not_possible(self, reason: str) -> None:
        """Nothing could run (the verifier removed): said here, where a save or r asked for the runs;
        on the main screen below, r and every save looked as if they did nothing."""
        self.refused = reason
        self.mutate_reactive(CoverageScreen.by_case)
        self.notify(reason, severity="warning")

    def outdated(self, through: int) -> None:
        """The verifier or a helper changed: the coverage of runs up to
        ``through`` counted lines of the files as they were."""
        self.outdated_through = through
        self.mutate_reactive(CoverageScreen.by_case)

    def _in_use(self) -> tuple[dict[str, Coverage], bool]:
        """Each case's coverage the view counts, and whether it is out of date:
        runs since the last change only (the lines of older runs are numbered
        as the files were: a line added above moved every line after it), or
        while none has come in yet, the older ones, said to be out of date."""
        ordered = {name: self.by_case[name] for name in sorted(self.by_case, key=case_order)}  # as the list has them
        fresh = {name: c for name, c in ordered.items() if self.ran_as[name] > self.outdated_through}
        if fresh or not ordered:
            return fresh, False
        return ordered, True

    def watch_by_case(self) -> None:
        by_case, old = self._in_use()
        runs = {name: c.files for name, c in by_case.items() if c.problem is None}
        # each case by the name the cases list gives it (headless, ``test`` names it task::case)
        problems = problem_words(((_named(name), c.problem) for name, c in by_case.items() if c.problem), self.cases)
        problems += not_measured_words(
            {path: why for c in by_case.values() for path, why in c.not_compiled.items()}, self.fmt.path
        )
        union = merge(runs.values())
        ran = sum(len(f.executed) for f in union.values())
        lines = self.measured = sum(len(f.statements) for f in union.values())
        cases = runs_words(len(runs), list(runs) == [NO_CASE])
        # Until every case's run is in, a line no case reached yet may still be: no ✗ for it.
        running = self.cases - len(by_case)
        said, style = f"Coverage of {cases}: {ran} of {lines} lines ran", "bold"
        if running > 0:
            said = f"Coverage so far, {cases}: {ran} of {lines} lines ran · {running} still running"
        if old:  # no counts and no marks: the old runs' line numbers are not the lines of the source shown
            said = f"Coverage out of date: {OUTDATED_BY} since these runs (r runs every case again)"
            style = "bold $warning"
        if self.refused is not None:  # the runs shown are of a verifier that cannot run now
            said, style = f"No coverage: {self.refused}", "bold $warning"
        self.query_one("#coverage-header", Static).update(
            content(
                (said, style),
                *((f"  · {self.fmt.words(p)}", "$warning") for p in problems),
            )
        )
        options: list[Option] = []
        self.rows, self.missed, self.unlisted = [], [], []

        def row(option: Option, path: Path, number: int) -> None:
            options.append(option)
            self.rows.append((path, number))

        # the verifier first, then its helpers by path, each from its first line, until the view's rows are used
        ordered = sorted(union, key=lambda p: (p != self.verifier, str(p)))
        for at, path in enumerate(ordered):
            file = union[path]
            if len(options) + 3 > _ROWS_AT_MOST:  # no room for a file's name, a line and its count: the rest counted
                rest = ordered[at:]
                self.unlisted += [p for p in rest if union[p].missing and not old]
                many = f"{len(rest):,} more files" if len(rest) > 1 else f"1 more file, {self.fmt.path(path)},"
                lines_there = sum(len(union[p].statements) for p in rest)
                said = (
                    f"{many} not listed here ({lines_there:,} lines that run): {_LISTS_THEM} the lines no case reached"
                )
                row(Option(content((said, "$text-muted")), disabled=True), path, 1)
                break
            row(Option(content((self.fmt.path(path), HEAD)), disabled=True), path, 1)
            source = source_lines(path)
            shown_lines = source[: _ROWS_AT_MOST - len(options) - 1]  # a row kept to count the rest
            for number, text in enumerate(shown_lines, start=1):
                reached = sum(path in run and number in run[path].executed for run in runs.values())
                if old or number not in file.statements:
                    mark, style = "", ""
                elif reached:
                    mark, style = f"{reached}/{len(runs)}", "$success"
                elif running > 0:
                    mark, style = "·", "$text-muted"
                else:
                    mark, style = "✗", "bold $error"
                    self.missed.append(len(options))
                # the source as it is: an escape code in it shown as one (dropped, the line read otherwise)
                shown = one_line(text.expandtabs(4))
                row(Option(content((f"{number:>4} ", "$text-muted"), (f"{mark:>5} ", style), shown)), path, number)
            if len(shown_lines) < len(source):
                more = len(source) - len(shown_lines)
                said = f"{more:,} more lines of it not listed here: {_LISTS_THEM} the lines no case reached"
                row(Option(content((said, "$text-muted")), disabled=True), path, len(shown_lines) + 1)
                if not old and any(number > len(shown_lines) for number in file.missing):
                    self.unlisted.append(path)
        view = self.query_one(OptionList)
        highlighted = view.highlighted
        view.set_options(options)
        if options:
            view.highlighted = min(highlighted or 1, len(options) - 1)
            self._say_cases(view.highlighted)  # the same line highlighted again posts no event: its cases changed

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self._say_cases(event.option_index)

    def _say_cases(self, index: int) -> None:
        """Which cases reached the line of row ``index``, under the list."""
        path, number = self.rows[index]
        # each case named as the cases list names it: an escape code in a folder's name shown, not dropped
        by_case, old = self._in_use()
        if old:  # the old runs' line numbers: not this line's
            self.query_one("#coverage-cases", Static).update(
                content((f"{self.fmt.path(path)}:{number}", "$text-muted"))
            )
            return
        names = [_named(name) for name, c in by_case.items() if path in c.files and number in c.files[path].executed]
        lines = merge(c.files for c in by_case.values()).get(path)
        if lines is None or number not in lines.statements:
            said = f"{self.fmt.path(path)}:{number}"
        elif names:
            said = f"line {number} reached by {', '.join(names)}"
        else:
            said = f"line {number}: no case reached it"
        self.query_one("#coverage-cases", Static).update(content((said, "$text-muted")))

    def action_next_missed(self) -> None:
        view = self.query_one(OptionList)
        if not self.missed:  # said: a key that does nothing looks broken
            by_case, old = self._in_use()
            running = self.cases - len(by_case)
            if old:
                said = "no line is marked: the coverage is out of date (r runs every case again)"
            elif running > 0:
                said = f"no line is marked ✗ yet: {running} still running"
            elif self.unlisted:
                files = ", ".join(self.fmt.path(path) for path in self.unlisted[:3])
                files += f" and {len(self.unlisted) - 3:,} more files" if len(self.unlisted) > 3 else ""
                has = "has" if len(self.unlisted) == 1 else "have"
                said = f"no line listed is marked ✗: {files} {has} lines no case reached, not listed here: "
                said += f"{_LISTS_THEM} them"
            elif self.measured == 0:  # as the CLI's summary: no line that can run is no full coverage
                said = "no line is marked ✗: no line that runs was measured"
            else:
                said = "no line is marked ✗: a case reached every line that runs"
            self.notify(said)
            return
        after = [index for index in self.missed if index > (view.highlighted or 0)]
        view.highlighted = (after or self.missed)[0]  # past the last, round to the first

    def action_edit(self) -> None:
        index = self.query_one(OptionList).highlighted
        if index is not None and index < len(self.rows):
            self.open_line(*self.rows[index])

    def action_rerun(self) -> None:
        self.rerun()

    def action_close(self) -> None:
        self.dismiss(None)
