/**
 * DOM building for the report page. Everything from the data goes in as text nodes or attribute
 * values, never as markup: chat text is untrusted, and `innerHTML` is not used anywhere.
 */
import { formatDuration, formatElapsed, underClock } from "../../../base/duration/index.js";

export type Child = Node | string | number | null | undefined | false;

/** An element with attributes (set with `setAttribute`, so nothing is parsed) and children. */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Record<string, string | number | undefined> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value !== undefined) element.setAttribute(name, String(value));
  }
  append(element, ...children);
  return element;
}

export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === "object" ? child : document.createTextNode(String(child)));
  }
}

export function byId(id: string): HTMLElement {
  const element = document.getElementById(id);
  if (element === null) throw new Error(`the page has no #${id}`);
  return element;
}

export const count = (n: number): string => n.toLocaleString("en-US");

/** `1 conversation`, `1,200 conversations`: a count and its noun (plural by an `s`). */
export const counted = (n: number, noun: string): string =>
  `${count(n)} ${noun}${n === 1 ? "" : "s"}`;

/** `2025-01-06 08:03:12` (UTC, which the whole page uses). */
export const time = (ms: number): string =>
  new Date(ms).toISOString().slice(0, 19).replace("T", " ");

/** `08:03:12` of a time, for messages listed under their date. */
export const clock = (ms: number): string => new Date(ms).toISOString().slice(11, 19);

export const day = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/**
 * A span of time, UTC, no more precise than it needs: `2025-01-06 12:01–12:14` within a day,
 * `2025-01-06 to 2025-02-03` across days.
 */
export function span(first: number, last: number): string {
  if (day(first) !== day(last)) return `${day(first)} to ${day(last)}`;
  const [from, to] = [time(first).slice(11, 16), time(last).slice(11, 16)];
  return from === to ? `${day(first)} ${from}` : `${day(first)} ${from}–${to}`;
}

export const duration = (ms: number): string => formatDuration(ms);
/** A time measured by a clock of `clockMs`: one under it is "under 1m" (`formatElapsed`). */
export const elapsed = (ms: number, clockMs: number): string => formatElapsed(ms, clockMs);
/** How long something took at most, by a clock of `clockMs`: "within 1m" for two in one minute. */
export const within = (ms: number, clockMs: number): string =>
  formatDuration(underClock(ms, clockMs) ? clockMs : ms);
