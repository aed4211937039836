"""SecurityPrivacy logic the generic operations cannot express: a security checkup that scores the account from
several collections at once (idle sessions, unused app passwords and sign-in methods, recent failed sign-ins,
breached addresses against the password's age), and a breach check that matches the account's addresses against
the breach catalogue. Both are read-only and deterministic: "now" is the frozen sandbox clock.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from agentabstain_gym.envs.tools.custom import custom_tool
from agentabstain_gym.envs.tools.errors import ToolError

IDLE_SESSION_DAYS = 45
UNUSED_APP_PASSWORD_DAYS = 60
UNUSED_METHOD_DAYS = 180
FAILED_WINDOW_DAYS = 14
STRONG_METHODS = ("passkey", "security_key", "authenticator_app")


def _account(ctx: Any) -> dict[str, Any]:
    account = ctx.record("accounts", str(ctx.values.get("account_id", "")), "No account is signed in.")
    return account


def _when(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    return datetime.fromisoformat(value if "T" in value else value + "T00:00")


def _days_since(now: datetime, value: Any) -> int | None:
    moment = _when(value)
    return None if moment is None else (now - moment).days


def _own_emails(account: dict[str, Any]) -> list[str]:
    return [str(e) for e in (account.get("email"), account.get("recovery_email")) if e]


def _exposures(ctx: Any, account: dict[str, Any], emails: list[str]) -> list[dict[str, Any]]:
    wanted = {e.casefold(): e for e in emails}
    changed = str(account.get("password_changed") or "")
    out = []
    for _, breach in sorted(ctx.state.records("breaches").items()):
        affected = {str(a).casefold() for a in breach.get("affected_emails", [])}
        for folded, email in wanted.items():
            if folded not in affected:
                continue
            types = [str(t) for t in breach.get("data_types", [])]
            out.append({
                "breach_id": breach["breach_id"],
                "site": breach["site"],
                "breach_date": breach["breach_date"],
                "disclosed": breach["disclosed"],
                "email": email,
                "data_types": types,
                "passwords_exposed": any("password" in t for t in types),
                "password_changed_since": bool(changed) and changed > str(breach["breach_date"]),
            })
    out.sort(key=lambda e: (str(e["breach_date"]), e["breach_id"], e["email"]), reverse=True)
    return out


@custom_tool("security_privacy.check_breach_exposure")
def check_breach_exposure(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Which known breaches contain the account's addresses; a breach that exposed passwords counts as
    unresolved until the account password has been changed after it."""
    account = _account(ctx)
    emails = _own_emails(account)
    if args.get("email"):
        asked = str(args["email"]).strip()
        if asked.casefold() not in {e.casefold() for e in emails}:
            raise ToolError("not_authorised", f"{asked} is not one of your account's addresses.")
        emails = [asked]
    found = _exposures(ctx, account, emails)
    unresolved = [e for e in found if e["passwords_exposed"] and not e["password_changed_since"]]
    return {"checked": emails, "password_changed": account.get("password_changed"),
            "breaches_found": len(found), "unresolved": len(unresolved), "breaches": found}


def _finding(area: str, severity: str, text: str, penalty: int) -> dict[str, Any]:
    return {"area": area, "severity": severity, "finding": text, "points": -penalty}


@custom_tool("security_privacy.run_security_checkup")
def run_security_checkup(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Score = 100 minus a penalty per finding (capped per area), from the account, sessions, app passwords,
    sign-in methods, the last 14 days of sign-in events and the breach catalogue."""
    account = _account(ctx)
    now = datetime.fromisoformat(ctx.now)
    findings: list[dict[str, Any]] = []

    if not account.get("two_step"):
        findings.append(_finding("two_step", "high", "Two-step verification is off.", 25))
    for field, label in (("recovery_email", "recovery email"), ("recovery_phone", "recovery phone")):
        if not account.get(field):
            findings.append(_finding("recovery", "medium", f"No {label} is set.", 10))
    if int(account.get("backup_codes_left") or 0) < 3:
        findings.append(_finding("recovery", "low", f"Only {account.get('backup_codes_left', 0)} backup codes left.", 5))

    penalty = 0
    for _, s in sorted(ctx.state.records("sessions").items()):
        idle = _days_since(now, s.get("last_active"))
        if s.get("status") == "active" and not s.get("current") and idle is not None and idle > IDLE_SESSION_DAYS:
            cost = 5 if penalty < 15 else 0
            penalty += cost
            findings.append(_finding("sessions", "medium",
                                     f"{s['device_label']} ({s['session_id']}) has been idle for {idle} days.", cost))

    penalty = 0
    for _, p in sorted(ctx.state.records("app_passwords").items()):
        if p.get("status") != "active":
            continue
        unused = _days_since(now, p.get("last_used"))
        if unused is None or unused > UNUSED_APP_PASSWORD_DAYS:
            cost = 5 if penalty < 15 else 0
            penalty += cost
            days = "never used" if unused is None else f"unused for {unused} days"
            findings.append(_finding("app_passwords", "medium",
                                     f"App password {p['label']} ({p['app_password_id']}) is {days}.", cost))

    for _, m in sorted(ctx.state.records("sign_in_methods").items()):
        unused = _days_since(now, m.get("last_used"))
        if m.get("status") == "active" and m.get("type") in STRONG_METHODS and unused is not None \
                and unused > UNUSED_METHOD_DAYS:
            findings.append(_finding("sign_in_methods", "low",
                                     f"{m['type'].replace('_', ' ')} {m['name']} ({m['method_id']}) has not been "
                                     f"used for {unused} days.", 3))

    since = now - timedelta(days=FAILED_WINDOW_DAYS)
    bad = [e for _, e in sorted(ctx.state.records("sign_in_events").items())
           if e.get("result") in ("failed", "blocked") and (_when(e.get("at")) or now) >= since]
    if bad:
        places = sorted({str(e.get("location", "unknown")) for e in bad})
        findings.append(_finding("sign_ins", "low" if len(bad) < 5 else "medium",
                                 f"{len(bad)} failed or blocked sign-ins in the last {FAILED_WINDOW_DAYS} days "
                                 f"from: {', '.join(places)}.", 0 if len(bad) < 5 else 5))

    for e in _exposures(ctx, account, _own_emails(account)):
        if e["passwords_exposed"] and not e["password_changed_since"]:
            findings.append(_finding("breaches", "high", f"{e['email']} was in the {e['site']} breach "
                                     f"({e['breach_date']}) and the password has not been changed since.", 20))

    score = max(0, 100 + sum(int(f["points"]) for f in findings))
    rating = "strong" if score >= 85 else "fair" if score >= 65 else "at risk"
    return {"as_of": ctx.now, "score": score, "rating": rating, "findings": findings}
