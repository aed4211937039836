"""WebCms logic the generic operations cannot express: SEO scoring, link checking, redirect chains, restoring.

Why custom: an SEO report is computed from the text itself (title and meta description lengths, where the focus
keyword appears and its density, word count, the Flesch reading-ease score from sentence, word and syllable counts,
the hero image's alt text). A link check parses the Markdown links of a body and resolves each internal one through
the redirect table (following chains, detecting loops) to a published page or post. Restoring a revision copies its
fields onto the page or post and saves what it replaces as a new revision, which touches two collections.
"""

from __future__ import annotations

import re
from typing import Any

from agentabstain_gym.envs.tools.custom import custom_tool
from agentabstain_gym.envs.tools.errors import ToolError

_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'\u2019-]*")
_SENTENCE_END = re.compile(r"[.!?]+(?:\s|$)")
_VOWELS = re.compile(r"[aeiouy]+")
_MAX_HOPS = 10

_TITLE_RANGE = (30, 60)
_META_RANGE = (120, 160)
_MIN_WORDS = {"page": 100, "post": 300}
_DENSITY_RANGE = (0.5, 3.0)
_MIN_FLESCH = 50.0


# ----- content and paths -----------------------------------------------------------------------------------------------
def _content(ctx: Any, content_id: str) -> tuple[str, dict[str, Any]]:
    page = ctx.state.get("pages", content_id)
    if page is not None:
        return "page", page
    post = ctx.state.get("posts", content_id)
    if post is not None:
        return "post", post
    raise ToolError("not_found", f"No page or post with id {content_id!r}.")


def _url_of(content_type: str, record: dict[str, Any]) -> str:
    return str(record["path"]) if content_type == "page" else f"/news/{record['slug']}"


def normalize_path(url: str, domain: str) -> str | None:
    """The site path of ``url`` (None for a link to another site)."""
    url = url.strip()
    m = re.match(r"^(?:https?:)?//([^/]+)(.*)$", url, flags=re.IGNORECASE)
    if m:
        host = m.group(1).casefold()
        if host not in (domain.casefold(), f"www.{domain.casefold()}"):
            return None
        url = m.group(2) or "/"
    if not url.startswith("/"):
        return None
    url = re.split(r"[?#]", url, maxsplit=1)[0] or "/"
    if len(url) > 1:
        url = url.rstrip("/") or "/"
    return url.casefold()


def _served(ctx: Any, path: str) -> tuple[str, dict[str, Any]] | None:
    for _, page in sorted(ctx.state.records("pages").items()):
        if str(page.get("path", "")).casefold() == path:
            return "page", page
    if path.startswith("/news/"):
        slug = path[len("/news/"):]
        for _, post in sorted(ctx.state.records("posts").items()):
            if str(post.get("slug", "")).casefold() == slug:
                return "post", post
    if path == "/news":
        return "page", {"page_id": "(post index)", "title": "News", "path": "/news", "status": "published"}
    return None


def follow(ctx: Any, url: str) -> dict[str, Any]:
    """Follow ``url`` through the enabled redirects to where it ends, and what is served there."""
    domain = str(ctx.values.get("site_domain", ""))
    path = normalize_path(url, domain)
    if path is None:
        return {"url": url, "external": True, "outcome": "external", "hops": []}
    table: dict[str, dict[str, Any]] = {}
    for _, r in sorted(ctx.state.records("redirects").items()):
        if r.get("enabled", True):
            source = normalize_path(str(r.get("source", "")), domain)
            if source is not None:
                table.setdefault(source, r)
    hops: list[dict[str, Any]] = []
    seen = {path}
    current = path
    outcome = None
    while current in table:
        r = table[current]
        nxt = normalize_path(str(r.get("target", "")), domain)
        hops.append({"from": current, "to": r.get("target"), "status_code": r.get("status_code"),
                     "redirect_id": r.get("redirect_id")})
        if nxt is None:
            return {"url": url, "external": False, "outcome": "leaves_site", "hops": hops,
                    "final_url": r.get("target")}
        if nxt in seen:
            outcome = "loop"
            current = nxt
            break
        if len(hops) >= _MAX_HOPS:
            outcome = "too_many_hops"
            current = nxt
            break
        seen.add(nxt)
        current = nxt
    out: dict[str, Any] = {"url": url, "external": False, "hops": hops, "final_url": current}
    if outcome is not None:
        out["outcome"] = outcome
        return out
    served = _served(ctx, current)
    if served is None:
        out["outcome"] = "not_found"
        out["http_status"] = 404
        return out
    content_type, record = served
    key = record.get("page_id") if content_type == "page" else record.get("post_id")
    out["content"] = {"content_type": content_type, "id": key, "title": record.get("title"),
                      "status": record.get("status")}
    published = record.get("status") == "published"
    out["outcome"] = "ok" if published else "not_published"
    out["http_status"] = 200 if published else 404
    return out


