/**
 * "Mark as answer" at the ask endpoints: Slack's message shortcut (an Interactivity payload) and
 * Discord's message command, verified as every request of theirs is, checked against the
 * channels answered and the rate limit, and handed on to the mark function; off without one.
 */
import { generateKeyPairSync, sign } from "node:crypto";
import {
  AskRateLimit,
  discordAskReceiver,
  discordPublicKey,
  signSlackRequest,
  slackAskReceiver,
} from "convoseg/connectors";
import { describe, expect, it } from "vitest";
import { NOW, receiverParts } from "./ask-parts.js";

function parts(limit?: AskRateLimit, on = true) {
  const marked: unknown[] = [];
  const base = receiverParts(limit);
  return {
    ...base,
    marked,
    options: {
      ...base.options,
      ask: async () => {
        throw new Error("no question here");
      },
      ...(on && {
        mark: async (request: unknown) => {
          marked.push(request);
        },
      }),
      scope: { channels: new Set(["C0HELP", "1100000000000000001"]), privateChats: false },
    },
  };
}

describe("Slack's Mark as answer shortcut", () => {
  const SECRET = "s3cret";
  const shortcut = (over: Record<string, unknown> = {}) => ({
    type: "message_action",
    callback_id: "mark_answer",
    trigger_id: "1.2.x",
    response_url: "https://hooks.slack.com/app/T1/2/x",
    team: { id: "T1" },
    channel: { id: "C0HELP", name: "help" },
    user: { id: "U0MOD" },
    message: { type: "message", ts: "1750000100.000200", thread_ts: "1750000000.000100" },
    ...over,
  });
  const request = (payload: unknown, ts = Math.floor(NOW / 1000)) => {
    const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
    return {
      headers: {
        "x-slack-request-timestamp": String(ts),
        "x-slack-signature": signSlackRequest(SECRET, ts, body),
      },
      body: Buffer.from(body),
    };
  };

  it("acknowledges a verified shortcut with an empty 200 and hands the mark on", async () => {
    const { marked, counts, options } = parts();
    const receive = slackAskReceiver({ ...options, signingSecret: async () => SECRET });
    const ok = await receive(request(shortcut()));
    expect([ok.statusCode, ok.body]).toEqual([200, ""]);
    expect(marked).toEqual([
      {
        platform: "slack",
        channel: "C0HELP",
        messageId: "1750000100.000200",
        action: "answered",
        by: "U0MOD",
        thread: "1750000000.000100",
        responseUrl: "https://hooks.slack.com/app/T1/2/x",
      },
    ]);
    // A thread's root chosen is no reply in a thread: no thread.
    const root = { type: "message", ts: "1750000000.000100", thread_ts: "1750000000.000100" };
    await receive(request(shortcut({ message: root })));
    expect(marked[1]).not.toHaveProperty("thread");
    // The other shortcuts say what of its question.
    await receive(request(shortcut({ callback_id: "reopen_question" })));
    await receive(request(shortcut({ callback_id: "hide_question" })));
    expect(marked.slice(2).map((m) => (m as { action: string }).action)).toEqual([
      "reopen",
      "hidden",
    ]);
    expect(counts).toMatchObject({ AsksReceived: 4, AsksTaken: 4 });
  });

  it("refuses forged and stale requests with 401, and ignores other interactions", async () => {
    const { marked, counts, options } = parts();
    const receive = slackAskReceiver({ ...options, signingSecret: async () => SECRET });
    const forged = {
      ...request(shortcut()),
      body: request(shortcut({ user: { id: "U0X" } })).body,
    };
    const stale = request(shortcut(), Math.floor(NOW / 1000) - 301);
    expect([(await receive(forged)).statusCode, (await receive(stale)).statusCode]).toEqual([
      401, 401,
    ]);
    const others = [
      shortcut({ callback_id: "something_else" }),
      shortcut({ callback_id: "constructor" }),
      shortcut({ type: "block_actions" }),
      shortcut({ channel: { id: "<!channel>" } }),
      shortcut({ message: { ts: "not a ts" } }),
    ];
    for (const payload of others) {
      const answered = await receive(request(payload));
      expect([answered.statusCode, answered.body]).toEqual([200, ""]);
    }
    expect(marked).toEqual([]);
    expect(counts).toMatchObject({ AsksRefused: 2, AsksIgnored: 5 });
  });

  it("takes no mark outside the channels answered, over the rate limit, or when marking is off", async () => {
    const limited = parts(new AskRateLimit({ perPerson: 1 }, () => NOW));
    const receive = slackAskReceiver({ ...limited.options, signingSecret: async () => SECRET });
    await receive(request(shortcut()));
    await receive(request(shortcut()));
    await receive(request(shortcut({ channel: { id: "C0ELSE" } })));
    // A group DM is private, even when its id is listed.
    await receive(request(shortcut({ channel: { id: "C0HELP", name: "mpdm-ann--bob-1" } })));
    expect(limited.marked).toHaveLength(1);
    expect(limited.counts).toMatchObject({ AsksLimited: 1, AsksIgnored: 2 });
    const off = parts(undefined, false);
    const closed = slackAskReceiver({ ...off.options, signingSecret: async () => SECRET });
    expect((await closed(request(shortcut()))).statusCode).toBe(200);
    expect(off.counts).toMatchObject({ AsksIgnored: 1 });
  });
});

