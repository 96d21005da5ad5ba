/**
 * A tick's dependencies over stores a test gives, with nothing it does not look at: segments sent
 * nowhere, no metrics, no logs, the settings of a small chat (50 messages a segment at most, an
 * hour's settle, linked conversations) unless overridden.
 */
import type { TickDependencies, TickSettings } from "convoseg/pipeline";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/**
 * The tick settings of a small chat, but the segment size each test picks: an hour's settle, no
 * grace, a minute's lease, two channels at once.
 */
export const SMALL_CHAT_TICK: Omit<TickSettings, "maxSize"> = {
  settle: HOUR,
  minItems: 1,
  grace: 0,
  maxArrivalsPerChannel: 1000,
  leaseMs: MINUTE,
  channelConcurrency: 2,
  holdTimeoutMs: 5 * MINUTE,
};

export function quietTick(options: {
  messages: TickDependencies["messages"];
  channels: TickDependencies["channels"];
  now: () => number;
  wallNow?: () => number;
  settings?: Partial<TickSettings>;
}): TickDependencies {
  return {
    messages: options.messages,
    channels: options.channels,
    sink: { async send() {} },
    bodies: { maxBodyBytes: 256 * 1024, tableName: "messages" },
    metrics: { add() {} },
    logger: { info() {}, warn() {}, error() {} },
    settings: {
      ...SMALL_CHAT_TICK,
      maxSize: 50,
      conversations: "linked",
      ...options.settings,
    },
    now: options.now,
    wallNow: options.wallNow ?? options.now,
  };
}
