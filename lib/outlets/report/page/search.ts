/**
 * The search box at the top of the page: messages, conversations, topics and questions, the best
 * hits listed as the words are typed (a combobox and its listbox: ↑ ↓ move, Enter opens, Escape
 * closes, `/` anywhere comes back to it). The index is built once the page has loaded and the
 * browser idles, or at once when the box is first used, a slice at a time so that the page stays
 * responsive; a hit's words go in as text nodes, its matches as `<mark>` elements around text.
 */
import type { ReportData } from "../data.js";
import { count, el, time } from "./dom.js";
import { type ReportHit, ReportSearch } from "./search-index.js";
import { allTexts, whenTextsRead } from "./texts.js";

/** Hits listed at most: more words narrow a query better than a longer list. */
const MAX_HITS = 20;
/** How long typing must pause before the query runs. */
const DEBOUNCE_MS = 150;
/** How long the index is built for before the page gets a turn, and documents between looks at the clock. */
const SLICE_MS = 30;
const SLICE_DOCUMENTS = 250;

/** What choosing a hit asks of the page: show its channel, and its segment or topic. */
export type OpenHit = (hit: ReportHit) => void;

export function renderSearch(container: HTMLElement, data: ReportData, open: OpenHit): void {
  const input = el("input", {
    id: "search-input",
    type: "search",
    role: "combobox",
    autocomplete: "off",
    spellcheck: "false",
    "aria-autocomplete": "list",
    "aria-expanded": "false",
    "aria-controls": "search-hits",
    "aria-describedby": "search-status",
    placeholder: "messages, conversations, topics, questions",
  });
  const status = el("span", { id: "search-status", class: "muted", "aria-live": "polite" });
  const list = el("ul", { id: "search-hits", role: "listbox", "aria-label": "hits", hidden: "" });
  container.replaceChildren(
    el("label", { for: "search-input" }, "Search"),
    el("div", { class: "search-field" }, input, list),
    status,
  );

  let search: ReportSearch | undefined;
  let hits: ReportHit[] = [];
  let active = -1;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const setOpen = (open: boolean) => {
    list.hidden = !open;
    input.setAttribute("aria-expanded", String(open));
    if (!open) setActive(-1);
  };
  const setActive = (i: number) => {
    list.querySelector('[aria-selected="true"]')?.setAttribute("aria-selected", "false");
    active = i;
    const option = i < 0 ? null : list.children[i];
    if (option) {
      option.setAttribute("aria-selected", "true");
      option.scrollIntoView({ block: "nearest" });
      input.setAttribute("aria-activedescendant", option.id);
    } else {
      input.removeAttribute("aria-activedescendant");
    }
  };
  const choose = (i: number) => {
    const hit = hits[i];
    if (hit === undefined) return;
    setOpen(false);
    open(hit);
  };

  /** Runs the box's query, once the index is built (it runs again when it is). */
  const run = () => {
    clearTimeout(timer);
    timer = undefined;
    const query = input.value.trim();
    if (query === "") {
      hits = [];
      list.replaceChildren();
      setOpen(false);
      status.textContent = "";
      return;
    }
    if (search === undefined || !search.ready) {
      status.textContent = search === undefined ? "Reading the messages…" : progress(search);
      build();
      return;
    }
    const result = search.search(query, MAX_HITS);
    hits = result.hits;
    list.replaceChildren(...hits.map((hit, i) => option(hit, i, data, () => choose(i))));
    setActive(-1);
    setOpen(hits.length > 0);
    status.textContent =
      result.total === 0
        ? "No hits."
        : `${result.total > hits.length ? `The best ${hits.length} of ${count(result.total)} hits` : `${count(result.total)} ${result.total === 1 ? "hit" : "hits"}`}${result.partial ? " with some of the words (none has all of them)" : ""}: ↑ ↓ to choose, Enter to open.`;
  };

  /**
   * Builds the index a slice at a time (each {@link SLICE_MS}, then the page gets a turn), saying
   * how far it is while a query waits for it, then runs the query typed.
   */
  const build = () => {
    if (search !== undefined) return;
    whenTextsRead(() => {
      if (search !== undefined) return;
      const started = performance.now();
      const index = new ReportSearch(data, allTexts() ?? []);
      search = index;
      const slice = () => {
        const until = performance.now() + SLICE_MS;
        while (!index.ready && performance.now() < until) index.indexSome(SLICE_DOCUMENTS);
        if (!index.ready) {
          if (input.value.trim() !== "") status.textContent = progress(index);
          setTimeout(slice, 0);
          return;
        }
        document.documentElement.dataset.searchIndexedMs = String(
          Math.round(performance.now() - started),
        );
        run();
      };
      slice();
    });
  };

  // Built once the page is drawn and loaded and the browser idles, or at once when the box is used.
  input.addEventListener("focus", build);
  const later = () =>
    "requestIdleCallback" in window ? requestIdleCallback(build) : setTimeout(build, 500);
  if (document.readyState === "complete") later();
  else window.addEventListener("load", later);
  input.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(run, DEBOUNCE_MS);
  });
  input.addEventListener("keydown", (event) => {
    const n = hits.length;
    switch (event.key) {
      case "ArrowDown":
      case "ArrowUp":
        if (n === 0) return;
        event.preventDefault();
        if (list.hidden) setOpen(true);
        setActive(event.key === "ArrowDown" ? (active + 1) % n : (active - 1 + n) % n);
        return;
      case "Enter":
        event.preventDefault();
        // A query still waiting for its pause runs first: Enter opens what was typed.
        if (timer !== undefined) run();
        choose(Math.max(active, 0));
        return;
      case "Escape":
        event.preventDefault();
        if (!list.hidden) setOpen(false);
        else {
          input.value = "";
          run();
        }
        return;
    }
  });
  input.addEventListener("blur", () => setOpen(false));
  // Back to the box from anywhere but a field.
  document.addEventListener("keydown", (event) => {
    const target = event.target as HTMLElement | null;
    if (event.key !== "/" || target?.closest("input, textarea, select, [contenteditable]")) return;
    event.preventDefault();
    input.focus();
    input.select();
  });
}

