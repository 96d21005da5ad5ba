import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DynamoDBClient, ScanCommand } from "@aws-sdk/client-dynamodb";
import { describe, expect, it } from "vitest";
import { startDynamoDbLocal } from "../../local/dynamodb-local.js";

/** Starts the writer; resolves once it has `puts` answered puts, with the JVM's pid. */
function writer(
  dir: string,
  puts: number,
): Promise<{ child: ChildProcess; jvm: number; acked: () => number }> {
  const child = spawn(process.execPath, ["--import", "tsx", "test/support/disk-writer.ts", dir], {
    stdio: ["ignore", "pipe", "ignore"],
    env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true" },
  });
  let jvm = 0;
  let acked = 0;
  return new Promise((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`the writer exited (${code})`)));
    child.stdout?.setEncoding("utf8").on("data", (text: string) => {
      for (const line of text.split("\n")) {
        if (line.startsWith("jvm ")) jvm = Number(line.slice(4));
        if (line.startsWith("put ")) acked = Number(line.slice(4)) + 1;
      }
      if (acked >= puts) resolve({ child, jvm, acked: () => acked });
    });
  });
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function gone(pid: number): Promise<void> {
  while (alive(pid)) await new Promise((resolve) => setTimeout(resolve, 100));
}

async function keysIn(dir: string): Promise<Set<string>> {
  const local = await startDynamoDbLocal({ dbPath: dir });
  const client = new DynamoDBClient({
    endpoint: local.endpoint,
    region: "us-east-1",
    credentials: { accessKeyId: "local", secretAccessKey: "local" },
  });
  try {
    const keys = new Set<string>();
    let start: Record<string, never> | undefined;
    do {
      const page = await client.send(
        new ScanCommand({ TableName: "disk", ExclusiveStartKey: start }),
      );
      for (const item of page.Items ?? []) keys.add(item.k.S ?? "");
      start = page.LastEvaluatedKey as typeof start;
    } while (start !== undefined);
    return keys;
  } finally {
    client.destroy();
    await local.stop();
  }
}

// A workspace's data must outlive a command killed at any moment: every answered write is read
// back by the next DynamoDB Local on the same directory.
describe("DynamoDB Local on disk (-dbPath)", () => {
  it.each([
    ["the node process that started it", "node"],
    ["the JVM itself", "jvm"],
  ])(
    "keeps every answered write when %s is killed mid-write",
    async (_, victim) => {
      const dir = mkdtempSync(join(tmpdir(), "convoseg-disk-"));
      const { child, jvm, acked } = await writer(dir, 30);
      child.removeAllListeners("exit");
      process.kill(victim === "node" ? (child.pid as number) : jvm, "SIGKILL");
      const answered = acked();
      // The launcher exits with its parent (its stdin closes); the next one must not overlap it.
      await gone(jvm);
      const keys = await keysIn(dir);
      for (let i = 0; i < answered; i++) expect(keys.has(`k${i}`), `k${i}`).toBe(true);
      // Written in write-ahead-log mode (header bytes 18 and 19 are 2): one sync per write.
      const header = Buffer.alloc(20);
      const fd = openSync(join(dir, "shared-local-instance.db"), "r");
      readSync(fd, header, 0, 20, 0);
      closeSync(fd);
      expect([header[18], header[19]]).toEqual([2, 2]);
      child.kill("SIGKILL");
    },
    120_000,
  );
});
