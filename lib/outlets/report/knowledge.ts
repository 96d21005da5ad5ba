/**
 * What the report shows of the knowledge besides topics: the questions of the extracted
 * segments (unanswered oldest first, answered with their answers), the recurring ones among them
 * (lib/knowledge/faq) and a digest of the data's last seven days (lib/outlets/digest), each entry
 * naming its segment for the page's anchor.
 */

import { nextUtcMidnight } from "../../base/duration/index.js";
import { messagePermalink } from "../../history/messages/index.js";
import { normalizeTopic } from "../../knowledge/extraction/index.js";
import type { StoredQuestion } from "../../knowledge/store/index.js";
import type { CandidatesLine } from "../../segmentation/pipeline/contract/index.js";
import {
  assembleDigest,
  channelFaq,
  channelQuestions,
  type DigestChannel,
  type DigestQuestion,
} from "../digest/index.js";
import type { ReportKnowledge } from "./data.js";
import { reportHealth, reportOptOut } from "./health.js";
import type { ReportInput } from "./records.js";

/** Questions a list of the report shows at most; the rest are counted. */
const REPORT_QUESTIONS = 200;
/** Recurring questions the report lists at most, across channels; the rest are counted. */
const REPORT_FAQ = 20;
const DAY_MS = 86_400_000;
/** The digest's period: the last seven UTC days of the data. */
const DIGEST_DAYS = 7;

/** An extraction line as results carry it: with the segment's questions and thread, if any. */
type ExtractedLine = CandidatesLine & { questions?: readonly StoredQuestion[]; thread?: string };

/**
 * The report's questions and digest. Questions come from extraction lines that carry them
 * (stored results do: the workspace's; `run --candidates` lines do not). The digest's period ends
 * with the UTC day of the latest message (or segment), null when there is neither.
 */
export function reportKnowledge(input: ReportInput): ReportKnowledge {
  const lines = (input.candidates ?? []) as readonly ExtractedLine[];
  const records = new Map(input.segments.map((s) => [`${s.channel}\u0000${s.segmentId}`, s]));
  const ts = new Map((input.messages ?? []).map((m) => [`${m.channel}\u0000${m.id}`, m.ts]));
  const segmentOf = new Map<string, string>();
  for (const s of input.segments) {
    for (const id of s.messageIds) segmentOf.set(`${s.channel}\u0000${id}`, s.segmentId);
  }
  const channels = new Map<string, DigestChannel>();
  const channel = (name: string): DigestChannel => {
    let found = channels.get(name);
    if (found === undefined) {
      found = { channel: name, supports: [], results: [], messages: [], links: [], answers: [] };
      channels.set(name, found);
    }
    return found;
  };
  for (const line of lines) {
    const record = records.get(`${line.channel}\u0000${line.segmentId}`);
    const data = channel(line.channel);
    if (line.questions !== undefined) {
      (data.results as DigestChannel["results"][number][]).push({
        segmentId: line.segmentId,
        questions: [...line.questions],
        ...(line.thread === undefined ? {} : { thread: line.thread }),
      });
    }
    if (record === undefined) continue;
    line.candidates.forEach((c, i) => {
      const normalized = normalizeTopic(c.topic);
      if (normalized === "") return;
      const at = (id: string | undefined, fallback: number) =>
        (id === undefined ? undefined : ts.get(`${line.channel}\u0000${id}`)) ?? fallback;
      (data.supports as DigestChannel["supports"][number][]).push({
        v: 1,
        channel: line.channel,
        topic: c.topic,
        normalizedTopic: normalized,
        segmentId: line.segmentId,
        candidateId: c.id ?? String(i),
        late: record.late,
        confidence: c.confidence,
        reason: c.reason,
        tags: [...c.tags],
        messageIds: c.messageIds === null ? null : [c.messageIds[0], c.messageIds[1]],
        ...(record.thread === undefined ? {} : { thread: record.thread }),
        firstTs: at(c.messageIds?.[0], record.first.ts),
        lastTs: at(c.messageIds?.[1], record.last.ts),
      });
    });
  }
  // Each channel's name as its latest message carries it, as the report's channels take it.
  const names: Record<string, string> = {};
  const answering = new Set(
    lines.flatMap((l) =>
      (l.questions ?? []).flatMap((q) => q.answerIds.map((id) => `${l.channel}\u0000${id}`)),
    ),
  );
  for (const m of input.messages ?? []) {
    // The answers to its questions, for the digest's health table: when and by whom.
    if (answering.has(`${m.channel}\u0000${m.id}`)) {
      const author = typeof m.user === "string" ? m.user : m.userId;
      (channel(m.channel).answers as NonNullable<DigestChannel["answers"]>[number][]).push({
        id: m.id,
        ts: m.ts,
        ...(author === undefined ? {} : { author }),
      });
    }
    if (m.channelName !== undefined) names[m.channel] = m.channelName;
    // Only a message with a link needs its fields (messagePermalink says which).
    if (messagePermalink(m) !== "")
      (channel(m.channel).links as NonNullable<DigestChannel["links"]>[number][]).push({
        id: m.id,
        ...(m.platform === undefined ? {} : { platform: m.platform }),
        ...(m.thread === undefined ? {} : { thread: m.thread }),
        ...(m.guild === undefined ? {} : { guild: m.guild }),
        ...(m.chatUsername === undefined ? {} : { chatUsername: m.chatUsername }),
      });
    (channel(m.channel).messages as DigestChannel["messages"][number][]).push({
      ts: m.ts,
      ...(typeof m.user === "string" ? { author: m.user } : {}),
      ...(segmentOf.has(`${m.channel}\u0000${m.id}`)
        ? { segmentId: segmentOf.get(`${m.channel}\u0000${m.id}`) }
        : {}),
    });
  }
  const permalinkOf = permalinks(input.messages ?? []);
  const questions = allQuestions([...channels.values()], permalinkOf);
  const faq = recurringQuestions([...channels.values()], permalinkOf);
  // The user's own chat's last week: the generated sample's channels (`run` without `--input`)
  // only when nothing else is there, else its later made-up dates would set the week.
  const sample = new Set(input.sampleChannels);
  const own = [...channels.keys()].filter((c) => !sample.has(c));
  const digested = own.length > 0 ? own : [...channels.keys()];
  const isDigested = (channel: string) => own.length === 0 || !sample.has(channel);
  let latest = Number.NEGATIVE_INFINITY;
  for (const c of digested)
    for (const m of channels.get(c)?.messages ?? []) latest = Math.max(latest, m.ts);
  for (const s of input.segments) if (isDigested(s.channel)) latest = Math.max(latest, s.last.ts);
  const health = reportHealth(input);
  if (!Number.isFinite(latest) || channels.size === 0)
    return { questions, faq, digest: null, health };
  const until = nextUtcMidnight(latest);
  const digest = assembleDigest([...channels.values()], {
    channels: digested.sort(),
    since: until - DIGEST_DAYS * DAY_MS,
    until,
    now: new Date(input.generatedAt),
    names,
    answerers: { optOut: reportOptOut(input) },
  });
  return { questions, faq, digest, health };
}

