/**
 * A channel's health over a period, computed from what the stores hold: its questions (the
 * questions index), the answering messages read by id (when and by whom) and when each of its
 * conversations (segments) began. Pure: the same inputs give the same figures, in any order.
 */

/** What the figures are grouped by: UTC days, or ISO weeks (Monday to Sunday, UTC). */
export type HealthBucket = "day" | "week";

/** A question as the questions index keeps it (`StoredQuestion`, the API's `Question`). */
export interface HealthQuestion {
  askedTs: number;
  askedBy?: string;
  status: "answered" | "unanswered" | "unclear";
  answerIds: readonly string[];
}

/**
 * An answering message as the messages store has it: ids not stored and deleted ones (an erased
 * person's messages are deleted) are left out by whoever reads them, so never counted here.
 */
export interface HealthMessage {
  id: string;
  ts: number;
  author?: string;
  /** A bot's answer answers, but a bot is never among the people who answer most. */
  bot?: boolean;
}

export interface HealthInput {
  /** [since, until) in epoch ms: questions and conversations outside it are not counted. */
  period: { since: number; until: number };
  bucket: HealthBucket;
  questions: readonly HealthQuestion[];
  answers: readonly HealthMessage[];
  /** When each conversation began (its result's `first.ts`). */
  conversations: readonly number[];
  /** People who asked not to be named (author names or ids, any case): never in `answerers`. */
  optOut?: readonly string[];
  /** The most answerers listed (default {@link TOP_ANSWERERS}). */
  top?: number;
}

/** Time to first answer over the answered questions whose answering messages are kept. */
interface FirstAnswerTimes {
  /** How many answered questions it is measured over. */
  measured: number;
  medianMs: number | null;
  p90Ms: number | null;
  /**
   * The clock the channel's measured times keep: 60,000 when every asking and first answer is a
   * whole minute (an IRC log's), 1,000 when a whole second, else 1. A time under it is known only
   * to be under it: "under 1m", not "0s" (`formatElapsed`).
   */
  clockMs: number;
}

interface HealthBucketFigures {
  /** The bucket's first instant (epoch ms) and its name: `2026-01-05`, or `2026-W02`. */
  start: number;
  label: string;
  questions: number;
  answered: number;
  conversations: number;
  firstAnswer: FirstAnswerTimes;
}

export interface ChannelHealth {
  since: number;
  until: number;
  bucket: HealthBucket;
  questions: number;
  answered: number;
  unanswered: number;
  unclear: number;
  /** answered / questions, null when none was asked. */
  answeredShare: number | null;
  firstAnswer: FirstAnswerTimes;
  /** Unanswered questions by age at `until`: under 1 day, 7, 30, and older (`upToDays` null). */
  unansweredByAge: { upToDays: number | null; questions: number }[];
  /** Who answered most questions, most first (then by name): never an opted-out person. */
  answerers: { name: string; answers: number }[];
  conversations: number;
  buckets: HealthBucketFigures[];
}

const TOP_ANSWERERS = 10;
const DAY_MS = 86_400_000;
const AGE_EDGES_DAYS = [1, 7, 30] as const;

