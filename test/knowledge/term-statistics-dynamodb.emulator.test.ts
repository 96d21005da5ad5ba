/** The DynamoDB results store: the term statistics' contract, exactly once, on DynamoDB Local. */

import { DynamoDbResultStore } from "convoseg/knowledge/store";
import { beforeAll, describe, expect, it } from "vitest";
import { testDynamoDbClient } from "../support/dynamodb.js";
import { createResultsTestTable } from "./fixtures.js";
import { describeTermStatistics } from "./term-statistics.js";

let tableName: string;

beforeAll(async () => {
  tableName = await createResultsTestTable(testDynamoDbClient());
});

describeTermStatistics(
  "DynamoDbResultStore",
  async () => new DynamoDbResultStore({ client: testDynamoDbClient(), tableName }),
);

describe("DynamoDbResultStore: counting terms, killed between its calls", () => {
  it("counts every term once when the process dies after any call and counts again", async () => {
    const terms = Array.from({ length: 230 }, (_, i) => `term${i}`);
    for (let crashAt = 1; crashAt <= 8; crashAt++) {
      const channel = `crash-terms-${crashAt}-${Date.now()}`;
      let calls = 0;
      let dead = false;
      const client = testDynamoDbClient();
      client.middlewareStack.add(
        (next) => async (args) => {
          if (dead) throw new Error("the process is gone");
          const result = await next(args);
          if (++calls === crashAt) {
            dead = true;
            throw new Error(`crashed after call ${calls}`);
          }
          return result;
        },
        { step: "initialize", name: "crashAfter" },
      );
      const dying = new DynamoDbResultStore({ client, tableName });
      await dying
        .countTerms(channel, "s1", { vocabulary: "v-1", terms })
        .catch((error: Error) => expect(error.message).toMatch(/crashed|gone/));
      const store = new DynamoDbResultStore({ client: testDynamoDbClient(), tableName });
      await store.countTerms(channel, "s1", { vocabulary: "v-1", terms });
      const { segments, frequencies } = await store.termCounts(channel, "v-1", terms, "other");
      expect({
        crashAt,
        segments,
        counts: new Set(frequencies.values()),
        size: frequencies.size,
      }).toEqual({
        crashAt,
        segments: 1,
        counts: new Set([1]),
        size: terms.length,
      });
    }
  });
});
