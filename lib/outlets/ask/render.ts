/**
 * An answer as each platform's message. Every piece of chat text is made literal for where it
 * goes: Slack's `&<>` as entities and mrkdwn markers as look-alikes, Discord's Markdown escaped
 * with every mention switched off (`allowed_mentions`), Telegram's sent as plain text (no
 * `parse_mode`). Controls, bidi and zero-width characters go everywhere; links are made of ids.
 * A model's summary is chat-like text too (it was written from chat): made literal the same way.
 */
import type { AskAnswer, AskItem } from "./answer.js";

/** C0 and C1 controls, bidi embeddings/overrides/isolates, zero-width and BOM characters. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: removing them is the point
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]+/g;
const WORD_JOINER = "\u2060";
/** The most characters of one item's words: an answer is a pointer, not a transcript. */
const ITEM_CHARS = 200;

/** `text` on one line, without what a renderer could act on, cut at `max` on a character. */
function plain(text: string, max = ITEM_CHARS): string {
  const flat = text.replace(UNPRINTABLE, " ").replace(/\s+/g, " ").trim();
  const chars = [...flat];
  return chars.length <= max ? flat : `${chars.slice(0, max - 1).join("")}…`;
}

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

const KIND: Record<AskItem["kind"], string> = {
  question: "Q",
  conversation: "Conversation",
  message: "Message",
  topic: "Topic",
};

const NOTHING = (words: string) => `Nothing found in this channel's history for "${words}".`;
const HEADING = (words: string) => `From this channel's history, for "${words}":`;
/** Above a model's sentences: what they are, and that the hits are what to check. */
const SUMMARY_HEADING = "Summary from past answers (written by a model from the hits below):";
/** Characters of one of a model's sentences (the summary keeps them at 300). */
const SENTENCE_CHARS = 300;

/**
 * The summary's lines, each sentence made literal by `text` and followed by the numbers it
 * cites, and a hit's number for the list (`[2] `); none of either without a summary.
 */
function summaryParts(answer: AskAnswer, text: (s: string, max: number) => string) {
  const sentences = answer.summary ?? [];
  return {
    lines:
      sentences.length === 0
        ? []
        : [
            SUMMARY_HEADING,
            ...sentences.map(
              (s) => `${text(s.text, SENTENCE_CHARS)} ${s.hits.map((n) => `[${n}]`).join("")}`,
            ),
            "",
          ],
    number: (at: number) => (sentences.length === 0 ? "" : `[${at + 1}] `),
  };
}

/** Slack's mrkdwn markers as look-alikes that mark nothing (mrkdwn has no escape character). */
const MARKERS: Record<string, string> = {
  "*": "\u2217",
  _: "\u02cd",
  "~": "\u223c",
  "`": "\u02cb",
};

