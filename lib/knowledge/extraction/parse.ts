import { InvalidModelOutputError } from "./errors.js";

/**
 * The JSON value of a model's reply text: the one place model output is read. Reasoning blocks
 * (`<think>…</think>`) and a Markdown code fence around the JSON are removed first; anything that
 * still does not parse is an {@link InvalidModelOutputError} carrying the raw text. `stoppedAt`
 * names the token limit when the provider says the reply was cut off there, so that the error
 * gives the likely cause.
 */
export function parseModelJSON(text: string, stoppedAt?: string): unknown {
  const invalid = (reason: string) =>
    new InvalidModelOutputError(
      stoppedAt === undefined ? reason : `${reason}; the reply stopped at ${stoppedAt}`,
      text,
    );
  const body = replyBody(text);
  if (body === "") throw invalid("the reply is empty");
  try {
    return JSON.parse(body);
  } catch (error) {
    throw invalid(`not JSON (${(error as Error).message})`);
  }
}

/** Characters a scan looked at: what {@link replyBody}'s linearity is tested by. */
export interface ScanMeter {
  steps: number;
}

const THINK_OPEN = "<think>";
const THINK_CLOSE = "</think>";
const FENCE = "```";
const FENCE_LANGUAGE = /[A-Za-z0-9_-]/;

/**
 * The reply without its reasoning blocks and the fence around it, trimmed. In linear time: every
 * search starts where the last one ended, so each character is looked at a bounded number of
 * times whatever the reply holds (a regex with a lazy group after `\s*` took seconds on an
 * unclosed fence followed by many newlines). `meter` counts the characters the searches covered.
 */
export function replyBody(text: string, meter: ScanMeter = { steps: 0 }): string {
  const find = (needle: string, from: number): number => {
    const at = text.indexOf(needle, from);
    meter.steps += (at < 0 ? text.length : at + needle.length) - from;
    return at;
  };
  // Each `<think>` up to the next `</think>` (any case) goes; one without a close stays.
  let kept = "";
  let cursor = 0;
  for (let at = find("<", 0); at >= 0; ) {
    if (!startsWithAnyCase(text, THINK_OPEN, at)) {
      at = find("<", at + 1);
      continue;
    }
    let close = find("</", at + THINK_OPEN.length);
    while (close >= 0 && !startsWithAnyCase(text, THINK_CLOSE, close))
      close = find("</", close + 2);
    // No close after this open means none after any later one: the rest stays as it is.
    if (close < 0) break;
    kept += text.slice(cursor, at);
    cursor = close + THINK_CLOSE.length;
    at = find("<", cursor);
  }
  const body = (kept + text.slice(cursor)).trim();
  meter.steps += body.length;
  if (!body.startsWith(FENCE) || !body.endsWith(FENCE)) return body;
  let start = FENCE.length;
  while (start < body.length && FENCE_LANGUAGE.test(body[start])) start++;
  const end = body.length - FENCE.length;
  meter.steps += start;
  return end < start ? body : body.slice(start, end).trim();
}

function startsWithAnyCase(text: string, word: string, at: number): boolean {
  return text.slice(at, at + word.length).toLowerCase() === word;
}
