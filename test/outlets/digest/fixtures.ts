import type { ActivityMessage, DigestSources } from "convoseg/digest";
import { normalizeTopic } from "convoseg/extraction";
import type { SegmentResult, StoredQuestion, TopicSupport } from "convoseg/knowledge/store";
import type { ChatMessage } from "convoseg/messages";
import { segmentResult, topicSupport } from "../../support/segment-result.js";

export const DAY = 86_400_000;
/** Monday 2026-01-05 00:00 UTC: the period of the tests starts here. */
export const SINCE = Date.UTC(2026, 0, 5);
export const UNTIL = SINCE + 7 * DAY;

/** A topic index entry of segment `segmentId` for `topic`, said at `ts`. */
export function support(
  channel: string,
  segmentId: string,
  topic: string,
  ts: number,
  extra: Partial<TopicSupport> = {},
): TopicSupport {
  return topicSupport(channel, segmentId, topic, normalizeTopic(topic), {
    firstTs: ts,
    lastTs: ts + 60_000,
    ...extra,
  });
}

export function question(
  id: string,
  askedTs: number,
  status: StoredQuestion["status"],
  text: string,
  answer?: string,
): StoredQuestion {
  return {
    id,
    question: text,
    status,
    askedId: `${id}-ask`,
    askedTs,
    ...(answer === undefined ? {} : { answer }),
    answerIds: answer === undefined ? [] : [`${id}-answer`],
  };
}

/** A stored result of `segmentId` spanning [first, last], with its questions. */
export function result(
  channel: string,
  segmentId: string,
  first: number,
  last: number,
  questions?: StoredQuestion[],
): SegmentResult {
  return segmentResult(channel, segmentId, {
    first: { id: `${segmentId}-m0`, ts: first },
    last: { id: `${segmentId}-m1`, ts: last },
    messageIds: [`${segmentId}-m0`, `${segmentId}-m1`],
    promptVersion: "test",
    extractedAt: new Date(last).toISOString(),
    ...(questions === undefined ? {} : { questions }),
  });
}

/** Digest sources over memory: what each channel holds, listed as given. */
export function memorySources(data: {
  supports?: TopicSupport[];
  results?: SegmentResult[];
  messages?: (ActivityMessage & { channel: string })[];
  /** The stored messages' platform fields, for the entries' links. */
  links?: Pick<ChatMessage, "id" | "channel" | "platform" | "thread" | "guild" | "chatUsername">[];
  /** The stored answering messages: when and by whom (none stored: none read). */
  answers?: { channel: string; id: string; ts: number; author?: string }[];
}): DigestSources {
  return {
    supports: async (channel) => (data.supports ?? []).filter((s) => s.channel === channel),
    results: async (channel) => (data.results ?? []).filter((r) => r.channel === channel),
    activity: async (channel, since, until) =>
      (data.messages ?? [])
        .filter((m) => m.channel === channel && m.ts >= since && m.ts < until)
        .map(({ channel: _, ...m }) => m),
    links: async (channel, ids) =>
      (data.links ?? [])
        .filter((m) => m.channel === channel && ids.includes(m.id))
        .map(({ channel: _, ...m }) => m),
    answers: async (channel, ids) =>
      (data.answers ?? [])
        .filter((m) => m.channel === channel && ids.includes(m.id))
        .map(({ channel: _, ...m }) => m),
  };
}

/** A question `q <id>?` asked at `ts` (its asking message `<id>-ask`), of `status`. */
export const asked = (
  id: string,
  ts: number,
  status: StoredQuestion["status"],
  answerIds: string[] = [],
  askedBy?: string,
): StoredQuestion => ({
  id,
  question: `q ${id}?`,
  status,
  askedId: `${id}-ask`,
  askedTs: ts,
  answerIds,
  ...(askedBy === undefined ? {} : { askedBy }),
});
