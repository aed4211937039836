"""The web shop's pages as data: one list of elements renders to HTML (from ``data/web/pages.json``) and to the
text modes, so the text an agent reads is exactly what BeautifulSoup extracts from the HTML (a test holds the two
equal on every kind of page; the env builds the text directly because parsing HTML on every step would cost more
than the rest of the step).

Text modes, as WebShop: ``text`` joins the visible strings with `` [SEP] ``; ``text_rich`` marks buttons as
``[button] X [button_]`` and chosen options as ``[clicked button] X [clicked button_]``.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from agentabstain_gym.envs.web.catalogue import Product
from agentabstain_gym.envs.web.vocab import load_data

SEP = " [SEP] "
OBSERVATION_MODES = ("text", "text_rich", "html")
RESULTS_PER_PAGE = 10
CLICKABLE_KINDS = ("button", "selected", "link", "search")
SUB_PAGES = ("description", "features", "reviews")


def clean(text: str) -> str:
    """One line, single spaces: what a browser shows of a string."""
    return " ".join(str(text).split())


@dataclass(frozen=True)
class Element:
    kind: str
    text: str
    value: str = ""


@dataclass
class Page:
    """A page: its kind, titled sections of elements, and the buttons an agent may click (lower case)."""

    kind: str
    sections: list[tuple[str, list[Element]]] = field(default_factory=list)

    def add(self, cls: str, *elements: Element) -> None:
        self.sections.append((cls, [e for e in elements if e.text]))

    def elements(self) -> Iterable[Element]:
        for _, elements in self.sections:
            yield from elements

    def clickables(self) -> list[str]:
        return [e.text.lower() for e in self.elements() if e.kind in CLICKABLE_KINDS]

    def text(self) -> str:
        return SEP.join(e.text for e in self.elements())

    def text_rich(self) -> str:
        return SEP.join(_rich(e.kind, e.text) for e in self.elements())

    def html(self) -> str:
        templates = load_data("pages")
        element_t, section_t = templates["elements"], templates["section"]
        body = "\n".join(
            section_t.format(cls=cls, content="\n".join(
                element_t[e.kind].format(text=html.escape(e.text), value=html.escape(e.value or e.text.lower()))
                for e in elements))
            for cls, elements in self.sections)
        return templates["document"].format(title=html.escape(templates["titles"][self.kind]), body=body)

    def render(self, mode: str) -> str:
        if mode == "html":
            return self.html()
        return self.text_rich() if mode == "text_rich" else self.text()


def _rich(kind: str, text: str) -> str:
    if kind == "selected":
        return f"[clicked button] {text} [clicked button_]"
    if kind in CLICKABLE_KINDS:
        return f"[button] {text} [button_]"
    return text


def extract_text(page_html: str, mode: str = "text") -> str:
    """What BeautifulSoup reads from a page's body: visible strings joined by ``[SEP]`` (``text_rich``: with
    button markers). The reference for the env's text modes."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(page_html, "html.parser")
    parts = []
    for string in soup.body.find_all(string=True) if soup.body else []:
        text = clean(string)
        if not text:
            continue
        parent = string.parent
        if mode == "text_rich" and parent is not None and parent.name in ("button", "a"):
            kind = "selected" if "selected" in (parent.get("class") or []) else "button"
            text = _rich(kind, text)
        parts.append(text)
    return SEP.join(parts)


def _head(instruction: str) -> list[Element]:
    return [Element("label", "Instruction:"), Element("instruction", clean(instruction))]


def search_page(instruction: str) -> Page:
    page = Page("search")
    page.add("header", Element("brand", "WebShop"), *_head(instruction))
    page.add("search-bar", Element("search", "Search"))
    return page


def results_page(instruction: str, products: Sequence[Product], page_no: int, total: int) -> Page:
    page = Page("results")
    page.add("header", *_head(instruction))
    last = max(1, -(-total // RESULTS_PER_PAGE))
    nav = [Element("button", "Back to Search"), Element("text", f"Page {page_no} (Total results: {total})")]
    if page_no > 1:
        nav.append(Element("button", "< Prev"))
    if page_no < last:
        nav.append(Element("button", "Next >"))
    page.add("navigation", *nav)
    if not products:
        page.add("results", Element("text", "No products match this search."))
    for p in products:
        page.add("result", Element("link", p.asin, p.asin.lower()), Element("text", clean(p.title)),
                 Element("text", f"${p.price:.2f}"))
    return page


def _item_head(instruction: str) -> Page:
    page = Page("item")
    page.add("header", *_head(instruction))
    page.add("navigation", Element("button", "Back to Search"), Element("button", "< Prev"))
    return page


def item_page(instruction: str, product: Product, chosen: dict[str, str]) -> Page:
    page = _item_head(instruction)
    for group, values in product.options.items():
        page.add(f"options {group}", Element("label", group),
                 *(Element("selected" if chosen.get(group) == v else "button", v) for v in values))
    rating = "N.A." if product.rating is None else f"{product.rating:.1f}"
    # a shop shows what is chosen; without this line the plain text mode could not tell a click did anything
    picked = "; ".join(f"{g}: {v}" for g, v in chosen.items())
    page.add("product", Element("heading", clean(product.title)), Element("text", f"Price: ${product.price:.2f}"),
             Element("text", f"Rating: {rating}"), Element("text", f"Selected: {picked}" if picked else ""))
    page.add("actions", Element("button", "Description"), Element("button", "Features"),
             Element("button", "Reviews"), Element("button", "Buy Now"))
    return page


def sub_page(instruction: str, product: Product, which: str) -> Page:
    page = _item_head(instruction)
    page.kind = "sub"
    if which == "description":
        page.add("description", Element("text", clean(product.description)))
    elif which == "features":
        page.add("features", *(Element("item", clean(b)) for b in product.bullets))
    else:
        reviews = [Element("item", clean(f"{name} rated it {stars} out of 5: {text}"))
                   for name, stars, text in product.reviews]
        page.add("reviews", *(reviews or [Element("text", "No reviews yet.")]))
    return page


def done_page(product: Product, chosen: dict[str, str]) -> Page:
    page = Page("done")
    picked = "; ".join(f"{g}: {v}" for g, v in chosen.items()) or "none chosen"
    page.add("order", Element("heading", "Thank you for shopping with us!"), Element("label", "Your order:"),
             Element("text", clean(product.title)), Element("text", f"Options: {picked}"),
             Element("text", f"Price: ${product.price:.2f}"))
    return page
