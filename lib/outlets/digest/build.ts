import { messagePermalink } from "../../history/messages/index.js";
import { mergeSupports } from "../../knowledge/read/index.js";
import type {
  Corrected,
  SegmentResult,
  StoredQuestion,
  TopicSupport,
} from "../../knowledge/store/index.js";
import type { TopicMatcher } from "../../knowledge/topics/index.js";
import { DigestError, MAX_PERIOD_DAYS } from "./errors.js";
import { channelFaq } from "./faq.js";
import { answerIds, digestHealth } from "./health.js";
import type { ActivityMessage, AnswerMessage, DigestSources, MessageLink } from "./sources.js";
import type {
  Digest,
  DigestActivity,
  DigestEvidence,
  DigestFaq,
  DigestHealth,
  DigestQuestion,
  DigestTopic,
} from "./types.js";

/**
 * How much a digest lists: the first topics and questions of each list and the first recurring
 * questions of each channel, the rest counted.
 */
export const DIGEST_LIMITS = { topics: 20, questions: 50, evidence: 10, faq: 5 } as const;

const DAY_MS = 86_400_000;

export interface BuildDigestOptions {
  channels: string[];
  /** The period, epoch ms, half-open: [since, until). */
  since: number;
  until: number;
  now?: Date;
  /** Which wordings are one topic (`lib/knowledge/topics`; default: the token key). */
  matchers?: readonly TopicMatcher[];
  /** The channels' display names, by id, where they are known: {@link Digest.names}. */
  names?: Readonly<Record<string, string>>;
  /**
   * Name the health table's answerers, leaving out `optOut` (names or ids, any case: the stats
   * route's setting); without it none is named, as a caller that does not know who opted out.
   */
  answerers?: { optOut: readonly string[] };
}

/** One channel's digest over a period, as the read API asks for it. */
export interface ChannelDigests {
  digest(channel: string, period: { since: number; until: number }): Promise<Digest>;
}

/**
 * {@link buildDigest} one channel at a time, generated "at" the period's end, so that the same
 * period reads as the same bytes (and the same ETag) until something in it changes.
 */
export function channelDigests(
  sources: DigestSources,
  options: { matchers?: readonly TopicMatcher[]; answerers?: { optOut: readonly string[] } } = {},
): ChannelDigests {
  return {
    digest: (channel, { since, until }) =>
      buildDigest(sources, {
        channels: [channel],
        since,
        until,
        now: new Date(until),
        ...(options.matchers && { matchers: options.matchers }),
        ...(options.answerers && { answerers: options.answerers }),
      }),
  };
}

/**
 * The digest of `channels` over [since, until), from what `sources` read: pure given them, and
 * the same whatever order they list things in. A topic is of the period when some of its evidence
 * begins in it: `new` when none begins before, `recurring` otherwise; questions are those asked
 * in the period (results extracted before questions were have none). Then each entry listed gets
 * its platform link ({@link DigestTopic.permalink}): the messages read for it are those entries'
 * first evidence messages only, one per entry.
 */
export async function buildDigest(
  sources: DigestSources,
  options: BuildDigestOptions,
): Promise<Digest> {
  const channels = [...new Set(options.channels)];
  checkOptions(channels, options.since, options.until);
  const read: DigestChannel[] = [];
  for (const channel of channels) {
    const [supports, results, messages] = await Promise.all([
      sources.supports(channel),
      sources.results(channel),
      sources.activity(channel, options.since, options.until),
    ]);
    // Only the answering messages of the period's questions: when and by whom each was.
    const ids = answerIds(results, options);
    const answers = ids.length === 0 ? [] : await sources.answers(channel, ids);
    read.push({ channel, supports, results, messages, answers });
  }
  const digest = assembleDigest(read, options);
  const links = await Promise.all(
    [...linkedIds(digest)].map(
      async ([channel, ids]) => [channel, await sources.links(channel, ids)] as const,
    ),
  );
  return withPermalinks(digest, links);
}

