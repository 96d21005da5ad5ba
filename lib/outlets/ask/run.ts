/**
 * A question asked in a channel, answered: the search over that channel alone (an answer never
 * shows another channel's talk), the answer composed and rendered for the platform, and posted
 * where the platform said to (Slack's `response_url`, or chat.postMessage in an app mention's
 * thread; Discord's interaction webhook; Telegram's sendMessage). The reply addresses come from verified requests, and are still checked: a
 * `response_url` must be Slack's, a webhook's ids must be ids.
 */
import type { SearchHit, SearchQuery } from "../search/index.js";
import { ASK_HITS, type AskAnswer, composeAnswer } from "./answer.js";
import { AskError } from "./errors.js";
import { discordAnswer, slackAnswer, telegramAnswer } from "./render.js";
import type { AnswerWriter } from "./summary.js";

interface AskJobBase {
  /** The channel asked in, as the index names it (the platform's channel id). */
  channel: string;
  /** The question's search words (`askWords`). */
  words: string;
}

/** A slash command's, answered through its `response_url`; an app mention's, in its thread. */
interface SlackAskJob extends AskJobBase {
  platform: "slack";
  responseUrl?: string;
  /** Shown to the channel; else only to the asker (a slash command's). */
  inChannel: boolean;
  /** An app mention's thread (its `thread_ts`, else its `ts`). */
  thread?: string;
}

/** Answered by editing the deferred response through the interaction's webhook. */
interface DiscordAskJob extends AskJobBase {
  platform: "discord";
  guild?: string;
  applicationId: string;
  /** The interaction's token: valid 15 minutes, never logged. */
  token: string;
}

/** Answered with sendMessage, as a reply to the asking message. */
interface TelegramAskJob extends AskJobBase {
  platform: "telegram";
  chatUsername?: string;
  replyTo?: number;
}

export type AskJob = SlackAskJob | DiscordAskJob | TelegramAskJob;

interface AskDeps {
  search: (query: SearchQuery) => Promise<SearchHit[]>;
  /** Hits listed (default {@link ASK_HITS}). */
  hits?: number;
  fetch?: typeof fetch;
  /** What a `response_url` must start with (default Slack's hooks host). */
  slackResponsePrefixes?: readonly string[];
  /** Slack's Web API base (default `https://slack.com/api`) and the bot's token (mentions). */
  slackApiBase?: string;
  slackToken?: () => Promise<string>;
  /** Discord's API base (default `https://discord.com/api/v10`). */
  discordApiBase?: string;
  /** Telegram's Bot API base (default `https://api.telegram.org`) and the bot's token. */
  telegramApiBase?: string;
  telegramToken?: () => Promise<string>;
  /** Each post's time limit, ms (default 5000). */
  timeoutMs?: number;
  /** Writes a model's short answer above the hits (`answerWriter`); default none. */
  writer?: AnswerWriter;
}

const SLACK_RESPONSE_PREFIX = "https://hooks.slack.com/";
const SLACK_API_BASE = "https://slack.com/api";
export const DISCORD_API_BASE = "https://discord.com/api/v10";
const TELEGRAM_API_BASE = "https://api.telegram.org";
/** Hits the search is asked for before the answer re-orders them by kind. */
const SEARCHED = 20;

const SNOWFLAKE = /^\d{15,21}$/;
const INTERACTION_TOKEN = /^[A-Za-z0-9._-]{1,600}$/;
const TELEGRAM_CHAT = /^-?\d{1,20}$/;

/**
 * What was posted: how many hits it listed, or that the search failed; with a writer, `summary`
 * says `written`, or the code of why the list went alone.
 */
interface AskOutcome {
  items: number;
  searchFailed: boolean;
  summary?: string;
}

const SEARCH_FAILED = "Search is not available right now: try again in a few minutes.";

/** Searches, composes and posts the answer to `job`; an {@link AskError} when the post fails. */
export async function answerAsk(job: AskJob, deps: AskDeps): Promise<AskOutcome> {
  const place = {
    platform: job.platform,
    ...(job.platform === "discord" && job.guild !== undefined && { guild: job.guild }),
    ...(job.platform === "telegram" &&
      job.chatUsername !== undefined && { chatUsername: job.chatUsername }),
  };
  let answer: AskAnswer | undefined;
  if (job.words.trim() === "") answer = { words: "", items: [] };
  else {
    try {
      const hits = await deps.search({ text: job.words, channels: [job.channel], limit: SEARCHED });
      answer = composeAnswer(job.words, hits, place, deps.hits ?? ASK_HITS);
    } catch {
      answer = undefined;
    }
  }
  let summary: string | undefined;
  if (deps.writer !== undefined && answer !== undefined && answer.items.length > 0) {
    // The writer never throws: whatever goes wrong, the hits are posted without a summary.
    const written = await deps.writer(answer.words, answer.items, job.channel);
    if (written.sentences === undefined) summary = written.skipped;
    else {
      answer.summary = written.sentences;
      summary = "written";
    }
  }
  await post(job, answer, deps);
  return {
    items: answer?.items.length ?? 0,
    searchFailed: answer === undefined,
    ...(summary !== undefined && { summary }),
  };
}

/** How a reply is posted: the fetch, and each post's time limit, ms (default 5000). */
export type PostDeps = Pick<AskDeps, "fetch" | "timeoutMs">;

