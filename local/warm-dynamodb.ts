/**
 * A workspace's warm DynamoDB Local: kept running between commands by a keeper process
 * (./dynamodb-keeper.ts) until the workspace has been idle for `CONVOSEG_WARM_MINUTES` (default
 * 10; 0: none, each command starts and stops its own). Found through files in the workspace:
 *
 * - `dynamodb.json`: the keeper's pid, its JVM's pid and endpoint, and whether it is `serving` or
 *   `stopping` (written atomically by the keeper, removed once its JVM has exited);
 * - `dynamodb.used`: touched by each command when it opens and closes the workspace (its mtime
 *   is the last use);
 * - `dynamodb.log`: the keeper's output, for when it fails.
 */
import { spawn } from "node:child_process";
import {
  closeSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { DynamoDBClient, ListTablesCommand } from "@aws-sdk/client-dynamodb";
import { realSleep } from "convoseg/backoff";
import { alive, exited } from "./workspace-lock.js";

export interface WarmDynamoDb {
  state: "serving" | "stopping";
  keeperPid: number;
  jvmPid: number;
  endpoint: string;
  /** ISO 8601. */
  startedAt: string;
}

const WARM_FILE = "dynamodb.json";
const USED_FILE = "dynamodb.used";
const LOG_FILE = "dynamodb.log";
const DEFAULT_WARM_MINUTES = 10;
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 15_000;
const repoRoot = fileURLToPath(new URL("../", import.meta.url));
const keeperFile = fileURLToPath(new URL("./dynamodb-keeper.ts", import.meta.url));

/** How long a workspace's DynamoDB Local stays warm after its last use, in ms (0: not at all). */
export function warmMs(env: NodeJS.ProcessEnv = process.env): number {
  const text = env.CONVOSEG_WARM_MINUTES;
  if (text === undefined || text === "") return DEFAULT_WARM_MINUTES * 60_000;
  const minutes = Number(text);
  if (!Number.isFinite(minutes) || minutes < 0) {
    throw new Error(
      `CONVOSEG_WARM_MINUTES is ${JSON.stringify(text)}: set it to a number of minutes (0: stop DynamoDB Local with each command), or unset it`,
    );
  }
  return Math.round(minutes * 60_000);
}

function readWarm(dir: string): WarmDynamoDb | undefined {
  try {
    const value = JSON.parse(readFileSync(join(dir, WARM_FILE), "utf8")) as Partial<WarmDynamoDb>;
    if (
      (value.state === "serving" || value.state === "stopping") &&
      Number.isInteger(value.keeperPid) &&
      Number.isInteger(value.jvmPid) &&
      typeof value.endpoint === "string"
    ) {
      return value as WarmDynamoDb;
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
  }
  // Not the keeper's (it writes the file whole, by renaming): no keeper can be found through it.
  removeWarm(dir);
  return undefined;
}

/** Written by the keeper: renamed into place, so a reader never sees half of it. */
export function writeWarm(dir: string, warm: WarmDynamoDb): void {
  const path = join(dir, WARM_FILE);
  const temporary = `${path}.${process.pid}`;
  writeFileSync(temporary, `${JSON.stringify(warm)}\n`);
  renameSync(temporary, path);
}

export function removeWarm(dir: string): void {
  rmSync(join(dir, WARM_FILE), { force: true });
}

/** Marks the workspace used now. */
export function touchUsed(dir: string): void {
  const path = join(dir, USED_FILE);
  const now = new Date();
  try {
    utimesSync(path, now, now);
  } catch {
    writeFileSync(path, "");
  }
}

/** When the workspace was last used (epoch ms; 0: never). */
export function lastUsed(dir: string): number {
  try {
    return statSync(join(dir, USED_FILE)).mtimeMs;
  } catch {
    return 0;
  }
}

/**
 * The endpoint of the workspace's warm DynamoDB Local, starting a keeper when none serves. The
 * caller holds the workspace lock. `starting` is called only when a DynamoDB Local is started.
 */
export async function warmEndpoint(dir: string, minutesMs: number, starting: () => void) {
  touchUsed(dir);
  const deadline = Date.now() + START_TIMEOUT_MS;
  let started: number | undefined;
  for (;;) {
    const warm = readWarm(dir);
    if (warm === undefined && started === undefined) {
      starting();
      started = startKeeper(dir, minutesMs);
    } else if (warm === undefined && !alive(started as number)) {
      // Gone before it served: its log says why.
      throw new Error(keeperFailed(dir));
    } else if (warm !== undefined && !alive(warm.keeperPid)) {
      // A keeper that died (killed, crashed): its JVM follows it within a second.
      if (warm.jvmPid > 0) await exited(warm.jvmPid, dir);
      removeWarm(dir);
      continue;
    } else if (warm?.state === "serving") {
      if (await answers(warm.endpoint)) return warm.endpoint;
      // Alive but not answering: replaced by a new one.
      await stopKeeper(dir);
      continue;
    }
    // Starting, or stopping after its idle time (it turns back to serving if it sees our lock).
    if (Date.now() > deadline) throw new Error(keeperFailed(dir));
    await realSleep(100);
  }
}

/**
 * Stops the workspace's warm DynamoDB Local, if one runs: resolves to whether one did. Cleans up
 * after a keeper that is gone.
 */
export async function stopKeeper(dir: string): Promise<boolean> {
  const warm = readWarm(dir);
  if (warm === undefined) return false;
  if (!alive(warm.keeperPid)) {
    if (warm.jvmPid > 0) await exited(warm.jvmPid, dir);
    removeWarm(dir);
    return false;
  }
  process.kill(warm.keeperPid, "SIGTERM");
  const deadline = Date.now() + STOP_TIMEOUT_MS;
  while (alive(warm.keeperPid)) {
    if (Date.now() > deadline) {
      // A keeper that ignores SIGTERM is killed; its JVM exits with it.
      process.kill(warm.keeperPid, "SIGKILL");
      await exited(warm.jvmPid, dir);
      break;
    }
    await realSleep(100);
  }
  removeWarm(dir);
  return true;
}

/** Starts a keeper for `dir`: resolves to its process id. */
function startKeeper(dir: string, minutesMs: number): number {
  const log = openSync(join(dir, LOG_FILE), "w");
  try {
    // Detached, in its own process group: ending the command (Ctrl-C included) leaves it running.
    // The loader is the CLI's (tsx), resolved from the checkout whatever the current directory.
    const keeper = spawn(
      process.execPath,
      ["--import", "tsx", keeperFile, dir, String(minutesMs)],
      { cwd: repoRoot, detached: true, stdio: ["ignore", log, log] },
    );
    keeper.unref();
    if (keeper.pid === undefined) throw new Error(keeperFailed(dir));
    return keeper.pid;
  } finally {
    closeSync(log);
  }
}

function keeperFailed(dir: string): string {
  return `DynamoDB Local did not start for the workspace ${dir}: see ${join(dir, LOG_FILE)}, or set CONVOSEG_WARM_MINUTES=0 to start it with each command`;
}

/** Whether a DynamoDB Local answers on `endpoint` within about a second. */
async function answers(endpoint: string): Promise<boolean> {
  const client = new DynamoDBClient({
    endpoint,
    region: "us-east-1",
    credentials: { accessKeyId: "local", secretAccessKey: "local" },
    maxAttempts: 1,
    requestHandler: { connectionTimeout: 500, requestTimeout: 1_000, throwOnRequestTimeout: true },
  });
  try {
    await client.send(new ListTablesCommand({ Limit: 1 }));
    return true;
  } catch {
    return false;
  } finally {
    client.destroy();
  }
}
