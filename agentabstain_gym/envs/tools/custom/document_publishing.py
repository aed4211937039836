"""DocumentPublishing logic the generic operations cannot express: ISBN-13 arithmetic and channel lead times.

Why custom: an ISBN-13 check digit is the weighted sum (1, 3, 1, 3, ...) of the first twelve digits, mod 10; the
press owns the block ``978-1-83462-NNN-C`` (a three-digit publication element), so assigning an ISBN means finding
the lowest publication number not used by any edition and computing its check digit. A DOI is checked against the
``10.<registrant>/<suffix>`` syntax and the press's prefix. Sending a feed to a channel checks the channel takes the
format and that the release date leaves at least the channel's lead time (days from today), which is date
arithmetic over three records.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from agentabstain_gym.envs.tools.custom import custom_tool
from agentabstain_gym.envs.tools.errors import ToolError

_DOI = re.compile(r"^10\.\d{4,9}/[-._;()/:A-Za-z0-9]+$")
_SENDABLE = ("approved", "released")


def isbn_check_digit(first12: str) -> str:
    """The ISBN-13 check digit of twelve digits."""
    total = sum(int(d) * (1 if i % 2 == 0 else 3) for i, d in enumerate(first12))
    return str((10 - total % 10) % 10)


def isbn_digits(isbn: str) -> str:
    """An ISBN without spaces and hyphens."""
    return re.sub(r"[\s-]", "", isbn)


def _edition(ctx: Any, edition_id: str) -> dict[str, Any]:
    edition = ctx.record("editions", edition_id, f"No edition with edition_id {edition_id!r}.")
    return edition


def _block(ctx: Any) -> str:
    return isbn_digits(str(ctx.values.get("isbn_prefix", "978-1-83462")))


@custom_tool("document_publishing.check_identifiers")
def check_identifiers(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """ISBN-13: 13 digits, 978/979, the check digit, in the press's block, used by no other edition; DOI: syntax,
    the press's prefix, used by no other edition."""
    edition = _edition(ctx, args["edition_id"])
    others = [r for k, r in sorted(ctx.state.records("editions").items()) if k != edition["edition_id"]]
    problems: list[str] = []
    isbn_out: dict[str, Any] = {"value": edition.get("isbn")}
    isbn = edition.get("isbn")
    if not isbn:
        problems.append("No ISBN assigned.")
        isbn_out["valid"] = False
    else:
        digits = isbn_digits(str(isbn))
        well_formed = digits.isdigit() and len(digits) == 13 and digits[:3] in ("978", "979")
        isbn_out["well_formed"] = well_formed
        if well_formed:
            expected = isbn_check_digit(digits[:12])
            isbn_out["check_digit"] = digits[12]
            isbn_out["expected_check_digit"] = expected
            if digits[12] != expected:
                problems.append(f"ISBN check digit is {digits[12]} but should be {expected}.")
            isbn_out["in_press_block"] = digits.startswith(_block(ctx))
            if not isbn_out["in_press_block"]:
                problems.append("ISBN is not from the press's block.")
        else:
            problems.append("ISBN is not 13 digits starting 978 or 979.")
        dupes = sorted(r["edition_id"] for r in others if isbn_digits(str(r.get("isbn") or "")) == digits)
        isbn_out["also_used_by"] = dupes
        if dupes:
            problems.append(f"ISBN is also used by {', '.join(dupes)}.")
        isbn_out["valid"] = not problems
    doi_out: dict[str, Any] = {"value": edition.get("doi")}
    doi = edition.get("doi")
    if doi:
        prefix = str(ctx.values.get("doi_prefix", ""))
        doi_out["well_formed"] = bool(_DOI.match(str(doi)))
        doi_out["press_prefix"] = str(doi).startswith(prefix + "/")
        doi_out["also_used_by"] = sorted(r["edition_id"] for r in others
                                         if str(r.get("doi") or "").casefold() == str(doi).casefold())
        if not doi_out["well_formed"]:
            problems.append("DOI does not match 10.<registrant>/<suffix>.")
        if not doi_out["press_prefix"]:
            problems.append(f"DOI is not under the press's prefix {prefix}.")
        if doi_out["also_used_by"]:
            problems.append(f"DOI is also used by {', '.join(doi_out['also_used_by'])}.")
    return {"edition_id": edition["edition_id"], "ok": not problems, "isbn": isbn_out, "doi": doi_out,
            "problems": problems}


