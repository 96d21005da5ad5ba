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

  /** Names of the ids it knows or could look up now; the others are left out. */
  async names(ids: readonly string[]): Promise<SlackNames> {
    const users = new Map<string, string>();
    await Promise.all(
      ids.map(async (id) => {
        const name = await this.name(id);
        if (name !== undefined) users.set(id, name);
      }),
    );
    return { users, channels: new Map() };
  }

  private async name(id: string): Promise<string | undefined> {
    const now = this.options.now();
    const cached = this.cache.get(id);
    if (cached !== undefined) {
      const age = cached.name === undefined ? this.options.missAgeMs : this.options.maxAgeMs;
      if (now - cached.at < age) return cached.name;
    }
    const name = await this.lookUp(id).catch(() => undefined);
    this.cache.set(id, { name, at: now });
    return name;
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
