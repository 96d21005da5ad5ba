/**
 * The body of `GET /channels/{c}/stats` (a channel's health over a period), apart from the other
 * bodies in schemas.ts for length; it is one of them all the same (`apiBodies.StatsPage`). The
 * digest's health table shares its figures.
 */
import { z } from "zod";
import { FAQ_QUESTIONS, STATS_ANSWERS, STATS_BUCKETS } from "./limits.js";
import { epochMs, named } from "./schema-kit.js";

const firstAnswer = z
  .object({
    measured: z.number().int().describe("the answered questions whose answering messages are kept"),
    medianMs: z.number().nullable().describe("median time to first answer (ms); null when none"),
    p90Ms: z.number().nullable().describe("90th percentile (nearest rank, ms); null when none"),
    clockMs: z
      .number()
      .int()
      .optional()
      .describe(
        "the clock the times keep: 60000 when every asking and first answer is a whole minute (an IRC log), 1000 a whole second, else 1; a time under it is known only to be under it",
      ),
  })
  .describe("time from the asking message to the first answering message");

const StatsBucket = named(
  z.object({
    start: epochMs.describe("the bucket's first instant (UTC midnight; a Monday for weeks)"),
    label: z.string().describe("2026-01-05 for a day, 2026-W02 for an ISO week"),
    questions: z.number().int(),
    answered: z.number().int(),
    conversations: z.number().int(),
    firstAnswer,
  }),
  "StatsBucket",
  "One UTC day's or ISO week's figures, by when a question was asked or a conversation began.",
);

export const StatsPage = named(
  z.object({
    channel: z.string(),
    complete: z
      .boolean()
      .describe(
        `false when the channel has more questions than the route reads (${FAQ_QUESTIONS.toLocaleString("en")}) or its questions more answering messages (${STATS_ANSWERS.toLocaleString("en")})`,
      ),
    since: epochMs.describe("the period's start, inclusive"),
    until: epochMs.describe("the period's end, exclusive"),
    bucket: z.enum(STATS_BUCKETS),
    questions: z.number().int().describe("asked within the period"),
    answered: z.number().int(),
    unanswered: z.number().int(),
    unclear: z.number().int(),
    answeredShare: z.number().nullable().describe("answered / questions; null when none was asked"),
    firstAnswer,
    unansweredByAge: z
      .array(
        z.object({
          upToDays: z.number().int().nullable().describe("under 1, 7, 30 days; null: older"),
          questions: z.number().int(),
        }),
      )
      .describe("unanswered questions by their age at until"),
    answerers: z
      .array(z.object({ name: z.string(), answers: z.number().int() }))
      .describe(
        "who answered most questions (not their own), at most 10: never a person who opted out nor an erased one",
      ),
    conversations: z.number().int().describe("conversations (segments) begun within the period"),
    buckets: z.array(StatsBucket).describe("every day or week of the period, oldest first"),
  }),
  "StatsPage",
  "A channel's health over a period: questions asked and answered, how fast, who answers, conversations.",
);

export type StatsPage = z.infer<typeof StatsPage>;

/** A digest's health table row: the stats' totals over the digest's period, answerers at most 3. */
export const DigestHealth = named(
  z.object({
    channel: z.string(),
    questions: z.number().int().describe("asked within the period"),
    answered: z.number().int(),
    unanswered: z.number().int(),
    unclear: z.number().int(),
    answeredShare: z.number().nullable().describe("answered / questions"),
    firstAnswer,
    answerers: z
      .array(z.object({ name: z.string(), answers: z.number().int() }))
      .optional()
      .describe(
        "who answered most questions (not their own), at most 3, never an opted-out or erased person; absent when the digest was built without the opt-out setting",
      ),
  }),
  "DigestHealth",
  "A channel's health over the digest's period: questions asked, answered share, time to first answer.",
);
