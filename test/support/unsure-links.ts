/**
 * Chat the reply linker is unsure about, for the `--ask-links` tests against a scripted
 * OpenAI-compatible server, and what those tests read back of the requests the server recorded.
 */
import type { RecordedRequest } from "./llm-servers.js";

/**
 * 24 lines of channel "help", 40 s apart from `t0`: four people on two topics, each person on
 * both, interleaved, with nobody naming anyone. Message `m<i>`'s text ends in ` <i>`.
 */
export function unsureChat(t0: number): Record<string, unknown>[] {
  const people = ["ana", "ben", "cleo", "dev"];
  const topics = ["the grub menu is gone after the update", "wifi keeps dropping on the laptop"];
  return Array.from({ length: 24 }, (_, i) => ({
    id: `m${i}`,
    ts: t0 + i * 40_000,
    channel: "help",
    user: people[(i * 3 + (i >> 1)) % 4],
    text: `${topics[i % 3 === 0 ? 1 : 0]} ${i}`,
  }));
}

/** The user prompt of each request, in order. */
export const prompts = (requests: readonly RecordedRequest[]): string[] =>
  requests.map((r) => (r.body as { messages: { content: string }[] }).messages[1]?.content ?? "");

/** How many questions `prompts` ask, together. */
export const questionCount = (prompts: readonly string[]): number =>
  prompts.join("\n").match(/^Question \d+:/gm)?.length ?? 0;

/** The message the first question of `prompt` asks about (`m<i>`, by its text's ending). */
export function firstAsked(prompt: string): string | undefined {
  const number = /^Question 1: "[^"]*": "[^"]* (\d+)"$/m.exec(prompt)?.[1];
  return number === undefined ? undefined : `m${number}`;
}
