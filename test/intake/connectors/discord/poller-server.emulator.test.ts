/**
 * The poller against a scripted Discord API on 127.0.0.1 (bench/discord-server.ts), into the
 * memory history store through `ingest`, with the memory cursors and a simulated clock shared
 * with the server, so rate-limit waits take no real time.
 */

import {
  DiscordRest,
  MemoryCursorStore,
  type PollSettings,
  pollDiscord,
  simulatedClock,
  snowflakeFromTime,
} from "convoseg/connectors/discord";
import { MemoryStore, messageText } from "convoseg/history";
import { ingest } from "convoseg/ingest";
import { afterEach, describe, expect, it } from "vitest";
import { type DiscordServer, startDiscordServer } from "../../../../bench/discord-server.js";

const TOKEN = "test-token";
const START = Date.UTC(2026, 0, 5, 12);
let server: DiscordServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function setup(serverOptions: Partial<Parameters<typeof startDiscordServer>[0]> = {}) {
  const clock = simulatedClock(START);
  server = await startDiscordServer({ token: TOKEN, now: clock.now, ...serverOptions });
  const store = new MemoryStore();
  const cursors = new MemoryCursorStore();
  const sink = { ingest: (lines: readonly unknown[]) => ingest(store, lines) };
  const reader = {
    getMessages: (channel: string, ids: readonly string[]) => store.getMessages(channel, ids),
  };
  /** When each request left the client, on the clock: what the global cap holds to. */
  const sent: number[] = [];
  const fetch: typeof globalThis.fetch = (url, init) => {
    sent.push(clock.now());
    return globalThis.fetch(url, init);
  };
  const run = (settings: PollSettings, token = TOKEN, deadline?: number) => {
    const rest = new DiscordRest({ token, baseUrl: server?.url, clock, deadline, fetch });
    return pollDiscord(
      { rest, cursors, sink, store: reader, clock },
      {
        backfillFrom: START - 3_600_000,
        ...settings,
      },
    );
  };
  return { clock, server, store, cursors, run, sent };
}

const ids = async (store: MemoryStore, channel: string) =>
  (await store.read(channel)).map((message) => message.id);