/** Chat text as Slack shows it literally. */
function slackText(text: string, max = ITEM_CHARS): string {
  return plain(text, max)
    .replace(/[*_~`]/g, (c) => MARKERS[c] ?? c)
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/@(?=(here|channel|everyone))/gi, `@${WORD_JOINER}`)
    .replace(/:(?=\/\/)/g, `:${WORD_JOINER}`);
}

/** A `response_url` message: ephemeral (only the asker sees it) unless `inChannel`. */
interface SlackAnswerMessage {
  response_type: "ephemeral" | "in_channel";
  text: string;
}

export function slackAnswer(answer: AskAnswer, inChannel = false): SlackAnswerMessage {
  const words = slackText(answer.words, 100);
  const summary = summaryParts(answer, slackText);
  const lines =
    answer.items.length === 0
      ? [NOTHING(words)]
      : [
          ...summary.lines,
          HEADING(words),
          ...answer.items.map((item, at) => {
            const when = item.link === "" ? day(item.ts) : `<${item.link}|${day(item.ts)}>`;
            const said = item.answer === undefined ? "" : ` → ${slackText(item.answer)}`;
            const kind = `*${KIND[item.kind]}:*`;
            return `• ${summary.number(at)}${kind} ${slackText(item.title)}${said} (${when})`;
          }),
        ];
  return { response_type: inChannel ? "in_channel" : "ephemeral", text: lines.join("\n") };
}

/** Chat text as Discord Markdown shows it literally (mentions are switched off apart). */
function discordText(text: string, max = ITEM_CHARS): string {
  return plain(text, max)
    .replace(/[\\*_~`|>#[\]()<:-]/g, (c) => `\\${c}`)
    .replace(/@/g, `@${WORD_JOINER}`);
}

/** A follow-up message of an interaction: no mention pings, no link previews. */
interface DiscordAnswerMessage {
  content: string;
  allowed_mentions: { parse: [] };
  /** SUPPRESS_EMBEDS (4). */
  flags: number;
}

/** Discord's limit on a message's content. */
const DISCORD_CHARS = 2000;

export function discordAnswer(answer: AskAnswer): DiscordAnswerMessage {
  const words = discordText(answer.words, 100);
  const summary = summaryParts(answer, discordText);
  const lines =
    answer.items.length === 0
      ? [NOTHING(words)]
      : [
          ...summary.lines,
          HEADING(words),
          ...answer.items.map((item, at) => {
            const when = item.link === "" ? day(item.ts) : `[${day(item.ts)}](<${item.link}>)`;
            const said = item.answer === undefined ? "" : ` → ${discordText(item.answer)}`;
            const kind = `**${KIND[item.kind]}:**`;
            return `- ${summary.number(at)}${kind} ${discordText(item.title)}${said} (${when})`;
          }),
        ];
  const content = lines.join("\n");
  // The list and its links matter more than the summary: past the limit, the list alone.
  if (content.length > DISCORD_CHARS && answer.summary !== undefined) {
    const { summary: _, ...list } = answer;
    return discordAnswer(list);
  }
  return {
    content: content.slice(0, DISCORD_CHARS),
    allowed_mentions: { parse: [] },
    flags: 4,
  };
}

/** A sendMessage body: plain text (no parse_mode, so nothing in it is markup), no previews. */
interface TelegramAnswerMessage {
  chat_id: number;
  text: string;
  reply_parameters?: { message_id: number; allow_sending_without_reply: true };
  link_preview_options: { is_disabled: true };
}

export function telegramAnswer(
  answer: AskAnswer,
  chatId: number,
  replyTo?: number,
): TelegramAnswerMessage {
  const words = plain(answer.words, 100);
  const summary = summaryParts(answer, plain);
  const lines =
    answer.items.length === 0
      ? [NOTHING(words)]
      : [
          ...summary.lines,
          HEADING(words),
          ...answer.items.map((item, at) => {
            const said = item.answer === undefined ? "" : ` → ${plain(item.answer)}`;
            const link = item.link === "" ? "" : ` ${item.link}`;
            const kind = `${summary.number(at)}${KIND[item.kind]}`;
            return `• ${kind}: ${plain(item.title)}${said} (${day(item.ts)})${link}`;
          }),
        ];
  return {
    chat_id: chatId,
    text: lines.join("\n"),
    ...(replyTo !== undefined && {
      reply_parameters: { message_id: replyTo, allow_sending_without_reply: true },
    }),
    link_preview_options: { is_disabled: true },
  };
}

/**
 * A short notice only the person sees (what became of their mark): `text` is ours, `quoted`
 * (a question's words) chat text, made literal for the platform.
 */
export function slackNotice(text: string, quoted?: string): SlackAnswerMessage {
  const tail = quoted === undefined ? "" : ` “${slackText(quoted)}”`;
  return { response_type: "ephemeral", text: `${text}${tail}` };
}

export function discordNotice(text: string, quoted?: string): DiscordAnswerMessage {
  const tail = quoted === undefined ? "" : ` “${discordText(quoted)}”`;
  return { content: `${text}${tail}`, allowed_mentions: { parse: [] }, flags: 4 };
}
