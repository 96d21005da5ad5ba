/** users.info against a scripted Slack API on 127.0.0.1: names, the cache, misses and timeouts. */
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  type IngestLine,
  MAX_LOOKUPS_PER_EVENT,
  MemoryEventClaims,
  SlackUserNames,
  slackReceiver,
  slackUserIds,
} from "convoseg/connectors";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { envelope, NOW, plain, SECRET, signed } from "./slack-fixtures.js";

const TOKEN = "xoxb-test-token";
let server: Server;
let baseUrl = "";
const asked: string[] = [];
let inFlight = 0;
let mostInFlight = 0;

beforeAll(async () => {
  server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://localhost");
    const user = url.searchParams.get("user") ?? "";
    asked.push(user);
    if (request.headers.authorization !== `Bearer ${TOKEN}`) {
      response.writeHead(200, { "content-type": "application/json" });
      response.end('{"ok":false,"error":"invalid_auth"}');
      return;
    }
    if (user === "USLOW") return; // never answers: the lookup's timeout ends it
    if (user.startsWith("UMANY")) {
      // A crowd of mentioned users, each answered after a moment: how many are asked at once.
      inFlight++;
      mostInFlight = Math.max(mostInFlight, inFlight);
      setTimeout(() => {
        inFlight--;
        response.writeHead(200, { "content-type": "application/json" });
        response.end(JSON.stringify({ ok: true, user: { name: user.toLowerCase() } }));
      }, 5);
      return;
    }
    const users: Record<string, unknown> = {
      U0001: { name: "ada.l", real_name: "Ada Lovelace", profile: { display_name: "ada" } },
      U0002: { name: "grace", profile: { display_name: "", real_name: "Grace Hopper" } },
    };
    response.writeHead(200, { "content-type": "application/json" });
    response.end(
      JSON.stringify(
        user in users ? { ok: true, user: users[user] } : { ok: false, error: "user_not_found" },
      ),
    );
  }).listen(0, "127.0.0.1");
  await once(server, "listening");
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => {
  server.closeAllConnections();
  return new Promise<void>((done) => server.close(() => done()));
});

describe("Slack user names", () => {
  it("finds the author's and the mentioned users' ids", () => {
    expect(slackUserIds("U0001", "hi <@U0002> and <@W0003|bob>, not <#C0001>", undefined)).toEqual([
      "U0001",
      "U0002",
      "W0003",
    ]);
  });

  it("names users as the export reader does, asking once per id while cached", async () => {
    asked.length = 0;
    let now = 0;
    const names = new SlackUserNames({ token: async () => TOKEN, baseUrl, now: () => now });
    expect((await names.names(["U0001", "U0002", "UNONE"])).users).toEqual(
      new Map([
        ["U0001", "ada"],
        ["U0002", "Grace Hopper"],
      ]),
    );
    await names.names(["U0001", "UNONE"]);
    expect(asked.sort()).toEqual(["U0001", "U0002", "UNONE"]);
    // A miss is asked again after a minute, a name after an hour.
    now = 61_000;
    await names.names(["U0001", "UNONE"]);
    expect(asked.filter((u) => u === "UNONE")).toHaveLength(2);
    expect(asked.filter((u) => u === "U0001")).toHaveLength(1);
  });

  it("looks up a bounded number of an event's users, a few at a time, author first", async () => {
    asked.length = 0;
    mostInFlight = 0;
    const names = new SlackUserNames({ token: async () => TOKEN, baseUrl });
    await names.names(["U0001"]);
    asked.length = 0;
    const text = Array.from({ length: 1500 }, (_, i) => `<@UMANY${i}>`).join(" ");
    const ids = slackUserIds("UMANYAUTHOR", text, "U0001");
    expect(ids).toHaveLength(1502);
    const { users } = await names.names(ids);
    expect(asked).toHaveLength(MAX_LOOKUPS_PER_EVENT);
    expect(asked[0]).toBe("UMANYAUTHOR");
    expect(mostInFlight).toBeGreaterThan(1);
    expect(mostInFlight).toBeLessThanOrEqual(5);
    // Cached names cost no lookup and are always given.
    expect(users.get("U0001")).toBe("ada");
    expect(users.size).toBe(MAX_LOOKUPS_PER_EVENT + 1);
  });

  it("leaves the id when the token is refused or Slack does not answer in time", async () => {
    const refused = new SlackUserNames({ token: async () => "xoxb-wrong", baseUrl });
    expect((await refused.names(["U0001"])).users.size).toBe(0);
    const slow = new SlackUserNames({ token: async () => TOKEN, baseUrl, timeoutMs: 50 });
    const started = Date.now();
    expect((await slow.names(["USLOW"])).users.size).toBe(0);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it("gives the receiver's lines names for authors and mentions", async () => {
    const sent: IngestLine[] = [];
    const names = new SlackUserNames({ token: async () => TOKEN, baseUrl });
    const receive = slackReceiver({
      signingSecret: async () => SECRET,
      claims: new MemoryEventClaims(),
      send: async (line) => {
        sent.push(line);
      },
      metrics: { add: () => {} },
      log: { info: () => {}, warn: () => {}, error: () => {} },
      userNames: (ids) => names.names(ids),
      now: () => NOW,
    });
    const body = envelope(plain({ text: "thanks <@U0002>" }), "EvN1");
    expect((await receive(signed(body))).statusCode).toBe(200);
    expect(sent[0]).toMatchObject({ user: "ada", userId: "U0001", text: "thanks @Grace Hopper" });
  });
});
