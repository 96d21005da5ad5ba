/**
 * The API's JSON bodies as zod schemas: the contract (docs/api.md), the TypeScript types the
 * handler builds (`z.infer`) and the OpenAPI document's components (`openapi.ts`) come from
 * these, so that the three cannot drift apart.
 */
import { z } from "zod";
import {
  type CorrectionBody as CorrectionBodySchema,
  CorrectionNote,
  type CorrectionResult as CorrectionResultSchema,
} from "./correction-schemas.js";
import { RANKED_ENTRIES, TOPIC_SORTS } from "./limits.js";
import { apiSchemas, epochMs, named } from "./schema-kit.js";

import { DigestHealth } from "./stats-schemas.js";

export { CORRECTION_ACTIONS, CorrectionBody, CorrectionResult } from "./correction-schemas.js";
export { StatsPage } from "./stats-schemas.js";
export { apiSchemas };

const messageRange = z
  .tuple([z.string(), z.string()])
  .nullable()
  .describe("the first and last message id of the evidence, or null when the model gave none");

export const ErrorBody = named(
  z.object({
    error: z.object({
      code: z.string().describe("stable: API_BAD_PARAMETER, API_BAD_CURSOR, API_NOT_FOUND, …"),
      message: z.string().describe("names the parameter at fault; never echoes what was sent"),
      parameter: z.string().optional().describe("the path or query parameter at fault"),
    }),
  }),
  "Error",
  "Every 4xx and 5xx body.",
);

const cursor = z
  .string()
  .nullable()
  .describe("pass as ?cursor= for the next page; null on the last page");

const Channel = named(
  z.object({
    channel: z.string().describe("the id: what the other routes take"),
    name: z
      .string()
      .nullable()
      .describe("the name its latest messages carry (its name now); null when none says"),
    platform: z.string().nullable().describe("slack, discord, …; null when no message says"),
    messages: z
      .number()
      .int()
      .nonnegative()
      .nullable()
      .describe(
        "how many messages it keeps (deleted and erased ones not); null when no count is kept",
      ),
    first: epochMs
      .nullable()
      .describe("when the first kept message to arrive was sent; null when none is kept"),
    last: epochMs
      .nullable()
      .describe("when the latest message to arrive was sent; null when none is kept"),
  }),
  "Channel",
  "A channel: its name and platform as its latest messages say, how many it keeps, and when the first and latest were sent.",
);

export const ChannelsPage = named(
  z.object({ channels: z.array(Channel), cursor }),
  "ChannelsPage",
  "A page of the channels the pipeline knows, by id within the page (it may be short, even empty, with a cursor).",
);

const TopicEvidence = named(
  z.object({
    topic: z.string(),
    segmentId: z.string(),
    candidateId: z.string(),
    late: z.boolean(),
    messageIds: messageRange,
    firstTs: epochMs,
    lastTs: epochMs,
    confidence: z.number(),
  }),
  "TopicEvidence",
  "One segment's support for a topic.",
);

const Topic = named(
  z.object({
    topic: z.string(),
    normalizedTopic: z.string(),
    aliases: z.array(z.string()),
    segments: z.number().int().describe("distinct segments supporting it (read on this page)"),
    firstSeen: epochMs,
    lastSeen: epochMs,
    bestConfidence: z.number(),
    bestReason: z.string(),
    tags: z.array(z.string()),
    evidence: z.array(TopicEvidence),
    partial: z
      .boolean()
      .describe(
        "true when the topic has more index entries than one page reads: counts are a floor",
      ),
  }),
  "Topic",
  "A channel's topic, merged over its segments and, within the page, its aliases.",
);

export const TopicsPage = named(
  z.object({
    channel: z.string(),
    sort: z
      .enum(TOPIC_SORTS)
      .describe(
        "support: the whole index ranked as npm start -- topics ranks it; key: topic key order, a hash (most supported first within the page)",
      ),
    topics: z.array(Topic),
    cursor,
    complete: z
      .boolean()
      .optional()
      .describe(
        `with sort=support: false when the index has more than ${RANKED_ENTRIES} entries and the ranking is of the topics of the first ${RANKED_ENTRIES} (in key order)`,
      ),
  }),
  "TopicsPage",
  "A page of a channel's topics, in the order `sort` names.",
);

export const QUESTION_STATUSES = ["answered", "unanswered", "unclear"] as const;

const Question = named(
  z.object({
    id: z
      .string()
      .optional()
      .describe(
        "stable within its segment: what a correction names (always set by this API's reader)",
      ),
    question: z.string().describe("in the asker's words, shortened"),
    askedId: z.string().describe("the asking message's id"),
    askedTs: epochMs,
    askedBy: z.string().optional(),
    status: z.enum(QUESTION_STATUSES),
    answer: z.string().optional().describe("summarized; absent when there is none"),
    answerIds: z.array(z.string()).describe("the answering messages, in segment order"),
    segmentId: z.string(),
    threadId: z.string().optional().describe("the thread it was asked in, when it was"),
    corrected: z
      .literal(true)
      .optional()
      .describe("a person corrected the model's status or answer: status and answer are theirs"),
    correction: CorrectionNote.optional(),
  }),
  "Question",
  "A question asked in a segment, and whether it was answered (KnowledgeReader.questions' shape).",
);

