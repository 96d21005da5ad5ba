/**
 * A digest as a Slack incoming webhook message, and its delivery. Every piece of chat text (topics,
 * questions, answers, channel ids) is escaped as Slack asks (`&`, `<`, `>` as entities), so that no
 * `<!channel>`, `<!here>`, `<@U…>`, `<#C…>` or link can be formed by it, and the bare `@here`,
 * `@channel` and `@everyone` get a word joiner after the `@` so that no client links them. The
 * message stays within Slack's limits (a header's 150 characters, a section's 3,000, 50 blocks,
 * the fallback text's 4,000). An entry's platform link, where it has one, is a `<url|open in
 * Slack>` link. The webhook URL is a secret: no error or log carries it.
 */
import { type Backoff, backoff, realSleep } from "../../base/backoff/index.js";
import { DigestError } from "./errors.js";
import { faqAsked } from "./faq.js";
import { HEALTH_HEADING, healthFigures } from "./health.js";
import { FAQ_HEADING, QUESTION_ORDER, questionCorrected, questionHeading } from "./markdown.js";
import {
  counted,
  digestChannel,
  permalinkLabel,
  plainText,
  safePermalink,
  thousands,
} from "./text.js";
import type { Digest, DigestFaq, DigestHealth, DigestQuestion, DigestTopic } from "./types.js";

export const SLACK_LIMITS = {
  headerChars: 150,
  sectionChars: 3000,
  textChars: 4000,
  blocks: 50,
  /** Entries listed per part before "…and N more". */
  entries: 15,
  entryChars: 300,
} as const;

const WORD_JOINER = "\u2060";

/** `text` as Slack shows it literally: entities for `&<>`, broadcast words neutralized. */
export function slackEscape(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/@(?=(here|channel|everyone))/gi, `@${WORD_JOINER}`);
}

/** At most `max` characters of escaped text, never cutting an entity in two. */
function clip(escaped: string, max: number): string {
  if (escaped.length <= max) return escaped;
  let cut = escaped.slice(0, max - 1);
  const amp = cut.lastIndexOf("&");
  if (amp >= 0 && !cut.slice(amp).includes(";")) cut = cut.slice(0, amp);
  return `${cut}…`;
}

/**
 * mrkdwn's markers as look-alikes that mark nothing: mrkdwn has no escape character, so a `*`
 * of chat text would make the rest of a line bold, a `` ` `` code.
 */
const MARKERS: Record<string, string> = {
  "*": "\u2217",
  _: "\u02cd",
  "~": "\u223c",
  "`": "\u02cb",
};

/**
 * `text` as Slack shows it without acting on it: no mrkdwn marker, and a word joiner after the
 * `:` of a scheme and inside a dotted name (`docs\u2060.rs`), where a client would make a link.
 */
