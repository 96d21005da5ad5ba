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
  let body = text.replace(/<think>[\s\S]*?<\/think>/gi, "").trim();
  const fenced = /^```[A-Za-z0-9_-]*\s*\n?([\s\S]*?)\n?```$/.exec(body);
  if (fenced) body = fenced[1].trim();
  if (body === "") throw invalid("the reply is empty");
  try {
    return JSON.parse(body);
  } catch (error) {
    throw invalid(`not JSON (${(error as Error).message})`);
  }
}
