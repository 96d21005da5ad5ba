/**
 * Event claims on DynamoDB Local: a claim is pending until settled or released, a retry that
 * meets a pending claim is told so (not acknowledged), a pending claim past its lease is taken
 * over, and the memory double keeps the same states.
 */
import { PutItemCommand } from "@aws-sdk/client-dynamodb";
import {
  createClaimsTable,
  DynamoDbEventClaims,
  type EventClaims,
  MemoryEventClaims,
  PENDING_LEASE_SECONDS,
} from "convoseg/connectors";
import { beforeAll, describe, expect, it } from "vitest";
import { testDynamoDbClient } from "../../support/dynamodb.js";

const client = testDynamoDbClient();
const tableName = `claims-${Date.now().toString(36)}`;

beforeAll(() => createClaimsTable(client, tableName));

/** Both implementations on one clock the test moves. */
function both() {
  const clock = { now: 1_700_000_000_000 };
  const now = () => clock.now;
  const implementations: [string, EventClaims][] = [
    ["DynamoDB", new DynamoDbEventClaims({ client, tableName, platform: "slack", now })],
    ["memory", new MemoryEventClaims(now)],
  ];
  return { clock, implementations };
}

describe("event claims", () => {
  it("hold an event pending until it is settled, then answer every retry as sent", async () => {
    const { implementations } = both();
    for (const [name, claims] of implementations) {
      const id = `Ev-settle-${name}`;
      expect(await claims.claim(id), name).toBe("taken");
      expect(await claims.claim(id), name).toBe("pending");
      await claims.settle(id);
      expect(await claims.claim(id), name).toBe("sent");
    }
  });

  it("give a released event to the next attempt", async () => {
    const { implementations } = both();
    for (const [name, claims] of implementations) {
      const id = `Ev-release-${name}`;
      expect(await claims.claim(id), name).toBe("taken");
      await claims.release(id);
      expect(await claims.claim(id), name).toBe("taken");
    }
  });

  it("let a retry take over a pending claim once its lease ran out, never a sent one", async () => {
    const { clock, implementations } = both();
    for (const [name, claims] of implementations) {
      const pending = `Ev-lease-${name}`;
      const sent = `Ev-sent-${name}`;
      expect(await claims.claim(pending), name).toBe("taken");
      expect(await claims.claim(sent), name).toBe("taken");
      await claims.settle(sent);
    }
    clock.now += (PENDING_LEASE_SECONDS - 1) * 1000;
    for (const [name, claims] of implementations) {
      expect(await claims.claim(`Ev-lease-${name}`), name).toBe("pending");
    }
    clock.now += 2000;
    for (const [name, claims] of implementations) {
      expect(await claims.claim(`Ev-lease-${name}`), name).toBe("taken");
      expect(await claims.claim(`Ev-lease-${name}`), name).toBe("pending");
      expect(await claims.claim(`Ev-sent-${name}`), name).toBe("sent");
    }
  });

  it("read a claim written before claims had states as sent", async () => {
    await client.send(
      new PutItemCommand({
        TableName: tableName,
        Item: { id: { S: "slack#Ev-old" }, expiresAt: { N: "1800000000" } },
      }),
    );
    const claims = new DynamoDbEventClaims({ client, tableName, platform: "slack" });
    expect(await claims.claim("Ev-old")).toBe("sent");
  });
});