function slackLiteral(text: string): string {
  return text
    .replace(/[*_~`]/g, (c) => MARKERS[c] ?? c)
    .replace(/:(?=\/\/)/g, `:${WORD_JOINER}`)
    .replace(/([\p{L}\p{N}])\.(?=[\p{L}\p{N}])/gu, `$1.${WORD_JOINER}`);
}

/**
 * Chat text for a mrkdwn field, as the Markdown and HTML forms treat it: controls, bidi and
 * zero-width characters out and on one line ({@link plainText}), literal, escaped, clipped.
 */
const chat = (text: string, max: number = SLACK_LIMITS.entryChars) =>
  clip(slackEscape(slackLiteral(plainText(text))), max);

interface SlackBlock {
  type: "header" | "section" | "context";
  text?: { type: "plain_text" | "mrkdwn"; text: string };
  elements?: { type: "mrkdwn"; text: string }[];
}

export interface SlackPayload {
  text: string;
  blocks?: SlackBlock[];
}

export interface SlackPayloadOptions {
  /** An http(s) address of the full report: linked at the end. */
  reportUrl?: string;
}

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** A section of `title` and one line per entry, within a section's limit. */
function section(title: string, lines: string[]): SlackBlock {
  const shown = lines.slice(0, SLACK_LIMITS.entries);
  let text = `*${title}*`;
  let listed = 0;
  for (const line of shown) {
    const next = `${text}\n• ${line}`;
    if (next.length > SLACK_LIMITS.sectionChars - 40) break;
    text = next;
    listed++;
  }
  if (listed < lines.length) text += `\n…and ${lines.length - listed} more`;
  return { type: "section", text: { type: "mrkdwn", text } };
}

const topicLine = (t: DigestTopic) =>
  `${chat(t.topic)} (${t.segments} conversation${t.segments === 1 ? "" : "s"}, ${chat(t.channel, 80)})${permalinkOf(t)}`;

const questionLine = (q: DigestQuestion) =>
  `${chat(q.question)} (${chat(q.channel, 80)}, ${day(q.askedTs)})${questionCorrected(q)}${permalinkOf(q)}${
    q.answer === undefined ? "" : ` → ${chat(q.answer)}`
  }`;

const faqLine = (f: DigestFaq) =>
  `${chat(f.question)} (${chat(f.channel, 80)}, ${faqAsked(f)})${permalinkOf(f)}${
    f.answer === undefined ? "" : ` → ${chat(f.answer.text)}`
  }`;

const healthLine = (h: DigestHealth) => {
  const f = healthFigures(h, (name) => chat(name, 80));
  const who = f.answerers === undefined ? "" : `; top answerers: ${f.answerers}`;
  return `${chat(h.channel, 80)}: ${h.questions} question${h.questions === 1 ? "" : "s"}, ${f.answered} answered, first answer ${f.firstAnswer}, ${h.unanswered} unanswered${who}`;
};

/** ` · <https://slack.com/archives/…|open in Slack>`: an entry's platform link, where it has one. */
function permalinkOf(entry: { permalink?: string }): string {
  const url = safePermalink(entry.permalink);
  const linked = url === undefined ? undefined : link(url, permalinkLabel(url));
  return linked === undefined ? "" : ` · ${linked}`;
}

/**
 * A Slack link to `url` saying `label`, or undefined when it is not an http(s) address. The label
 * is escaped (`&<>`) and its `|`, which Slack would read as the label's start, made a look-alike.
 */
function link(url: string, label: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") return undefined;
  // URL's serialization percent-encodes `<`, `>` and spaces; `|` would end the address.
  return `<${parsed.href.replace(/\|/g, "%7C")}|${slackEscape(label).replace(/\|/g, "\u2223")}>`;
}

export function slackDigestPayload(
  digest: Digest,
  options: SlackPayloadOptions = {},
): SlackPayload {
  const channels = digest.channels.map((c) => chat(digestChannel(digest, c), 80)).join(", ");
  const period = `${day(digest.since)} to ${day(digest.until - 1)}`;
  const activity = digest.activity.reduce(
    (sum, a) => ({
      messages: sum.messages + a.messages,
      conversations: sum.conversations + a.conversations,
      people: sum.people + a.activePeople,
    }),
    { messages: 0, conversations: 0, people: 0 },
  );
  const summary =
    `${counted(activity.messages, "message")}, ${counted(activity.conversations, "conversation")}, ` +
    `${thousands(activity.people)} active ${activity.people === 1 ? "person" : "people"}`;
  const fresh = digest.topics.filter((t) => t.kind === "new");
  const recurring = digest.topics.filter((t) => t.kind === "recurring");
  const blocks: SlackBlock[] = [
    {
      type: "header",
      // plain_text is not parsed for mentions, but is escaped all the same: one rule everywhere.
      text: { type: "plain_text", text: clip(`Digest: ${channels}`, SLACK_LIMITS.headerChars) },
    },
    { type: "context", elements: [{ type: "mrkdwn", text: `${period} · ${summary}` }] },
  ];
  if (fresh.length > 0) blocks.push(section("New topics", fresh.map(topicLine)));
  if (recurring.length > 0) blocks.push(section("Recurring topics", recurring.map(topicLine)));
  if (digest.faq !== undefined) blocks.push(section(FAQ_HEADING, digest.faq.map(faqLine)));
  if (digest.health !== undefined)
    blocks.push(section(HEALTH_HEADING, digest.health.map(healthLine)));
  for (const status of QUESTION_ORDER) {
    if (digest[status].length > 0) {
      blocks.push(section(questionHeading(digest, status), digest[status].map(questionLine)));
    }
  }
  const report =
    options.reportUrl === undefined ? undefined : link(options.reportUrl, "Full report");
  if (report !== undefined) {
    blocks.push({ type: "context", elements: [{ type: "mrkdwn", text: report }] });
  }
  const text = clip(
    `Digest of ${channels}, ${period}: ${summary}; ${fresh.length} new and ${recurring.length} ` +
      `recurring topics, ${digest.unanswered.length} unanswered and ${digest.unclear.length} unclear questions.`,
    SLACK_LIMITS.textChars,
  );
  return { text, blocks: blocks.slice(0, SLACK_LIMITS.blocks) };
}

/** A post the webhook refused or that never got through; never carries the URL or the body. */
export class SlackDeliveryError extends DigestError {
  override readonly name: string = "SlackDeliveryError";
  /** `SLACK_REJECTED` (4xx: not retried), `SLACK_UNAVAILABLE` (5xx, 429 or network, retried). */
  override readonly code: "SLACK_REJECTED" | "SLACK_UNAVAILABLE";
  /** The last HTTP status, or undefined when no response came (network error, timeout). */
  readonly status: number | undefined;
  readonly attempts: number;

  constructor(code: SlackDeliveryError["code"], status: number | undefined, attempts: number) {
    super(
      code,
      `digestSlackWebhook: ${status === undefined ? "no response" : `HTTP ${status}`} after ${attempts} attempt${attempts === 1 ? "" : "s"}`,
    );
    this.code = code;
    this.status = status;
    this.attempts = attempts;
  }
}

export interface SlackPostOptions {
  /** Attempts in all, for 429, 5xx, network errors and timeouts (default 3). */
  maxAttempts?: number;
  /** Per attempt (default 10 s). */
  timeoutMs?: number;
  /** The longest `Retry-After` honoured; a longer one gives up (default 30 s). */
  maxRetryAfterMs?: number;
  backoff?: Backoff;
  fetch?: typeof fetch;
}

const DEFAULT_BACKOFF: Backoff = {
  baseDelayMs: 500,
  maxDelayMs: 5000,
  random: Math.random,
  sleep: realSleep,
};

/** Seconds (or an HTTP date) as milliseconds; undefined when absent or unreadable. */
function retryAfterMs(header: string | null, now: number): number | undefined {
  if (header === null) return undefined;
  const trimmed = header.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Posts `payload` to an incoming webhook; returns the attempts it took, or throws. */
export async function postSlackWebhook(
  webhookUrl: string,
  payload: SlackPayload,
  options: SlackPostOptions = {},
): Promise<{ attempts: number }> {
  const maxAttempts = options.maxAttempts ?? 3;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const maxRetryAfterMs = options.maxRetryAfterMs ?? 30_000;
  const pacing = options.backoff ?? DEFAULT_BACKOFF;
  const post = options.fetch ?? fetch;
  const body = JSON.stringify(payload);
  let status: number | undefined;
  for (let attempt = 1; ; attempt++) {
    let wait: number | undefined;
    try {
      const response = await post(webhookUrl, {
        method: "POST",
        headers: { "content-type": "application/json; charset=utf-8" },
        body,
        redirect: "error",
        signal: AbortSignal.timeout(timeoutMs),
      });
      status = response.status;
      await response.body?.cancel();
      if (status >= 200 && status < 300) return { attempts: attempt };
      if (status === 429) {
        wait = retryAfterMs(response.headers.get("retry-after"), Date.now());
        if (wait !== undefined && wait > maxRetryAfterMs) {
          throw new SlackDeliveryError("SLACK_UNAVAILABLE", status, attempt);
        }
      } else if (status < 500) {
        throw new SlackDeliveryError("SLACK_REJECTED", status, attempt);
      }
    } catch (error) {
      if (error instanceof SlackDeliveryError) throw error;
      // A network error or the timeout: no response. The error itself may quote the URL.
      status = undefined;
    }
    if (attempt >= maxAttempts) throw new SlackDeliveryError("SLACK_UNAVAILABLE", status, attempt);
    await (wait === undefined ? backoff(pacing, attempt) : pacing.sleep(wait));
  }
}
