import type { ChatMessage } from "../lib/messages/index.js";

const MINUTE = 60_000;

/** Deterministic PRNG (mulberry32): the same seed gives the same sample everywhere. */
export function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface SampleOptions {
  seed?: number;
  channels?: string[];
  perChannel?: number;
  /** The settle time the sample is made for: some silences exceed it, most lulls do not. */
  settle?: number;
  start?: number;
}

/**
 * A multi-channel chat sample with what matters to segmentation: bursts with equal timestamps,
 * short lulls, lulls just below `settle` (overnight pauses), and silences beyond it. Message ids
 * are `<channel>-<index>` and texts `message <index>`.
 */
export function sampleChat(options: SampleOptions = {}): ChatMessage[] {
  const {
    seed = 1,
    channels = ["general", "help", "dev", "random", "announcements", "support"],
    perChannel = 400,
    settle = 24 * 60 * MINUTE,
    start = Date.UTC(2025, 0, 6),
  } = options;
  const next = random(seed);
  return channels.flatMap((channel) => {
    let ts = start + Math.floor(next() * 30) * MINUTE;
    return Array.from({ length: perChannel }, (_, i) => {
      const roll = next();
      if (roll < 0.08) ts += settle + Math.floor(next() * 3 * settle);
      else if (roll < 0.2) ts += Math.floor(next() * settle);
      else if (roll > 0.7) ts += Math.floor(next() * 4) * MINUTE;
      return {
        id: `${channel}-${String(i).padStart(4, "0")}`,
        ts,
        channel,
        user: `user${Math.floor(next() * 12)}`,
        text: `message ${i}`,
      };
    });
  });
}
