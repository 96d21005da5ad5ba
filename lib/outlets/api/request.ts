/**
 * Hostile input made safe: the raw path split and decoded segment by segment, the query string
 * parsed with every parameter known, single and capped, and ids held to the conversation id
 * rules. Nothing here echoes a value back: problems name the parameter only.
 */
import { conversationIdProblem } from "../../base/identity/index.js";
import { ApiParameterError } from "./errors.js";

/** Longer paths and query strings are refused before any parsing. */
const MAX_PATH_CHARS = 2048;
const MAX_QUERY_CHARS = 2048;
/** A channel or segment id, in UTF-16 code units. */
export const MAX_ID_CHARS = 256;

/** The path's segments, percent-decoded; `/channels/a%2Fb` is two segments, the second `a/b`. */
export function pathSegments(rawPath: string): string[] {
  if (rawPath.length > MAX_PATH_CHARS) throw new ApiParameterError("path", "too long");
  const parts = rawPath.split("/").slice(1);
  if (parts.length > 0 && parts[parts.length - 1] === "") parts.pop();
  return parts.map((part) => {
    try {
      return decodeURIComponent(part);
    } catch {
      throw new ApiParameterError("path", "malformed percent-encoding");
    }
  });
}

/** The query's parameters: each at most once, each one the route knows. */
export function queryParameters(rawQuery: string, known: readonly string[]): Map<string, string> {
  if (rawQuery.length > MAX_QUERY_CHARS) throw new ApiParameterError("query", "too long");
  const found = new Map<string, string>();
  let search: URLSearchParams;
  try {
    search = new URLSearchParams(rawQuery);
  } catch {
    throw new ApiParameterError("query", "malformed");
  }
  for (const [name, value] of search) {
    if (!known.includes(name)) {
      throw new ApiParameterError(
        "query",
        `unknown parameter (this route takes ${known.join(", ") || "none"})`,
      );
    }
    if (found.has(name)) throw new ApiParameterError(name, "given more than once");
    found.set(name, value);
  }
  return found;
}

/** A channel or segment id from the path, held to the id rules. */
export function idParameter(name: string, value: string): string {
  if (value.length > MAX_ID_CHARS) {
    throw new ApiParameterError(name, `longer than ${MAX_ID_CHARS} characters`);
  }
  const problem = conversationIdProblem(value);
  if (problem !== undefined) throw new ApiParameterError(name, problem);
  return value;
}

export interface Limits {
  default: number;
  max: number;
}

/** `limit` as a whole number from 1 to `limits.max`, else `limits.default` when absent. */
export function limitParameter(value: string | undefined, limits: Limits): number {
  if (value === undefined) return limits.default;
  // Leading zeros are still a number (`limit=01`): only the value is bounded.
  if (!/^[0-9]{1,6}$/.test(value) || Number(value) < 1 || Number(value) > limits.max) {
    throw new ApiParameterError("limit", `must be a whole number from 1 to ${limits.max}`);
  }
  return Number(value);
}

/** `value` when it is one of `allowed`, else a 400 naming `name` and the allowed values. */
export function enumParameter<T extends string>(
  name: string,
  value: string | undefined,
  allowed: readonly T[],
): T | undefined {
  if (value === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(value)) {
    throw new ApiParameterError(name, `must be one of ${allowed.join(", ")}`);
  }
  return value as T;
}
