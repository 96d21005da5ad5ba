/**
 * The report's health figures: each channel's questions, answers and conversations over all of
 * its data (lib/knowledge/health), by day or by week, made columnar so that years of a busy
 * channel embed as a few hundred numbers.
 */
import { nextUtcMidnight } from "../../base/duration/index.js";
import {
  channelHealth,
  type HealthBucket,
  type HealthMessage,
  type HealthQuestion,
} from "../../knowledge/health/index.js";
import type { StoredQuestion } from "../../knowledge/store/index.js";
import type { ChannelHealthData } from "./data.js";
import type { ReportInput, ReportMessage } from "./records.js";

const DAY_MS = 86_400_000;
/** The longest span still drawn by day: past it a day's bar would be under a pixel or two. */
const DAILY_DAYS = 92;
/** The most people the report names among a channel's answerers. */
const REPORT_ANSWERERS = 10;

/** Days over `[since, until)` shorter than this are drawn by day, longer ones by week. */
export function healthBucket(since: number, until: number): HealthBucket {
  return until - since <= DAILY_DAYS * DAY_MS ? "day" : "week";
}

/**
 * Each channel's health over its whole span: from its first message, conversation or question to
 * the end of the UTC day of its last, unanswered questions aged at that end. Questions are those
 * of extraction lines that carry them (stored results do); answers the input messages they name
 * (an erased person's are gone from the input, so never counted); people in `optOut` (names or
 * ids, any case) are never named among the answerers. Channels with nothing are left out.
 */
export function reportHealth(input: ReportInput): ChannelHealthData[] {
  const questions = new Map<string, HealthQuestion[]>();
  for (const line of input.candidates ?? []) {
    const asked = (line as { questions?: readonly StoredQuestion[] }).questions ?? [];
    if (asked.length > 0) listOf(questions, line.channel).push(...asked);
  }
  const messages = new Map<string, ReportMessage[]>();
  for (const m of input.messages ?? []) listOf(messages, m.channel).push(m);
  const conversations = new Map<string, number[]>();
  const lasts = new Map<string, number[]>();
  for (const s of input.segments) {
    listOf(conversations, s.channel).push(s.first.ts);
    listOf(lasts, s.channel).push(s.last.ts);
  }
  const optOut = reportOptOut(input);
  const names = [...new Set([...questions.keys(), ...messages.keys(), ...conversations.keys()])];
  return names.sort().map((channel) => {
    const asked = questions.get(channel) ?? [];
    const said = messages.get(channel) ?? [];
    const began = conversations.get(channel) ?? [];
    // Loops, not Math.min(...): a channel's messages can outnumber a call's arguments.
    let since = Number.POSITIVE_INFINITY;
    let latest = Number.NEGATIVE_INFINITY;
    for (const ts of [asked.map((q) => q.askedTs), said.map((m) => m.ts), began].flat()) {
      since = Math.min(since, ts);
      latest = Math.max(latest, ts);
    }
    for (const ts of lasts.get(channel) ?? []) latest = Math.max(latest, ts);
    const until = nextUtcMidnight(latest);
    const wanted = new Set(asked.flatMap((q) => (q.status === "answered" ? q.answerIds : [])));
    const answers: HealthMessage[] = [];
    for (const m of said) {
      if (!wanted.has(m.id)) continue;
      const author = typeof m.user === "string" ? m.user : m.userId;
      answers.push({
        id: m.id,
        ts: m.ts,
        ...(author === undefined ? {} : { author }),
        ...(m.kind === "bot" && { bot: true }),
      });
    }
    const bucket = healthBucket(since, until);
    const { buckets, ...totals } = channelHealth({
      period: { since, until },
      bucket,
      questions: asked,
      answers,
      conversations: began,
      optOut,
      top: REPORT_ANSWERERS,
    });
    return {
      channel,
      ...totals,
      starts: buckets.map((b) => b.start),
      perBucket: {
        questions: buckets.map((b) => b.questions),
        answered: buckets.map((b) => b.answered),
        conversations: buckets.map((b) => b.conversations),
        medianMs: buckets.map((b) => b.firstAnswer.medianMs),
        p90Ms: buckets.map((b) => b.firstAnswer.p90Ms),
      },
    };
  });
}

/**
 * The opt-out as the messages name people: the setting's names and ids, and the name each
 * opted-out id's messages go by (an answerer is counted by name, and a setting may hold the id).
 */
export function reportOptOut(input: Pick<ReportInput, "optOut" | "messages">): string[] {
  const hidden = new Set((input.optOut ?? []).map((name) => name.toLowerCase()));
  if (hidden.size === 0) return [];
  const names = new Set(hidden);
  for (const m of input.messages ?? []) {
    if (typeof m.user === "string" && m.userId !== undefined && hidden.has(m.userId.toLowerCase()))
      names.add(m.user.toLowerCase());
  }
  return [...names];
}

function listOf<T>(map: Map<string, T[]>, key: string): T[] {
  let list = map.get(key);
  if (list === undefined) {
    list = [];
    map.set(key, list);
  }
  return list;
}
