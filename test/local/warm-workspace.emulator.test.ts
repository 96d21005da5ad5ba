/**
 * A workspace's warm DynamoDB Local (local/warm-dynamodb.ts): kept by a keeper between opens,
 * gone after its idle time, with its keeper killed, on `stop` and on --fresh; and none at all
 * with CONVOSEG_WARM_MINUTES=0, as the rest of the suite runs. Each test stops what it started.
 */
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import {
  CreateTableCommand,
  type DynamoDBClient,
  GetItemCommand,
  ListTablesCommand,
  PutItemCommand,
} from "@aws-sdk/client-dynamodb";
import { afterEach, describe, expect, it, vi } from "vitest";
import { stopCommand } from "../../cli/stop.js";
import { openWorkspace, stopWorkspace } from "../../local/workspace.js";

interface WarmFile {
  state: string;
  keeperPid: number;
  jvmPid: number;
  endpoint: string;
}

const dirs: string[] = [];
const note = () => {};

function workspaceDir(): string {
  const dir = join(mkdtempSync(join(tmpdir(), "convoseg-warm-")), "ws");
  dirs.push(dir);
  return dir;
}

const warmFile = (dir: string): WarmFile =>
  JSON.parse(readFileSync(join(dir, "dynamodb.json"), "utf8")) as WarmFile;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(condition: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A table of the test's own, with one item: written through one DynamoDB Local, read by another. */
async function writeProbe(client: DynamoDBClient): Promise<void> {
  await client.send(
    new CreateTableCommand({
      TableName: "probe",
      KeySchema: [{ AttributeName: "k", KeyType: "HASH" }],
      AttributeDefinitions: [{ AttributeName: "k", AttributeType: "S" }],
      BillingMode: "PAY_PER_REQUEST",
    }),
  );
  await client.send(new PutItemCommand({ TableName: "probe", Item: { k: { S: "kept" } } }));
}

async function stop(dir: string) {
  let stdout = "";
  const code = await stopCommand(["--workspace", dir], {
    stdin: Readable.from([]),
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: () => true },
    now: () => Date.now(),
  });
  return { code, stdout };
}

afterEach(async () => {
  for (const dir of dirs.splice(0)) await stopWorkspace({ dir, note });
});

