/**
 * A small deployment's data for erasure tests, on any stores: segments of chat in a few
 * channels by alice, bob and carol, stored in the history store and extracted into results
 * (results, topic entries, spans, window replies), with the redactor and the eraser wired over
 * them as the stack wires them.
 */

import type { AuditStore, ErasureDependencies, ErasureMessages } from "convoseg/erasure";
import type { LLM } from "convoseg/extraction";
import { type Store, textMessage } from "convoseg/history";
import type { ChannelNames } from "convoseg/history/changes";
import type { ResultStore } from "convoseg/knowledge/store";
import { KnowledgeRedactor, storedMessageStates } from "convoseg/knowledge/write";
import { extractorFor, NOW, segmentAt } from "../../knowledge/redaction.js";

export const HOUR = 3_600_000;
const AUTHORS = ["alice", "bob", "carol"];

/** Texts of a segment: each mentions a #topic or two, and carol is thanked by name in one. */
function texts(channel: number, segment: number): string[] {
  const t = `${channel}x${segment}`;
  return [
    `my #grub menu is gone ${t}`,
    `reinstall #grub from a live usb ${t}`,
    `that fixed #grub, thanks #carol ${t}`,
    `anyone around? ${t}`,
    `my #wifi drops every hour ${t}`,
    `which #wifi chip is it ${t}`,
    `an intel one ${t}`,
    `try the #wifi power save setting ${t}`,
  ];
}

export interface World {
  channels: string[];
  /** Every message written, by channel: id, author and text. */
  written: Map<string, { id: string; ts: number; author: string; text: string }[]>;
  /** The user id each message was stored with, by `<channel> <id>` (none: absent). */
  userIds: Map<string, string>;
}

/**
 * Writes `channels` × `segments` segments and extracts each; authors rotate by message. With
 * `userId`, a message gets the platform user id it answers for its author and its index in
 * the channel (undefined: none, as an importer that does not know it stores it); the
 * extraction sees display names only, as the pipeline's does.
 */
export async function buildWorld(
  history: Store,
  results: ResultStore,
  options: {
    channels: number;
    segments: number;
    prefix?: string;
    userId?: (author: string, index: number) => string | undefined;
    /** The extraction's model (default: `topicModel`, which asks no questions). */
    llm?: LLM;
    /** The channel name the messages of channel `c` carry (default: none). */
    channelName?: (c: number) => string;
  },
): Promise<World> {
  const world: World = { channels: [], written: new Map(), userIds: new Map() };
  for (let c = 0; c < options.channels; c++) {
    const channel = `${options.prefix ?? ""}#chan${c}`;
    world.channels.push(channel);
    const all: { id: string; ts: number; author: string; text: string }[] = [];
    for (let s = 0; s < options.segments; s++) {
      const { segment, messages } = segmentAt(channel, `s${c}-${s}`, texts(c, s), NOW + s * HOUR);
      // Three authors, rotating differently per channel.
      const authored = messages.map((m, i) => ({ ...m, author: AUTHORS[(i + c) % 3] }));
      await history.write(
        channel,
        authored.map((m, i) => {
          const userId = options.userId?.(m.author, all.length + i);
          if (userId !== undefined) world.userIds.set(`${channel} ${m.id}`, userId);
          return textMessage("user", m.text, {
            id: m.id,
            ts: m.ts,
            author: m.author,
            ...(userId === undefined ? {} : { userId }),
            ...(options.channelName === undefined ? {} : { channelName: options.channelName(c) }),
          });
        }),
      );
      await extractorFor(results, options.llm).extract(segment, authored);
      all.push(...authored);
    }
    world.written.set(channel, all);
  }
  return world;
}

/** The tests' audit secret: what a deployment keeps in Secrets Manager. */
export const AUDIT_SECRET = "test-audit-secret-0123456789abcdef";

/** The eraser's dependencies over the stores, the redactor reading the history store. */
export function erasureDependencies(
  history: ErasureMessages & ChannelNames,
  results: ResultStore,
  audits: AuditStore,
  extra: Partial<ErasureDependencies> = {},
): ErasureDependencies {
  return {
    messages: history,
    channelNames: history,
    redactor: new KnowledgeRedactor({ store: results, states: storedMessageStates(history) }),
    results,
    audits,
    auditSecret: AUDIT_SECRET,
    now: () => NOW + 100 * HOUR,
    ...extra,
  };
}
