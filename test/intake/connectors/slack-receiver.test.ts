import {
  type ConnectorMetric,
  type IngestLine,
  MAX_EVENT_BODY_BYTES,
  MemoryEventClaims,
  type SlackReceiverOptions,
  slackReceiver,
} from "convoseg/connectors";
import { describe, expect, it } from "vitest";
import { envelope, NOW, NOW_SECONDS, plain, SECRET, signed } from "./slack-fixtures.js";

/** A receiver over memory claims, recording what it sends, counts and logs. */
function world(over: Partial<SlackReceiverOptions> = {}) {
  const sent: IngestLine[] = [];
  const counts = new Map<ConnectorMetric, number>();
  const logged: { level: string; message: string; attributes: Record<string, unknown> }[] = [];
  const log = (level: string) => (message: string, attributes: Record<string, unknown>) =>
    logged.push({ level, message, attributes });
  const claims = new MemoryEventClaims();
  const receive = slackReceiver({
    signingSecret: async () => SECRET,
    claims,
    send: async (line) => {
      sent.push(line);
    },
    metrics: { add: (name, value) => counts.set(name, (counts.get(name) ?? 0) + value) },
    log: { info: log("info"), warn: log("warn"), error: log("error") },
    now: () => NOW,
    ...over,
  });
  const count = (name: ConnectorMetric) => counts.get(name) ?? 0;
  return { receive, sent, count, logged, claims };
}