/** One channel's data as a digest reads it: what {@link DigestSources} answer for it. */
export interface DigestChannel {
  channel: string;
  supports: readonly TopicSupport[];
  /** Its results; only `segmentId`, `thread` and `questions` are read. */
  results: readonly Pick<SegmentResult, "segmentId" | "thread" | "questions">[];
  messages: readonly ActivityMessage[];
  /**
   * Its messages as the platform's links need them, where they are at hand (the report's): the
   * entries of the period get their permalinks from these. {@link buildDigest} reads its own.
   */
  links?: readonly MessageLink[];
  /** The answering messages of its questions (`DigestSources.answers`), for the health table. */
  answers?: readonly AnswerMessage[];
}

/**
 * {@link buildDigest} on data already read (the report builds its digest so): synchronous and
 * pure; the channels are `options.channels` (repeats dropped), each found in `data` by name.
 */
export function assembleDigest(
  data: readonly DigestChannel[],
  options: Omit<BuildDigestOptions, "channels"> & { channels?: string[] },
): Digest {
  const { since, until } = options;
  const channels = [...new Set(options.channels ?? data.map((d) => d.channel))];
  checkOptions(channels, since, until);
  const topics: DigestTopic[] = [];
  const activity: DigestActivity[] = [];
  const faq: DigestFaq[] = [];
  const health: DigestHealth[] = [];
  let faqLeft = 0;
  for (const channel of channels) {
    const of = data.filter((d) => d.channel === channel);
    const answers = of.flatMap((d) => d.answers ?? []);
    const figures = digestHealth(
      channel,
      of.flatMap((d) => d.results),
      answers,
      { since, until },
      options.answerers,
    );
    if (figures !== undefined) health.push(figures);
    const asked = Object.values(channelQuestions(of)).flat();
    const recurring = channelFaq(
      channel,
      asked,
      { since, until },
      of.flatMap((d) => d.results),
    );
    faq.push(...recurring.slice(0, DIGEST_LIMITS.faq));
    faqLeft += Math.max(0, recurring.length - DIGEST_LIMITS.faq);
    const supports = of.flatMap((d) => d.supports);
    const messages = of.flatMap((d) => d.messages);
    for (const topic of mergeSupports(supports, options.matchers)) {
      const before = topic.evidence.filter((e) => e.firstTs < since);
      const within = topic.evidence.filter((e) => e.firstTs >= since && e.firstTs < until);
      if (within.length === 0) continue;
      topics.push({
        channel,
        topic: topic.topic,
        aliases: topic.aliases,
        kind: before.length === 0 ? "new" : "recurring",
        segments: distinct(within.map((e) => e.segmentId)),
        earlierSegments: distinct(before.map((e) => e.segmentId)),
        firstSeen: Math.min(...[...before, ...within].map((e) => e.firstTs)),
        lastSeen: Math.max(...within.map((e) => e.lastTs)),
        evidence: within.slice(0, DIGEST_LIMITS.evidence).map(
          (e): DigestEvidence => ({
            channel,
            segmentId: e.segmentId,
            messageIds: e.messageIds,
            ...(e.thread === undefined ? {} : { thread: e.thread }),
            firstTs: e.firstTs,
            lastTs: e.lastTs,
          }),
        ),
      });
    }
    activity.push(channelActivity(channel, messages, since, until));
  }
  topics.sort(byTopic);
  const { unanswered, unclear, answered } = channelQuestions(
    data.filter((d) => channels.includes(d.channel)),
    { since, until },
  );
  const left = (list: readonly unknown[]) => Math.max(0, list.length - DIGEST_LIMITS.questions);
  const omitted = {
    topics: Math.max(0, topics.length - DIGEST_LIMITS.topics),
    unanswered: left(unanswered),
    unclear: left(unclear),
    answered: left(answered),
    ...(faqLeft > 0 && { faq: faqLeft }),
  };
  const digest: Digest = {
    v: 1,
    channels,
    since,
    until,
    generatedAt: (options.now ?? new Date()).toISOString(),
    topics: listedTopics(topics, DIGEST_LIMITS.topics),
    unanswered: unanswered.slice(0, DIGEST_LIMITS.questions),
    unclear: unclear.slice(0, DIGEST_LIMITS.questions),
    answered: answered.slice(0, DIGEST_LIMITS.questions),
    activity,
    ...(faq.length > 0 && { faq }),
    ...(health.length > 0 && { health }),
    ...namesOf(channels, options.names),
    ...(omitted.topics + omitted.unanswered + omitted.unclear + omitted.answered + faqLeft > 0
      ? { omitted }
      : {}),
  };
  const links = data.flatMap((d) => (d.links === undefined ? [] : [[d.channel, d.links] as const]));
  return links.length === 0 ? digest : withPermalinks(digest, links);
}

