"""Chat-group logic the generic operations cannot express: adding a person to a group checks the group, the adder's
role and the person, and copies the person's display name into the new membership."""

from __future__ import annotations

from typing import Any

from agentabstain_gym.envs.tools.custom import custom_tool
from agentabstain_gym.envs.tools.errors import ToolError

_ADMIN = ("owner", "admin")


def _membership(ctx: Any, group_id: str, user_id: str) -> dict[str, Any] | None:
    return next((r for _, r in sorted(ctx.state.records("memberships").items())
                 if r.get("group_id") == group_id and r.get("user_id") == user_id), None)


@custom_tool("chat_groups.add_member")
def add_member(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Add a person to a group the signed-in member may add people to."""
    me = str(ctx.values.get("user_id", ""))
    group = ctx.record("groups", args["group_id"], f"No group with group_id {args['group_id']!r}.")
    mine = _membership(ctx, group["group_id"], me)
    if mine is None:
        raise ToolError("not_authorised", f"You are not in {group['name']}.")
    if group.get("status") != "active":
        raise ToolError("conflict", f"{group['name']} is archived.")
    if group.get("who_can_add") != "everyone" and mine.get("role") not in _ADMIN:
        raise ToolError("not_authorised", f"Only admins can add people to {group['name']}.")
    person = ctx.record("users", args["user_id"], f"No person with user_id {args['user_id']!r}.")
    if _membership(ctx, group["group_id"], person["user_id"]) is not None:
        raise ToolError("conflict", f"{person['display_name']} is already in {group['name']}.")
    key = ctx.new_id("memberships")
    membership = {"membership_id": key, "group_id": group["group_id"], "user_id": person["user_id"],
                  "display_name": person["display_name"], "role": "member", "joined_at": ctx.now, "added_by": me}
    ctx.state.put("memberships", key, membership)
    return {"added": membership, "group": {"group_id": group["group_id"], "name": group["name"]}}
