/** Digests built directly (the builder is h-digest's), for the Slack, schedule and API tests. */
import type { Digest, DigestQuestion, DigestTopic } from "convoseg/digest";

const SINCE = Date.UTC(2026, 10, 23);
const UNTIL = Date.UTC(2026, 10, 30);

export function topic(text: string, overrides: Partial<DigestTopic> = {}): DigestTopic {
  return {
    channel: "c1",
    topic: text,
    aliases: [],
    kind: "new",
    segments: 2,
    earlierSegments: 0,
    firstSeen: SINCE + 3_600_000,
    lastSeen: SINCE + 7_200_000,
    evidence: [
      {
        channel: "c1",
        segmentId: "s00001",
        messageIds: ["m1", "m4"],
        firstTs: SINCE + 3_600_000,
        lastTs: SINCE + 3_900_000,
      },
    ],
    ...overrides,
  };
}

export function question(text: string, overrides: Partial<DigestQuestion> = {}): DigestQuestion {
  return {
    channel: "c1",
    segmentId: "s00001",
    question: text,
    status: "unanswered",
    askedId: "m1",
    askedTs: SINCE + 3_600_000,
    answerIds: [],
    ...overrides,
  };
}

/** A digest of `channels` whose every chat text field is `text` (or a default). */
export function digest(overrides: Partial<Digest> = {}, text?: string): Digest {
  const t = text ?? "grub boot loader";
  return {
    v: 1,
    channels: ["c1"],
    since: SINCE,
    until: UNTIL,
    generatedAt: new Date(UNTIL).toISOString(),
    topics: [topic(t), topic(`${t} again`, { kind: "recurring", earlierSegments: 3 })],
    unanswered: [question(t)],
    unclear: [question(`${t} maybe`, { status: "unclear", askedTs: SINCE + 20 })],
    answered: [
      question(t, { status: "answered", answer: t, answerIds: ["m2"], askedTs: SINCE + 10 }),
    ],
    activity: [
      {
        channel: "c1",
        messages: 40,
        conversations: 5,
        activePeople: 7,
        days: Array.from({ length: 7 }, (_, i) => ({
          day: new Date(SINCE + i * 86_400_000).toISOString().slice(0, 10),
          messages: i === 2 ? 40 : 0,
        })),
      },
    ],
    ...overrides,
  };
}
