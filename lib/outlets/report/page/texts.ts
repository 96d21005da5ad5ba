/**
 * The message texts. Their block comes after the page's script (they are most of the bytes), so
 * they are read once the browser has parsed the whole page; until then a text is undefined.
 */
import type { ReportTexts } from "../data.js";
import { byId } from "./dom.js";

let texts: ReportTexts | undefined;
const waiting: (() => void)[] = [];

/** The text of the message at `position` of channel `channel`, once the texts are read. */
export function messageText(channel: number, position: number): string | undefined {
  return texts?.[channel]?.[position];
}

/** Every message text (per channel, in channel order), once read: what the search indexes. */
export function allTexts(): ReportTexts | undefined {
  return texts;
}

/** Calls `callback` once the texts are read (at once when they are). */
export function whenTextsRead(callback: () => void): void {
  if (texts) callback();
  else waiting.push(callback);
}

function read(): void {
  texts = JSON.parse(byId("report-texts").textContent ?? "[]") as ReportTexts;
  for (const callback of waiting.splice(0)) callback();
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", read);
else read();