describe("Discord's Mark as answer message command", () => {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  const raw = publicKey.export({ format: "der", type: "spki" }).subarray(12).toString("hex");
  const key = discordPublicKey(raw);
  const signed = (value: unknown, ts = Math.floor(NOW / 1000)) => {
    const body = JSON.stringify(value);
    return {
      headers: {
        "x-signature-ed25519": sign(null, Buffer.from(`${ts}${body}`), privateKey).toString("hex"),
        "x-signature-timestamp": String(ts),
      },
      body: Buffer.from(body),
    };
  };
  const TARGET = "1150000000000001019";
  const interaction = (over: Record<string, unknown> = {}) => ({
    type: 2,
    application_id: "1300000000000000001",
    token: "tok",
    guild_id: "1100000000000000002",
    channel_id: "1100000000000000001",
    member: { user: { id: "1400000000000000001" } },
    data: {
      type: 3,
      name: "Mark as answer",
      target_id: TARGET,
      resolved: {
        messages: {
          [TARGET]: { id: TARGET, message_reference: { message_id: "1150000000000001007" } },
        },
      },
    },
    ...over,
  });

  it("defers only to the person and hands the mark on, with the message it replies to", async () => {
    const { marked, options } = parts();
    const receive = discordAskReceiver({ ...options, publicKey: async () => key });
    const ok = await receive(signed(interaction()));
    expect(JSON.parse(ok.body)).toEqual({ type: 5, data: { flags: 64 } });
    expect(marked).toEqual([
      {
        platform: "discord",
        channel: "1100000000000000001",
        messageId: TARGET,
        action: "answered",
        by: "1400000000000000001",
        replyTo: "1150000000000001007",
        applicationId: "1300000000000000001",
        token: "tok",
      },
    ]);
    const hide = interaction();
    hide.data.name = "Hide question";
    await receive(signed(hide));
    expect((marked[1] as { action: string }).action).toBe("hidden");
    // In a thread: its parent channel, where its messages are stored, the thread as their thread.
    const thread = { id: "1100000000000000050", type: 11, parent_id: "1100000000000000001" };
    await receive(signed(interaction({ channel_id: thread.id, channel: thread })));
    expect(marked[2]).toMatchObject({ channel: thread.parent_id, thread: thread.id });
    const other = interaction();
    other.data.name = "toString";
    expect((await receive(signed(other))).statusCode).toBe(400);
  });

  it("refuses the unsigned and badly signed with 401; tells the person when it takes no mark", async () => {
    const { marked, options } = parts();
    const receive = discordAskReceiver({ ...options, publicKey: async () => key });
    const unsigned = await receive({
      headers: {},
      body: Buffer.from(JSON.stringify(interaction())),
    });
    const tampered = {
      ...signed(interaction()),
      body: Buffer.from(JSON.stringify(interaction({ member: { user: { id: "1" } } }))),
    };
    const stale = signed(interaction(), Math.floor(NOW / 1000) - 600);
    const statuses = [unsigned, await receive(tampered), await receive(stale)].map(
      (r) => r.statusCode,
    );
    expect(statuses).toEqual([401, 401, 401]);
    const outside = await receive(signed(interaction({ channel_id: "1100000000000000009" })));
    expect(JSON.parse(outside.body)).toMatchObject({
      type: 4,
      data: { flags: 64, content: "Questions are not answered in this channel." },
    });
    const noTarget = interaction();
    noTarget.data.target_id = "../x";
    expect((await receive(signed(noTarget))).statusCode).toBe(400);
    const off = parts(undefined, false);
    const closed = discordAskReceiver({ ...off.options, publicKey: async () => key });
    expect(JSON.parse((await closed(signed(interaction()))).body)).toMatchObject({
      type: 4,
      data: { flags: 64, content: expect.stringMatching(/not turned on/) },
    });
    expect(marked).toEqual([]);
  });
});
