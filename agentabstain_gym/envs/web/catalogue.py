"""The generated store: a seed and a size give the same catalogue in any process, from 1 to 1,000,000 products.

A product is stored as a few numbers (type, brand, attribute and option bit masks, price, rating, a text seed:
about 20 bytes), drawn in vectorised chunks, so a million products take seconds and tens of megabytes. Its page
text (title, bullets, description, reviews) is rendered from those numbers and the shipped vocabulary only when a
page or the search index needs it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, fields
from functools import cached_property, lru_cache

import numpy as np

from agentabstain_gym.core.fingerprint import canonical_json
from agentabstain_gym.envs.web.matching import Goal, best_choice, normalise, score_purchase
from agentabstain_gym.envs.web.vocab import ProductType, load_data, product_types, title_case

#: The default store size: the smallest round size at which every one of the 430 shipped types has products (with
#: 1,000, 47 types had none and 27 of 251 Missing Target views left no product of the goal's type; measured at
#: 5,000 over data seeds 0-39: no empty type, median 11 products a type, every Missing Target view keeps some).
DEFAULT_PRODUCTS = 5000
_ASIN_SPACE = 36 ** 8
_ASIN_MULT = 2_654_435_761  # coprime with 36**8, so i -> asin is a bijection
_ASIN_INV = pow(_ASIN_MULT, -1, _ASIN_SPACE)
_B36 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_MASK64 = (1 << 64) - 1
_CHUNK = 131_072
#: Largest catalogue the generator is tested for (bigger works but is not promised).
MAX_PRODUCTS = 1_000_000
#: Products hashed at most by :meth:`Catalogue.digest` (all of them up to this size; the default store has 1,000).
DIGEST_PRODUCTS = 5_000


def _uint_for(bits: int) -> type[np.unsignedinteger]:
    """The narrowest unsigned dtype with ``bits`` bits (masks and type ids grow with the vocabulary)."""
    for dtype in (np.uint8, np.uint16, np.uint32, np.uint64):
        if bits <= np.iinfo(dtype).bits:
            return dtype
    raise ValueError(f"{bits} bits do not fit a numpy integer")


def _mix(seed: int, salt: int) -> int:
    """splitmix64 of (seed, salt): cheap, deterministic choices while rendering a product's text."""
    z = (seed * 0x9E3779B97F4A7C15 + salt * 0xBF58476D1CE4E5B9 + 0x94D049BB133111EB) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


@dataclass(frozen=True)
class Product:
    """Everything a product page shows, plus what the reward reads (``attributes``, ``text_lower``)."""

    index: int
    asin: str
    title: str
    price: float
    rating: float | None
    category: str
    product_type: str
    product_category: str
    options: Mapping[str, tuple[str, ...]]
    attributes: tuple[str, ...]
    bullets: tuple[str, ...]
    description: str
    reviews: tuple[tuple[str, int, str], ...]

    @cached_property
    def text_lower(self) -> str:
        """Title, bullets and description in lower case: where an attribute phrase may be found."""
        return " ".join((self.title, *self.bullets, self.description)).lower()

    def score(self, goal: Goal, chosen: Mapping[str, str]) -> float:
        return score_purchase(goal, product_type=self.product_type, category=self.category,
                              attributes=self.attributes, text_lower=self.text_lower, price=self.price,
                              chosen_options=chosen.values()).reward

    def best_reward(self, goal: Goal) -> tuple[float, dict[str, str]]:
        """The highest reward this product can earn for ``goal``, and the option choice that earns it."""
        choice = best_choice(goal, self.options)
        return self.score(goal, choice), choice


def make_title(ptype: ProductType, brand: str, seed: int, attributes: Sequence[str]) -> str:
    """A store title from the brand, one of the type's nouns, the first two attributes and a category tail."""
    text = load_data("text")
    noun = ptype.nouns[_mix(seed, 1) % len(ptype.nouns)]
    tails = text["title_tails"][ptype.category]
    tail = tails[_mix(seed, 2) % len(tails)]
    attrs = [title_case(a) for a in attributes[:2]]
    shape = _mix(seed, 3) % 3
    if not attrs:
        title = f"{brand} {noun}"
    elif attrs[0].startswith(("For ", "With ")):  # a phrase that only reads well after the noun
        title = f"{brand} {noun} {attrs[0]}" + "".join(f", {a}" for a in attrs[1:])
    elif shape == 0:
        title = f"{brand} {attrs[0]} {noun}" + "".join(f", {a}" for a in attrs[1:])
    elif shape == 1:
        title = f"{brand} {noun} - " + ", ".join(attrs)
    else:
        title = f"{attrs[0]} {noun} by {brand}" + "".join(f", {a}" for a in attrs[1:])
    return f"{title}, {tail}" if tail else title


