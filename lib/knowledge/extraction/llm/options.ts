/**
 * The option rules the model adapters share: defaults and checks that throw a RangeError naming
 * the option at fault.
 */
import { isPositiveInteger } from "../../../base/numbers/index.js";

/** The schema's (or tool's) name on the wire when none is given. */
const DEFAULT_SCHEMA_NAME = "reply";
export const DEFAULT_TEMPERATURE = 0;
export const DEFAULT_TIMEOUT_MS = 120_000;
/** The longest one model call may take in all, retries and the reply's reading included. */
export const DEFAULT_DEADLINE_MS = 120_000;
/**
 * The output-token limit both adapters send when not told: room for a reply of 20 bounded
 * candidates, and a ceiling on what one call can cost in output.
 */
export const DEFAULT_MAX_OUTPUT_TOKENS = 4096;
/** What both providers accept as a schema or tool name. */
const SCHEMA_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** `value`, unless it is not a non-empty string. */
export function nonEmptyString(name: string, value: unknown): string {
  if (typeof value !== "string" || value === "") {
    throw new RangeError(`${name} must be a non-empty string`);
  }
  return value;
}

/** `value` (default {@link DEFAULT_SCHEMA_NAME}), unless it is not 1 to 64 of `A-Za-z0-9_-`. */
export function schemaNameOf(value: string | undefined): string {
  const name = value ?? DEFAULT_SCHEMA_NAME;
  if (!SCHEMA_NAME.test(name)) {
    throw new RangeError(`schemaName must be 1 to 64 of A-Za-z0-9_- (got ${JSON.stringify(name)})`);
  }
  return name;
}

/** `value`, unless it is not a positive integer. */
export function positiveInteger(name: string, value: number): number {
  if (!isPositiveInteger(value)) {
    throw new RangeError(`${name} must be a positive integer (got ${value})`);
  }
  return value;
}

/**
 * What a 401 or 403 means, for the error's message: the call fails at once (a retry cannot fix
 * credentials), and the operator must act.
 */
export function authHint(status: number | undefined): string {
  if (status === 401) return ": the provider refused the credentials (check the API key)";
  if (status === 403)
    return ": the provider denied access (check the key's or role's permission to the model)";
  return "";
}
