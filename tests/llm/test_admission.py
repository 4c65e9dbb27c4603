"""The gate hands a freed slot on before the reply's caller goes on with its work."""

from __future__ import annotations

import asyncio

from builder.llm.admission import Estimate, Gate
from builder.llm.limits import EndpointLimits
from builder.llm.protocol import ChatRequest, Usage
from schemas.trajectories import Message


def gate(limits: EndpointLimits) -> Gate:
    request = ChatRequest(messages=[Message(role="user", content="ls")], max_tokens=8)

    def free(*_: object) -> float:
        return 0.0

    return Gate(Estimate.of_chat(request), limits, None, free, free, deadline_s=None)


def test_a_wave_of_replies_lets_every_waiter_send_before_any_caller_goes_on() -> None:
    """Three replies read in one loop pass, three requests waiting for their slots: the three
    waiting requests get on the wire before the three callers spend CPU on their replies."""

    async def scenario() -> list[str]:
        limits = EndpointLimits(max_in_flight=3)
        events: list[str] = []
        replies = asyncio.Event()

        async def holder(k: int) -> None:
            async with gate(limits).http(1) as sent:
                await replies.wait()
                sent.usage = Usage(prompt_tokens=1, completion_tokens=1)
            events.append(f"caller {k} goes on")

        async def waiter(k: int) -> None:
            async with gate(limits).http(1):
                events.append(f"waiter {k} sends")

        holders = [asyncio.create_task(holder(k)) for k in range(3)]
        await asyncio.sleep(0)
        waiters = [asyncio.create_task(waiter(k)) for k in range(3)]
        await asyncio.sleep(0)
        assert limits.in_flight == 3 and not events
        replies.set()
        await asyncio.gather(*holders, *waiters)
        return events

    events = asyncio.run(scenario())
    assert sorted(events[:3]) == ["waiter 0 sends", "waiter 1 sends", "waiter 2 sends"]
    assert sorted(events[3:]) == [f"caller {k} goes on" for k in range(3)]


def test_no_waiter_no_detour_and_errors_still_free_the_slot() -> None:
    async def scenario() -> tuple[int, list[str]]:
        limits = EndpointLimits(max_in_flight=1)
        events: list[str] = []

        async def fails() -> None:
            async with gate(limits).http(1):
                raise ValueError("boom")

        try:
            await fails()
        except ValueError:
            events.append("raised")
        async with gate(limits).http(1):
            events.append("next one got the slot")
        return limits.in_flight, events

    assert asyncio.run(scenario()) == (0, ["raised", "next one got the slot"])