def render_product(*, index: int, asin: str, ptype: ProductType, brand: str, seed: int,
                   attributes: tuple[str, ...], options: Mapping[str, tuple[str, ...]], price: float,
                   rating: int) -> Product:
    """A product's page text from its numbers (``rating`` in tenths of a star, 0 for none): the one renderer of
    generated products and of products synthesised for a task file's goals, so both read alike."""
    text, cat = load_data("text"), ptype.category
    noun = ptype.nouns[_mix(seed, 1) % len(ptype.nouns)]
    openers = text["bullet_openers"][cat]
    bullets = [f"{a.upper()} - {openers[_mix(seed, 10 + i) % len(openers)]}." for i, a in enumerate(attributes)]
    generic = text["generic_bullets"]
    bullets.append(generic[_mix(seed, 20) % len(generic)].format(noun=noun.lower(), brand=brand))
    if attributes:
        attr_list = ", ".join(attributes[:-1]) + (" and " if len(attributes) > 1 else "") + attributes[-1]
    else:
        attr_list = noun.lower()
    opener = openers[_mix(seed, 30) % len(openers)]
    template = text["descriptions"][_mix(seed, 31) % len(text["descriptions"])]
    description = template.format(brand=brand, noun=noun, noun_lower=noun.lower(), attr_list=attr_list,
                                  opener=opener, opener_cap=opener[:1].upper() + opener[1:])
    reviews = []
    names = text["reviewers"]
    for r in range(2 + _mix(seed, 40) % 3 if rating else 0):
        stars = max(1, min(5, round(rating / 10) - (_mix(seed, 41 + r) % 4 == 0) * (1 + r % 2)))
        lines = text["reviews"][str(stars)]
        reviews.append((names[_mix(seed, 50 + r) % len(names)], stars, lines[_mix(seed, 60 + r) % len(lines)]))
    return Product(
        index=index, asin=asin, title=make_title(ptype, brand, seed, attributes), price=price,
        rating=rating / 10 if rating else None, category=cat, product_type=ptype.name,
        product_category=ptype.product_category, options=dict(options), attributes=attributes,
        bullets=tuple(bullets), description=description, reviews=tuple(reviews))


