import { InvalidModelOutputError } from "./errors.js";

/**
 * The JSON value of a model's reply text: the one place model output is read. Reasoning blocks
 * (`<think>…</think>`) and a Markdown code fence around the JSON are removed first; anything that
 * still does not parse is an {@link InvalidModelOutputError} carrying the raw text.
 */
export function parseModelJSON(text: string): unknown {
  let body = text.replace(/<think>[\s\S]*?<\/think>/gi, "").trim();
  const fenced = /^```[A-Za-z0-9_-]*\s*\n?([\s\S]*?)\n?```$/.exec(body);
  if (fenced) body = fenced[1].trim();
  if (body === "") throw new InvalidModelOutputError("the reply is empty", text);
  try {
    return JSON.parse(body);
  } catch (error) {
    throw new InvalidModelOutputError(`not JSON (${(error as Error).message})`, text);
  }
}
