/**
 * The lock that keeps two commands from opening a workspace's data at once: a file that names its
 * holder (process id, host, start time, and the DynamoDB Local it started). A lock whose holder
 * is gone (its process no longer runs on this host) or that cannot be read (its holder died
 * while writing it) is taken over; a live holder refuses the command.
 */
import { readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { WorkspaceError } from "./workspace-error.js";

interface LockHolder {
  pid: number;
  host: string;
  /** ISO 8601. */
  startedAt: string;
  /** The DynamoDB Local JVM the holder started on the workspace, once it has. */
  dynamodbPid?: number;
}

/** A lock this process holds. */
export interface HeldLock {
  /** Records the DynamoDB Local it started, so that a successor after a crash waits for it. */
  recordDynamoDb(pid: number): void;
  /** Removes the lock file if it is still this process's (synchronous: also on process exit). */
  release(): void;
}

/**
 * Takes the lock at `path` for the workspace `dir`. A stale lock (its holder's process gone, or
 * the file unreadable) is taken over, saying so through `note`, once the DynamoDB Local that
 * holder started has exited (it does within a second of its parent: the launcher watches stdin).
 */
export async function takeLock(
  path: string,
  dir: string,
  note: (line: string) => void,
): Promise<HeldLock> {
  const me: LockHolder = {
    pid: process.pid,
    host: hostname(),
    startedAt: new Date().toISOString(),
  };
  for (let attempt = 0; ; attempt++) {
    try {
      writeFileSync(path, `${JSON.stringify(me)}\n`, { flag: "wx" });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST" || attempt > 2) throw error;
    }
    const text = readText(path);
    if (text === undefined) continue;
    const holder = parseHolder(text);
    if (holder !== undefined && (holder.host !== me.host || alive(holder.pid))) {
      throw new WorkspaceError(
        "WORKSPACE_BUSY",
        `the workspace ${dir} is in use by process ${holder.pid} on ${holder.host} (started ${holder.startedAt}): wait for that command to end, or pass another --workspace DIR`,
      );
    }
    if (holder?.dynamodbPid !== undefined) await exited(holder.dynamodbPid, dir);
    // Taken over only if it is still the stale lock just read: another command may have won.
    if (readText(path) !== text) continue;
    unlinkSync(path);
    note(
      holder === undefined
        ? `workspace: took over the unreadable lock of ${dir}`
        : `workspace: took over the lock of ${dir} from process ${holder.pid} (started ${holder.startedAt}), which is no longer running`,
    );
  }
  return {
    recordDynamoDb: (pid) => {
      me.dynamodbPid = pid;
      writeFileSync(path, `${JSON.stringify(me)}\n`);
    },
    release: () => {
      const holder = parseHolder(readText(path) ?? "");
      if (holder?.pid === me.pid && holder.host === me.host) unlinkSync(path);
    },
  };
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

function parseHolder(text: string): LockHolder | undefined {
  try {
    const value = JSON.parse(text) as Partial<LockHolder>;
    if (
      Number.isInteger(value.pid) &&
      typeof value.host === "string" &&
      typeof value.startedAt === "string"
    ) {
      return value as LockHolder;
    }
  } catch {
    // Unreadable: its holder died while writing it.
  }
  return undefined;
}

/** Whether a process with this id runs here (EPERM: it does, as another user). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

const JVM_EXIT_WAIT_MS = 10_000;

/**
 * Whether the lock at `path` is held by a process that still runs here (the warm DynamoDB Local's
 * keeper stops only when no command holds the workspace).
 */
export function lockHeld(path: string): boolean {
  const holder = parseHolder(readText(path) ?? "");
  return holder !== undefined && (holder.host !== hostname() || alive(holder.pid));
}

/**
 * Waits for a DynamoDB Local whose owner is gone (a crashed holder, a killed keeper) to exit: two
 * JVMs must not open one database.
 */
export async function exited(pid: number, dir: string): Promise<void> {
  const deadline = Date.now() + JVM_EXIT_WAIT_MS;
  while (alive(pid)) {
    if (Date.now() > deadline) {
      throw new WorkspaceError(
        "WORKSPACE_STILL_OPEN",
        `the workspace ${dir} is still open in DynamoDB Local (process ${pid}) of a command that is gone: end that process, then run the command again`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
