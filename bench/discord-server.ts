/**
 * A scripted Discord API on 127.0.0.1, for the poller's tests and benchmark: channels, threads
 * and messages held in memory, the endpoints the poller calls (newest first, `after`/`before`/
 * `limit` as Discord reads them), the bot token checked (401), per-route buckets with their
 * headers and a 429 with `retry_after` past them, and the global 50 requests/s (a global 429).
 * Its clock is injectable, so a simulated tick can share it with the poller.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { DiscordMessage } from "convoseg/connectors/discord";
import { compareSnowflakes, snowflakeFromTime } from "convoseg/connectors/discord";

interface ScriptedChannel {
  id: string;
  name: string;
  guildId: string;
  type: number;
  parentId?: string;
  archived?: boolean;
  /** Answer 403 to every request about this channel. */
  forbidden?: boolean;
  messages: DiscordMessage[];
}

export interface DiscordServerOptions {
  token: string;
  now?: () => number;
  /** Requests per bucket per `bucketWindowMs` (default 5 per 1 s, per channel). */
  bucketLimit?: number;
  bucketWindowMs?: number;
  /** The global cap (default 50 per second). */
  globalPerSecond?: number;
  /** Real milliseconds each answer is held back (Discord's latency; default 0). */
  latencyMs?: number;
}

export interface DiscordServer {
  url: string;
  channels: Map<string, ScriptedChannel>;
  /** Every request: its path and the server's clock when it came. */
  requests: { path: string; at: number; status: number }[];
  /**
   * Answers the next requests matching `path` (a substring) with 429s first; a `retryAfter` that
   * is no number is sent as it is, in the body and the Retry-After header (a broken proxy's).
   */
  script429(
    path: string,
    retryAfter: number | string | null,
    options?: { global?: boolean; times?: number },
  ): void;
  channel(id: string, fields?: Partial<Omit<ScriptedChannel, "id" | "messages">>): ScriptedChannel;
  post(channel: string, fields?: Partial<DiscordMessage>): DiscordMessage;
  edit(channel: string, id: string, content: string): void;
  remove(channel: string, id: string): void;
  close(): Promise<void>;
}

