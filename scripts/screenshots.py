"""Make the README's screenshots: the real app, driven on the bundled examples
of this checkout, saving SVGs of itself (``App.save_screenshot``).

    .venv/bin/python scripts/screenshots.py [--out screenshots/] [NAME ...]

Each picture is taken once the runs it shows have ended on screen and live
reload is in place. Durations are real, so pictures made again differ in
those digits.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from dataclasses import dataclass
from pathlib import Path

from verifier_tui.engine.session import Options, Session
from verifier_tui.tui.app import VerifierApp
from verifier_tui.tui.messages import RunFailed, RunFinished, RunNotPossible

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples" / "tasks"


@dataclass(frozen=True)
class Shot:
    name: str
    task: str
    case: str | None
    size: tuple[int, int] = (120, 36)
    keys: tuple[str, ...] = ()
    runs: int = 1
    """Runs to wait for (keys like "a" start more)."""


SHOTS = [
    Shot("passing-run", "hello-file", "correct"),
    Shot("dict-reward", "fizzbuzz-module", "partial"),
    Shot("verify-raised", "hello-file", "missing-file"),
    Shot("contract-error-harbor-mode", "count-errors", "harbor-mode"),
    Shot("all-cases-and-history", "hello-file", "correct", keys=("a",), runs=5),
    Shot("narrow-terminal", "hello-file", "correct", size=(80, 24)),
]


class CountingApp(VerifierApp):
    """The app, counting the runs that ended on screen: each run's last
    message (RunFinished, RunNotPossible or RunFailed) bubbles up to the app
    once the main screen has shown it."""

    def __init__(self, session: Session) -> None:
        super().__init__(session)
        self.ended = 0
        self._ended = asyncio.Event()

    def on_run_finished(self, _message: RunFinished) -> None:
        self._end()

    def on_run_not_possible(self, _message: RunNotPossible) -> None:
        self._end()

    def on_run_failed(self, _message: RunFailed) -> None:
        self._end()

    def _end(self) -> None:
        self.ended += 1
        self._ended.set()

    async def wait_for_runs(self, count: int, timeout: float = 20.0) -> None:
        async def enough() -> None:
            while self.ended < count:
                self._ended.clear()
                await self._ended.wait()

        await asyncio.wait_for(enough(), timeout)


async def take(shot: Shot, out: Path) -> Path:
    app = CountingApp(Session(EXAMPLES / shot.task, Options(case=shot.case)))
    async with app.run_test(size=shot.size) as pilot:
        await app.wait_for_runs(1)
        await asyncio.wait_for(app.controller.watch_ready.wait(), 10)
        for key in shot.keys:
            await pilot.press(key)
        await app.wait_for_runs(shot.runs)
        await pilot.pause()
        await pilot.pause(0.1)
        saved = app.save_screenshot(f"{shot.name}.svg", str(out))
    return Path(saved)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/screenshots.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=REPO / "screenshots", help="folder for the SVGs")
    parser.add_argument("only", nargs="*", help="names of the shots to make (default: all)")
    args = parser.parse_args(argv)
    unknown = set(args.only) - {shot.name for shot in SHOTS}
    if unknown:
        parser.error(f"no such shot: {', '.join(sorted(unknown))} (there are: {', '.join(s.name for s in SHOTS)})")
    args.out.mkdir(parents=True, exist_ok=True)
    for shot in SHOTS:
        if args.only and shot.name not in args.only:
            continue
        path = asyncio.run(take(shot, args.out))
        print(path.relative_to(REPO) if path.is_relative_to(REPO) else path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