describe("the Slack receiver", () => {
  it("answers url_verification with the challenge as text/plain, once verified", async () => {
    const { receive, sent } = world();
    const body = JSON.stringify({ token: "t", challenge: "3eZbrw1a", type: "url_verification" });
    expect(await receive(signed(body))).toEqual({
      statusCode: 200,
      headers: { "content-type": "text/plain" },
      body: "3eZbrw1a",
    });
    const forged = await receive(signed(body, { secret: "guess" }));
    expect(forged.statusCode).toBe(401);
    expect(forged.body).not.toContain("3eZbrw1a");
    expect(sent).toEqual([]);
  });

  it("sends a message event's line and acknowledges; a retry of it is acknowledged, not sent", async () => {
    const { receive, sent, count } = world();
    const body = envelope(plain(), "Ev1");
    expect((await receive(signed(body))).statusCode).toBe(200);
    const retry = signed(body, {
      timestamp: NOW_SECONDS + 60,
      headers: { "x-slack-retry-num": "1", "x-slack-retry-reason": "http_timeout" },
    });
    expect((await receive(retry)).statusCode).toBe(200);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ id: "1736478630.905399", channel: "C0001" });
    expect([count("EventsReceived"), count("EventsIngested"), count("EventsDuplicate")]).toEqual([
      2, 1, 1,
    ]);
  });

  it("refuses a forged, a stale and an altered request, counting each, sending none", async () => {
    const { receive, sent, count, logged } = world();
    const body = envelope(plain({ text: "secret words" }), "Ev2");
    const good = signed(body);
    const responses = await Promise.all([
      receive(signed(body, { secret: "guess" })),
      receive(signed(body, { timestamp: NOW_SECONDS - 301 })),
      receive({ ...good, body: Buffer.from(body.replace("secret", "public")) }),
      receive({ body: good.body, headers: {} }),
    ]);
    expect(responses.map((r) => r.statusCode)).toEqual([401, 401, 401, 401]);
    expect(responses.map((r) => JSON.parse(r.body).error)).toEqual([
      "CONNECTOR_BAD_SIGNATURE",
      "CONNECTOR_STALE_REQUEST",
      "CONNECTOR_BAD_SIGNATURE",
      "CONNECTOR_HEADER_MISSING",
    ]);
    expect(sent).toEqual([]);
    expect(count("EventsRefused")).toBe(4);
    expect(JSON.stringify(logged)).not.toContain("secret words");
    // A refused request claims nothing: the genuine one is still taken.
    expect((await receive(good)).statusCode).toBe(200);
    expect(sent).toHaveLength(1);
  });

  it("takes only the channels it is given, and DMs only when told to", async () => {
    const dm = (id: string, type: string) =>
      envelope(plain({ channel: `D${id}`, channel_type: type }), `Ev${id}`);
    const open = world();
    expect((await open.receive(signed(envelope(plain(), "EvC")))).statusCode).toBe(200);
    for (const [id, type] of [
      ["M1", "im"],
      ["M2", "mpim"],
    ]) {
      expect((await open.receive(signed(dm(id, type)))).statusCode).toBe(200);
    }
    // DMs are acknowledged (Slack would retry otherwise) and dropped; the channel's is taken.
    expect(open.sent.map((l) => l.channel)).toEqual(["C0001"]);
    expect(open.count("EventsIgnored")).toBe(2);
    expect(open.logged).toContainEqual(
      expect.objectContaining({
        message: "event outside the channels taken",
        attributes: expect.objectContaining({ reason: "private" }),
      }),
    );
    const listed = world({ scope: { channels: new Set(["C0002"]), privateChats: true } });
    await listed.receive(signed(envelope(plain(), "EvC1")));
    await listed.receive(signed(envelope(plain({ channel: "C0002" }), "EvC2")));
    await listed.receive(signed(dm("M3", "im")));
    expect(listed.sent.map((l) => l.channel)).toEqual(["C0002"]);
    const withDms = world({ scope: { privateChats: true } });
    await withDms.receive(signed(dm("M4", "im")));
    expect(withDms.sent.map((l) => l.channel)).toEqual(["DM4"]);
  });

  it("refuses a body over the bound with 413 before reading the secret or hashing it", async () => {
    let secretReads = 0;
    const { receive, sent, count } = world({
      signingSecret: async () => {
        secretReads++;
        return SECRET;
      },
    });
    const big = envelope(plain({ text: "x".repeat(MAX_EVENT_BODY_BYTES) }), "EvBig");
    const response = await receive(signed(big));
    expect(response.statusCode).toBe(413);
    expect(JSON.parse(response.body)).toEqual({ error: "CONNECTOR_BODY_TOO_LARGE" });
    expect(secretReads).toBe(0);
    expect(count("EventsRefused")).toBe(1);
    expect(sent).toEqual([]);
    // At the bound itself, a body is read as any other.
    const fits = envelope(plain({ text: "y" }), "EvFits");
    expect((await receive(signed(fits.padEnd(MAX_EVENT_BODY_BYTES, " ")))).statusCode).toBe(200);
  });

  it("logs a flood of refusals as one line, then one line of counts per window", async () => {
    let now = NOW;
    const { receive, logged, count } = world({ now: () => now });
    const forged = signed(envelope(plain(), "EvF"), { secret: "guess" });
    for (let i = 0; i < 100; i++) await receive(forged);
    await receive({ body: forged.body, headers: {} });
    expect(count("EventsRefused")).toBe(101);
    const refusals = () => logged.filter((l) => l.message.startsWith("request"));
    expect(refusals()).toEqual([
      {
        level: "warn",
        message: "request refused",
        attributes: expect.objectContaining({
          code: "CONNECTOR_BAD_SIGNATURE",
          field: "X-Slack-Signature",
        }),
      },
    ]);
    now += 61_000;
    await receive(signed(envelope(plain(), "EvF2"), { secret: "guess", timestamp: now / 1000 }));
    expect(refusals().slice(1)).toEqual([
      {
        level: "warn",
        message: "requests refused",
        attributes: {
          since: new Date(NOW).toISOString(),
          refused: {
            "CONNECTOR_BAD_SIGNATURE X-Slack-Signature": 99,
            "CONNECTOR_HEADER_MISSING X-Slack-Request-Timestamp": 1,
          },
        },
      },
      expect.objectContaining({ message: "request refused" }),
    ]);
  });

  it("answers 400 to a verified body that is no envelope, 200 to events it ignores", async () => {
    const { receive, sent, count } = world();
    expect((await receive(signed("not json"))).statusCode).toBe(400);
    expect((await receive(signed(envelope({ type: "reaction_added" })))).statusCode).toBe(200);
    expect((await receive(signed('{"type":"app_rate_limited"}'))).statusCode).toBe(200);
    expect(sent).toEqual([]);
    expect(count("EventsIgnored")).toBe(2);
  });

  it("answers 500 when the send fails and gives the claim back, so Slack's retry is taken", async () => {
    let fail = true;
    const sent: IngestLine[] = [];
    const { receive, count, claims } = world({
      send: async (line) => {
        if (fail) throw new Error("queue down");
        sent.push(line);
      },
    });
    const body = envelope(plain(), "Ev3");
    expect((await receive(signed(body))).statusCode).toBe(500);
    expect(claims.states.has("Ev3")).toBe(false);
    fail = false;
    expect(
      (await receive(signed(body, { headers: { "x-slack-retry-num": "1" } }))).statusCode,
    ).toBe(200);
    expect(sent).toHaveLength(1);
    expect(count("EventsFailed")).toBe(1);
  });

  it("refuses a retry while the first attempt is still sending, so a failed first send loses nothing", async () => {
    let failFirst: (error: Error) => void = () => {};
    let calls = 0;
    const sent: IngestLine[] = [];
    const { receive, count } = world({
      send: (line) => {
        calls += 1;
        if (calls === 1) return new Promise((_, reject) => (failFirst = reject));
        sent.push(line);
        return Promise.resolve();
      },
    });
    const body = envelope(plain(), "Ev4");
    const retry = (n: number) => signed(body, { headers: { "x-slack-retry-num": String(n) } });
    const first = receive(signed(body));
    await new Promise((resolve) => setImmediate(resolve));
    const inFlight = await receive(retry(1));
    expect(inFlight.statusCode).toBe(503);
    expect(count("EventsInFlight")).toBe(1);
    failFirst(new Error("queue down"));
    expect((await first).statusCode).toBe(500);
    expect((await receive(retry(2))).statusCode).toBe(200);
    expect(sent).toHaveLength(1);
    expect((await receive(retry(3))).statusCode).toBe(200);
    expect(sent).toHaveLength(1);
    expect(count("EventsDuplicate")).toBe(1);
  });

  it("answers 500 when the secret or a claim cannot be read", async () => {
    const noSecret = world({ signingSecret: () => Promise.reject(new Error("denied")) });
    expect((await noSecret.receive(signed(envelope(plain())))).statusCode).toBe(500);
    const noClaims = world({
      claims: {
        claim: () => Promise.reject(new Error("throttled")),
        settle: async () => {},
        release: async () => {},
      },
    });
    expect((await noClaims.receive(signed(envelope(plain())))).statusCode).toBe(500);
    expect(noClaims.sent).toEqual([]);
  });

  it("logs ids and ops, never message text", async () => {
    const { receive, logged } = world();
    await receive(signed(envelope(plain({ text: "my private words" }), "Ev4")));
    expect(logged).toContainEqual({
      level: "info",
      message: "event sent",
      attributes: expect.objectContaining({ eventId: "Ev4", ops: ["add"] }),
    });
    expect(JSON.stringify(logged)).not.toContain("private");
  });
});
