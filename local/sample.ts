import type { ChatMessage } from "convoseg/messages";

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
  /**
   * Texts about a topic per conversation (`npm start -- run`'s demo, so that extraction finds
   * something) instead of `message <index>`; timestamps and ids are the same either way.
   */
  topical?: boolean;
}

const TOPICS = [
  "grub bootloader",
  "wifi driver",
  "disk encryption",
  "docker networking",
  "kernel panic",
  "printer setup",
  "ssh keys",
  "python packaging",
  "nvidia drivers",
  "backup strategy",
];

const LINES = [
  (t: string) => `anyone know how to fix the ${t}?`,
  (t: string) => `I had the same ${t} problem last week`,
  (t: string) => `which version are you on? the ${t} changed in the last release`,
  (t: string) => `check the logs first, the ${t} usually says what is wrong`,
  (t: string) => `reinstalling did not help with the ${t}`,
  (t: string) => `the wiki has a page on the ${t}`,
  (t: string) => `thanks, the ${t} works now`,
];

/**
 * A multi-channel chat sample with what matters to segmentation: bursts with equal timestamps,
 * short lulls, lulls just below `settle` (overnight pauses), and silences beyond it. Message ids
 * are `<channel>-<index>` and texts `message <index>` (or, `topical`, about a topic that changes
 * with each silence beyond `settle`).
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
  // A generator of its own, so that topical texts leave the timestamps as they are.
  const pick = random(seed + 1);
  return channels.flatMap((channel) => {
    let ts = start + Math.floor(next() * 30) * MINUTE;
    let topic = TOPICS[Math.floor(pick() * TOPICS.length)];
    return Array.from({ length: perChannel }, (_, i) => {
      const roll = next();
      if (roll < 0.08) {
        ts += settle + Math.floor(next() * 3 * settle);
        topic = TOPICS[Math.floor(pick() * TOPICS.length)];
      } else if (roll < 0.2) ts += Math.floor(next() * settle);
      else if (roll > 0.7) ts += Math.floor(next() * 4) * MINUTE;
      return {
        id: `${channel}-${String(i).padStart(4, "0")}`,
        ts,
        channel,
        user: `user${Math.floor(next() * 12)}`,
        text: options.topical ? LINES[Math.floor(pick() * LINES.length)](topic) : `message ${i}`,
      };
    });
  });
}