describe("a warm workspace", () => {
  it("is opened again on the same DynamoDB Local, much faster than the first time", async () => {
    vi.stubEnv("CONVOSEG_WARM_MINUTES", "10");
    const dir = workspaceDir();
    let started = Date.now();
    const starts: string[] = [];
    const first = await openWorkspace({
      dir,
      create: true,
      note,
      starting: () => starts.push("first"),
    });
    const firstMs = Date.now() - started;
    await first.close();
    const keeper = warmFile(dir);
    expect(alive(keeper.keeperPid)).toBe(true);
    expect(alive(keeper.jvmPid)).toBe(true);

    started = Date.now();
    const second = await openWorkspace({
      dir,
      create: false,
      note,
      starting: () => starts.push("second"),
    });
    const secondMs = Date.now() - started;
    try {
      expect(second.endpoint).toBe(first.endpoint);
      expect(warmFile(dir).keeperPid).toBe(keeper.keeperPid);
      // Only the first started one.
      expect(starts).toEqual(["first"]);
      expect(secondMs).toBeLessThan(firstMs / 4);
    } finally {
      await second.close();
    }
  }, 90_000);

  it("stops by itself once unused for its idle time, but not while a command holds it", async () => {
    // 3 seconds.
    vi.stubEnv("CONVOSEG_WARM_MINUTES", "0.05");
    const dir = workspaceDir();
    const workspace = await openWorkspace({ dir, create: true, note });
    const keeper = warmFile(dir);
    try {
      // Held past the idle time: still serving.
      await new Promise((resolve) => setTimeout(resolve, 5_000));
      await workspace.dynamodb().send(new ListTablesCommand({}));
      expect(warmFile(dir).state).toBe("serving");
    } finally {
      await workspace.close();
    }
    await until(() => !existsSync(join(dir, "dynamodb.json")), 20_000);
    await until(() => !alive(keeper.keeperPid) && !alive(keeper.jvmPid), 5_000);
    expect(readFileSync(join(dir, "dynamodb.log"), "utf8")).toMatch(/stopping: unused for 3000 ms/);
  }, 90_000);

  it("loses its DynamoDB Local with its keeper killed, and the next open starts anew on the data", async () => {
    vi.stubEnv("CONVOSEG_WARM_MINUTES", "10");
    const dir = workspaceDir();
    const first = await openWorkspace({ dir, create: true, note });
    await writeProbe(first.dynamodb());
    await first.close();
    const killed = warmFile(dir);
    process.kill(killed.keeperPid, "SIGKILL");
    // The launcher sees its stdin close and exits.
    await until(() => !alive(killed.jvmPid), 5_000);

    const second = await openWorkspace({ dir, create: false, note });
    try {
      expect(warmFile(dir).keeperPid).not.toBe(killed.keeperPid);
      const item = await second
        .dynamodb()
        .send(new GetItemCommand({ TableName: "probe", Key: { k: { S: "kept" } } }));
      expect(item.Item).toEqual({ k: { S: "kept" } });
    } finally {
      await second.close();
    }
  }, 90_000);

  it("is stopped by stop, which then says nothing was running", async () => {
    vi.stubEnv("CONVOSEG_WARM_MINUTES", "10");
    const dir = workspaceDir();
    await (await openWorkspace({ dir, create: true, note })).close();
    const keeper = warmFile(dir);

    expect(await stop(dir)).toEqual({ code: 0, stdout: `stopped the DynamoDB Local of ${dir}\n` });
    expect(existsSync(join(dir, "dynamodb.json"))).toBe(false);
    expect(alive(keeper.keeperPid)).toBe(false);
    await until(() => !alive(keeper.jvmPid), 5_000);

    expect(await stop(dir)).toEqual({ code: 0, stdout: `nothing was running for ${dir}\n` });
    const nowhere = join(dir, "none");
    expect(await stop(nowhere)).toEqual({
      code: 0,
      stdout: `nothing was running for ${nowhere}\n`,
    });
  }, 90_000);

  it("is stopped by --fresh before its data goes, and a new one serves the empty workspace", async () => {
    vi.stubEnv("CONVOSEG_WARM_MINUTES", "10");
    const dir = workspaceDir();
    const first = await openWorkspace({ dir, create: true, note });
    await writeProbe(first.dynamodb());
    await first.close();
    const old = warmFile(dir);

    const fresh = await openWorkspace({ dir, create: true, fresh: true, note });
    try {
      expect(alive(old.keeperPid)).toBe(false);
      expect(warmFile(dir).keeperPid).not.toBe(old.keeperPid);
      const tables = await fresh.dynamodb().send(new ListTablesCommand({}));
      expect(tables.TableNames).not.toContain("probe");
      expect(tables.TableNames).toContain(fresh.tables.messagesTable);
    } finally {
      await fresh.close();
    }
  }, 90_000);

  it("fails at once, naming its log, when its keeper cannot start DynamoDB Local", async () => {
    vi.stubEnv("CONVOSEG_WARM_MINUTES", "10");
    // No java on the keeper's PATH.
    vi.stubEnv("PATH", "/nonexistent");
    const dir = workspaceDir();
    const log = join(dir, "dynamodb.log");
    await expect(openWorkspace({ dir, create: true, note })).rejects.toThrow(
      `DynamoDB Local did not start for the workspace ${dir}: see ${log}, or set CONVOSEG_WARM_MINUTES=0 to start it with each command`,
    );
    expect(readFileSync(log, "utf8")).toMatch(/DynamoDB Local needs Java 17\+/);
    expect(existsSync(join(dir, "dynamodb.json"))).toBe(false);
  }, 60_000);
});

describe("with CONVOSEG_WARM_MINUTES=0", () => {
  it("starts DynamoDB Local with the command and stops it with the command, leaving nothing", async () => {
    expect(process.env.CONVOSEG_WARM_MINUTES).toBe("0");
    const dir = workspaceDir();
    const workspace = await openWorkspace({ dir, create: true, note });
    // The command owns the JVM: its lock names it for a successor after a crash.
    const { dynamodbPid } = JSON.parse(readFileSync(join(dir, "lock"), "utf8")) as {
      dynamodbPid: number;
    };
    expect(alive(dynamodbPid)).toBe(true);
    expect(existsSync(join(dir, "dynamodb.json"))).toBe(false);
    await workspace.close();
    expect(alive(dynamodbPid)).toBe(false);
    expect(existsSync(join(dir, "dynamodb.json"))).toBe(false);
  }, 60_000);

  it("stops a warm DynamoDB Local left from before, so that one database has one JVM", async () => {
    vi.stubEnv("CONVOSEG_WARM_MINUTES", "10");
    const dir = workspaceDir();
    await (await openWorkspace({ dir, create: true, note })).close();
    const keeper = warmFile(dir);
    vi.stubEnv("CONVOSEG_WARM_MINUTES", "0");
    const workspace = await openWorkspace({ dir, create: false, note });
    try {
      expect(alive(keeper.keeperPid)).toBe(false);
      expect(existsSync(join(dir, "dynamodb.json"))).toBe(false);
    } finally {
      await workspace.close();
    }
  }, 90_000);
});