def next_free_isbn(ctx: Any) -> str:
    """The lowest unused publication number of the block, hyphenated, with its check digit."""
    block = _block(ctx)
    width = 12 - len(block)
    used = set()
    for record in ctx.state.records("editions").values():
        digits = isbn_digits(str(record.get("isbn") or ""))
        if digits.startswith(block) and len(digits) == 13:
            used.add(digits[len(block):12])
    for n in range(10 ** width):
        number = f"{n:0{width}d}"
        if number not in used:
            first12 = block + number
            prefix = str(ctx.values.get("isbn_prefix", "978-1-83462"))
            return f"{prefix}-{number}-{isbn_check_digit(first12)}"
    raise ToolError("conflict", "The press's ISBN block is used up; order a new block from Nielsen.")


@custom_tool("document_publishing.assign_isbn")
def assign_isbn(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Assign the next free ISBN of the block to an edition that has none."""
    edition = _edition(ctx, args["edition_id"])
    if edition.get("isbn"):
        raise ToolError("conflict", f"Edition {edition['edition_id']} already has ISBN {edition['isbn']}.")
    if edition.get("status") == "withdrawn":
        raise ToolError("conflict", f"Edition {edition['edition_id']} is withdrawn.")
    isbn = next_free_isbn(ctx)
    updated = {**edition, "isbn": isbn}
    ctx.state.put("editions", edition["edition_id"], updated)
    return {"updated": updated, "isbn": isbn}


@custom_tool("document_publishing.send_to_channel")
def send_to_channel(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Queue an edition's feed to a channel: the edition must be identified, signed off and free of holds; the
    channel active and taking the format; and the release date at least the channel's lead time away."""
    edition = _edition(ctx, args["edition_id"])
    channel = ctx.record("channels", args["channel_id"], f"No channel with channel_id {args['channel_id']!r}.")
    name = channel.get("name", channel["channel_id"])
    if channel.get("status") != "active":
        raise ToolError("conflict", f"{name} is {channel.get('status')}; feeds cannot be sent to it.")
    if edition.get("format") not in channel.get("formats", []):
        raise ToolError("conflict", f"{name} does not take {edition.get('format')} editions.")
    if not edition.get("isbn"):
        raise ToolError("conflict", f"Edition {edition['edition_id']} has no ISBN.")
    if edition.get("hold_notice"):
        raise ToolError("conflict", f"Edition {edition['edition_id']} is on hold: {edition['hold_notice']}")
    if edition.get("status") not in _SENDABLE:
        raise ToolError("conflict", f"Edition {edition['edition_id']} is {edition.get('status')}; it must be "
                                    "approved or released before it goes to channels.")
    release = edition.get("release_date")
    if not release:
        raise ToolError("conflict", f"Edition {edition['edition_id']} has no release date.")
    days = (date.fromisoformat(release) - date.fromisoformat(ctx.now[:10])).days
    lead = int(channel.get("lead_days", 0))
    if edition.get("status") != "released" and days < lead:
        raise ToolError("conflict", f"{name} needs {lead} days before release; {release} is only {days} days away.")
    for feed in ctx.state.records("channel_feeds").values():
        if feed.get("edition_id") == edition["edition_id"] and feed.get("channel_id") == channel["channel_id"] \
                and feed.get("status") != "rejected":
            raise ToolError("conflict", f"A feed for {edition['edition_id']} to {name} already exists "
                                        f"({feed['feed_id']}, {feed.get('status')}).")
    feed_id = ctx.new_id("channel_feeds")
    record = {"feed_id": feed_id, "edition_id": edition["edition_id"], "channel_id": channel["channel_id"],
              "status": "sent", "sent_at": ctx.now, "on_sale_date": release}
    ctx.state.put("channel_feeds", feed_id, record)
    return {"created": record, "days_to_release": days, "channel_lead_days": lead}
