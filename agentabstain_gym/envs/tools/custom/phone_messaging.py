"""Phone & Messaging logic the generic operations cannot express: sending a text writes the message and opens or
updates its thread (one thread per set of participants, as a messaging app keeps them)."""

from __future__ import annotations

import re
from typing import Any

from agentabstain_gym.envs.tools.custom import custom_tool
from agentabstain_gym.envs.tools.errors import ToolError

_E164 = re.compile(r"^\+[1-9][0-9]{7,14}$")
_SHORT_CODE = re.compile(r"^[0-9]{5,6}$")


def _normalise(number: str) -> str:
    """``(415) 555-0111``, ``415-555-0111`` and ``+1 415 555 0111`` all become ``+14155550111``."""
    raw = str(number).strip()
    digits = re.sub(r"[\s().-]", "", raw)
    if _SHORT_CODE.match(digits):
        return digits
    if digits.startswith("+"):
        return digits
    if len(digits) == 10 and digits.isdigit():
        return "+1" + digits
    if len(digits) == 11 and digits.startswith("1") and digits.isdigit():
        return "+" + digits
    return digits


def _recipients(ctx: Any, args: dict[str, Any]) -> tuple[str | None, list[str]]:
    """The existing thread (if any) and the participants of the text, from thread_id or to."""
    thread_id, to = args.get("thread_id"), args.get("to")
    if (thread_id is None) == (not to):
        raise ToolError("invalid_request", "Give thread_id or to (one or more numbers), but not both.")
    if thread_id is not None:
        thread = ctx.record("conversations", thread_id, f"No conversation with thread_id {thread_id!r}.")
        return thread_id, list(thread.get("participants", []))
    numbers = []
    for raw in to:
        number = _normalise(raw)
        if not (_E164.match(number) or _SHORT_CODE.match(number)):
            raise ToolError("invalid_request", f"{raw!r} is not a phone number in international format.")
        if number == ctx.values.get("owner_number"):
            raise ToolError("invalid_request", "You cannot text your own number.")
        if number not in numbers:
            numbers.append(number)
    wanted = sorted(numbers)
    for key, thread in sorted(ctx.state.records("conversations").items()):
        if sorted(thread.get("participants", [])) == wanted:
            return key, list(thread.get("participants", []))
    return None, numbers


def _write(ctx: Any, args: dict[str, Any], send_at: str | None) -> dict[str, Any]:
    thread_id, participants = _recipients(ctx, args)
    blocked = [n for n in participants if ctx.state.get("blocked_numbers", n) is not None]
    if blocked:
        raise ToolError("conflict", f"You have blocked {blocked[0]}; unblock it before texting.")
    new_thread = thread_id is None
    if new_thread:
        thread_id = ctx.new_id("conversations")
        thread = {"thread_id": thread_id, "name": "", "participants": participants,
                  "is_group": len(participants) > 1, "unread_count": 0, "last_message_at": ctx.now,
                  "muted": False, "archived": False, "pinned": False}
    else:
        thread = dict(ctx.state.get("conversations", thread_id))
        if send_at is None:
            thread["last_message_at"] = ctx.now
            thread["archived"] = False
    ctx.state.put("conversations", thread_id, thread)
    message_id = ctx.new_id("messages")
    message: dict[str, Any] = {"message_id": message_id, "thread_id": thread_id, "direction": "outgoing",
                               "author": ctx.values.get("owner_number"), "body": args["body"], "sent_at": ctx.now}
    if send_at is None:
        message["status"] = "sent"
    else:
        message["status"] = "scheduled"
        message["send_at"] = send_at
    message.update({"attachments": [], "spam_verdict": "none"})
    ctx.state.put("messages", message_id, message)
    return {"sent" if send_at is None else "scheduled": message, "thread_id": thread_id,
            "participants": participants, "new_thread": new_thread}


@custom_tool("phone_messaging.send_message")
def send_message(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Send a text now into a thread, or to numbers (reusing the thread those numbers already share)."""
    return _write(ctx, args, None)


@custom_tool("phone_messaging.schedule_message")
def schedule_message(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Queue a text for a later time; the time must be in the future."""
    send_at = str(args["send_at"])
    if send_at <= str(ctx.now):
        raise ToolError("invalid_request", f"send_at ({send_at}) must be after now ({ctx.now}).")
    return _write(ctx, args, send_at)
