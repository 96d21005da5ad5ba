/**
 * What each route takes at most: page sizes and the digest's period. The handler holds requests
 * to them and the OpenAPI document states them, from here.
 */
import type { Limits } from "./request.js";

export const CHANNEL_LIMITS: Limits = { default: 50, max: 200 };
export const QUESTION_LIMITS: Limits = { default: 20, max: 100 };
/**
 * The digest route's period (`?since=`, `?until=`): a week by default, from an hour to 366 days,
 * the most a digest covers (lib/outlets/digest's MAX_PERIOD_DAYS, which refuses more).
 */
export const DIGEST_PERIOD = {
  defaultMs: 7 * 86_400_000,
  minMs: 3_600_000,
  maxMs: 366 * 86_400_000,
};
