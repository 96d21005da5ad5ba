/**
 * Slack display names through `users.info` with the app's bot token, cached: a live event names
 * its author and mentions by id only. A lookup is bounded in time (the receiver must answer
 * Slack within 3 s) and a failed one leaves the id, as an unknown user in an export does.
 */
import type { SlackNames } from "../exports/index.js";

export interface SlackUserNamesOptions {
  /** The bot token (`xoxb-…`; cached by the caller). */
  token: () => Promise<string>;
  /** @default "https://slack.com/api" */
  baseUrl?: string;
  /** How long a name is kept. @default one hour */
  maxAgeMs?: number;
  /** How long an id Slack did not name is not asked again. @default one minute */
  missAgeMs?: number;
  /** The longest one lookup may take. @default 800 ms */
  timeoutMs?: number;
  now?: () => number;
}

/** Slack user ids (`U…`, `W…`); anything else is not looked up. */
const USER_ID = /^[UW][A-Z0-9]{2,20}$/;
const MENTION = /<@([UW][A-Z0-9]{2,20})(?:\|[^>]*)?>/g;

/** The user ids an event names: its author, an edited message's, and every `<@U…>` mention. */
export function slackUserIds(...texts: unknown[]): string[] {
  const ids = new Set<string>();
  for (const value of texts) {
    if (typeof value !== "string") continue;
    if (USER_ID.test(value)) ids.add(value);
    for (const match of value.matchAll(MENTION)) ids.add(match[1]);
  }
  return [...ids];
}

/**
 * Lookups one event may start: its author first, then its first mentions. A message of 1,500
 * mentions made 1,500 requests at once (Slack answers a burst with 429s, and the receiver has 3
 * seconds); the rest keep their ids unless cached.
 */
export const MAX_LOOKUPS_PER_EVENT = 20;
/** Lookups in flight at once, per event. */
const LOOKUP_CONCURRENCY = 5;
/** Names kept: the cache of a long-lived function stays small whatever the workspace. */
const MAX_CACHED = 10_000;

export class SlackUserNames {
  private readonly cache = new Map<string, { name: string | undefined; at: number }>();
  private readonly options: Required<Omit<SlackUserNamesOptions, "token">> &
    Pick<SlackUserNamesOptions, "token">;

  constructor(options: SlackUserNamesOptions) {
    this.options = {
      baseUrl: "https://slack.com/api",
      maxAgeMs: 3_600_000,
      missAgeMs: 60_000,
      timeoutMs: 800,
      now: Date.now,
      ...options,
    };
  }

  /**
   * Names of the ids it knows or could look up now; the others are left out. Every cached id is
   * named; at most {@link MAX_LOOKUPS_PER_EVENT} others are looked up, in order, a few at a time.
   */
  async names(ids: readonly string[]): Promise<SlackNames> {
    const users = new Map<string, string>();
    const now = this.options.now();
    const unknown: string[] = [];
    for (const id of new Set(ids)) {
      const cached = this.cache.get(id);
      const age = cached?.name === undefined ? this.options.missAgeMs : this.options.maxAgeMs;
      if (cached !== undefined && now - cached.at < age) {
        if (cached.name !== undefined) users.set(id, cached.name);
      } else if (unknown.length < MAX_LOOKUPS_PER_EVENT) unknown.push(id);
    }
    let next = 0;
    const worker = async () => {
      while (next < unknown.length) {
        const id = unknown[next++] as string;
        const name = await this.lookUp(id).catch(() => undefined);
        this.remember(id, name, now);
        if (name !== undefined) users.set(id, name);
      }
    };
    await Promise.all(Array.from({ length: LOOKUP_CONCURRENCY }, worker));
    return { users, channels: new Map() };
  }

  private remember(id: string, name: string | undefined, at: number): void {
    this.cache.delete(id);
    // A Map iterates in insertion order: the first key is the least recently looked up.
    if (this.cache.size >= MAX_CACHED) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(id, { name, at });
  }

  private async lookUp(id: string): Promise<string | undefined> {
    const token = await this.options.token();
    const response = await fetch(
      `${this.options.baseUrl}/users.info?user=${encodeURIComponent(id)}`,
      {
        headers: { authorization: `Bearer ${token}` },
        signal: AbortSignal.timeout(this.options.timeoutMs),
      },
    );
    if (!response.ok) return undefined;
    const body = (await response.json()) as {
      ok?: boolean;
      user?: { name?: unknown; real_name?: unknown; profile?: Record<string, unknown> };
    };
    if (body.ok !== true || body.user === undefined) return undefined;
    const { user } = body;
    // As the export reader names users: display name, real name, handle.
    return [user.profile?.display_name, user.profile?.real_name, user.real_name, user.name].find(
      (n): n is string => typeof n === "string" && n.trim() !== "",
    );
  }
}
