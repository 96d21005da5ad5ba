import { readFileSync } from "node:fs";
import { ConnectorError, parseSlackEnvelope, slackEventLines } from "convoseg/connectors";
import { ingestionProblem } from "convoseg/ingest";
import { describe, expect, it } from "vitest";
import { fixture, readAll } from "../exports/support.js";
import { envelope, plain } from "./slack-fixtures.js";

const TS_MS = 1_736_478_630_905;
const names = {
  users: new Map([
    ["U0001", "ada"],
    ["U0002", "grace"],
  ]),
  channels: new Map([["C0002", "general"]]),
};

describe("Slack envelopes", () => {
  it("reads url_verification's challenge", () => {
    expect(
      parseSlackEnvelope(
        JSON.stringify({ token: "t", challenge: "3eZbrw1a", type: "url_verification" }),
      ),
    ).toEqual({ type: "url_verification", challenge: "3eZbrw1a" });
  });

  it("reads an event_callback's id, team and event", () => {
    const parsed = parseSlackEnvelope(envelope(plain(), "Ev42"));
    expect(parsed).toMatchObject({ type: "event_callback", eventId: "Ev42", teamId: "T0001" });
  });

  it("passes other envelope types on as other", () => {
    expect(parseSlackEnvelope('{"type":"app_rate_limited","minute_rate_limited":1}')).toEqual({
      type: "other",
      envelopeType: "app_rate_limited",
    });
  });

  it.each([
    ["not json", "body"],
    ["[1]", "body"],
    ['{"challenge":"x"}', "type"],
    ['{"type":"url_verification"}', "challenge"],
    ['{"type":"event_callback","event":{}}', "event_id"],
    ['{"type":"event_callback","event_id":"Ev1","event":"x"}', "event"],
  ])("refuses %s, naming %s", (body, field) => {
    expect(() => parseSlackEnvelope(body)).toThrow(ConnectorError);
    try {
      parseSlackEnvelope(body);
    } catch (error) {
      expect(error).toMatchObject({ code: "CONNECTOR_MALFORMED_BODY", field });
    }
  });
});

describe("Slack message events as ingest lines", () => {
  it("renders a plain message's mentions, links and channel refs; ts is the id", () => {
    expect(slackEventLines(plain(), names)).toEqual([
      {
        id: "1736478630.905399",
        ts: TS_MS,
        channel: "C0001",
        user: "ada",
        userId: "U0001",
        text: "hello @grace, see the docs (https://example.com) in #general",
        kind: "user",
        platform: "slack",
      },
    ]);
  });

  it("names an unknown user by id, a channel ref by its label", () => {
    const [line] = slackEventLines(plain({ user: "U0009", text: "<@U0003> <#C0009|random>" }));
    expect(line).toMatchObject({ user: "U0009", userId: "U0009", text: "@U0003 #random" });
  });

  it("gives a thread reply and a thread_broadcast the root's ts as thread", () => {
    const root = "1736478000.000100";
    const reply = slackEventLines(plain({ thread_ts: root, parent_user_id: "U0002" }));
    const broadcast = slackEventLines(plain({ subtype: "thread_broadcast", thread_ts: root }));
    expect(reply[0]).toMatchObject({ thread: root, kind: "user" });
    expect(broadcast[0]).toMatchObject({ thread: root, kind: "user" });
    // A root carries thread_ts == ts: not a reply.
    expect(slackEventLines(plain({ thread_ts: "1736478630.905399" }))[0]).not.toHaveProperty(
      "thread",
    );
  });

  it("takes bot_message as kind bot, named by its username, its id the bot's", () => {
    const [line] = slackEventLines(
      plain({ subtype: "bot_message", user: undefined, bot_id: "B0001", username: "deploybot" }),
    );
    expect(line).toMatchObject({ kind: "bot", user: "deploybot", userId: "B0001" });
  });

  it("takes me_message as the person's", () => {
    const [line] = slackEventLines(plain({ subtype: "me_message", text: "waves" }), names);
    expect(line).toMatchObject({ kind: "user", user: "ada", text: "waves" });
  });

  it("takes file_share as its text plus the files' names", () => {
    const [line] = slackEventLines(
      plain({
        subtype: "file_share",
        text: "the logs",
        files: [{ name: "crash.log" }, { title: "screenshot" }, {}],
      }),
    );
    expect((line as { text: string }).text).toBe("the logs\n[file: crash.log]\n[file: screenshot]");
    // A file's name cannot forge a line of its own.
    const [forged] = slackEventLines(
      plain({ subtype: "file_share", text: "", files: [{ name: "a.log\n@here \u001b[2Jb" }] }),
    );
    expect((forged as { text: string }).text).toBe("[file: a.log @here [2Jb]");
  });

  it.each(["channel_join", "channel_topic", "pinned_item"])(
    "takes %s as kind system",
    (subtype) => {
      const [line] = slackEventLines(
        plain({ subtype, text: "<@U0001> has joined the channel" }),
        names,
      );
      expect(line).toMatchObject({
        kind: "system",
        user: null,
        userId: "U0001",
        text: "@ada has joined the channel",
      });
    },
  );

  it("turns message_changed into an edit dated by the edit, rendered", () => {
    const lines = slackEventLines(
      {
        type: "message",
        subtype: "message_changed",
        hidden: true,
        channel: "C0001",
        ts: "1736478700.000200",
        message: {
          ...plain({ text: "fixed <@U0002>" }),
          edited: { user: "U0001", ts: "1736478690.000000" },
        },
        previous_message: plain({ text: "fixd" }),
      },
      names,
    );
    expect(lines).toEqual([
      {
        op: "edit",
        channel: "C0001",
        id: "1736478630.905399",
        text: "fixed @grace",
        editedAt: 1_736_478_690_000,
      },
    ]);
  });

  it("sends nothing for a message_changed that leaves the text as it was (an unfurl, a reply count)", () => {
    const same = plain({ text: "see https://example.com" });
    expect(
      slackEventLines({
        type: "message",
        subtype: "message_changed",
        channel: "C0001",
        ts: "1736478700.000200",
        message: { ...same, attachments: [{ fallback: "Example" }], reply_count: 2 },
        previous_message: same,
      }),
    ).toEqual([]);
  });

  it("turns a parent deleted under its replies (a tombstone) and message_deleted into deletions", () => {
    expect(
      slackEventLines({
        type: "message",
        subtype: "message_deleted",
        hidden: true,
        channel: "C0001",
        ts: "1736478700.000200",
        deleted_ts: "1736478630.905399",
        previous_message: plain(),
      }),
    ).toEqual([{ op: "delete", channel: "C0001", id: "1736478630.905399" }]);
    expect(
      slackEventLines({
        type: "message",
        subtype: "message_changed",
        channel: "C0001",
        ts: "1736478700.000200",
        message: { ...plain({ text: "This message was deleted." }), subtype: "tombstone" },
        previous_message: plain(),
      }),
    ).toEqual([{ op: "delete", channel: "C0001", id: "1736478630.905399" }]);
  });

  it("ignores other event types, other hidden subtypes and a person's message with no author", () => {
    expect(slackEventLines({ type: "reaction_added", channel: "C0001" })).toEqual([]);
    expect(slackEventLines(plain({ subtype: "message_replied", hidden: true }))).toEqual([]);
    expect(slackEventLines(plain({ user: undefined }))).toEqual([]);
    expect(slackEventLines(plain({ ts: "yesterday" }))).toEqual([]);
    expect(slackEventLines(plain({ channel: "" }))).toEqual([]);
  });

  it("makes lines ingestion takes as they are", () => {
    const events = [
      plain(),
      plain({ subtype: "bot_message", user: undefined, bot_id: "B1", username: "b" }),
      plain({ subtype: "channel_join" }),
      plain({ thread_ts: "1736478000.000100" }),
    ];
    for (const event of events) {
      for (const line of slackEventLines(event, names)) {
        expect(ingestionProblem(JSON.parse(JSON.stringify(line)))).toBeUndefined();
      }
    }
  });
});

