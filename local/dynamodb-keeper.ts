/**
 * The keeper of a workspace's warm DynamoDB Local (./warm-dynamodb.ts), started detached by a
 * command: `dynamodb-keeper.ts DIR IDLE_MS`. It runs DynamoDB Local on the workspace's data as
 * its child (the JVM exits within a second of it, even if it is killed), says where in
 * `dynamodb.json`, and stops it once the workspace has gone unused for IDLE_MS with no command
 * holding it, or at once on SIGTERM or SIGINT. Its output is the workspace's `dynamodb.log`.
 */
import { join } from "node:path";
import { startDynamoDbLocal } from "./dynamodb-local.js";
import { lastUsed, removeWarm, type WarmDynamoDb, writeWarm } from "./warm-dynamodb.js";
import { lockHeld } from "./workspace-lock.js";

const [dir, idleText] = process.argv.slice(2);
const idleMs = Number(idleText);
const lock = join(dir, "lock");
const log = (line: string) => process.stderr.write(`${new Date().toISOString()} ${line}\n`);

let local: Awaited<ReturnType<typeof startDynamoDbLocal>>;
try {
  local = await startDynamoDbLocal({ dbPath: join(dir, "dynamodb") });
} catch (error) {
  log(`DynamoDB Local did not start: ${(error as Error).message}`);
  process.exit(1);
}
const serving: WarmDynamoDb = {
  state: "serving",
  keeperPid: process.pid,
  jvmPid: local.pid,
  endpoint: local.endpoint,
  startedAt: new Date().toISOString(),
};
writeWarm(dir, serving);
log(`serving ${dir} on ${local.endpoint} (process ${local.pid}) until unused for ${idleMs} ms`);

let stopping = false;
const stop = async (reason: string) => {
  if (stopping) return;
  stopping = true;
  clearInterval(timer);
  log(`stopping: ${reason}`);
  // Commands that see `stopping` wait for the file to go, then start a new keeper.
  writeWarm(dir, { ...serving, state: "stopping" });
  await local.stop();
  removeWarm(dir);
  log("stopped");
  process.exit(0);
};

const timer = setInterval(
  () => {
    if (Date.now() - lastUsed(dir) < idleMs || lockHeld(lock)) return;
    writeWarm(dir, { ...serving, state: "stopping" });
    // A command that took the lock just before may have read `serving`: it keeps its endpoint.
    if (lockHeld(lock)) writeWarm(dir, serving);
    else void stop(`unused for ${idleMs} ms`);
  },
  Math.min(2_000, Math.max(250, idleMs / 4)),
);
process.once("SIGTERM", () => void stop("SIGTERM"));
process.once("SIGINT", () => void stop("SIGINT"));
