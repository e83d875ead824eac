"""Verifier for count-errors: an async verify that needs the agent's response.

The environment server calls verifiers from its event loop and passes the
agent's final Responses API response, so this one is `async def` and takes
`response` WITHOUT a default. A published Harbor task never gets a response:
there the runner refuses to call it (contract error, exit 2), which is what
the case `harbor-mode` shows. Give `response` a default (response=None) to
make a verifier that also runs under Harbor.

Returns 1.0 when the last number in the agent's final message equals the
number of ERROR events in /app/data/server.log, else 0.0.
"""

import asyncio
import re

LOG = "data/server.log"


def _count_errors(path):
    # The level is the second field; a WARN line whose message mentions
    # "ERROR" is not an error event.
    with open(path, encoding="utf-8") as handle:
        return sum(1 for line in handle if line.split()[1:2] == ["ERROR"])


def _final_text(response):
    """The text of the last assistant message in a Responses API response.

    `output` may also hold reasoning items and tool calls; only assistant
    messages carry the answer, and a message may split it over several
    output_text parts."""
    text = None
    for item in response.get("output") or []:
        if item.get("type") == "message" and item.get("role") == "assistant":
            parts = [part.get("text", "") for part in item.get("content") or [] if part.get("type") == "output_text"]
            text = "".join(parts)
    return text


async def verify(workspace, response):
    # Reading the log off the event loop keeps a big log from stalling every
    # other rollout the server is scoring (run_in_executor: Python 3.8 has no
    # asyncio.to_thread).
    loop = asyncio.get_running_loop()
    expected = await loop.run_in_executor(None, _count_errors, workspace / LOG)
    text = _final_text(response) or ""
    # "Just the number" is asked for; a polite sentence around it is forgiven.
    numbers = re.findall(r"-?\d+", text)
    return 1.0 if numbers and int(numbers[-1]) == expected else 0.0
