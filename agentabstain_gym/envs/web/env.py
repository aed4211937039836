"""AbstainWebShop-v1: shop in a WebShop-style store for what the instruction asks, or abstain."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentabstain_gym.core.actions import Action, preview
from agentabstain_gym.core.base_env import AbstainEnv, StepResult
from agentabstain_gym.core.fingerprint import file_digest
from agentabstain_gym.core.search_index import SearchIndex
from agentabstain_gym.core.task import Task
from agentabstain_gym.envs.web import pages
from agentabstain_gym.envs.web.catalogue import DEFAULT_PRODUCTS, Product
from agentabstain_gym.envs.web.custom import CUSTOM_KEYS, custom_task, load_tasks_file
from agentabstain_gym.envs.web.dataset import MISSING_TARGET, Derived, WebDataset, build_dataset, check_mode
from agentabstain_gym.envs.web.grounding import ground
from agentabstain_gym.envs.web.loader import load_webshop
from agentabstain_gym.envs.web.matching import Goal, score_purchase

#: Results kept per search (WebShop shows the top 50, ten to a page).
TOP_RESULTS = 50
MAX_QUERY_ECHO = 120


class AbstainWebShopEnv(AbstainEnv):
    """Find and buy the product an instruction asks for in a generated web shop, or abstain.

    ## Description
    A WebShop-style store (search page, results, item pages with options and description / features / reviews
    sub-pages, a done page) over a generated catalogue of five categories (beauty, grocery, fashion, home,
    electronics). Half of the default 1,000 tasks are solvable goals (a product type, attributes, options and a
    price cap that at least one product meets); the other half should be abstained on: 249 request-based rewrites
    of a goal (``subjective``, ``underspecified_intent``, ``false_premise``; w = 1) and 251 ``missing_target``
    twins (w = 2), in which the store hides every product that could meet the goal, so one search shows the
    problem. Each abstain task shares its source goal's ``pair_id``.

    ## Action Space
    ``Text``: ``search[<query>]`` (only on the search page), ``click[<button>]`` (one of
    ``info["available_actions"]["clickables"]``, case-insensitive), ``abstain[<reason>]``. Anything else spends
    the turn, changes nothing, and returns an observation saying what was wrong and what is accepted.

    ## Observation Space
    ``Text``: the page. ``observation_mode="text"`` (visible strings joined by `` [SEP] ``), ``"text_rich"``
    (buttons marked ``[button] X [button_]``), or ``"html"`` (the page's HTML; the text modes equal what
    BeautifulSoup extracts from it). ``info["available_actions"] = {"has_search_bar", "clickables"}``.

    ## Rewards
    On ``click[buy now]``: WebShop's reward, (attribute matches + option matches + 1[price <= cap]) /
    (attributes + options + 1) times a product-type gate (1 same type, 0.5 same category, 0.1 otherwise);
    attributes match by rapidfuzz ``token_set_ratio`` > 85 or by substring of title, bullets or description.
    Success is reward 1.0. Purchases on should-abstain tasks are scored against the source goal; 0 otherwise.
    Abstention-shaped rewards come from :class:`agentabstain_gym.wrappers.AbstentionReward`.

    ## Starting State
    The search page of a task drawn with ``np_random`` (or chosen with ``options={"task_id"|"split"|"category"|
    "variant"}``), or a task of your own: ``options={"instruction": ..., "should_abstain": ..., "category": ...,
    "w": ..., "goal": {...}}``.

    ## Episode End
    Terminated on ``buy now`` or ``abstain``; truncated after ``max_turns`` turns (default 10). The final ``info``
    has ``info["abstention"]``, the episode record (outcome, ``w``, ``tau``, evidence turn, purchase...).

    ## Arguments
    ``data_seed`` (catalogue and tasks; default 0), ``n_products`` (5,000, so every product type has some; up to
    1,000,000), ``n_goals`` (500),
    ``observation_mode``, ``max_turns``, ``split``, ``tasks_file`` (your own tasks, the paper's instruction-set
    rows or WebShop's goals, run against the store; each request's goal is grounded in it: a product meeting it,
    near misses beside it), ``products_file`` / ``attributes_file`` / ``goals_file`` (WebShop's
    ``items_shuffle*.json``, ``items_ins_v2*.json`` and human goals, instead of the generated store),
    ``missing_target`` (``"strict"``: hide every product that could earn 1.0; ``"paper"``: only the target, as the
    paper's release), ``render_mode``.

    ## Version History
    * v1: the store has 430 product types over the five categories (was 30) and 5,000 products by default (was
      1,000); the default goals are redrawn over it; the shipped rewrites are authored, originals phrased in ~80
      shapes; task files ground each goal in the store. ``AbstainWebShop-v0`` tasks cannot be rebuilt.
    * v0: initial release.
    """

    family = "web"
    verbs = ("search", "click")
    default_max_turns = 10
    extra_reset_options = tuple(k for k in CUSTOM_KEYS if k != "category")

    def __init__(self, *, data_seed: int = 0, n_products: int = DEFAULT_PRODUCTS, n_goals: int = 500,
                 observation_mode: str = "text", split: str | None = None, max_turns: int | None = None,
                 tasks_file: str | None = None, products_file: str | None = None,
                 attributes_file: str | None = None, goals_file: str | None = None,
                 missing_target: str = "strict", render_mode: str | None = None) -> None:
        super().__init__(max_turns=max_turns, split=split, render_mode=render_mode)
        if observation_mode not in pages.OBSERVATION_MODES:
            raise ValueError(f"observation_mode must be one of {pages.OBSERVATION_MODES}, got {observation_mode!r}")
        if products_file is None and (attributes_file is not None or goals_file is not None):
            raise ValueError("attributes_file and goals_file need products_file")
        self.data_seed, self.n_products, self.n_goals = data_seed, n_products, n_goals
        self.missing_target = check_mode(missing_target)
        self.observation_mode = observation_mode
        self.tasks_file, self.products_file = tasks_file, products_file
        self.attributes_file, self.goals_file = attributes_file, goals_file
        self._load_data()
        self._hidden: frozenset[int] = frozenset()
        self._goal: Goal | None = None
        self._clear_page()

    def _load_data(self) -> None:
        if self.products_file is not None:
            base: WebDataset = load_webshop(self.products_file, self.attributes_file, self.goals_file,
                                            seed=self.data_seed, missing_target=self.missing_target)
        else:
            base = build_dataset(self.data_seed, self.n_products, self.n_goals, self.missing_target)
        # a task file's goals are grounded in the store: a product that meets each, near misses beside it
        self._dataset = (ground(base, load_tasks_file(self.tasks_file), self.missing_target)
                         if self.tasks_file is not None else base)
        self._task_list = self._dataset.tasks
        # every task's goal and hidden set, now rather than at its first reset (where the catalogue scan of a
        # Missing Target task made that reset slower than its twin's); keyed by id, checked by identity
        self._derived: dict[str, tuple[Task, Derived]] = {t.task_id: (t, self._dataset.derive(t))
                                                          for t in self._task_list}
        self._index: SearchIndex | None = None

    def _fingerprint_data(self) -> Any:
        """The store the goals are shopped in: the catalogue as pages show it, or the digests of your own files."""
        if self.products_file is not None:
            files = {"products": self.products_file, "attributes": self.attributes_file, "goals": self.goals_file}
            return {"files": {role: file_digest(path) for role, path in files.items() if path is not None}}
        return {"catalogue": self._dataset.catalogue.digest()}

    @property
    def dataset(self) -> WebDataset:
        return self._dataset

    @property
    def index(self) -> SearchIndex:
        """The process-wide index over the catalogue, opened on first use."""
        if self._index is None:
            self._index = SearchIndex.shared(self._dataset.documents())
        return self._index

    def __getstate__(self) -> dict[str, Any]:  # the catalogue and index are rebuilt from the arguments
        state = self.__dict__.copy()
        state["_dataset"] = state["_index"] = state["_task_list"] = state["_derived"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._load_data()

    def listing(self) -> dict[str, Any]:
        """Extra lines for ``abstain-gym list``: the store's size and the task variants."""
        variants: dict[str, int] = {}
        for t in self._task_list:
            name = str(t.payload.get("variant", "custom"))
            variants[name] = variants.get(name, 0) + 1
        return {"products": len(self._dataset.catalogue), "variant": dict(sorted(variants.items()))}

    # ----- family hooks -------------------------------------------------------------------------------------------
    def _tasks(self) -> tuple[Task, ...]:
        return self._task_list

    def _task_from_options(self, options: Mapping[str, Any]) -> Task | None:
        """A task of the user's own, or a stored task by id in one lookup (the base class's scan made a reset's
        time grow with the task's place in the list); unknown ids fall through to the base class's error."""
        if options.get("instruction") is None:
            stray = [k for k in self.extra_reset_options if options.get(k) is not None]
            if stray:
                raise ValueError(f"reset options {stray} describe a task of your own and need 'instruction'")
            task_id = options.get("task_id")
            entry = self._derived.get(task_id) if isinstance(task_id, str) else None
            return entry[0] if entry is not None else None
        return custom_task({k: options[k] for k in CUSTOM_KEYS if options.get(k) is not None})

    def _clear_page(self) -> None:
        self._page = "search"
        self._query = ""
        self._hits: tuple[int, ...] = ()
        self._page_no = 1
        self._item: int | None = None
        self._chosen: dict[str, str] = {}
        self._sub: str | None = None
        self._searches = 0
        self._purchase: dict[str, Any] | None = None
        self._view: pages.Page | None = None

    def _begin(self, task: Task) -> str:
        """The same work for every stored task (a lookup); only a task from reset options is derived here."""
        self._clear_page()
        entry = self._derived.get(task.task_id)
        derived = entry[1] if entry is not None and entry[0] is task else self._dataset.derive(task)
        self._hidden, self._goal = derived.hidden, derived.goal
        return self._show()

    def _product(self, index: int) -> Product:
        return self._dataset.catalogue.product(index)

    def _build_page(self) -> pages.Page:
        instruction = self._task.instruction if self._task is not None else ""
        if self._page == "results":
            start = (self._page_no - 1) * pages.RESULTS_PER_PAGE
            shown = [self._product(i) for i in self._hits[start:start + pages.RESULTS_PER_PAGE]]
            return pages.results_page(instruction, shown, self._page_no, len(self._hits))
        if self._page == "item" and self._item is not None:
            return pages.item_page(instruction, self._product(self._item), self._chosen)
        if self._page == "sub" and self._item is not None and self._sub is not None:
            return pages.sub_page(instruction, self._product(self._item), self._sub)
        if self._page == "done" and self._item is not None:
            return pages.done_page(self._product(self._item), self._chosen)
        return pages.search_page(instruction)

    def _show(self) -> str:
        self._view = self._build_page()
        return self._view.render(self.observation_mode)

    def _clickables(self) -> list[str]:
        if self._view is None:
            self._view = self._build_page()
        return self._view.clickables()

    def _act(self, action: Action) -> StepResult:
        if action.verb == "search":
            return self._search(action.argument)
        return self._click(action.argument)

    def _invalid(self, message: str) -> StepResult:
        buttons = ", ".join(f"click[{c}]" for c in self._clickables())
        where = "search[<query>] or " if self._page == "search" else ""
        return StepResult(f"Invalid action: {message} The page is unchanged. Accepted here: {where}{buttons}, "
                          "or abstain[<reason>].", invalid=True)

    def _search(self, raw: str) -> StepResult:
        query = " ".join(raw.split())
        if self._page != "search":
            return self._invalid("there is no search bar on this page; click[back to search] first.")
        if not query:
            return self._invalid("search[] needs a query, e.g. search[red cotton t-shirt under 20 dollars].")
        hidden = self._hidden
        hits = self.index.search(query, k=TOP_RESULTS + len(hidden))
        self._hits = tuple(pos for pos, _ in hits if pos not in hidden)[:TOP_RESULTS]
        self._query = query[:MAX_QUERY_ECHO]
        self._page, self._page_no = "results", 1
        self._searches += 1
        task = self._task
        evidence = task is not None and task.category == MISSING_TARGET and bool(hidden)
        return StepResult(self._show(), evidence=evidence)

    def _click(self, raw: str) -> StepResult:
        button = " ".join(raw.split()).lower()
        clickables = self._clickables()
        if button not in clickables:
            if not button:
                return self._invalid("click[] needs the name of a button on this page.")
            return self._invalid(f"there is no button {preview(button, 60)} on this page.")
        page = self._page
        if button == "search":
            return self._invalid("type the query into the search bar with search[<query>].")
        if button == "back to search":
            self._clear_search()
        elif page == "results" and button == "next >":
            self._page_no += 1
        elif page == "results" and button == "< prev":
            self._page_no -= 1
        elif page == "results":
            start = (self._page_no - 1) * pages.RESULTS_PER_PAGE
            shown = self._hits[start:start + pages.RESULTS_PER_PAGE]
            self._item = next(i for i in shown if self._product(i).asin.lower() == button)
            self._page, self._chosen = "item", {}
        elif page == "item" and button == "< prev":
            self._page, self._item = "results", None
        elif page == "item" and button in pages.SUB_PAGES:
            self._page, self._sub = "sub", button
        elif page == "item" and button == "buy now":
            return self._buy()
        elif page == "item":
            self._choose(button)
        elif page == "sub" and button == "< prev":
            self._page, self._sub = "item", None
        return StepResult(self._show())

    def _clear_search(self) -> None:
        self._page, self._query, self._hits, self._page_no = "search", "", (), 1
        self._item, self._chosen, self._sub = None, {}, None

    def _choose(self, button: str) -> None:
        assert self._item is not None
        for group, values in self._product(self._item).options.items():
            for value in values:
                if value.lower() == button:
                    self._chosen = {**self._chosen, group: value}
                    return

    def _buy(self) -> StepResult:
        assert self._item is not None
        product = self._product(self._item)
        reward, passed = 0.0, False
        if self._goal is not None:
            score = score_purchase(self._goal, product_type=product.product_type, category=product.category,
                                   attributes=product.attributes, text_lower=product.text_lower,
                                   price=product.price, chosen_options=self._chosen.values())
            reward = score.reward
            passed = reward >= 1.0 and not (self._task is not None and self._task.should_abstain)
        self._purchase = {"asin": product.asin, "options": dict(self._chosen), "price": product.price,
                          "reward": reward}
        self._page = "done"
        return StepResult(self._show(), terminated=True, task_passed=passed, task_reward=reward)

    def _extra_info(self) -> dict[str, Any]:
        return {"available_actions": {"has_search_bar": self._page == "search",
                                      "clickables": list(self._clickables())}}

    def _episode_extras(self) -> dict[str, Any]:
        return {"searches": self._searches, "purchase": self._purchase}

    def _state_key(self) -> Any:
        return (self._page, self._query, self._hits, self._page_no, self._item,
                tuple(sorted(self._chosen.items())), self._sub)