@custom_tool("web_cms.trace_redirect")
def trace_redirect(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Each redirect hop of a URL, the final address and what it serves."""
    result = follow(ctx, args["url"])
    if result["outcome"] == "external":
        raise ToolError("invalid_request", f"{args['url']!r} is not an address on {ctx.values.get('site_domain')}.")
    return result


@custom_tool("web_cms.check_links")
def check_links(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Every Markdown link of a page or post, with internal ones resolved through redirects."""
    content_type, record = _content(ctx, args["content_id"])
    links = []
    for text, url in _LINK.findall(str(record.get("body", ""))):
        result = follow(ctx, url)
        entry: dict[str, Any] = {"text": text, "url": url, "outcome": result["outcome"]}
        if result.get("hops"):
            entry["redirects"] = len(result["hops"])
            entry["final_url"] = result.get("final_url")
        links.append(entry)
    problems = [x for x in links if x["outcome"] in ("not_found", "not_published", "loop", "too_many_hops")]
    return {"content_id": args["content_id"], "content_type": content_type, "url": _url_of(content_type, record),
            "links": links, "internal": sum(1 for x in links if x["outcome"] != "external"),
            "redirected": sum(1 for x in links if x.get("redirects")), "broken": len(problems), "ok": not problems}


# ----- SEO ------------------------------------------------------------------------------------------------------------
def plain_text(body: str) -> str:
    """Body text with Markdown links reduced to their text and emphasis marks dropped."""
    return re.sub(r"[*_#>`]", "", _LINK.sub(r"\1", body))


def syllables(word: str) -> int:
    """Vowel groups, less a silent final 'e' (at least one)."""
    w = word.casefold().strip("'\u2019-")
    if not w:
        return 0
    if w.isdigit():
        return len(w)
    groups = len(_VOWELS.findall(w))
    if w.endswith("e") and not w.endswith(("le", "ee", "ye")) and groups > 1:
        groups -= 1
    return max(1, groups)


def flesch_reading_ease(text: str) -> tuple[float, int, int, int]:
    """206.835 - 1.015 x words per sentence - 84.6 x syllables per word; with the three counts."""
    words = _WORD.findall(text)
    if not words:
        return 0.0, 0, 0, 0
    sentences = max(1, len(_SENTENCE_END.findall(text.strip() + " ")))
    syl = sum(syllables(w) for w in words)
    score = 206.835 - 1.015 * (len(words) / sentences) - 84.6 * (syl / len(words))
    return round(score, 1), len(words), sentences, syl


def _occurrences(text: str, phrase: str) -> int:
    if not phrase.strip():
        return 0
    pattern = r"(?<![a-z0-9])" + r"\s+".join(re.escape(p) for p in phrase.casefold().split()) + r"(?![a-z0-9])"
    return len(re.findall(pattern, text.casefold()))


@custom_tool("web_cms.run_seo_check")
def run_seo_check(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Search-readiness of a page or post, computed from its text."""
    content_type, record = _content(ctx, args["content_id"])
    title = str(record.get("meta_title") or record.get("title") or "")
    meta = str(record.get("meta_description") or "")
    text = plain_text(str(record.get("body", "")))
    keyword = str(record.get("focus_keyword") or "").strip()
    flesch, words, sentences, syl = flesch_reading_ease(text)
    first_para = text.split("\n\n", 1)[0]
    hits = _occurrences(text, keyword)
    density = round(100.0 * hits * max(1, len(keyword.split())) / words, 2) if words and keyword else 0.0
    checks: list[dict[str, Any]] = []

    def add(name: str, passed: bool, detail: str) -> None:
        checks.append({"name": name, "passed": passed, "detail": detail})

    add("title_length", _TITLE_RANGE[0] <= len(title) <= _TITLE_RANGE[1],
        f"{len(title)} characters (aim for {_TITLE_RANGE[0]}-{_TITLE_RANGE[1]})")
    add("meta_description_length", _META_RANGE[0] <= len(meta) <= _META_RANGE[1],
        f"{len(meta)} characters (aim for {_META_RANGE[0]}-{_META_RANGE[1]})" if meta else "missing")
    minimum = _MIN_WORDS[content_type]
    add("word_count", words >= minimum, f"{words} words (at least {minimum})")
    add("readability", flesch >= _MIN_FLESCH, f"Flesch reading ease {flesch} (at least {_MIN_FLESCH:g})")
    if keyword:
        add("keyword_in_title", _occurrences(title, keyword) > 0, f"'{keyword}' in the title")
        add("keyword_in_meta_description", _occurrences(meta, keyword) > 0, f"'{keyword}' in the meta description")
        add("keyword_in_first_paragraph", _occurrences(first_para, keyword) > 0,
            f"'{keyword}' in the first paragraph")
        add("keyword_density", _DENSITY_RANGE[0] <= density <= _DENSITY_RANGE[1],
            f"{density}% ({hits} uses; aim for {_DENSITY_RANGE[0]}-{_DENSITY_RANGE[1]}%)")
    else:
        add("focus_keyword_set", False, "no focus keyword")
    media_id = record.get("hero_media_id")
    if media_id:
        media = ctx.state.get("media", media_id)
        alt = str((media or {}).get("alt_text") or "")
        add("hero_image_alt_text", bool(alt.strip()),
            f"{(media or {}).get('filename', media_id)}: " + (f"'{alt}'" if alt.strip() else "no alt text"))
    passed = sum(1 for c in checks if c["passed"])
    return {"content_id": args["content_id"], "content_type": content_type, "url": _url_of(content_type, record),
            "score": round(100 * passed / len(checks)), "passed": passed, "total": len(checks),
            "metrics": {"title_characters": len(title), "meta_description_characters": len(meta), "words": words,
                        "sentences": sentences, "syllables": syl, "flesch_reading_ease": flesch,
                        "focus_keyword": keyword or None, "keyword_uses": hits, "keyword_density_pct": density},
            "checks": checks}


# ----- restoring ------------------------------------------------------------------------------------------------------
_RESTORED_FIELDS = ("title", "body", "meta_description")


@custom_tool("web_cms.restore_revision")
def restore_revision(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Copy a revision's title, body and meta description onto its page or post; keep the replaced text."""
    revision = ctx.record("revisions", args["revision_id"], f"No revision with revision_id {args['revision_id']!r}.")
    collection = "pages" if revision.get("content_type") == "page" else "posts"
    current = ctx.record(collection, revision["content_id"], f"The {revision.get('content_type')} {revision['content_id']!r} no longer exists.")
    if current.get("status") == "trashed":
        raise ToolError("conflict", f"{revision['content_id']} is in the trash; restore it from the trash first.")
    user = ctx.values.get("cms_user_id")
    backup_id = ctx.new_id("revisions")
    backup = {"revision_id": backup_id, "content_id": revision["content_id"],
              "content_type": revision.get("content_type"), "saved_at": ctx.now, "saved_by": user,
              "note": f"Replaced when {args['revision_id']} was restored"}
    for name in _RESTORED_FIELDS:
        if current.get(name) is not None:
            backup[name] = current[name]
    ctx.state.put("revisions", backup_id, backup)
    changes = {name: revision[name] for name in _RESTORED_FIELDS if revision.get(name) is not None}
    updated = {**current, **changes, "updated_at": ctx.now}
    if collection == "pages":
        updated["updated_by"] = user
    key = "page_id" if collection == "pages" else "post_id"
    ctx.state.put(collection, current[key], updated)
    return {"updated": {key: current[key], "title": updated.get("title"), "updated_at": ctx.now},
            "restored_from": args["revision_id"], "fields_restored": sorted(changes), "backup_revision": backup_id}