/** A topic's first evidence message: the first of its first evidence that names messages. */
const firstEvidenceId = (t: DigestTopic): string | undefined =>
  t.evidence.find((e) => e.messageIds !== null)?.messageIds?.[0];

/**
 * The messages the digest's entries link to, by channel: one per topic, per question and per
 * recurring question.
 */
function linkedIds(digest: Digest): Map<string, string[]> {
  const ids = new Map<string, Set<string>>();
  const add = (channel: string, id: string | undefined) => {
    if (id === undefined) return;
    const of = ids.get(channel) ?? new Set<string>();
    ids.set(channel, of.add(id));
  };
  for (const t of digest.topics) add(t.channel, firstEvidenceId(t));
  for (const q of [...digest.unanswered, ...digest.unclear, ...digest.answered]) {
    add(q.channel, q.askedId);
  }
  for (const f of digest.faq ?? []) add(f.channel, f.askedId);
  return new Map([...ids].map(([channel, of]) => [channel, [...of]]));
}

/**
 * `digest` with each topic's and question's permalink ({@link messagePermalink} of its first
 * evidence message, as `links` give it by channel); none where the message is not among them or
 * its platform has no link.
 */
function withPermalinks(
  digest: Digest,
  links: Iterable<readonly [string, readonly MessageLink[]]>,
): Digest {
  const byId = new Map<string, MessageLink>();
  for (const [channel, of] of links) for (const m of of) byId.set(`${channel}\u0000${m.id}`, m);
  const permalink = (channel: string, id: string | undefined): { permalink?: string } => {
    const message = id === undefined ? undefined : byId.get(`${channel}\u0000${id}`);
    const url = message === undefined ? "" : messagePermalink({ ...message, channel });
    return url === "" ? {} : { permalink: url };
  };
  const question = (q: DigestQuestion): DigestQuestion => ({
    ...q,
    ...permalink(q.channel, q.askedId),
  });
  return {
    ...digest,
    topics: digest.topics.map((t) => ({ ...t, ...permalink(t.channel, firstEvidenceId(t)) })),
    unanswered: digest.unanswered.map(question),
    unclear: digest.unclear.map(question),
    answered: digest.answered.map(question),
    ...(digest.faq !== undefined && {
      faq: digest.faq.map((f) => ({ ...f, ...permalink(f.channel, f.askedId) })),
    }),
  };
}

/** The names of the digest's channels that have one other than their id; none: nothing. */
function namesOf(
  channels: readonly string[],
  given: Readonly<Record<string, string>> = {},
): { names?: Record<string, string> } {
  const named = channels.flatMap((c) =>
    Object.hasOwn(given, c) && given[c] !== c ? [[c, given[c]] as const] : [],
  );
  return named.length === 0 ? {} : { names: Object.fromEntries(named) };
}

function checkOptions(channels: readonly string[], since: number, until: number): void {
  if (channels.length === 0) {
    throw new DigestError("DIGEST_NO_CHANNELS", "channels: name at least one channel");
  }
  if (!Number.isSafeInteger(since) || !Number.isSafeInteger(until) || since >= until) {
    throw new DigestError(
      "DIGEST_BAD_PERIOD",
      `the period must begin (--since) before it ends (--until) (got ${when(since)} to ${when(until)})`,
    );
  }
  if (until - since > MAX_PERIOD_DAYS * DAY_MS) {
    throw new DigestError(
      "DIGEST_BAD_PERIOD",
      `the period (--since to --until) must be at most ${MAX_PERIOD_DAYS} days`,
    );
  }
}

