/**
 * The digest's health table: per channel, the questions asked in the period, the share answered,
 * how fast the first answer came and who gave most answers, as lib/knowledge/health counts them
 * (the stats route's and the report's one definition).
 */
import { formatElapsed } from "../../base/duration/index.js";
import { channelHealth, type HealthMessage } from "../../knowledge/health/index.js";
import type { SegmentResult } from "../../knowledge/store/index.js";
import type { DigestHealth } from "./types.js";

/** The most answerers a digest names per channel. */
const DIGEST_ANSWERERS = 3;

/**
 * `channel`'s health over [since, until) from its results' questions and the answering messages
 * read (`answers`: deleted ones, an erased person's, are never among them); undefined when no
 * question was asked in it. Answerers are named only with `answerers` given: whoever builds the
 * digest says who opted out, so that a caller that does not know never names anyone.
 */
export function digestHealth(
  channel: string,
  results: readonly Pick<SegmentResult, "questions">[],
  answers: readonly HealthMessage[],
  period: { since: number; until: number },
  answerers: { optOut: readonly string[] } | undefined,
): DigestHealth | undefined {
  const questions = results.flatMap((r) => r.questions ?? []);
  const health = channelHealth({
    period,
    bucket: "day",
    questions,
    answers,
    conversations: [],
    optOut: answerers?.optOut ?? [],
    top: DIGEST_ANSWERERS,
  });
  if (health.questions === 0) return undefined;
  return {
    channel,
    questions: health.questions,
    answered: health.answered,
    unanswered: health.unanswered,
    unclear: health.unclear,
    answeredShare: health.answeredShare,
    firstAnswer: health.firstAnswer,
    ...(answerers !== undefined && { answerers: health.answerers }),
  };
}

/** The answering messages' ids of the results' questions asked in the period: what to read. */
export function answerIds(
  results: readonly Pick<SegmentResult, "questions">[],
  period: { since: number; until: number },
): string[] {
  const ids = new Set<string>();
  for (const r of results)
    for (const q of r.questions ?? [])
      if (q.status === "answered" && q.askedTs >= period.since && q.askedTs < period.until)
        for (const id of q.answerIds) ids.add(id);
  return [...ids];
}

export const HEALTH_HEADING = "Community health";

/**
 * A row's figures in words every form prints as they are (`71% (12 of 17)`, `4m 10s median, 2h
 * p90 (over 12)`); the answerers' names through `escapeName`, the form's own for chat text.
 */
export function healthFigures(
  h: DigestHealth,
  escapeName: (text: string) => string,
): { answered: string; firstAnswer: string; answerers: string | undefined } {
  const share = h.answeredShare === null ? "–" : `${Math.round(h.answeredShare * 100)}%`;
  const { medianMs, p90Ms, measured, clockMs } = h.firstAnswer;
  return {
    answered: `${share} (${h.answered} of ${h.questions})`,
    firstAnswer:
      medianMs === null || p90Ms === null
        ? "–"
        : `${formatElapsed(medianMs, clockMs)} median, ${formatElapsed(p90Ms, clockMs)} p90 (over ${measured})`,
    answerers:
      h.answerers === undefined
        ? undefined
        : h.answerers.length === 0
          ? "none named"
          : h.answerers.map((a) => `${escapeName(a.name)} (${a.answers})`).join(", "),
  };
}