/** How far the index is: what a query typed before it is ready waits for. */
const progress = (index: ReportSearch) =>
  `Indexing ${count(index.size)} documents: ${Math.floor((100 * index.indexed) / index.size)}%…`;

/** A hit as an option: its kind, where and when, a title where it has one, its snippet. */
function option(hit: ReportHit, i: number, data: ReportData, choose: () => void): HTMLElement {
  const channel = data.channels[hit.channel];
  const where = [
    channel.displayName ?? channel.name,
    time(hit.ts),
    hit.segment >= 0 ? `segment #${hit.segment + 1}` : "in no segment",
    hit.detail,
  ].filter((part) => part !== "");
  const item = el(
    "li",
    { id: `search-hit-${i}`, class: "search-hit", role: "option", "aria-selected": "false" },
    el("span", { class: `hit-kind kind-${hit.kind}` }, hit.kind),
    el("span", { class: "hit-where muted" }, where.join(" · ")),
    hit.title !== "" && hit.kind !== "topic" && hit.kind !== "question"
      ? el("span", { class: "hit-title" }, hit.title)
      : null,
    marked(hit.snippet.text, hit.snippet.marks),
  );
  // Chosen with the pointer while the focus stays in the box.
  item.addEventListener("mousedown", (event) => event.preventDefault());
  item.addEventListener("click", choose);
  return item;
}

/** `text` with its `[start, end)` ranges in `<mark>`: text nodes only, no markup parsed. */
function marked(text: string, marks: [number, number][]): HTMLElement {
  const snippet = el("span", { class: "hit-snippet" });
  let at = 0;
  for (const [start, end] of marks) {
    if (start < at) continue;
    snippet.append(text.slice(at, start), el("mark", {}, text.slice(start, end)));
    at = end;
  }
  snippet.append(text.slice(at));
  return snippet;
}