class Catalogue:
    """What the env needs from a store, generated or loaded: products by position, their search documents, and
    the positions of every product that could earn reward 1.0 for a goal."""

    name = "catalogue"

    def __len__(self) -> int:
        raise NotImplementedError

    def product(self, index: int) -> Product:
        raise NotImplementedError

    def document(self, index: int) -> str:
        """The text the search index holds for a product: title, attributes, option values."""
        p = self.product(index)
        values = " ".join(v for vs in p.options.values() for v in vs)
        return f"{p.title} {' '.join(p.attributes)} {values}"

    def documents(self) -> Sequence[str]:
        return _Documents(self)

    def index_of(self, asin: str) -> int | None:
        raise NotImplementedError

    def candidates(self, goal: Goal) -> np.ndarray:
        """Positions of products of the goal's type (only they pass the type gate at 1.0)."""
        raise NotImplementedError

    def satisfying(self, goal: Goal) -> np.ndarray:
        """Sorted positions of every product that can earn reward 1.0 for ``goal`` (checked product by product)."""
        hits = [int(i) for i in self.candidates(goal) if self.product(int(i)).best_reward(goal)[0] >= 1.0]
        return np.asarray(sorted(hits), dtype=np.int64)

    def digest(self, most: int = DIGEST_PRODUCTS) -> str:
        """sha256 of the catalogue as pages show it: every product's fields when there are at most ``most``, else
        ``most`` products at an even stride (a changed generator or vocabulary changes nearly every product, so a
        sample shows it without rendering a million pages). Part of the web ids' benchmark fingerprint."""
        n = len(self)
        stride = max(1, -(-n // most))
        digest = hashlib.sha256(f"{n}:{stride}".encode())
        for index in range(0, n, stride):
            product = self.product(index)
            values = [getattr(product, f.name) for f in fields(product)]
            digest.update(b"\n" + canonical_json(values).encode("utf-8"))
        return digest.hexdigest()


class _Documents(Sequence[str]):
    """A lazy list of search documents, so a million are never held in memory at once."""

    def __init__(self, catalogue: Catalogue) -> None:
        self.catalogue = catalogue

    def __len__(self) -> int:
        return len(self.catalogue)

    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice):
            return [self.catalogue.document(i) for i in range(*index.indices(len(self)))]
        return self.catalogue.document(int(index))

    def __iter__(self) -> Iterator[str]:
        return (self.catalogue.document(i) for i in range(len(self.catalogue)))


class GeneratedCatalogue(Catalogue):
    """``n_products`` products drawn from ``seed`` over the five categories and their product types."""

    name = "generated"

    def __init__(self, seed: int = 0, n_products: int = DEFAULT_PRODUCTS,
                 types: Sequence[ProductType] | None = None) -> None:
        """``types``: the vocabulary to draw from (default: the shipped product types; ids must be 0..n-1)."""
        if not isinstance(n_products, int) or n_products < 1:
            raise ValueError(f"n_products must be a positive integer, got {n_products!r}")
        self.seed, self.n_products = seed, n_products
        self.types: tuple[ProductType, ...] = tuple(types) if types is not None else product_types()
        if [t.type_id for t in self.types] != list(range(len(self.types))) or not self.types:
            raise ValueError("product types must be numbered 0..n-1 in order")
        self._by_name = {t.name: t for t in self.types}
        text = load_data("text")
        self._brands = {c: [p + s for p in b["prefix"] for s in b["suffix"]] for c, b in text["brands"].items()}
        self._text = text
        self._asin_offset = _mix(seed, 0xA5) % _ASIN_SPACE
        self._generate()
        self.product = lru_cache(maxsize=16_384)(self._render)  # type: ignore[method-assign]
        self._by_type: dict[int, np.ndarray] = {}

    def __len__(self) -> int:
        return self.n_products

    # ----- drawing the numbers ---------------------------------------------------------------------------------
    def _generate(self) -> None:
        n, types = self.n_products, self.types
        rng = np.random.default_rng([self.seed, 0x5E0B])
        n_groups = max([1, *(len(t.groups) for t in types)])
        self._attr_dtype = _uint_for(max([1, *(len(t.attributes) for t in types)]))
        self._opt_dtype = _uint_for(max([1, *(len(v) for t in types for v in t.values)]))
        self.type_id = rng.integers(len(types), size=n).astype(_uint_for(max(1, len(types).bit_length())))
        self.attr_mask = np.zeros(n, dtype=self._attr_dtype)
        self.opt_mask = np.zeros((n, n_groups), dtype=self._opt_dtype)
        self.price_cents = np.zeros(n, dtype=np.uint32)
        self.rating = rng.integers(30, 51, size=n).astype(np.uint8)
        self.rating[rng.random(n) < 0.08] = 0  # no rating yet
        self.brand = rng.integers(1 << 15, size=n).astype(np.uint16)
        self.text_seed = rng.integers(1 << 32, size=n, dtype=np.uint64).astype(np.uint32)
        order = np.argsort(self.type_id, kind="stable")
        bounds = np.searchsorted(self.type_id[order], np.arange(len(types) + 1))
        for ptype in types:
            where = order[bounds[ptype.type_id]:bounds[ptype.type_id + 1]]
            for start in range(0, len(where), _CHUNK):
                self._draw_type(rng, ptype, where[start:start + _CHUNK])

    def _draw_type(self, rng: np.random.Generator, ptype: ProductType, idx: np.ndarray) -> None:
        m, n_attr = len(idx), len(ptype.attributes)
        k = np.minimum(rng.integers(3, 6, size=m), n_attr)
        ranks = np.argsort(np.argsort(rng.random((m, n_attr)), axis=1), axis=1)
        adt = self._attr_dtype
        bits = (adt(1) << np.arange(n_attr, dtype=adt))
        self.attr_mask[idx] = ((ranks < k[:, None]) * bits).sum(axis=1, dtype=adt)
        odt = self._opt_dtype
        for g, values in enumerate(ptype.values):
            v = len(values)
            offered = rng.random((m, v)) < 0.5
            offered[np.arange(m), rng.integers(v, size=m)] = True
            vbits = (odt(1) << np.arange(v, dtype=odt))
            self.opt_mask[idx, g] = (offered * vbits).sum(axis=1, dtype=odt)
        lo, hi = ptype.price
        dollars = np.floor(lo + (hi - lo) * rng.beta(2.0, 3.0, size=m))
        cents = np.array([99, 49, 95, 99, 0, 79], dtype=np.uint32)[rng.integers(6, size=m)]
        self.price_cents[idx] = (dollars.astype(np.uint32) * 100 + cents)

    # ----- ids -------------------------------------------------------------------------------------------------
    def asin(self, index: int) -> str:
        x = (index * _ASIN_MULT + self._asin_offset) % _ASIN_SPACE
        chars = []
        for _ in range(8):
            x, r = divmod(x, 36)
            chars.append(_B36[r])
        return "B0" + "".join(reversed(chars))

    def index_of(self, asin: str) -> int | None:
        text = asin.strip().upper()
        if len(text) != 10 or not text.startswith("B0") or any(c not in _B36 for c in text[2:]):
            return None
        x = int(text[2:], 36)
        index = ((x - self._asin_offset) * _ASIN_INV) % _ASIN_SPACE
        return index if index < self.n_products else None

    # ----- rendering -------------------------------------------------------------------------------------------
    def ptype(self, index: int) -> ProductType:
        return self.types[int(self.type_id[index])]

    def price(self, index: int) -> float:
        return int(self.price_cents[index]) / 100

    def attributes(self, index: int) -> tuple[str, ...]:
        """The product's attribute phrases, in the order its page shows them."""
        ptype, mask, seed = self.ptype(index), int(self.attr_mask[index]), int(self.text_seed[index])
        ids = [a for a in range(len(ptype.attributes)) if mask >> a & 1]
        ids.sort(key=lambda a: _mix(seed, a))
        return tuple(ptype.attributes[a] for a in ids)

    def options(self, index: int) -> dict[str, tuple[str, ...]]:
        ptype = self.ptype(index)
        out = {}
        for g, (group, values) in enumerate(zip(ptype.groups, ptype.values, strict=True)):
            mask = int(self.opt_mask[index, g])
            out[group] = tuple(v for j, v in enumerate(values) if mask >> j & 1)
        return out

    def brand_name(self, index: int) -> str:
        brands = self._brands[self.ptype(index).category]
        return brands[int(self.brand[index]) % len(brands)]

    def title(self, index: int, attributes: tuple[str, ...] | None = None) -> str:
        return make_title(self.ptype(index), self.brand_name(index), int(self.text_seed[index]),
                          attributes or self.attributes(index))

    def document(self, index: int) -> str:
        attributes = self.attributes(index)
        values = " ".join(v for vs in self.options(index).values() for v in vs)
        return f"{self.title(index, attributes)} {' '.join(attributes)} {values}"

    def _render(self, index: int) -> Product:
        if not 0 <= index < self.n_products:
            raise IndexError(f"product {index} is outside the catalogue of {self.n_products}")
        return render_product(index=index, asin=self.asin(index), ptype=self.ptype(index),
                              brand=self.brand_name(index), seed=int(self.text_seed[index]),
                              attributes=self.attributes(index), options=self.options(index),
                              price=self.price(index), rating=int(self.rating[index]))

    # ----- who can earn 1.0 ------------------------------------------------------------------------------------
    def type_positions(self, type_id: int) -> np.ndarray:
        if type_id not in self._by_type:
            self._by_type[type_id] = np.flatnonzero(self.type_id == type_id)
        return self._by_type[type_id]

    def candidates(self, goal: Goal) -> np.ndarray:
        ptype = self._by_name.get(goal.product_type)
        if ptype is None:
            return np.zeros(0, dtype=np.int64)
        return self.type_positions(ptype.type_id)

    def satisfying(self, goal: Goal) -> np.ndarray:
        """Bit tests on the masks (exact: pages mention an attribute only when the product has it); goals with
        phrases outside the vocabulary fall back to checking pages one by one."""
        ptype = self._by_name.get(goal.product_type)
        if ptype is None:
            return np.zeros(0, dtype=np.int64)
        if any(a not in ptype.attributes for a in goal.attributes):
            return super().satisfying(goal)
        pos = self.type_positions(ptype.type_id)
        keep = self.price_cents[pos] <= round(goal.price_upper * 100 + 1e-6)
        for attribute in goal.attributes:
            allowed = ptype.attr_match[ptype.attributes.index(attribute)]
            keep &= (self.attr_mask[pos] & self._attr_dtype(allowed)) != 0
        used: dict[int, str] = {}
        for _, value in goal.options:
            where = [(g, vals.index(v)) for g, vals in enumerate(ptype.values) for v in vals
                     if normalise(v) == normalise(value)]
            if not where or used.get(where[0][0], normalise(value)) != normalise(value):
                return np.zeros(0, dtype=np.int64)
            g, j = where[0]
            used[g] = normalise(value)
            keep &= (self.opt_mask[pos, g] & self._opt_dtype(1 << j)) != 0
        return pos[keep].astype(np.int64)


def generated_catalogue(seed: int = 0, n_products: int = DEFAULT_PRODUCTS) -> GeneratedCatalogue:
    """The catalogue for (seed, size), shared by every env of the process."""
    return _generated_catalogue(int(seed), int(n_products))


@lru_cache(maxsize=4)
def _generated_catalogue(seed: int, n_products: int) -> GeneratedCatalogue:
    return GeneratedCatalogue(seed, n_products)
