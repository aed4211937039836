"""The scripted tool agent of AbstainTools: reads the request, looks things up, commits, replies; or abstains.

It sees only what any agent sees: the observations and ``info["tools"]`` (the schemas), never a task's label,
payload or the tools' kinds. It picks the action tool by the request's verb, finds the target record with search and
list tools, inspects it before acting, and fills arguments from the request and from lookups. It abstains on cues it
can read: a vague verb, sensitive or sweeping requests, constraints that cannot both hold, a value the request
never gives, no tool for the verb (before any call); several matching records, failing tools, records that
disagree, risk flags or a large audience (after looking). ``abstain=False`` ignores every cue and guesses. It is a
baseline with its own cue lists, not an oracle.
"""

from __future__ import annotations

import json
import re
from collections.abc import Generator
from typing import Any

from agentabstain_gym.core.actions import abstain as abstain_action
from agentabstain_gym.core.actions import tool_call
from agentabstain_gym.envs.tools import reading

Script = Generator[str, str, None]
_VERBS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (r"\b(decline|accept|rsvp|tentatively)\b", ("respond", "rsvp", "accept", "decline", "reply")),
    (r"\b(cancel|call off)\b", ("cancel", "delete", "remove")),
    (r"\b(move|reschedule|push|shift|postpone)\b", ("update", "move", "reschedule", "edit")),
    (r"\b(invite)\b", ("update", "invite", "edit")),
    (r"\b(book|schedule|set up|arrange|organi[sz]e|create)\b", ("create", "book", "schedule")),
    (r"\b(change|update|set|make|rename|switch|edit|add|put|hide)\b", ("update", "set", "edit", "change")),
    (r"\b(send|email|message|post|share)\b", ("send", "post", "share", "message")),
    (r"\b(delete|remove|erase)\b", ("delete", "remove")),
    (r"\b(transfer|pay)\b", ("transfer", "pay")),
)
_QUESTION = re.compile(r"^(what|which|when|who|where|how|is|are|does|do|did|tell me|show me)\b", re.IGNORECASE)
_VAGUE = re.compile(r"\b(deal with|sort out|take care of|clean up|clear out|tidy up|do something about|"
                    r"look after|fix up)\b", re.IGNORECASE)
_SENSITIVE = re.compile(r"\b(salary|password|passcode|social security|national insurance|bank details|credit card|"
                        r"home address|diagnosis|all[- ]hands|everyone at|whole company|all (?:staff|employees|"
                        r"customers|users|contacts)|every (?:customer|user|employee)|permanently|wipe)\b",
                        re.IGNORECASE)
_RISK = re.compile(r"\b(critical|legal|hold|do not|don't|unrecognised|unrecognized|wasn't you|was not you|"
                   r"compromised|suspicious|security)\b", re.IGNORECASE)
_MOVED = re.compile(r"\b(moved|changed|shifted|rescheduled)\b[^.]*?\b(\d{1,2}(?::\d{2})?\s*(?:am|pm)|noon)",
                    re.IGNORECASE)
#: A clock time in free text ("1 pm", "1-2 pm", "12:30pm"): its first hour and minutes are the start it states.
_STATED_TIME = re.compile(r"\b(\d{1,2})(?::(\d{2}))?\s*(?:-\s*\d{1,2}(?::\d{2})?\s*)?(am|pm)\b", re.IGNORECASE)
#: A room as calendar records write it ("Birch (HQ 4)").
_STATED_ROOM = re.compile(r"\b([A-Z][a-z]+) \(HQ \d+\)")
_AUDIENCE_FIELDS = ("registrants", "recipients", "members", "subscribers", "audience")
_GENERIC = {"invite", "invitation", "meeting", "meetings", "appointment", "call", "event", "my", "the", "a", "an",
            "on", "in", "to", "for", "with", "of", "at", "is", "what", "which", "when", "who", "time", "room",
            "does", "start", "what's", "whats", "number", "dial", "dial-in", "friday's", "thursday's", "and"}
_COMMIT_STEMS = ("create", "update", "cancel", "delete", "remove", "respond", "send", "set", "book", "transfer",
                 "move", "post", "share", "edit", "change", "add", "pay", "reply", "invite", "schedule")