type Faq = ReportKnowledge["faq"]["entries"][number];

/**
 * The channels' recurring questions (`channelFaq` over all time), by most people first across
 * channels, then the latest asked; the first {@link REPORT_FAQ} listed, each linked by its latest
 * asking (its segment, and its platform link where it has one), the rest counted.
 */
function recurringQuestions(
  channels: readonly DigestChannel[],
  permalinkOf: PermalinkOf,
): ReportKnowledge["faq"] {
  const all: Faq[] = [];
  for (const data of channels) {
    const asked = Object.values(channelQuestions([data])).flat();
    for (const entry of channelFaq(data.channel, asked, undefined, data.results)) {
      const permalink = permalinkOf(data.channel, entry.askedId);
      all.push(permalink === "" ? entry : { ...entry, permalink });
    }
  }
  all.sort(
    (a, b) =>
      b.people - a.people ||
      b.count - a.count ||
      b.lastAsked - a.lastAsked ||
      byCode(a.channel, b.channel) ||
      byCode(a.question, b.question),
  );
  return { entries: all.slice(0, REPORT_FAQ), omitted: Math.max(0, all.length - REPORT_FAQ) };
}

const byCode = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** A message's platform link by its channel and id; "" where it has none. */
type PermalinkOf = (channel: string, id: string) => string;

/** The platform links of `messages`, read once for both lists: only a platform with links is kept. */
function permalinks(messages: NonNullable<ReportInput["messages"]>): PermalinkOf {
  const links = new Map<string, string>();
  for (const m of messages) {
    const link = messagePermalink(m);
    if (link !== "") links.set(`${m.channel}\u0000${m.id}`, link);
  }
  return (channel, id) => links.get(`${channel}\u0000${id}`) ?? "";
}

function allQuestions(
  channels: readonly DigestChannel[],
  permalinkOf: PermalinkOf,
): ReportKnowledge["questions"] {
  const { unanswered, unclear, answered } = channelQuestions(channels);
  const left = (list: readonly DigestQuestion[]) => Math.max(0, list.length - REPORT_QUESTIONS);
  // Each shown question with its asking message's platform link, where there is one.
  const shown = (list: readonly DigestQuestion[]) =>
    list.slice(0, REPORT_QUESTIONS).map((q) => {
      const permalink = permalinkOf(q.channel, q.askedId);
      return permalink === "" ? q : { ...q, permalink };
    });
  return {
    unanswered: shown(unanswered),
    unclear: shown(unclear),
    answered: shown(answered),
    omitted: { unanswered: left(unanswered), unclear: left(unclear), answered: left(answered) },
  };
}
