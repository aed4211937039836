"""Calendar logic the generic operations cannot express: free/busy over events, and answering an invitation."""

from __future__ import annotations

from typing import Any

from agentabstain_gym.envs.tools.custom import custom_tool
from agentabstain_gym.envs.tools.errors import ToolError

_ACTIVE = ("confirmed", "tentative")


def _overlaps(event: dict[str, Any], start: str, end: str) -> bool:
    return event.get("status") in _ACTIVE and event.get("start", "") < end and event.get("end", "") > start


@custom_tool("calendar.check_availability")
def check_availability(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Free/busy of people (and optionally a room) over [start, end); shows busy intervals, never other people's
    event titles, as a real free/busy API does."""
    start, end = args["start"], args["end"]
    if end <= start:
        raise ToolError("invalid_request", "end must be after start.")
    ignore = args.get("ignore_event_id")
    events = [e for k, e in sorted(ctx.state.records("events").items()) if k != ignore and _overlaps(e, start, end)]
    people = []
    for email in sorted({a.casefold() for a in args["attendees"]}):
        busy = [{"start": e["start"], "end": e["end"]} for e in events
                if email == str(e.get("organizer", "")).casefold()
                or email in (str(a).casefold() for a in e.get("attendees", []))]
        people.append({"email": email, "free": not busy, "busy": busy})
    out: dict[str, Any] = {"start": start, "end": end, "attendees": people}
    available = all(p["free"] for p in people)
    room_id = args.get("room_id")
    if room_id is not None:
        room = ctx.record("rooms", room_id, f"No room with room_id {room_id!r}.")
        booked = [{"start": e["start"], "end": e["end"]} for e in events if e.get("room_id") == room_id]
        room_free = not booked and room.get("status") == "open"
        out["room"] = {"room_id": room_id, "status": room.get("status"), "free": room_free, "busy": booked}
        available = available and room_free
    out["available"] = available
    return out


@custom_tool("calendar.respond_to_invitation")
def respond_to_invitation(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Set the signed-in user's answer to an invitation, found by event (users know events, not invitation ids)."""
    me = str(ctx.values.get("user_email", "")).casefold()
    event = ctx.record("events", args["event_id"], f"No event with event_id {args['event_id']!r}.")
    if str(event.get("organizer", "")).casefold() == me:
        raise ToolError("conflict", "You organise this event; there is no invitation to answer.")
    if event.get("status") == "cancelled":
        raise ToolError("conflict", f"The event {event['title']!r} has been cancelled.")
    mine = [(k, r) for k, r in sorted(ctx.state.records("invitations").items())
            if r.get("event_id") == event["event_id"] and str(r.get("email", "")).casefold() == me]
    if not mine:
        raise ToolError("not_found", f"You have no invitation to {event['title']!r}.")
    key, invitation = mine[0]
    updated = {**invitation, "response": args["response"], "responded_at": ctx.now}
    if args.get("note"):
        updated["note"] = args["note"]
    ctx.state.put("invitations", key, updated)
    return {"updated": updated, "previous": {"response": invitation.get("response")}}
