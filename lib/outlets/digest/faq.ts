/**
 * The digest's and the report's recurring questions: a channel's questions, all of them, grouped
 * into FAQ entries (lib/knowledge/faq), each linked by its latest asking in a period. An entry of
 * the period is one asked by at least two people in all and at least once in the period: a
 * question that keeps coming back, come back again.
 */
import { groupQuestions } from "../../knowledge/faq/index.js";
import type { SegmentResult } from "../../knowledge/store/index.js";
import { utcDate } from "./text.js";
import type { DigestEvidence, DigestFaq, DigestQuestion } from "./types.js";

const ALL_TIME = { since: Number.NEGATIVE_INFINITY, until: Number.POSITIVE_INFINITY };

/**
 * The FAQ entries of `channel`'s `questions` (its every asking, whatever its status) asked in
 * `period` (default: ever), by most people first as `groupQuestions` orders them; each linked by
 * its latest asking in the period. Who asked is read from the channel's `results` (a digest lists
 * no names, so its questions carry none): an asking they do not name counts as one person.
 */
export function channelFaq(
  channel: string,
  questions: readonly DigestQuestion[],
  period: { since: number; until: number } = ALL_TIME,
  results: readonly Pick<SegmentResult, "questions">[] = [],
): DigestFaq[] {
  const askers = new Map<string, string>();
  for (const result of results) {
    for (const q of result.questions ?? []) {
      if (q.askedBy !== undefined) askers.set(q.askedId, q.askedBy);
    }
  }
  const byAsked = new Map(questions.map((q) => [q.askedId, q]));
  const asked = questions.map((q) => {
    const askedBy = askers.get(q.askedId);
    return askedBy === undefined ? q : { ...q, askedBy };
  });
  const entries: DigestFaq[] = [];
  // Every asking as evidence: its period's share and its latest one are read from them.
  for (const e of groupQuestions(asked, { channel, maxEvidence: Number.MAX_SAFE_INTEGER })) {
    const within = e.askedIds.flatMap((id) => {
      const q = byAsked.get(id) as DigestQuestion;
      return q.askedTs >= period.since && q.askedTs < period.until ? [q] : [];
    });
    const latest = within[0];
    if (latest === undefined) continue;
    entries.push({
      channel,
      question: e.question,
      count: e.count,
      people: e.people,
      inPeriod: within.length,
      answered: e.answered,
      firstAsked: e.firstAsked,
      lastAsked: e.lastAsked,
      ...(e.answer !== undefined && { answer: e.answer }),
      segmentId: latest.segmentId,
      askedId: latest.askedId,
      askedTs: latest.askedTs,
      ...(latest.thread === undefined ? {} : { thread: latest.thread }),
    });
  }
  return entries;
}

/**
 * `asked 5 times by 4 people since 2026-01-02, 2 in the period`: how often an entry was asked, in
 * words every form prints as they are (no chat text in them). `inPeriod` is left out when it is
 * all of them.
 */
export function faqAsked(
  f: Pick<DigestFaq, "count" | "people" | "inPeriod" | "firstAsked">,
): string {
  const share = f.inPeriod === f.count ? "" : `, ${f.inPeriod} in the period`;
  return `asked ${f.count} times by ${f.people} people since ${utcDate(f.firstAsked)}${share}`;
}

/** An entry's latest asking in the period as an evidence link: its segment and message. */
export const faqEvidence = (f: DigestFaq): DigestEvidence => ({
  channel: f.channel,
  segmentId: f.segmentId,
  messageIds: [f.askedId, f.askedId],
  ...(f.thread === undefined ? {} : { thread: f.thread }),
  firstTs: f.askedTs,
  lastTs: f.askedTs,
});
