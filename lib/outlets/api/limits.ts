/**
 * What each route takes at most: page sizes and the digest's period. The handler holds requests
 * to them and the OpenAPI document states them, from here.
 */
import type { Limits } from "./request.js";

export const CHANNEL_LIMITS: Limits = { default: 50, max: 200 };
export const QUESTION_LIMITS: Limits = { default: 20, max: 100 };
/** The digest route's period: `?since=` as a duration back from now, at most 31 days. */
export const DIGEST_PERIOD = {
  defaultMs: 7 * 86_400_000,
  minMs: 3_600_000,
  maxMs: 31 * 86_400_000,
};