export const QuestionsPage = named(
  z.object({ channel: z.string(), questions: z.array(Question), cursor }),
  "QuestionsPage",
  "A page of a channel's questions, optionally of one status.",
);

/** An FAQ entry's best answer, as the FAQ and the digest's recurring questions give it. */
const faqAnswer = z
  .object({
    text: z.string(),
    askedId: z.string().describe("the asking message of the question it answered"),
    answerIds: z.array(z.string()).describe("the answering messages"),
    corrected: z.boolean().describe("whether a person set it"),
  })
  .optional()
  .describe(
    "a corrected answer, else one of two content words or more, then the one most messages support, else the latest; absent when none",
  );

const FaqEntry = named(
  z.object({
    question: z
      .string()
      .describe(
        "its clearest wording: of its most common form, one worded as a question, the shortest",
      ),
    count: z.number().int().describe("how many times it was asked"),
    people: z
      .number()
      .int()
      .describe("by how many people (an asking of no known author counts as one of its own)"),
    answered: z.number().int().describe("how many of those were answered"),
    firstAsked: epochMs,
    lastAsked: epochMs,
    answer: faqAnswer,
    wordings: z.array(z.string()).describe("its other wordings, most asked first, at most 10"),
    askedIds: z.array(z.string()).describe("the asking messages, latest first, at most 10"),
    moreAsked: z.number().int().describe("the asking messages left out of askedIds"),
  }),
  "FaqEntry",
  "Questions asked by at least two people in other words, as one (lib/knowledge/faq's groupQuestions).",
);

export const FaqPage = named(
  z.object({
    channel: z.string(),
    questions: z.number().int().describe("how many questions were read and grouped"),
    complete: z
      .boolean()
      .describe("false when the channel has more questions than the route reads (5,000)"),
    faq: z.array(FaqEntry),
  }),
  "FaqPage",
  "A channel's recurring questions, by most people first: the first `limit` entries.",
);

const SegmentCandidate = named(
  z.object({
    id: z.string(),
    topic: z.string(),
    reason: z.string(),
    confidence: z.number(),
    tags: z.array(z.string()),
    messageIds: messageRange,
  }),
  "SegmentCandidate",
  "A topic the segment's extraction found.",
);

const messageRef = z.object({ id: z.string(), ts: epochMs });

export const Segment = named(
  z.object({
    channel: z.string(),
    segmentId: z.string(),
    late: z.boolean(),
    belongsAfter: z.string().nullable(),
    count: z.number().int(),
    first: messageRef,
    last: messageRef,
    messageIds: z
      .array(z.string())
      .nullable()
      .describe(
        "every message of the segment, in order; null when the result was too large to keep them",
      ),
    model: z.string(),
    promptVersion: z.string(),
    extractedAt: z.string().describe("ISO 8601"),
    candidates: z.array(SegmentCandidate),
  }),
  "Segment",
  "One segment's extraction result and its message ids.",
);

const digestEvidence = z.object({
  channel: z.string(),
  segmentId: z.string(),
  messageIds: messageRange,
  thread: z.string().optional(),
  firstTs: epochMs,
  lastTs: epochMs,
});

const DigestTopic = named(
  z.object({
    channel: z.string(),
    topic: z.string(),
    aliases: z.array(z.string()),
    kind: z.enum(["new", "recurring"]).describe("new: first seen within the period"),
    segments: z.number().int().describe("segments within the period that support it"),
    earlierSegments: z.number().int().describe("segments before the period (0 for a new topic)"),
    firstSeen: epochMs,
    lastSeen: epochMs,
    evidence: z.array(digestEvidence).describe("the period's evidence, oldest first"),
    permalink: z
      .string()
      .optional()
      .describe(
        "the platform's own link to its first evidence message (Slack's, Discord's, Telegram's); absent if none",
      ),
  }),
  "DigestTopic",
  "A topic of the period, new or recurring, with its evidence.",
);

const DigestQuestion = named(
  z.object({
    channel: z.string(),
    segmentId: z.string(),
    question: z.string(),
    status: z.enum(QUESTION_STATUSES),
    askedId: z.string(),
    askedTs: epochMs,
    answer: z.string().optional(),
    answerIds: z.array(z.string()),
    thread: z.string().optional(),
    permalink: z
      .string()
      .optional()
      .describe(
        "the platform's own link to the asking message (Slack's, Discord's, Telegram's); absent if none",
      ),
    corrected: z
      .literal(true)
      .optional()
      .describe("a person corrected its status or answer (who, never: a digest is read by anyone)"),
  }),
  "DigestQuestion",
  "A question asked within the period.",
);

