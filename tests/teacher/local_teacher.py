"""Run teacher requests through the in-process embedded model, in a process of its own.

`python -m tests.teacher.local_teacher MODEL.gguf < requests.json` prints one JSON list of
`[text, finish_reason]` per request. The llama tests call it as a subprocess so a native
crash of llama.cpp cannot take the pytest process down.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from builder.llm.local.inprocess import LocalProvider
from builder.teacher.prompt import teacher_request


async def _run(model: Path, requests: list[dict[str, object]]) -> list[list[list[object]]]:
    provider = LocalProvider(model, n_ctx=8192)
    out = []
    try:
        for r in requests:
            request = teacher_request(
                str(r["system"]),
                str(r["user"]),
                n=int(str(r["n"])),
                max_tokens=int(str(r["max_tokens"])),
                seed=0,
            )
            response = await provider.complete(request)
            out.append([[c.text, c.finish_reason] for c in response.completions])
    finally:
        provider.close()
    return out


if __name__ == "__main__":
    print(json.dumps(asyncio.run(_run(Path(sys.argv[1]), json.load(sys.stdin)))))