describe("the Discord poller against a scripted API", () => {
  it("reads every page oldest first from the cursor, and the next run only what is new", async () => {
    const { server, store, cursors, run } = await setup({ bucketLimit: 100 });
    server.channel("100", { name: "general" });
    const posted = Array.from({ length: 250 }, () => server.post("100").id);
    const first = await run({ channels: ["100"], threads: false });
    expect(first).toMatchObject({ ingested: 250, channelsPolled: 1, stopped: [] });
    expect(await ids(store, "100")).toEqual(posted);
    expect(cursors.items.get("100")?.cursor).toBe(posted.at(-1));
    const stored = await store.read("100");
    expect(stored[0]).toMatchObject({
      author: "Ada",
      userId: "42",
      platform: "discord",
      channelName: "general",
    });
    const later = [server.post("100").id, server.post("100").id];
    const second = await run({ channels: ["100"], threads: false, rereadWindow: 0 });
    expect(second.ingested).toBe(2);
    expect((await ids(store, "100")).slice(-2)).toEqual(later);
    // 3 forward pages (100, 100, 50), 2 re-read pages and the channel's metadata, then one page.
    expect(first.requests).toBe(6);
    expect(second.requests).toBe(1);
  });

  it("starts at the backfill date: older messages are not read", async () => {
    const { server, store, run, clock } = await setup();
    server.channel("100");
    server.post("100", {
      id: snowflakeFromTime(START - 7_200_000),
      timestamp: new Date(START - 7_200_000).toISOString(),
    });
    const recent = server.post("100").id;
    await run({ channels: ["100"], threads: false, backfillFrom: clock.now() - 60_000 });
    expect(await ids(store, "100")).toEqual([recent]);
  });

  it("waits out a 429 by its retry_after and bucket headers, and a global one", async () => {
    const { server, store, run, clock } = await setup({ bucketLimit: 2, bucketWindowMs: 5000 });
    server.channel("100");
    server.channel("200");
    for (let i = 0; i < 5; i++) server.post("100");
    server.post("200");
    server.script429("/channels/100/messages", 2.5);
    server.script429("/channels/200/messages", 1, { global: true });
    const before = clock.now();
    const summary = await run({ channels: ["100", "200"], threads: false });
    expect(summary).toMatchObject({ ingested: 6, stopped: [], globalRateLimited: 1 });
    expect(summary.rateLimited).toBe(2);
    expect(clock.now() - before).toBeGreaterThanOrEqual(2500);
    expect(await ids(store, "100")).toHaveLength(5);
    // The bucket headers (2 per 5 s) were kept: no 429 of the server's own buckets.
    expect(server.requests.filter((r) => r.status === 429)).toHaveLength(2);
  });

  it("waits a second on a 429 whose retry_after is no number, instead of spinning", async () => {
    const { server, store, run, clock } = await setup();
    server.channel("100");
    server.channel("200");
    server.post("100");
    server.post("200");
    // A broken proxy's values, in the body and the Retry-After header alike.
    server.script429("/channels/100/messages", "soon");
    server.script429("/channels/200/messages", null, { global: true });
    const before = clock.now();
    const summary = await run({ channels: ["100", "200"], threads: false }, TOKEN, before + 60_000);
    expect(summary).toMatchObject({ ingested: 2, stopped: [], rateLimited: 2 });
    expect(await ids(store, "100")).toHaveLength(1);
    expect(clock.now() - before).toBeGreaterThanOrEqual(1000);
    // One 429 each, then the page: no loop of requests.
    expect(server.requests.filter((r) => r.status === 429)).toHaveLength(2);
    expect(server.requests.length).toBeLessThan(10);
  }, 20_000);

  it("stays under the global 50 requests/s over many channels", async () => {
    const { server, run, sent } = await setup();
    const channels = Array.from({ length: 60 }, (_, i) => String(1000 + i));
    for (const id of channels) {
      server.channel(id);
      server.post(id);
    }
    const summary = await run({ channels, threads: false });
    expect(summary.ingested).toBe(60);
    // Counted where the requests leave, not where they arrive: a loaded machine delays some on
    // the way and bunches them, which no client can hold to a window (so the server may answer
    // a global 429 the client then waits out: not counted against it). Any 51 in a row span a
    // second (less the microseconds between a request's turn and its send, in the same
    // synchronous step).
    expect(sent.length).toBe(server.requests.length);
    expect(sent.length).toBeGreaterThan(100);
    for (let i = 50; i < sent.length; i++) {
      expect(sent[i] - sent[i - 50]).toBeGreaterThanOrEqual(999);
    }
  });

  it("stops a 403 channel and goes on; a 401 stops the run without another request", async () => {
    const { server, store, run } = await setup();
    server.channel("100", { forbidden: true });
    server.channel("200");
    server.post("200");
    const summary = await run({ channels: ["100", "200"], threads: false });
    expect(summary.stopped).toEqual([{ source: "100", code: "DISCORD_FORBIDDEN" }]);
    expect(summary.authFailures).toBe(1);
    expect(await ids(store, "200")).toHaveLength(1);
    const count = server.requests.length;
    const bad = await run({ channels: ["200", "100"], threads: false }, "revoked");
    expect(bad).toMatchObject({ unauthorized: true, authFailures: 1 });
    expect(server.requests.length - count).toBe(1);
  });

  it("reads active and archived threads as their own cursors, with thread set", async () => {
    const { server, store, cursors, run } = await setup();
    const guildId = "900000000000000001";
    server.channel("100", { name: "help", guildId });
    const root = server.post("100", { content: "how do I…" });
    server.channel(root.id, { parentId: "100", name: "thread", guildId });
    server.post(root.id, { type: 21, content: "" });
    const reply = server.post(root.id, { content: "like this" });
    server.channel("300", { parentId: "100", archived: true });
    const old = server.post("300", { content: "archived reply" });
    await run({ channels: ["100"] });
    const stored = await store.read("100");
    expect(stored.map((m) => m.id)).toEqual([root.id, reply.id, old.id]);
    expect(stored[1]).toMatchObject({ thread: root.id });
    expect(stored[2]).toMatchObject({ thread: "300" });
    // The parent channel's guild, for their links: threads carry it as the channel's messages do.
    expect(stored.map((m) => m.guild)).toEqual(Array(3).fill(guildId));
    expect(cursors.items.get(root.id)?.cursor).toBe(reply.id);
    // An archived thread with nothing new costs no request of its messages.
    const count = server.requests.length;
    await run({ channels: ["100"], rereadWindow: 0 });
    const paths = server.requests.slice(count).map((r) => r.path);
    expect(paths.some((p) => p.startsWith("/api/v10/channels/300/messages"))).toBe(false);
  });

  it("pages back through archived threads once, then reads only the newly archived", async () => {
    const { server, store, run } = await setup({ bucketLimit: 1000, globalPerSecond: 1000 });
    server.channel("100", { name: "help" });
    const threads = Array.from({ length: 150 }, (_, i) => {
      const id = `9${String(i).padStart(3, "0")}`;
      server.channel(id, { parentId: "100", archived: true });
      // Each archived at its last message's time, a second apart: pages split by time.
      server.post(id, { timestamp: new Date(START - 3_000_000 + i * 1000).toISOString() });
      return id;
    });
    const archivedPages = (from: number) =>
      server.requests.slice(from).filter((r) => r.path.includes("/threads/archived/public"));
    await run({ channels: ["100"], rereadWindow: 0 });
    const stored = await store.read("100");
    expect(new Set(stored.map((m) => m.thread))).toEqual(new Set(threads));
    expect(archivedPages(0)).toHaveLength(2);
    const count = server.requests.length;
    await run({ channels: ["100"], rereadWindow: 0 });
    expect(archivedPages(count)).toHaveLength(1);
  });

  it("sweeps a backlog of archived threads over several runs, skipping none", async () => {
    const { server, store, run } = await setup({ bucketLimit: 1000, globalPerSecond: 1000 });
    server.channel("100", { name: "help" });
    const archive = (i: number) => {
      const id = `8${String(i).padStart(3, "0")}`;
      server.channel(id, { parentId: "100", archived: true });
      server.post(id, { timestamp: new Date(START - 3_000_000 + i * 1000).toISOString() });
      return id;
    };
    const threads = Array.from({ length: 250 }, (_, i) => archive(i));
    const threadsStored = async () => new Set((await store.read("100")).map((m) => m.thread));
    const settings = { channels: ["100"], rereadWindow: 0, archivedPages: 1 };
    await run(settings);
    expect((await threadsStored()).size).toBe(100);
    // Archived while the sweep is under way: newer than anything it saw, read once it is done.
    const late = archive(900);
    await run(settings);
    await run(settings);
    expect(await threadsStored()).toEqual(new Set(threads));
    await run(settings);
    expect(await threadsStored()).toEqual(new Set([...threads, late]));
  });

  it("reads a forum channel's posts as threads, without reading the forum itself", async () => {
    const { server, store, run, clock } = await setup();
    server.channel("500", { type: 15, name: "questions" });
    // A forum post is a thread whose first message has the thread's id.
    const thread = snowflakeFromTime(clock.now());
    server.channel(thread, { parentId: "500" });
    const post = server.post(thread, { id: thread, content: "the post" });
    const answer = server.post(thread, { content: "an answer" });
    await run({ channels: ["500"] });
    const stored = await store.read("500");
    expect(stored.map((m) => [m.id, m.thread])).toEqual([
      [post.id, undefined],
      [answer.id, thread],
    ]);
    const paths = server.requests.map((r) => r.path);
    expect(paths.some((p) => p.startsWith("/api/v10/channels/500/messages"))).toBe(false);
  });

  it("keeps a reply whose referenced message was deleted", async () => {
    const { server, store, run } = await setup();
    server.channel("100");
    const reply = server.post("100", {
      type: 19,
      message_reference: { type: 0, message_id: "12345", channel_id: "100" },
      referenced_message: null,
    });
    const summary = await run({ channels: ["100"], threads: false });
    expect(summary).toMatchObject({ ingested: 1, rejected: 0, failed: 0 });
    expect((await store.read("100"))[0]).toMatchObject({ id: reply.id, replyTo: "12345" });
  });

  it("turns an edit and a deletion seen in the re-read window into edit and delete lines", async () => {
    const { server, store, run } = await setup();
    server.channel("100");
    const [a, b, c] = [server.post("100"), server.post("100"), server.post("100")];
    await run({ channels: ["100"], threads: false });
    server.edit("100", a.id, "fixed text");
    server.remove("100", b.id);
    const summary = await run({ channels: ["100"], threads: false });
    expect(summary).toMatchObject({ edits: 1, deletions: 1 });
    const stored = await store.getMessages("100", [a.id, b.id, c.id]);
    expect(messageText(stored[0])).toBe("fixed text");
    expect(stored[1].deleted).toBe(true);
    expect(await ids(store, "100")).toEqual([a.id, c.id]);
    // A third run finds nothing more to change.
    const again = await run({ channels: ["100"], threads: false });
    expect(again).toMatchObject({ edits: 0, deletions: 0 });
  });

  it("stops before the deadline and resumes at the cursor next run", async () => {
    const { server, store, cursors, run, clock } = await setup({
      bucketLimit: 1,
      bucketWindowMs: 20_000,
    });
    server.channel("100");
    const posted = Array.from({ length: 150 }, () => server.post("100").id);
    const settings = { channels: ["100"], threads: false, rereadWindow: 0 };
    // One page fits; the second would wait 20 s for its bucket, past the deadline.
    const first = await run(settings, TOKEN, clock.now() + 15_000);
    expect(first).toMatchObject({ deadlineReached: true, ingested: 100 });
    expect(cursors.items.get("100")?.cursor).toBe(posted[99]);
    const second = await run(settings);
    expect(second).toMatchObject({ deadlineReached: false, ingested: 50 });
    expect(await ids(store, "100")).toEqual(posted);
  });

  it("resumes a run cut by its deadline at the channel it stopped in", async () => {
    const { server, store, run, clock } = await setup({ bucketLimit: 1, bucketWindowMs: 20_000 });
    for (const [id, n] of [
      ["100", 50],
      ["200", 150],
      ["300", 50],
    ] as const) {
      server.channel(id);
      for (let i = 0; i < n; i++) server.post(id);
    }
    // One channel at a time, so that the run is cut inside the second one.
    const settings = {
      channels: ["100", "200", "300"],
      threads: false,
      rereadWindow: 0,
      concurrency: 1,
    };
    const first = await run(settings, TOKEN, clock.now() + 15_000);
    expect(first).toMatchObject({ deadlineReached: true, channelsPolled: 1 });
    const count = server.requests.length;
    const second = await run(settings);
    expect(second).toMatchObject({ deadlineReached: false, channelsPolled: 3 });
    const firstPath = server.requests[count].path;
    expect(firstPath.startsWith("/api/v10/channels/200/")).toBe(true);
    expect(await ids(store, "200")).toHaveLength(150);
    expect(await ids(store, "300")).toHaveLength(50);
  });
});
