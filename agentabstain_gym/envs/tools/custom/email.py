"""Email logic the generic operations cannot express: sending, replying and forwarding write a message to Sent,
keep it in (or open) its conversation, copy attachments, and refuse blocked or malformed recipients."""

from __future__ import annotations

import re
from typing import Any

from agentabstain_gym.envs.tools.custom import custom_tool
from agentabstain_gym.envs.tools.errors import ToolError

_ADDRESS = re.compile(r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$")


def _me(ctx: Any) -> str:
    return str(ctx.values.get("user_email", "")).casefold()


def _addresses(ctx: Any, raw: list[str] | None, role: str) -> list[str]:
    """Lower-cased, de-duplicated, checked addresses; a blocked recipient is refused as a mail client does."""
    out: list[str] = []
    for value in raw or []:
        address = str(value).strip().casefold()
        if not _ADDRESS.match(address):
            raise ToolError("invalid_request", f"{value!r} in {role} is not an email address.")
        if ctx.state.get("blocked_senders", address) is not None:
            raise ToolError("conflict", f"You have blocked {address}; unblock it before emailing it.")
        if address not in out:
            out.append(address)
    return out


def _thread_of(message_id: str) -> str:
    return "th-" + message_id.split("-", 1)[-1]


def _attachments_of(ctx: Any, message_id: str) -> list[dict[str, Any]]:
    """The files of a message, refused as a whole if the scanner blocked one of them."""
    files = [att for _, att in sorted(ctx.state.records("attachments").items()) if att.get("message_id") == message_id]
    for att in files:
        if att.get("scan_status") == "malicious":
            raise ToolError("conflict", f"{att.get('filename')} was blocked by the attachment scanner and cannot be sent.")
    return files


def _copy_attachments(ctx: Any, files: list[dict[str, Any]], new_message_id: str) -> list[str]:
    copied = []
    for att in files:
        new_id = ctx.new_id("attachments")
        ctx.state.put("attachments", new_id, {**att, "attachment_id": new_id, "message_id": new_message_id})
        copied.append(att.get("filename", new_id))
    return copied


def _write(ctx: Any, *, to: list[str], cc: list[str], bcc: list[str], subject: str, body: str,
           thread_id: str | None = None, in_reply_to: str | None = None) -> dict[str, Any]:
    if not (to or cc or bcc):
        raise ToolError("invalid_request", "Give at least one recipient.")
    message_id = ctx.new_id("messages")
    message = {
        "message_id": message_id,
        "thread_id": thread_id or _thread_of(message_id),
        "folder": "sent",
        "from_name": ctx.values.get("user_name", ""),
        "from_addr": ctx.values.get("user_email", ""),
        "to": to,
        "cc": cc,
        "bcc": bcc,
        "subject": subject,
        "body": body,
        "sent_at": ctx.now,
        "read": True,
        "starred": False,
        "labels": [],
        "delivery_status": "sent",
    }
    if in_reply_to:
        message["in_reply_to"] = in_reply_to
    ctx.state.put("messages", message_id, message)
    return message


def _sent(message: dict[str, Any], attachments: list[str]) -> dict[str, Any]:
    return {"sent": {k: message[k] for k in ("message_id", "thread_id", "to", "cc", "bcc", "subject", "sent_at")},
            "attachments": attachments}


def _original(ctx: Any, message_id: str) -> dict[str, Any]:
    message = ctx.record("messages", message_id, f"No message with message_id {message_id!r}.")
    return message


@custom_tool("email.send_message")
def send_message(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """A new message (new conversation), optionally with files copied from a received message."""
    to = _addresses(ctx, args.get("to"), "to")
    cc = _addresses(ctx, args.get("cc"), "cc")
    bcc = _addresses(ctx, args.get("bcc"), "bcc")
    source = args.get("attach_from_message_id")
    files = []
    if source is not None:
        _original(ctx, source)
        files = _attachments_of(ctx, source)
    message = _write(ctx, to=to, cc=cc, bcc=bcc, subject=args["subject"], body=args["body"])
    attachments = _copy_attachments(ctx, files, message["message_id"])
    return _sent(message, attachments)


@custom_tool("email.reply_to_message")
def reply_to_message(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Reply in the same conversation: to the sender, or with reply_all also to everyone else on it but you."""
    original = _original(ctx, args["message_id"])
    me = _me(ctx)
    sender = str(original.get("from_addr", "")).casefold()
    if sender == me:  # replying to your own sent message goes to its recipients
        to = [a for a in original.get("to", []) if a.casefold() != me]
    else:
        to = [original.get("reply_to") or sender]
    cc: list[str] = []
    if args.get("reply_all"):
        for address in list(original.get("to", [])) + list(original.get("cc", [])):
            if address.casefold() != me and address.casefold() not in [t.casefold() for t in to + cc]:
                cc.append(address)
    subject = str(original.get("subject", ""))
    if not subject.lower().startswith("re:"):
        subject = "Re: " + subject
    message = _write(ctx, to=_addresses(ctx, to, "to"), cc=_addresses(ctx, cc, "cc"), bcc=[], subject=subject,
                     body=args["body"], thread_id=original.get("thread_id"), in_reply_to=original["message_id"])
    return _sent(message, [])


@custom_tool("email.forward_message")
def forward_message(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Forward a message with its attachments (unless include_attachments is false) and an optional note."""
    original = _original(ctx, args["message_id"])
    to = _addresses(ctx, args.get("to"), "to")
    cc = _addresses(ctx, args.get("cc"), "cc")
    subject = str(original.get("subject", ""))
    if not subject.lower().startswith("fwd:"):
        subject = "Fwd: " + subject
    quoted = (f"---------- Forwarded message ----------\nFrom: {original.get('from_name', '')} "
              f"<{original.get('from_addr', '')}>\nDate: {original.get('sent_at', '')}\nSubject: "
              f"{original.get('subject', '')}\n\n{original.get('body', '')}")
    note = args.get("note") or ""
    body = f"{note}\n\n{quoted}" if note else quoted
    keep = args.get("include_attachments", True)
    files = _attachments_of(ctx, original["message_id"]) if keep else []
    message = _write(ctx, to=to, cc=cc, bcc=[], subject=subject, body=body)
    attachments = _copy_attachments(ctx, files, message["message_id"])
    return _sent(message, attachments)