/** Sends `body` as JSON; an {@link AskError} naming `what` when it fails or is refused. */
async function sendJson(
  deps: PostDeps,
  url: string,
  method: string,
  body: unknown,
  what: string,
  headers: Record<string, string> = {},
): Promise<Response> {
  let response: Response;
  try {
    response = await (deps.fetch ?? fetch)(url, {
      method,
      headers: { "content-type": "application/json; charset=utf-8", ...headers },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(deps.timeoutMs ?? 5000),
    });
  } catch (error) {
    throw new AskError("ASK_POST_FAILED", `${what}: ${(error as Error).name}`, { cause: error });
  }
  if (!response.ok) {
    // The body may echo the address: only the status is kept.
    await response.body?.cancel();
    throw new AskError("ASK_POST_FAILED", `${what}: answered ${response.status}`);
  }
  return response;
}

/** Posts `body` to a Slack `response_url`, which must be Slack's (`prefixes`). */
export async function postToResponseUrl(
  deps: PostDeps & Pick<AskDeps, "slackResponsePrefixes">,
  responseUrl: string | undefined,
  body: unknown,
): Promise<void> {
  const prefixes = deps.slackResponsePrefixes ?? [SLACK_RESPONSE_PREFIX];
  if (responseUrl === undefined || !prefixes.some((p) => responseUrl.startsWith(p)))
    throw new AskError("ASK_BAD_JOB", "the response_url is not Slack's");
  await (await sendJson(deps, responseUrl, "POST", body, "slack response_url")).body?.cancel();
}

/** Edits an interaction's deferred response through its webhook (ids checked first). */
export async function editInteractionResponse(
  deps: PostDeps & Pick<AskDeps, "discordApiBase">,
  job: { applicationId: string; token: string },
  body: unknown,
): Promise<void> {
  if (!SNOWFLAKE.test(job.applicationId) || !INTERACTION_TOKEN.test(job.token))
    throw new AskError("ASK_BAD_JOB", "the interaction's application id or token is malformed");
  const base = deps.discordApiBase ?? DISCORD_API_BASE;
  const url = `${base}/webhooks/${job.applicationId}/${job.token}/messages/@original`;
  const response = await sendJson(deps, url, "PATCH", body, "discord interaction webhook");
  await response.body?.cancel();
}

async function post(job: AskJob, answer: AskAnswer | undefined, deps: AskDeps): Promise<void> {
  switch (job.platform) {
    case "slack": {
      if (job.thread !== undefined) return postInThread(job, job.thread, answer, deps);
      const message =
        answer === undefined
          ? { response_type: "ephemeral" as const, text: SEARCH_FAILED }
          : slackAnswer(answer, job.inChannel);
      return postToResponseUrl(deps, job.responseUrl, message);
    }
    case "discord": {
      const message =
        answer === undefined
          ? { content: SEARCH_FAILED, allowed_mentions: { parse: [] } }
          : discordAnswer(answer);
      return editInteractionResponse(deps, job, message);
    }
    case "telegram": {
      if (!TELEGRAM_CHAT.test(job.channel))
        throw new AskError("ASK_BAD_JOB", "the chat id is not a Telegram chat id");
      if (deps.telegramToken === undefined)
        throw new AskError("ASK_BAD_JOB", "no Telegram bot token to answer with");
      const token = await deps.telegramToken();
      const chat = Number(job.channel);
      const message =
        answer === undefined
          ? { chat_id: chat, text: SEARCH_FAILED }
          : telegramAnswer(answer, chat, job.replyTo);
      const base = deps.telegramApiBase ?? TELEGRAM_API_BASE;
      const url = `${base}/bot${token}/sendMessage`;
      await (await sendJson(deps, url, "POST", message, "telegram sendMessage")).body?.cancel();
      return;
    }
    default:
      throw new AskError("ASK_BAD_JOB", "a job of no platform the ask endpoints serve");
  }
}

const SLACK_CHANNEL = /^[A-Z0-9]{2,30}$/;
const SLACK_TS = /^\d+\.\d+$/;

/**
 * An app mention's answer: chat.postMessage in its thread with the bot's token (scope
 * `chat:write`), without unfurls. Slack's Web API answers 200 with `ok: false` on an error.
 */
async function postInThread(
  job: SlackAskJob,
  thread: string,
  answer: AskAnswer | undefined,
  deps: AskDeps,
): Promise<void> {
  if (!SLACK_CHANNEL.test(job.channel) || !SLACK_TS.test(thread))
    throw new AskError("ASK_BAD_JOB", "the mention's channel or thread is malformed");
  if (deps.slackToken === undefined)
    throw new AskError("ASK_BAD_JOB", "no Slack bot token to answer a mention with");
  const token = await deps.slackToken();
  const text = answer === undefined ? SEARCH_FAILED : slackAnswer(answer, true).text;
  const base = deps.slackApiBase ?? SLACK_API_BASE;
  const response = await sendJson(
    deps,
    `${base}/chat.postMessage`,
    "POST",
    { channel: job.channel, thread_ts: thread, text, unfurl_links: false, unfurl_media: false },
    "slack chat.postMessage",
    { authorization: `Bearer ${token}` },
  );
  const said = (await response.json().catch(() => ({}))) as { ok?: unknown; error?: unknown };
  if (said.ok !== true) {
    const error = typeof said.error === "string" ? said.error.slice(0, 60) : "no ok";
    throw new AskError("ASK_POST_FAILED", `slack chat.postMessage: ${error}`);
  }
}
