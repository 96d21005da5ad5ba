/**
 * `npm start -- serve`'s wiring: a local workspace (its own DynamoDB Local) served over HTTP on
 * 127.0.0.1, read back with fetch, as a user's curl would.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { textMessage } from "convoseg/history";
import { DynamoDbStore } from "convoseg/history/dynamodb";
import { describe, expect, it } from "vitest";

type ErrorBody = { error: { code: string; parameter?: string } };

import {
  seededChannel,
  writeSeededChannel,
  writeSeededQuestions,
} from "../../../bench/api-seed.js";
import { serveWorkspace } from "../../../cli/serve/serve.js";
import { openWorkspace } from "../../../local/workspace.js";

describe("serve on a workspace", () => {
  it("serves the workspace's channels, topics and segments on 127.0.0.1", async () => {
    const dir = mkdtempSync(join(tmpdir(), "convoseg-serve-"));
    const workspace = await openWorkspace({ dir, create: true, note: () => {} });
    try {
      const seeded = seededChannel("general", 40, 8);
      await writeSeededChannel(workspace.dynamodb(), workspace.tables, "general", seeded);
      const sent = Date.UTC(2025, 1, 27, 9);
      const history = new DynamoDbStore({
        client: workspace.dynamodb(),
        tableName: workspace.tables.messagesTable,
      });
      await history.write("general", [
        textMessage("user", "oops", { id: "m0", ts: sent - 1000, platform: "irc" }),
        textMessage("user", "hi, the wifi driver crashed", {
          id: "m1",
          ts: sent,
          channelName: "#general",
          platform: "irc",
        }),
      ]);
      // Counted as `channels` counts: the deleted one is not.
      await history.change("general", { kind: "delete", id: "m0" });
      // Where a run on 2025's chat would have left the workspace's clock.
      const clock = Date.UTC(2025, 2, 1, 12, 30, 15);
      workspace.advanceClock(clock);
      const server = await serveWorkspace(workspace, { host: "127.0.0.1", port: 0 });
      try {
        expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
        const channels = (await (await fetch(`${server.url}/channels`)).json()) as {
          channels: unknown[];
        };
        expect(channels.channels).toEqual([
          {
            channel: "general",
            name: "#general",
            platform: "irc",
            messages: 1,
            first: sent,
            last: sent,
          },
        ]);
        // Search builds the workspace's index on its first request: the deleted one is not in it.
        const search = (await (await fetch(`${server.url}/search?q=drivers`)).json()) as {
          hits: { evidence: string[]; marks: [number, number][]; snippet: string }[];
        };
        expect(search.hits.map((h) => h.evidence)).toContainEqual(["m1"]);
        const found = search.hits.find((h) => h.evidence[0] === "m1");
        expect(found?.marks.map(([a, b]) => found.snippet.slice(a, b))).toEqual(["driver"]);
        const gone = (await (await fetch(`${server.url}/search?q=oops`)).json()) as {
          hits: unknown[];
        };
        expect(gone.hits).toEqual([]);
        const topics = (await (
          await fetch(`${server.url}/channels/general/topics?limit=100`)
        ).json()) as {
          topics: unknown[];
          cursor: string | null;
        };
        expect([topics.topics.length, topics.cursor]).toEqual([8, null]);
        const id = seeded.results[0].segmentId;
        const segment = await fetch(`${server.url}/channels/general/segments/${id}`);
        expect(((await segment.json()) as { segmentId: string }).segmentId).toBe(id);
        // The digest route is wired to the workspace's results and messages (501 unwired).
        const digest = await fetch(`${server.url}/channels/general/digest?since=7d`);
        expect(digest.status).toBe(200);
        const body = (await digest.json()) as {
          channels: string[];
          activity: unknown[];
          until: number;
        };
        expect([body.channels, body.activity.length]).toEqual([["general"], 1]);
        // The period ends at the workspace's clock (to the minute), not the machine's.
        expect(body.until).toBe(Date.UTC(2025, 2, 1, 12, 30));
        // A question marked answered by a message of the channel, through the write route.
        await writeSeededQuestions(
          workspace.dynamodb(),
          workspace.tables.resultsTable,
          "general",
          4,
        );
        const page = (await (
          await fetch(`${server.url}/channels/general/questions?status=unanswered`)
        ).json()) as { questions: { id: string }[] };
        const asked = page.questions[0].id;
        const mark = (answerId: string) =>
          fetch(`${server.url}/channels/general/questions/${asked}/correction`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ action: "answered", answerId, by: "ops" }),
          });
        // A message the channel does not have (or deleted) is refused, naming the field.
        const deleted = await mark("m0");
        expect([deleted.status, ((await deleted.json()) as ErrorBody).error.parameter]).toEqual([
          400,
          "body.answerId",
        ]);
        expect((await mark("m1")).status).toBe(200);
        const answered = (await (
          await fetch(`${server.url}/channels/general/questions?status=answered`)
        ).json()) as { questions: { id: string; answerIds: string[]; corrected?: true }[] };
        expect(answered.questions.find((q) => q.id === asked)).toMatchObject({
          answerIds: ["m1"],
          corrected: true,
        });
      } finally {
        await server.close();
      }
    } finally {
      await workspace.close();
    }
  });
});