def _disagrees(description: str, record: dict[str, Any]) -> bool:
    """Whether a record's description states a start time or a room other than the record's own fields."""
    time = _STATED_TIME.search(description)
    start = str(record.get("start") or "")
    if time and len(start) >= 16:
        hour = int(time.group(1)) % 12 + (12 if time.group(3).lower() == "pm" else 0)
        if (hour, int(time.group(2) or 0)) != (int(start[11:13]), int(start[14:16])):
            return True
    room = _STATED_ROOM.search(description)
    return bool(room and record.get("location") and not str(record["location"]).startswith(room.group(1)))


class HeuristicToolSolver:
    """Request -> lookups -> commit -> reply, abstaining on cues (``abstain=False``: never abstains)."""

    name = "heuristic"

    def __init__(self, abstain: bool = True, max_calls: int = 14) -> None:
        self.abstain_enabled = abstain
        self.max_calls = max_calls
        self.reset()

    def reset(self) -> None:
        """Forget the request, the tools and the script for a new episode."""
        self._script: Script | None = None
        self._seen: list[tuple[str, dict[str, Any]]] = []  # what act() was given, to rebuild the script on unpickling
        self.request = ""
        self.tools: dict[str, dict[str, Any]] = {}
        self.calls = 0
        self.now = None
        self.people: list[str] = []

    def __getstate__(self) -> dict[str, Any]:
        """A running generator cannot be pickled: keep the inputs instead; the script is deterministic."""
        return {"abstain_enabled": self.abstain_enabled, "max_calls": self.max_calls, "_seen": list(self._seen)}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.abstain_enabled, self.max_calls = state["abstain_enabled"], state["max_calls"]
        self.reset()
        for observation, info in state["_seen"]:
            self.act(observation, info)

    def act(self, observation: str, info: dict[str, Any]) -> str:
        """The next call or reply of the script the solver writes from the request and the tools."""
        self._seen.append((observation, info))
        if self._script is None:
            self.request = str(info.get("instruction", ""))
            self.now = reading.today(observation)
            self.tools = {s["function"]["name"]: s["function"] for s in info.get("tools", [])}
            self._script = self._run()
            return next(self._script)
        try:
            return self._script.send(observation)
        except StopIteration:
            return "respond[Done.]"

    # ----- small helpers -------------------------------------------------------------------------------------------
    def _stop(self, reason: str) -> bool:
        return self.abstain_enabled and bool(reason)

    def _call(self, name: str, **arguments: Any) -> Generator[str, str, Any]:
        self.calls += 1
        observation = yield tool_call(name, **{k: v for k, v in arguments.items() if v is not None})
        try:
            return json.loads(observation)
        except ValueError:
            return {"error": {"code": "unreadable", "message": observation[:200]}}

    def _params(self, tool: str) -> dict[str, Any]:
        return self.tools.get(tool, {}).get("parameters", {}).get("properties", {})

    def _tool(self, *prefixes: str, noun: str = "") -> str | None:
        names = [t for t in self.tools if t.startswith(prefixes)]
        preferred = [t for t in names if noun and noun in t]
        return (preferred or names or [None])[0]

    def _day(self) -> str | None:
        day = reading.mentioned_date(self.request, self.now)
        return day.isoformat() if day else None

    # ----- reading the request ---------------------------------------------------------------------------------
    def _verb_stems(self) -> tuple[str, ...] | None:
        for pattern, stems in _VERBS:
            if re.search(pattern, self.request, re.IGNORECASE):
                return stems
        return None

    def _request_cue(self, informational: bool) -> str:
        text = self.request
        if _VAGUE.search(text):
            return "the request does not say exactly what to do; which action do you want?"
        if _SENSITIVE.search(text):
            return "this would expose sensitive information or affect many people; please confirm first"
        window, minutes = reading.window(text), reading.duration_minutes(text)
        if window and minutes and minutes > (window[1][0] - window[0][0]) * 60 + window[1][1] - window[0][1]:
            return f"a {minutes}-minute slot does not fit in that window"
        low = text.lower()
        if "private" in low and re.search(r"visible to everyone|\bpublic\b|everyone can see", low):
            return "a private profile cannot show that to everyone; which do you want?"
        if informational:
            return ""
        stems = self._verb_stems()
        if stems is not None and not any(s in t for t in self.tools if t.startswith(_COMMIT_STEMS) for s in stems):
            return "none of the available tools can do this"
        if re.search(r"\b(change|update|rename|set)\b", low) and not re.search(r"\bto\b|'|\"|@|\b(private|public)\b",
                                                                              low):
            return "the request does not say what to change it to"
        return ""

    # ----- the script --------------------------------------------------------------------------------------------
    def _run(self) -> Script:
        informational = bool(_QUESTION.search(self.request.strip())) or self.request.strip().endswith("?")
        cue = self._request_cue(informational)
        if self._stop(cue):
            yield abstain_action(cue)
            return
        if informational:
            yield from self._answer()
        else:
            yield from self._operate()

    def _search_words(self) -> str:
        text = reading.QUOTED.sub(" ", self.request)
        for person in self.people:
            text = text.replace(person, " ")
        text = re.sub(r"\b(\d{1,2}(:\d{2})?\s*(am|pm)|\d+[- ]minute|between .*|to (the )?\w+ room)\b", " ", text,
                      flags=re.IGNORECASE)
        for day in reading.WEEKDAYS:
            text = re.sub(rf"\b{day}('s)?\b", " ", text, flags=re.IGNORECASE)
        words = [w for w in re.findall(r"[\w:'-]+", text) if w.lower() not in _GENERIC]
        stems = self._verb_stems() or ()
        verbs = {"cancel", "move", "decline", "accept", "invite", "book", "change", "make", "add", "delete"}
        return " ".join(w for w in words if w.lower() not in verbs and not any(w.lower().startswith(s) for s in stems))

    def _find(self, noun: str = "") -> Generator[str, str, tuple[list[dict[str, Any]], str]]:
        """Candidate records for the request: search first, then a dated listing filtered by words."""
        day = self._day()
        query = self._search_words()
        search = self._tool("search_", "find_", noun=noun)
        results: list[dict[str, Any]] = []
        if search and query:
            params = self._params(search)
            args = {"query": query} if "query" in params else {}
            if day and "date_from" in params:
                args.update(date_from=day, date_to=day)
            data = yield from self._call(search, **args)
            if "error" in data:
                return [], self._error_cue(data)
            results = data.get("results", [])
        lister = self._tool("list_", noun=noun)
        if not results and lister and day and "date_from" in self._params(lister):
            data = yield from self._call(lister, date_from=day, date_to=day)
            if "error" in data:
                return [], self._error_cue(data)
            results = self._filter(data.get("results", []))
        return results, ""

    def _filter(self, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        low = self.request.lower()
        wanted = reading.times(self.request)
        if wanted and not reading.window(self.request):
            hh, mm = wanted[0]
            records = [r for r in records if reading.clock(str(r.get("start", ""))) == f"{hh:02d}:{mm:02d}"]
        elif "afternoon" in low:
            records = [r for r in records if "12:00" <= reading.clock(str(r.get("start", ""))) < "17:00"]
        elif "morning" in low:
            records = [r for r in records if reading.clock(str(r.get("start", ""))) < "12:00"]
        words = [w.lower() for w in self._search_words().split() if len(w) > 2]
        if words and not wanted and "afternoon" not in low and "morning" not in low:
            records = [r for r in records if any(w in json.dumps(r).lower() for w in words)]
        return records

    def _key_of(self, record: dict[str, Any]) -> str | None:
        """The id field a get tool takes for this record (e.g. event_id), if there is such a tool."""
        for tool in self.tools:
            if tool.startswith("get_"):
                key = next((p for p in self._params(tool) if p in record), None)
                if key:
                    return key
        return None

    def _error_cue(self, data: dict[str, Any]) -> str:
        code = data.get("error", {}).get("code", "")
        return f"a tool failed ({code}): {data.get('error', {}).get('message', '')}"

    def _inspect(self, summary: dict[str, Any], key: str) -> Generator[str, str, tuple[dict[str, Any], str]]:
        """Fetch the record's details (if a get tool exists) and look for risks and disagreements."""
        getter = next((t for t in self.tools if t.startswith("get_") and key in self._params(t)), None)
        record = dict(summary)
        if getter is not None:
            data = yield from self._call(getter, **{key: summary[key]})
            if "error" in data:
                return record, self._error_cue(data)
            for field in ("location", "start", "end", "title"):
                if field in summary and field in data and summary[field] != data[field]:
                    return data, f"the sources disagree about the {field} ({summary[field]} vs {data[field]})"
            record = data
        return record, self._record_cue(record)

    def _record_cue(self, record: dict[str, Any]) -> str:
        tags = " ".join(map(str, record.get("tags", []) or []))
        if _RISK.search(tags):
            return f"the record is flagged ({tags}); please review before I act"
        for field, value in sorted(record.items()):
            if field in _AUDIENCE_FIELDS and isinstance(value, int) and value >= 50:
                return f"this affects {value} people ({field}); please confirm"
            if isinstance(value, str) and field not in ("title", "location") and _RISK.search(value) \
                    and len(value) > 30:
                return f"the {field} says: {value[:120]}"
            if isinstance(value, str) and field == "description" and (_MOVED.search(value)
                                                                    or _disagrees(value, record)):
                return f"the description disagrees with the record: {value[:120]}"
        return ""

    # ----- informational -----------------------------------------------------------------------------------------
    def _answer(self) -> Script:
        records, cue = yield from self._find()
        if not records and not cue:
            getter = next((t for t in self.tools if t.startswith("get_") and not self._params(t)), None)
            if getter is not None:
                data = yield from self._call(getter)
                cue = self._error_cue(data) if "error" in data else ""
                records = [] if cue else [data]
        if cue and self._stop(cue):
            yield abstain_action(cue)
            return
        if len(records) > 1 and self._stop("several records match"):
            yield abstain_action(f"{len(records)} records match; which one do you mean?")
            return
        if not records:
            yield "respond[I could not find that.]" if not self.abstain_enabled else abstain_action(
                "I could not find what you asked about")
            return
        record = records[0]
        key = self._key_of(record)
        if key:
            record, cue = yield from self._inspect(record, key)
            if cue and self._stop(cue):
                yield abstain_action(cue)
                return
        yield f"respond[{self._value(record)}]"

    def _value(self, record: dict[str, Any]) -> str:
        low = self.request.lower()
        if re.search(r"\b(phone|number|dial)", low):
            for field in sorted(record, key=lambda f: ("phone" not in f and "conference" not in f, f)):
                m = reading.PHONE.search(str(record[field]))
                if m:
                    return m.group(0)
        if re.search(r"\b(room|where|location)\b", low) and record.get("location"):
            return str(record["location"])
        if re.search(r"\b(what time|when|start)\b", low) and record.get("start"):
            return reading.clock(str(record["start"]))
        if re.search(r"\bwho\b", low) and record.get("organizer"):
            return f"{record.get('title', '')}, organised by {record['organizer']}"
        return str(record.get("title") or record.get("name") or json.dumps(record)[:200])

    # ----- operational -------------------------------------------------------------------------------------------
    def _operate(self) -> Script:
        stems = self._verb_stems() or ("update",)
        action = next((t for s in stems for t in self.tools if s in t and t.startswith(_COMMIT_STEMS)), None)
        if action is None:
            yield "respond[I could not find a way to do that.]"
            return
        params = self._params(action)
        key = next((p for p in self.tools[action]["parameters"].get("required", []) if p.endswith("_id")), None)
        noun = action.split("_", 1)[-1].rstrip("s")
        args, cue = yield from self._arguments(action, params)
        if cue and self._stop(cue):
            yield abstain_action(cue)
            return
        targets: list[dict[str, Any]] = [{}]
        if key is not None and key not in args:
            targets, cue = yield from self._find(noun)
            if cue and self._stop(cue):
                yield abstain_action(cue)
                return
            plural = bool(re.search(r"\b(meetings|events|all)\b", self.request, re.IGNORECASE))
            if len(targets) > 1 and not plural and self._stop("several records match"):
                yield abstain_action(f"{len(targets)} records match the request; which one do you mean?")
                return
            targets = targets if plural else targets[:1]
            if not targets:
                yield abstain_action("I could not find what the request refers to") if self.abstain_enabled \
                    else "respond[I could not find it.]"
                return
        else:
            getter = next((t for t in self.tools if t.startswith("get_") and not self._params(t)), None)
            if getter is not None:  # look at the current state before changing it
                current = yield from self._call(getter)
                cue = self._error_cue(current) if "error" in current else self._record_cue(current)
                if cue and self._stop(cue):
                    yield abstain_action(cue)
                    return
                if "bio" in args and isinstance(current.get("bio"), str) and re.search(r"\badd\b", self.request,
                                                                                         re.IGNORECASE):
                    args["bio"] = f"{current['bio'].rstrip()} {args['bio']}".strip()
        for target in targets:
            call = dict(args)
            if key is not None and key in target:
                record, cue = yield from self._inspect(target, key)
                if cue and self._stop(cue):
                    yield abstain_action(cue)
                    return
                call[key] = target[key]
                call.update(self._from_record(action, record, call))
            result = yield from self._call(action, **call)
            if "error" in result and self._stop("error"):
                yield abstain_action(f"I could not complete it: {result['error'].get('message', '')}")
                return
        yield "respond[Done.]"

    def _arguments(self, action: str, params: dict[str, Any]) -> Generator[str, str, tuple[dict[str, Any], str]]:
        """Values the request gives for the action's parameters (and lookups of people and rooms it names)."""
        low, args = self.request.lower(), {}
        for name, schema in params.items():
            enum = schema.get("enum") or []
            hit = next((v for v in enum if isinstance(v, str) and re.search(rf"\b{re.escape(v[:5].lower())}", low)),
                       None)
            if hit is not None and (name.split("_")[0] in low or name in ("response", "status")):
                args[name] = hit
            elif "email" in name and reading.EMAIL.search(self.request):
                args[name] = reading.EMAIL.search(self.request).group(0).rstrip(".")
            elif "handle" in name and reading.HANDLE.search(self.request):
                args[name] = reading.HANDLE.search(self.request).group(1)
            elif name in ("bio", "description", "text", "body") and reading.quoted(self.request):
                args[name] = reading.quoted(self.request)[0]
            elif name.replace("_", " ") in low:
                m = re.search(rf"{name.replace('_', ' ')} to (.+?)(?:\s+if\b|,|\.$|$)", self.request, re.IGNORECASE)
                if m:
                    args[name] = m.group(1).strip()
        day = self._day()
        if "start" in params and "end" in params and day:
            window, minutes = reading.window(self.request), reading.duration_minutes(self.request)
            if window:
                (h1, m1), _ = window
                args["start"] = f"{day}T{h1:02d}:{m1:02d}"
                total = minutes or 60
                args["end"] = f"{day}T{(h1 * 60 + m1 + total) // 60:02d}:{(m1 + total) % 60:02d}"
        if "title" in params and "title" not in args:
            m = re.search(r"\ban?\s+(?:\d+[- ]\w+\s+)?([a-z][a-z ]+?)\s+(?:with|on|for|at|in|between)\b", low)
            if m:
                args["title"] = m.group(1).strip().capitalize()
        cue = ""
        adds_people = action.startswith(("create", "book", "schedule", "invite")) or bool(re.search(r"\binvite\b", low))
        if "attendees" in params and adds_people and self._tool("lookup_", "find_contact"):
            people = re.search(r"\b(?:with|invite)\s+(.+?)(?:\s+(?:on|to|in|at|between|for)\b|[.?]|$)", self.request,
                               re.IGNORECASE)
            found = []
            for person in re.split(r",\s*|\s+and\s+", people.group(1)) if people else []:
                data = yield from self._call(self._tool("lookup_", "find_contact") or "", query=person.strip())
                matches = data.get("results", []) if "error" not in data else []
                words = set(person.casefold().split())
                exact = [m for m in matches if words <= set(str(m.get("name", "")).casefold().split())]
                matches = exact or matches
                self.people.append(person.strip())
                if len(matches) != 1:
                    cue = cue or f"{len(matches)} contacts match {person!r}"
                if matches:
                    found.append(matches[0].get("email"))
            if found:
                args["attendees"] = found
        if "room_id" in params and re.search(r"\b(room|in [A-Z])", self.request):
            lister = self._tool("list_", noun="room")
            if lister:
                data = yield from self._call(lister)
                for room in data.get("results", []):
                    if re.search(rf"\b{re.escape(str(room.get('name', '')))}\b", self.request):
                        args["room_id"] = room.get("room_id")
        return args, cue

    def _from_record(self, action: str, record: dict[str, Any], call: dict[str, Any]) -> dict[str, Any]:
        """Arguments that depend on the target: a new time keeps the duration; new attendees keep the old ones."""
        out: dict[str, Any] = {}
        params = self._params(action)
        when = reading.target_time(self.request)
        if when and "start" in params and record.get("start") and record.get("end"):
            day = str(record["start"])[:10]
            length = int(str(record["end"])[11:13]) * 60 + int(str(record["end"])[14:16]) \
                - int(str(record["start"])[11:13]) * 60 - int(str(record["start"])[14:16])
            total = when[0] * 60 + when[1] + length
            out["start"] = f"{day}T{when[0]:02d}:{when[1]:02d}"
            out["end"] = f"{day}T{total // 60:02d}:{total % 60:02d}"
        if "attendees" in params and "attendees" in call and record.get("attendees"):
            out["attendees"] = sorted(set(record["attendees"]) | set(call["attendees"]))
        return out
