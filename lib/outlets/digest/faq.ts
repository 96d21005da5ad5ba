/**
 * The digest's and the report's recurring questions: a channel's questions, all of them, grouped
 * into FAQ entries (lib/knowledge/faq), each linked by its latest asking in a period. An entry of
 * the period is one asked at least twice in all and at least once in the period: a question that
 * keeps coming back, come back again.
 */
import { groupQuestions } from "../../knowledge/faq/index.js";
import { utcDate } from "./text.js";
import type { DigestEvidence, DigestFaq, DigestQuestion } from "./types.js";

const ALL_TIME = { since: Number.NEGATIVE_INFINITY, until: Number.POSITIVE_INFINITY };

/**
 * The FAQ entries of `channel`'s `questions` (its every asking, whatever its status) asked in
 * `period` (default: ever), most asked first as `groupQuestions` orders them; each linked by its
 * latest asking in the period.
 */
export function channelFaq(
  channel: string,
  questions: readonly DigestQuestion[],
  period: { since: number; until: number } = ALL_TIME,
): DigestFaq[] {
  const byAsked = new Map(questions.map((q) => [q.askedId, q]));
  const entries: DigestFaq[] = [];
  // Every asking as evidence: its period's share and its latest one are read from them.
  for (const e of groupQuestions(questions, { maxEvidence: Number.MAX_SAFE_INTEGER })) {
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
 * `asked 5 times since 2026-01-02, 2 in the period`: how often an entry was asked, in words every
 * form prints as they are (no chat text in them). `inPeriod` is left out when it is all of them.
 */
export function faqAsked(f: Pick<DigestFaq, "count" | "inPeriod" | "firstAsked">): string {
  const share = f.inPeriod === f.count ? "" : `, ${f.inPeriod} in the period`;
  return `asked ${f.count} times since ${utcDate(f.firstAsked)}${share}`;
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