/** A channel's messages of the period counted: conversations, people, and per UTC day. */
function channelActivity(
  channel: string,
  messages: readonly { ts: number; author?: string; segmentId?: string }[],
  since: number,
  until: number,
): DigestActivity {
  const inPeriod = messages.filter((m) => m.ts >= since && m.ts < until);
  const perDay = new Map<string, number>();
  for (let day = Math.floor(since / DAY_MS); day * DAY_MS < until; day++) {
    perDay.set(utcDay(day * DAY_MS), 0);
  }
  for (const m of inPeriod) {
    const day = utcDay(m.ts);
    perDay.set(day, (perDay.get(day) ?? 0) + 1);
  }
  return {
    channel,
    messages: inPeriod.length,
    conversations: distinct(
      inPeriod.flatMap((m) => (m.segmentId === undefined ? [] : [m.segmentId])),
    ),
    activePeople: distinct(inPeriod.flatMap((m) => (m.author === undefined ? [] : [m.author]))),
    days: [...perDay].map(([day, count]) => ({ day, messages: count })),
  };
}

const when = (ms: number): string =>
  Number.isFinite(ms) && Math.abs(ms) < 8.64e15 ? new Date(ms).toISOString() : String(ms);
const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
const distinct = (values: readonly string[]): number => new Set(values).size;
const byCode = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** New first, then recurring; each by segments of the period, then the latest, then by name. */
const byTopic = (a: DigestTopic, b: DigestTopic): number =>
  (a.kind === b.kind ? 0 : a.kind === "new" ? -1 : 1) ||
  b.segments - a.segments ||
  b.lastSeen - a.lastSeen ||
  byCode(a.channel, b.channel) ||
  byCode(a.topic, b.topic);

/**
 * At most `limit` of the sorted `topics`, half of them of each kind where both have that many, the
 * share one kind leaves to the other: a week of hundreds of one-conversation new topics still
 * lists the recurring ones, where taking the first `limit` listed none and said "None."
 */
function listedTopics(topics: readonly DigestTopic[], limit: number): DigestTopic[] {
  const fresh = topics.filter((t) => t.kind === "new");
  const recurring = topics.filter((t) => t.kind === "recurring");
  const half = Math.ceil(limit / 2);
  const recurringShown = Math.min(recurring.length, Math.max(limit - fresh.length, half));
  const freshShown = Math.min(fresh.length, limit - recurringShown);
  return [...fresh.slice(0, freshShown), ...recurring.slice(0, recurringShown)];
}

/** Oldest first; ties by where and what, so that the order never depends on the input's. */
/**
 * The questions of the channels' results asked in the period (default: ever), oldest first, split
 * by status: the one vocabulary the digest, the report, `questions` and the run's summary count by.
 */
export function channelQuestions(
  channels: readonly Pick<DigestChannel, "channel" | "results">[],
  period: { since: number; until: number } = { since: -Infinity, until: Infinity },
): Record<DigestQuestion["status"], DigestQuestion[]> {
  const all: DigestQuestion[] = [];
  for (const { channel, results } of channels) {
    for (const result of results) {
      for (const q of resultQuestions(channel, result)) {
        if (q.askedTs >= period.since && q.askedTs < period.until) all.push(q);
      }
    }
  }
  all.sort(byQuestion);
  const split: Record<DigestQuestion["status"], DigestQuestion[]> = {
    unanswered: [],
    unclear: [],
    answered: [],
  };
  for (const q of all) split[q.status].push(q);
  return split;
}

const byQuestion = (a: DigestQuestion, b: DigestQuestion): number =>
  a.askedTs - b.askedTs ||
  byCode(a.channel, b.channel) ||
  byCode(a.segmentId, b.segmentId) ||
  byCode(a.askedId, b.askedId) ||
  byCode(a.question, b.question) ||
  byCode(a.status, b.status) ||
  byCode(a.answer ?? "", b.answer ?? "");

/** A result's questions as the digest lists them: with their channel, segment and thread. */
function resultQuestions(
  channel: string,
  result: Pick<SegmentResult, "questions" | "segmentId" | "thread">,
): DigestQuestion[] {
  return (result.questions ?? []).map((q) => ({
    channel,
    segmentId: result.segmentId,
    question: q.question,
    status: q.status,
    askedId: q.askedId,
    askedTs: q.askedTs,
    ...(q.answer === undefined ? {} : { answer: q.answer }),
    answerIds: [...q.answerIds],
    ...(result.thread === undefined ? {} : { thread: result.thread }),
    ...((q as Corrected<StoredQuestion>).corrected && { corrected: true as const }),
  }));
}