describe("Slack posts by apps, live as imported", () => {
  const apps = fixture("slack", "apps");
  /** The export's day file: the message objects an app's posts are, as events of #builds. */
  const posts = (
    JSON.parse(readFileSync(`${apps}/builds/2024-02-01.json`, "utf8")) as Record<string, unknown>[]
  ).map((message): Record<string, unknown> => ({ ...message, channel: "C0BUILDS" }));
  const appNames = {
    users: new Map([
      ["U0ANA", "ana.l"],
      ["U0CIBOT", "ci-runner"],
      ["U0GITHUB", "github"],
      ["USLACKBOT", "Slackbot"],
    ]),
    channels: new Map<string, string>(),
  };

  it("takes an app's post (bot_id, app_id, bot_profile, its bot user in user) as the bot's", () => {
    const [ci] = slackEventLines(posts[0]);
    expect(ci).toMatchObject({ kind: "bot", user: "CI", userId: "B0CI" });
    const [reply] = slackEventLines(posts[2]);
    expect(reply).toMatchObject({
      kind: "bot",
      user: "CI",
      userId: "B0CI",
      thread: "1706781600.000100",
    });
    expect(slackEventLines(posts[3])[0]).toMatchObject({ kind: "bot", user: "GitHub" });
    // Slackbot, even when users.info cannot name it.
    expect(slackEventLines(posts[4])[0]).toMatchObject({
      kind: "bot",
      user: "Slackbot",
      userId: "USLACKBOT",
    });
  });

  it("gives each post the author, kind, text and thread the export reader gives it", async () => {
    const { messages } = await readAll([apps]);
    for (const post of posts) {
      const [line] = slackEventLines(post, appNames) as Record<string, unknown>[];
      const imported = messages.find((m) => m.id === post.ts);
      expect(imported).toBeDefined();
      const { ts: _live, channel: _c, ...live } = line;
      const { ts: _imported, channel: _d, channelName: _n, ...read } = imported ?? {};
      expect(live).toEqual(read);
      expect(ingestionProblem(JSON.parse(JSON.stringify(line)))).toBeUndefined();
    }
  });
});