export async function startDiscordServer(options: DiscordServerOptions): Promise<DiscordServer> {
  const now = options.now ?? Date.now;
  const bucketLimit = options.bucketLimit ?? 5;
  const bucketWindowMs = options.bucketWindowMs ?? 1000;
  const globalPerSecond = options.globalPerSecond ?? 50;
  const latencyMs = options.latencyMs ?? 0;
  const channels = new Map<string, ScriptedChannel>();
  const requests: DiscordServer["requests"] = [];
  const scripted: {
    path: string;
    retryAfter: number | string | null;
    global: boolean;
    times: number;
  }[] = [];
  const buckets = new Map<string, { used: number; resetAt: number }>();
  const recent: number[] = [];
  let sequence = 0n;

  const send = (response: ServerResponse, status: number, body: unknown, headers = {}) => {
    response.writeHead(status, { "content-type": "application/json", ...headers });
    response.end(JSON.stringify(body));
  };

  const handle = (request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    const at = now();
    const answer = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      requests.push({ path: url.pathname + url.search, at, status });
      if (latencyMs > 0) setTimeout(() => send(response, status, body, headers), latencyMs);
      else send(response, status, body, headers);
    };
    if (request.headers.authorization !== `Bot ${options.token}`) {
      return answer(401, { message: "401: Unauthorized", code: 0 });
    }
    while (recent.length > 0 && recent[0] <= at - 1000) recent.shift();
    if (recent.length >= globalPerSecond) {
      const retryAfter = (recent[0] + 1000 - at) / 1000;
      return answer(
        429,
        { message: "You are being rate limited.", retry_after: retryAfter, global: true },
        {
          "x-ratelimit-global": "true",
          "x-ratelimit-scope": "global",
          "retry-after": String(Math.ceil(retryAfter)),
        },
      );
    }
    recent.push(at);
    const script = scripted.find((s) => url.pathname.includes(s.path) && s.times > 0);
    if (script) {
      script.times -= 1;
      return answer(
        429,
        {
          message: "You are being rate limited.",
          retry_after: script.retryAfter,
          global: script.global,
        },
        {
          ...(typeof script.retryAfter === "number"
            ? {}
            : { "retry-after": String(script.retryAfter) }),
          ...(script.global
            ? { "x-ratelimit-global": "true" }
            : {
                "x-ratelimit-bucket": "scripted",
                "x-ratelimit-remaining": "0",
                "x-ratelimit-reset-after": String(script.retryAfter),
              }),
        },
      );
    }
    const parts = url.pathname
      .replace(/^\/api\/v10/, "")
      .split("/")
      .filter(Boolean);
    const route = parts.map((part, i) => (i === 1 ? "{id}" : part)).join("/");
    const major = parts[1] ?? "";
    const key = `${route}:${major}`;
    let bucket = buckets.get(key);
    if (bucket === undefined || bucket.resetAt <= at) {
      bucket = { used: 0, resetAt: at + bucketWindowMs };
      buckets.set(key, bucket);
    }
    const hash = `h-${route.replaceAll("/", "-")}`;
    const resetAfter = (bucket.resetAt - at) / 1000;
    if (bucket.used >= bucketLimit) {
      return answer(
        429,
        { message: "You are being rate limited.", retry_after: resetAfter, global: false },
        {
          "x-ratelimit-bucket": hash,
          "x-ratelimit-limit": String(bucketLimit),
          "x-ratelimit-remaining": "0",
          "x-ratelimit-reset-after": String(resetAfter),
          "x-ratelimit-scope": "user",
        },
      );
    }
    bucket.used += 1;
    const limits = {
      "x-ratelimit-bucket": hash,
      "x-ratelimit-limit": String(bucketLimit),
      "x-ratelimit-remaining": String(bucketLimit - bucket.used),
      "x-ratelimit-reset-after": String(resetAfter),
    };
    const ok = (body: unknown) => answer(200, body, limits);
    if (parts[0] === "guilds" && parts[2] === "threads" && parts[3] === "active") {
      return ok({ threads: threadsWhere((c) => c.guildId === major && !c.archived), members: [] });
    }
    const channel = channels.get(major);
    if (parts[0] !== "channels" || channel === undefined) {
      return answer(404, { message: "Unknown Channel", code: 10003 });
    }
    if (channel.forbidden) return answer(403, { message: "Missing Access", code: 50001 });
    if (parts.length === 2) return ok(channelObject(channel));
    if (parts[2] === "threads" && parts[3] === "archived" && parts[4] === "public") {
      // Newest archive first, `before` an ISO time, pages of `limit` (default 50), as Discord.
      const limit = Math.min(100, Math.max(2, Number(url.searchParams.get("limit") ?? 50)));
      const before = Date.parse(url.searchParams.get("before") ?? "");
      const all = threadsWhere((c) => c.parentId === major && c.archived === true)
        .map((thread) => ({
          thread,
          at: Date.parse(thread.thread_metadata?.archive_timestamp ?? ""),
        }))
        .filter(({ at }) => Number.isNaN(before) || at < before)
        .sort((a, b) => b.at - a.at);
      return ok({
        threads: all.slice(0, limit).map(({ thread }) => thread),
        has_more: all.length > limit,
      });
    }
    if (parts[2] !== "messages" || parts.length !== 3) return answer(404, { message: "404" });
    const limit = Math.min(100, Math.max(1, Number(url.searchParams.get("limit") ?? 50)));
    const after = url.searchParams.get("after");
    const before = url.searchParams.get("before");
    let list = channel.messages;
    if (after !== null) {
      // Discord's `after` gives the oldest messages after it, still newest first.
      list = list.filter((m) => compareSnowflakes(m.id, after) > 0).slice(0, limit);
    } else {
      if (before !== null) list = list.filter((m) => compareSnowflakes(m.id, before) < 0);
      list = list.slice(-limit);
    }
    return ok([...list].reverse());
  };

  function channelObject(channel: ScriptedChannel) {
    return {
      id: channel.id,
      name: channel.name,
      guild_id: channel.guildId,
      type: channel.type,
      ...(channel.parentId ? { parent_id: channel.parentId } : {}),
      last_message_id: channel.messages.at(-1)?.id ?? null,
      ...(channel.parentId
        ? {
            thread_metadata: {
              archived: channel.archived === true,
              archive_timestamp: channel.messages.at(-1)?.timestamp ?? new Date(0).toISOString(),
            },
          }
        : {}),
    };
  }
  function threadsWhere(test: (channel: ScriptedChannel) => boolean) {
    return [...channels.values()]
      .filter((c) => c.parentId !== undefined && test(c))
      .map(channelObject);
  }

  const server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${address.port}/api/v10`,
    channels,
    requests,
    script429(path, retryAfter, extra = {}) {
      scripted.push({ path, retryAfter, global: extra.global ?? false, times: extra.times ?? 1 });
    },
    channel(id, fields = {}) {
      const channel: ScriptedChannel = {
        id,
        name: `chan-${id}`,
        guildId: "1",
        type: 0,
        messages: [],
        ...fields,
      };
      channels.set(id, channel);
      return channel;
    },
    post(channelId, fields = {}) {
      const channel = channels.get(channelId);
      if (!channel) throw new Error(`scripted discord: no channel ${channelId}`);
      const at = now();
      sequence += 1n;
      const message: DiscordMessage = {
        id: (BigInt(snowflakeFromTime(at)) + (sequence % 4_000_000n)).toString(),
        type: 0,
        channel_id: channelId,
        timestamp: new Date(at).toISOString(),
        edited_timestamp: null,
        content: `message ${sequence}`,
        author: { id: "42", username: "ada", global_name: "Ada" },
        attachments: [],
        ...fields,
      };
      channel.messages.push(message);
      channel.messages.sort((a, b) => compareSnowflakes(a.id, b.id));
      return message;
    },
    edit(channelId, id, content) {
      const message = channels.get(channelId)?.messages.find((m) => m.id === id);
      if (!message) throw new Error(`scripted discord: no message ${id}`);
      message.content = content;
      message.edited_timestamp = new Date(now()).toISOString();
    },
    remove(channelId, id) {
      const channel = channels.get(channelId);
      if (channel) channel.messages = channel.messages.filter((m) => m.id !== id);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
