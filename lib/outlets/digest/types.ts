/**
 * A digest: what a set of channels talked about over a period, as the `digest` command and the
 * scheduled digest publish it (Markdown, HTML, JSON). Public contract v1: fields may be added.
 */
import type { QuestionStatus } from "../../knowledge/extraction/index.js";

/** Where an entry's evidence is: its segment (the report's anchor) and its messages. */
export interface DigestEvidence {
  channel: string;
  segmentId: string;
  /** The first and last message of the evidence, or null when the model gave no range. */
  messageIds: [string, string] | null;
  thread?: string;
  firstTs: number;
  lastTs: number;
}

export interface DigestTopic {
  channel: string;
  topic: string;
  aliases: string[];
  /** `new`: first seen within the period; `recurring`: seen before it too. */
  kind: "new" | "recurring";
  /** Segments within the period that support it. */
  segments: number;
  /** Segments before the period (0 for a new topic). */
  earlierSegments: number;
  firstSeen: number;
  lastSeen: number;
  /** The period's evidence, oldest first. */
  evidence: DigestEvidence[];
  /**
   * The platform's own link to the first message of its first evidence that names messages
   * (added within v1; absent where the platform has none: only Slack's messages have one).
   */
  permalink?: string;
}

export interface DigestQuestion {
  channel: string;
  segmentId: string;
  question: string;
  status: QuestionStatus;
  askedId: string;
  askedTs: number;
  answer?: string;
  answerIds: string[];
  thread?: string;
  /** The platform's own link to the asking message (added within v1; absent as a topic's). */
  permalink?: string;
  /**
   * A person corrected its status or answer (added within v1): they are theirs, not the
   * model's. Who, never: a digest is read by anyone.
   */
  corrected?: true;
}

/**
 * A recurring question of the digest: an FAQ entry (lib/knowledge/faq) of its channel's questions,
 * asked by at least two people in all and at least once in the period, linked by its latest
 * asking there.
 */
export interface DigestFaq {
  channel: string;
  /** Its clearest wording. */
  question: string;
  /**
   * How many times it was asked in all, by how many people, and how many of those in the period.
   */
  count: number;
  people: number;
  inPeriod: number;
  /** How many of its askings were answered. */
  answered: number;
  /** Epoch ms of its first and last asking (the last may be after the period). */
  firstAsked: number;
  lastAsked: number;
  /**
   * Its best answer: a corrected one first, else one that says something, then the most
   * supported.
   */
  answer?: { text: string; askedId: string; answerIds: string[]; corrected: boolean };
  /** Its latest asking in the period: its segment (the report's anchor) and message. */
  segmentId: string;
  askedId: string;
  askedTs: number;
  thread?: string;
  /** The platform's own link to that asking message, where it has one. */
  permalink?: string;
}

/**
 * One channel's health over the period (lib/knowledge/health): its questions asked in it, the
 * share answered, the time to the first answer and who answered most.
 */
export interface DigestHealth {
  channel: string;
  questions: number;
  answered: number;
  unanswered: number;
  unclear: number;
  /** answered / questions. */
  answeredShare: number | null;
  /** Over the answered questions whose answering messages are kept (`measured` of them). */
  firstAnswer: {
    measured: number;
    medianMs: number | null;
    p90Ms: number | null;
    /** The clock the times keep (60,000 for a log of minutes): under it reads "under 1m". */
    clockMs?: number;
  };
  /**
   * Who answered most questions, most first (at most 3; never the asker, an erased person or one
   * who opted out); absent when the digest was built without knowing who opted out.
   */
  answerers?: { name: string; answers: number }[];
}

/** One channel's activity over the period. */
export interface DigestActivity {
  channel: string;
  messages: number;
  /** Segments (conversations) with a message in the period. */
  conversations: number;
  /** Distinct authors of those messages, where the platform names them. */
  activePeople: number;
  /** Messages per UTC day of the period (`YYYY-MM-DD`), every day present, oldest first. */
  days: { day: string; messages: number }[];
}

export interface Digest {
  v: 1;
  channels: string[];
  /** The period, epoch ms, half-open: [since, until). */
  since: number;
  until: number;
  /** ISO 8601. */
  generatedAt: string;
  /** New topics first, then recurring; each by segments in the period, most first. */
  topics: DigestTopic[];
  /** Asked in the period and not answered, oldest first. */
  unanswered: DigestQuestion[];
  /** Asked in the period, and whether an answer came is not clear, oldest first. */
  unclear: DigestQuestion[];
  /** Asked in the period and answered, oldest first. */
  answered: DigestQuestion[];
  activity: DigestActivity[];
  /**
   * Recurring questions asked in the period, per channel in the order of `channels`, each
   * channel's most asked first (added within v1; absent when there are none).
   */
  faq?: DigestFaq[];
  /**
   * Per channel with a question asked in the period, in the order of `channels`: its health
   * (added within v1; absent when no channel had a question).
   */
  health?: DigestHealth[];
  /**
   * The display name of each channel that has one other than its id (an export's `general` for
   * `C0GENERAL`), as its messages carry it (added within v1; absent when none is known).
   */
  names?: Record<string, string>;
  /**
   * What the caps left out (added within v1; absent when nothing was): topics past the first
   * {@link DIGEST_LIMITS}, questions past the first of each list, recurring questions past the
   * first of each channel.
   */
  omitted?: {
    topics: number;
    unanswered: number;
    unclear: number;
    answered: number;
    /** Recurring questions past the first of each channel (added within v1; absent when none). */
    faq?: number;
  };
}
