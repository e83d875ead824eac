"""Make the README's screenshots: the real app, driven on the bundled examples,
saving SVGs of itself (``App.save_screenshot``).

    python -m verifier_tui.tui.screenshots [--out screenshots/]

Each picture is taken once the first run has ended and live reload is in
place. Durations are real, so pictures made again differ in those digits.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from dataclasses import dataclass
from pathlib import Path

from verifier_tui.engine.session import Options, Session

REPO = Path(__file__).resolve().parents[2]
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


async def take(shot: Shot, out: Path) -> Path:
    from verifier_tui.tui.app import VerifierApp

    session = Session(EXAMPLES / shot.task, Options(case=shot.case))
    app = VerifierApp(session)
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
    parser = argparse.ArgumentParser(prog="python -m verifier_tui.tui.screenshots", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=REPO / "screenshots", help="folder for the SVGs")
    parser.add_argument("only", nargs="*", help="names of the shots to make (default: all)")
    args = parser.parse_args(argv)
    if not EXAMPLES.is_dir():
        print(f"no examples at {EXAMPLES}: run this from a checkout of verifier-tui", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    for shot in SHOTS:
        if args.only and shot.name not in args.only:
            continue
        path = asyncio.run(take(shot, args.out))
        print(path.relative_to(REPO) if path.is_relative_to(REPO) else path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