export function channelHealth(input: HealthInput): ChannelHealth {
  const { since, until } = input.period;
  const within = (ts: number) => ts >= since && ts < until;
  const questions = input.questions.filter((q) => within(q.askedTs));
  const byId = new Map(input.answers.map((m) => [m.id, m]));
  const buckets = bucketStarts(since, until, input.bucket);
  const index = (ts: number) => bucketIndex(buckets, ts);
  const rows = buckets.map(() => ({
    questions: 0,
    answered: 0,
    conversations: 0,
    times: [] as number[],
  }));
  const times: number[] = [];
  const stamps: number[] = [];
  const ages = AGE_EDGES_DAYS.map(() => 0).concat(0);
  const counts = { answered: 0, unanswered: 0, unclear: 0 };
  const answered = new Map<string, number>();
  for (const question of questions) {
    const row = rows[index(question.askedTs)];
    row.questions += 1;
    counts[question.status] += 1;
    if (question.status === "unanswered") {
      const age = (until - question.askedTs) / DAY_MS;
      const edge = AGE_EDGES_DAYS.findIndex((days) => age < days);
      ages[edge < 0 ? AGE_EDGES_DAYS.length : edge] += 1;
    }
    if (question.status !== "answered") continue;
    row.answered += 1;
    const found = question.answerIds.flatMap((id) => byId.get(id) ?? []);
    if (found.length > 0) {
      const first = Math.min(...found.map((m) => m.ts));
      const time = Math.max(0, first - question.askedTs);
      times.push(time);
      stamps.push(question.askedTs, first);
      row.times.push(time);
    }
    const authors = new Set(found.flatMap((m) => (m.author && m.bot !== true ? [m.author] : [])));
    for (const author of authors) {
      if (author !== question.askedBy) answered.set(author, (answered.get(author) ?? 0) + 1);
    }
  }
  let conversations = 0;
  for (const ts of input.conversations) {
    if (!within(ts)) continue;
    conversations += 1;
    rows[index(ts)].conversations += 1;
  }
  const clockMs = clockOf(stamps);
  return {
    since,
    until,
    bucket: input.bucket,
    questions: questions.length,
    ...counts,
    answeredShare: questions.length === 0 ? null : counts.answered / questions.length,
    firstAnswer: firstAnswerTimes(times, clockMs),
    unansweredByAge: ages.map((n, i) => ({ upToDays: AGE_EDGES_DAYS[i] ?? null, questions: n })),
    answerers: topAnswerers(answered, input.optOut ?? [], input.top ?? TOP_ANSWERERS),
    conversations,
    buckets: buckets.map((start, i) => ({
      start,
      label: bucketLabel(start, input.bucket),
      questions: rows[i].questions,
      answered: rows[i].answered,
      conversations: rows[i].conversations,
      firstAnswer: firstAnswerTimes(rows[i].times, clockMs),
    })),
  };
}

/** The median and 90th percentile by nearest rank (each a measured time), null over none. */
function firstAnswerTimes(times: readonly number[], clockMs: number): FirstAnswerTimes {
  const sorted = [...times].sort((a, b) => a - b);
  const rank = (p: number) =>
    sorted.length === 0 ? null : sorted[Math.ceil(p * sorted.length) - 1];
  return { measured: sorted.length, medianMs: rank(0.5), p90Ms: rank(0.9), clockMs };
}

/** The coarsest of a minute, a second and a millisecond that every one of `stamps` is whole in. */
function clockOf(stamps: readonly number[]): number {
  for (const unit of [60_000, 1_000]) {
    if (stamps.length > 0 && stamps.every((ts) => ts % unit === 0)) return unit;
  }
  return 1;
}

function topAnswerers(
  answered: ReadonlyMap<string, number>,
  optOut: readonly string[],
  top: number,
): { name: string; answers: number }[] {
  const hidden = new Set(optOut.map((name) => name.toLowerCase()));
  return [...answered]
    .filter(([name]) => !hidden.has(name.toLowerCase()))
    .map(([name, answers]) => ({ name, answers }))
    .sort((a, b) => b.answers - a.answers || (a.name < b.name ? -1 : 1))
    .slice(0, Math.max(0, top));
}

/** The first instant of the UTC day, or ISO week, that `ts` is in. */
function bucketStart(ts: number, bucket: HealthBucket): number {
  const day = Math.floor(ts / DAY_MS) * DAY_MS;
  if (bucket === "day") return day;
  // 1970-01-01 was a Thursday: Monday is 3 days before it.
  return day - ((((Math.floor(day / DAY_MS) + 3) % 7) + 7) % 7) * DAY_MS;
}

/** Each bucket's start from the one `since` is in to the one the period's last instant is in. */
function bucketStarts(since: number, until: number, bucket: HealthBucket): number[] {
  const starts: number[] = [];
  const step = bucket === "day" ? DAY_MS : 7 * DAY_MS;
  for (let start = bucketStart(since, bucket); start < until; start += step) starts.push(start);
  return starts;
}

/** The bucket `ts` (within the period) is in: the last that starts at or before it. */
function bucketIndex(starts: readonly number[], ts: number): number {
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (starts[middle] <= ts) low = middle;
    else high = middle - 1;
  }
  return low;
}

function bucketLabel(start: number, bucket: HealthBucket): string {
  const date = new Date(start).toISOString().slice(0, 10);
  if (bucket === "day") return date;
  // The ISO week's year is its Thursday's; week 1 is the one with that year's first Thursday.
  const thursday = start + 3 * DAY_MS;
  const year = new Date(thursday).getUTCFullYear();
  const week = Math.floor((thursday - Date.UTC(year, 0, 1)) / (7 * DAY_MS)) + 1;
  return `${year}-W${String(week).padStart(2, "0")}`;
}