const DigestFaq = named(
  z.object({
    channel: z.string(),
    question: z.string().describe("its clearest wording"),
    count: z.number().int().describe("how many times it was asked in all"),
    people: z
      .number()
      .int()
      .describe("by how many people (an asking of no known author counts as one of its own)"),
    inPeriod: z.number().int().describe("how many of those were in the period"),
    answered: z.number().int().describe("how many of its askings were answered"),
    firstAsked: epochMs,
    lastAsked: epochMs.describe("its last asking, which may be after the period"),
    answer: faqAnswer,
    segmentId: z.string().describe("the segment of its latest asking in the period"),
    askedId: z.string().describe("its latest asking in the period"),
    askedTs: epochMs,
    thread: z.string().optional(),
    permalink: z
      .string()
      .optional()
      .describe(
        "the platform's own link to that asking message (Slack's, Discord's, Telegram's); absent if none",
      ),
  }),
  "DigestFaq",
  "A recurring question asked in the period: asked by at least two people in all, once in the period.",
);

export const DigestBody = named(
  z.object({
    v: z.literal(1),
    channels: z.array(z.string()),
    since: epochMs.describe("the period's start, inclusive"),
    until: epochMs.describe("the period's end, exclusive"),
    generatedAt: z.string().describe("ISO 8601"),
    topics: z.array(DigestTopic).describe("new topics first, then recurring"),
    unanswered: z.array(DigestQuestion).describe("unanswered, oldest first"),
    unclear: z.array(DigestQuestion).describe("whether an answer came is not clear, oldest first"),
    answered: z.array(DigestQuestion).describe("oldest first"),
    activity: z.array(
      z.object({
        channel: z.string(),
        messages: z.number().int(),
        conversations: z.number().int(),
        activePeople: z.number().int(),
        days: z.array(z.object({ day: z.string(), messages: z.number().int() })),
      }),
    ),
    faq: z
      .array(DigestFaq)
      .optional()
      .describe("recurring questions of the period, per channel, at most 5 each; absent when none"),
    health: z
      .array(DigestHealth)
      .optional()
      .describe("per channel with a question asked in the period; absent when none had one"),
    names: z
      .record(z.string(), z.string())
      .optional()
      .describe("display names by channel id, where known and unlike the id; absent when none"),
    omitted: z
      .object({
        topics: z.number().int(),
        unanswered: z.number().int(),
        unclear: z.number().int(),
        answered: z.number().int(),
        faq: z.number().int().optional().describe("recurring questions; absent when none"),
      })
      .optional()
      .describe("how many entries the digest's bounds left out; absent when none"),
  }),
  "Digest",
  "What a channel talked about over a period (lib/outlets/digest's Digest, contract v1).",
);

const SearchHit = named(
  z.object({
    kind: z.enum(["message", "conversation", "topic", "question"]),
    id: z
      .string()
      .describe("unique within the index: the kind, the channel and the thing's own id"),
    channel: z.string(),
    ts: epochMs.describe(
      "a message's time, a segment's first message, a topic's latest evidence, a question's asking",
    ),
    author: z.string().describe("a message's author, a question's asker; empty when none"),
    authorId: z.string().describe("the author's platform user id; empty when none"),
    title: z.string().describe("a topic's or question's words, a segment's topics; else empty"),
    status: z.string().describe("a question's status; empty for the other kinds"),
    segment: z.string().describe("the segment it is in or comes from; empty when none"),
    evidence: z.array(z.string()).describe("the message ids that are its evidence"),
    permalink: z
      .string()
      .describe(
        "the platform's own link (Slack's, Discord's, Telegram's; a conversation's, question's or topic's to its first evidence message), else empty",
      ),
    score: z.number().describe("BM25: higher is better, comparable within one query only"),
    snippet: z.string().describe("its words around the first match"),
    marks: z
      .array(z.tuple([z.number().int(), z.number().int()]))
      .describe("[start, end) of each match in snippet, in UTF-16 code units"),
  }),
  "SearchHit",
  "A message, conversation segment, topic or question that matched.",
);

export const SearchPage = named(
  z.object({ hits: z.array(SearchHit), cursor }),
  "SearchPage",
  "A page of hits, best first.",
);

export type ErrorBody = z.infer<typeof ErrorBody>;
export type SearchPage = z.infer<typeof SearchPage>;
export type ChannelsPage = z.infer<typeof ChannelsPage>;
export type ApiTopic = z.infer<typeof Topic>;
export type TopicsPage = z.infer<typeof TopicsPage>;
export type ApiQuestion = z.infer<typeof Question>;
export type CorrectionBody = z.infer<typeof CorrectionBodySchema>;
export type ApiCorrectionNote = z.infer<typeof CorrectionNote>;
export type CorrectionResult = z.infer<typeof CorrectionResultSchema>;
export type QuestionStatus = (typeof QUESTION_STATUSES)[number];
export type QuestionsPage = z.infer<typeof QuestionsPage>;
export type FaqPage = z.infer<typeof FaqPage>;
export type Segment = z.infer<typeof Segment>;
export type DigestBody = z.infer<typeof DigestBody>;
