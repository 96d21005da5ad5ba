/**
 * What each route takes at most: page sizes, the topics a ranking reads and the digest's period,
 * and the topics' orders. The handler holds requests to them and the OpenAPI document and the
 * schemas state them, from here.
 */
import type { Limits } from "./request.js";

export const CHANNEL_LIMITS: Limits = { default: 50, max: 200 };
export const QUESTION_LIMITS: Limits = { default: 20, max: 100 };
export const FAQ_LIMITS: Limits = { default: 20, max: 100 };
/**
 * The most questions `GET /channels/{c}/faq` reads and groups (pages of 1,000 of the questions
 * index, 5 at most): past it the entries are of the first questions, unanswered first.
 */
export const FAQ_QUESTIONS = 5000;
/**
 * The most answering messages `GET /channels/{c}/stats` reads by id (batches of 100 on DynamoDB):
 * past it, first answers and answerers are of the first questions' answers.
 */
export const STATS_ANSWERS = 5000;
/** How the stats route groups its figures (`?bucket=`), the default first. */
export const STATS_BUCKETS = ["day", "week"] as const;
export const SEARCH_LIMITS: Limits = { default: 20, max: 50 };
/** The most channels and kinds one search names. */
export const MAX_SEARCH_CHANNELS = 20;
/**
 * The digest route's period (`?since=`, `?until=`): a week by default, from an hour to 366 days,
 * the most a digest covers (lib/outlets/digest's MAX_PERIOD_DAYS, which refuses more).
 */
export const DIGEST_PERIOD = {
  defaultMs: 7 * 86_400_000,
  minMs: 3_600_000,
  maxMs: 366 * 86_400_000,
};

/** The orders of `?sort=`, the default first: the most supported topics are what a reader wants. */
export const TOPIC_SORTS = ["support", "key"] as const;

/**
 * The most index entries `sort=support` reads (Query pages of 1 MB, about 5 on a channel of
 * 10,000 entries): a channel's topic index is one entry per topic per segment, far smaller than
 * its messages. Past it, the ranking is of the topics of the first entries, in key order.
 */
export const RANKED_ENTRIES = 10_000;
