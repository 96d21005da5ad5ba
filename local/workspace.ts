/**
 * The local workspace that local commands share (default `.convoseg/` in the current directory):
 * DynamoDB Local with its data on disk there, kept warm between commands by a background keeper
 * until unused for a while (./warm-dynamodb.ts; with `CONVOSEG_WARM_MINUTES=0`, started for the
 * command and stopped when it ends), the workspace's fixed table names, the simulated clock where
 * the last command left it, and a lock so that two commands never open the same data at once.
 * Layout:
 *
 * - `workspace.json`: the format version, the table names, the lease owner of its extractions,
 *   the simulated clock's last value, how its channels are segmented (`conversations`);
 * - `lock`: the command holding it (./workspace-lock.ts);
 * - `dynamodb/`: DynamoDB Local's database;
 * - `dynamodb.json`, `dynamodb.used`, `dynamodb.log`: its warm DynamoDB Local (./warm-dynamodb.ts).
 */
import { randomBytes, randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { DynamoDBClient, ListTablesCommand } from "@aws-sdk/client-dynamodb";
import { createMessagesTable } from "convoseg/history/dynamodb";
import { createResultsTable } from "convoseg/knowledge/store";
import type { ConversationMode } from "convoseg/pipeline";
import { createChannelsTable } from "convoseg/pipeline/schema";
import { compactDatabase, type DynamoDbLocal, startDynamoDbLocal } from "./dynamodb-local.js";
import { SegmentLedger } from "./ledger.js";
import { stopKeeper, touchUsed, warmEndpoint, warmMs } from "./warm-dynamodb.js";
import { WorkspaceError } from "./workspace-error.js";
import { takeLock } from "./workspace-lock.js";

/** Where a command looks when no --workspace is given: relative to the current directory. */
export const DEFAULT_WORKSPACE = ".convoseg";

const FORMAT_VERSION = 1;

interface WorkspaceTables {
  messagesTable: string;
  channelsTable: string;
  resultsTable: string;
  /** The segment ledger (./ledger.ts). */
  segmentsTable: string;
  /** Imported transcripts' turns (`import`), apart from the chat channels' messages. */
  conversationsTable: string;
}

interface Manifest {
  v: typeof FORMAT_VERSION;
  tables: WorkspaceTables;
  /**
   * Every extraction on the workspace holds its segment's lease under this owner: only one
   * command opens it at a time, so a lease left by a killed command is this one's to take.
   */
  leaseOwner: string;
  /** The simulated clock's last value (epoch ms), so that a later run goes on from it. */
  clock: number | null;
  /**
   * How the workspace's channels are segmented, as the last command that chose said (`run` or
   * `import-chat --conversations`), so that a later run goes on the same way; null: not chosen.
   */
  conversations: ConversationMode | null;
  /**
   * The channels `run` without `--input` filled with its generated sample: marked and listed
   * after the user's own, so that the demo never stands in for their data.
   */
  sample: string[];
  /**
   * The secret erasure audit items' keys are hashed with (a deployment keeps its own in Secrets
   * Manager): made when the workspace is, kept with it.
   */
  auditSecret: string;
}

const TABLES: WorkspaceTables = {
  messagesTable: "convoseg-messages",
  channelsTable: "convoseg-channels",
  resultsTable: "convoseg-results",
  segmentsTable: "convoseg-segments",
  conversationsTable: "convoseg-conversations",
};

export interface Workspace {
  /** Its directory, absolute. */
  readonly dir: string;
  readonly tables: WorkspaceTables;
  readonly leaseOwner: string;
  /** The simulated clock where the last command on it left it (null: no run yet). */
  readonly clock: number | null;
  /** How its channels are segmented, as last chosen (null: never chosen, so `linked`). */
  readonly conversations: ConversationMode | null;
  /** The channels the generated sample filled (`run` without `--input`), sorted. */
  readonly sampleChannels: readonly string[];
  /** The secret its erasure audit items' keys are hashed with. */
  readonly auditSecret: string;
  readonly ledger: SegmentLedger;
  /** The DynamoDB Local serving it. */
  readonly endpoint: string;
  /** A client of its DynamoDB Local (closed by `close`). */
  dynamodb(): DynamoDBClient;
  /** Moves the clock on to `now` (never back), kept on disk at least every second. */
  advanceClock(now: number): void;
  /** Keeps `mode` as how its channels are segmented from now on (written at once). */
  chooseConversations(mode: ConversationMode): void;
  /** Marks `channels` as the generated sample's (written at once). */
  markSample(channels: readonly string[]): void;
  /**
   * Stops its DynamoDB Local and rewrites the database files from their live rows only, so that
   * what was deleted (an erased person's messages) leaves no copy on disk. The workspace serves
   * no more requests after it: the last thing a command does before `close`.
   */
  eraseOnDisk(): Promise<void>;
  /**
   * Stops DynamoDB Local (unless it is warm: then marks the workspace used) and releases the
   * lock; also on SIGINT, SIGTERM and process exit.
   */
  close(): Promise<void>;
}

export interface OpenWorkspaceOptions {
  dir: string;
  /** Make it when it does not exist (`run`, `import`); otherwise it must. */
  create: boolean;
  /** Empty it first (`run --fresh`). */
  fresh?: boolean;
  /** Where notes go (a stale lock taken over): standard error. */
  note: (line: string) => void;
  /** Called when a DynamoDB Local is about to be started (not when a warm one is reused). */
  starting?: () => void;
}

/**
 * Opens the workspace at `dir`: takes its lock, finds its warm DynamoDB Local or starts one on
 * its data and creates the tables it lacks. A read command on a directory that holds no workspace fails, saying to
 * run first.
 */
export async function openWorkspace(options: OpenWorkspaceOptions): Promise<Workspace> {
  const dir = resolve(options.dir);
  const manifestPath = join(dir, "workspace.json");
  if (!options.create && !existsSync(manifestPath)) {
    throw new WorkspaceError(
      "WORKSPACE_MISSING",
      `no workspace in ${dir}: run npm start -- run first (it makes one there), or pass the --workspace DIR a run used`,
    );
  }
  mkdirSync(dir, { recursive: true });
  const lock = await takeLock(join(dir, "lock"), dir, options.note);
  let local: DynamoDbLocal | undefined;
  let warm = false;
  const clients: DynamoDBClient[] = [];
  let closed: Promise<void> | undefined;
  let saved = 0;
  const write = (manifest: Manifest) => {
    const temporary = `${manifestPath}.${process.pid}`;
    writeFileSync(temporary, `${JSON.stringify(manifest, null, 2)}\n`);
    renameSync(temporary, manifestPath);
    saved = Date.now();
  };
  const onSignal = (signal: NodeJS.Signals) => {
    void close().finally(() => process.exit(signal === "SIGINT" ? 130 : 143));
  };
  const onExit = () => lock.release();
  let manifest: Manifest;
  const close = (): Promise<void> => {
    closed ??= (async () => {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
      for (const client of clients) client.destroy();
      try {
        await local?.stop();
        if (warm) touchUsed(dir);
        if (manifest !== undefined) write(manifest);
      } finally {
        process.off("exit", onExit);
        lock.release();
      }
    })();
    return closed;
  };
  process.on("exit", onExit);
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    manifest = readManifest(manifestPath, dir) ?? {
      v: FORMAT_VERSION,
      tables: TABLES,
      leaseOwner: `workspace-${randomUUID()}`,
      clock: null,
      conversations: null,
      sample: [],
      auditSecret: randomBytes(32).toString("hex"),
    };
    const dbPath = join(dir, "dynamodb");
    const warmFor = warmMs();
    // A warm DynamoDB Local holds the data open: stopped before the data goes, and before a
    // command that wants its own starts one on the same database.
    if (options.fresh || warmFor === 0) await stopKeeper(dir);
    if (options.fresh) {
      rmSync(dbPath, { recursive: true, force: true });
      manifest.clock = null;
      manifest.conversations = null;
      manifest.sample = [];
    }
    mkdirSync(dbPath, { recursive: true });
    let endpoint: string;
    if (warmFor > 0) {
      // The keeper owns the JVM, not this command: the lock records none for a successor to wait for.
      warm = true;
      endpoint = await warmEndpoint(dir, warmFor, () => options.starting?.());
    } else {
      options.starting?.();
      local = await startDynamoDbLocal({ dbPath });
      lock.recordDynamoDb(local.pid);
      endpoint = local.endpoint;
    }
    // Every client of the workspace is closed with it.
    const dynamodb = () => {
      const made = new DynamoDBClient({
        endpoint,
        region: "us-east-1",
        credentials: { accessKeyId: "local", secretAccessKey: "local" },
      });
      clients.push(made);
      return made;
    };
    const client = dynamodb();
    await createMissingTables(client, manifest.tables);
    write(manifest);
    const opened = manifest;
    return {
      dir,
      tables: opened.tables,
      leaseOwner: opened.leaseOwner,
      // Live: advanceClock moves it.
      get clock() {
        return opened.clock;
      },
      get conversations() {
        return opened.conversations;
      },
      get sampleChannels() {
        return opened.sample;
      },
      auditSecret: opened.auditSecret,
      ledger: new SegmentLedger(client, opened.tables.segmentsTable),
      endpoint,
      dynamodb,
      advanceClock: (now) => {
        if (opened.clock !== null && now <= opened.clock) return;
        opened.clock = now;
        if (Date.now() - saved >= 1000) write(opened);
      },
      chooseConversations: (mode) => {
        if (opened.conversations === mode) return;
        opened.conversations = mode;
        write(opened);
      },
      eraseOnDisk: async () => {
        // Whatever serves the data holds the file open: stopped first (the next command starts one).
        if (warm) await stopKeeper(dir);
        await local?.stop();
        local = undefined;
        await compactDatabase(dbPath);
      },
      markSample: (channels) => {
        const sample = [...new Set([...opened.sample, ...channels])].sort();
        if (sample.length === opened.sample.length) return;
        opened.sample = sample;
        write(opened);
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

function readManifest(path: string, dir: string): Manifest | undefined {
  if (!existsSync(path)) return undefined;
  let value: Partial<Manifest>;
  try {
    value = JSON.parse(readFileSync(path, "utf8")) as Partial<Manifest>;
  } catch (error) {
    throw new WorkspaceError(
      "WORKSPACE_UNREADABLE",
      `${path} is not a workspace file (${(error as Error).message}): pass another --workspace DIR, or delete ${dir} to start anew`,
    );
  }
  const tables = value.tables as Partial<WorkspaceTables> | undefined;
  const named =
    tables !== undefined &&
    Object.keys(TABLES).every((k) => typeof tables[k as keyof WorkspaceTables] === "string");
  if (value.v !== FORMAT_VERSION || !named || typeof value.leaseOwner !== "string") {
    throw new WorkspaceError(
      "WORKSPACE_UNREADABLE",
      `${path} is not a version ${FORMAT_VERSION} workspace of this convoseg: pass another --workspace DIR, or delete ${dir} to start anew`,
    );
  }
  return {
    v: FORMAT_VERSION,
    tables: tables as WorkspaceTables,
    leaseOwner: value.leaseOwner,
    clock: typeof value.clock === "number" ? value.clock : null,
    // A workspace made before audit secrets gets one now (its older audit items keep theirs).
    auditSecret:
      typeof value.auditSecret === "string" && value.auditSecret.length >= 32
        ? value.auditSecret
        : randomBytes(32).toString("hex"),
    // A workspace written before the setting, or by hand with another value: not chosen.
    conversations:
      value.conversations === "linked" || value.conversations === "contiguous"
        ? value.conversations
        : null,
    // Before the mark, or written by hand: no channel is the sample's.
    sample: Array.isArray(value.sample)
      ? value.sample.filter((c): c is string => typeof c === "string")
      : [],
  };
}

async function createMissingTables(client: DynamoDBClient, tables: WorkspaceTables): Promise<void> {
  const existing = new Set<string>();
  let start: string | undefined;
  do {
    const page = await client.send(new ListTablesCommand({ ExclusiveStartTableName: start }));
    for (const name of page.TableNames ?? []) existing.add(name);
    start = page.LastEvaluatedTableName;
  } while (start !== undefined);
  const creators: [string, (client: DynamoDBClient, name: string) => Promise<void>][] = [
    [tables.messagesTable, createMessagesTable],
    [tables.channelsTable, createChannelsTable],
    [tables.resultsTable, createResultsTable],
    [tables.segmentsTable, SegmentLedger.create],
    [tables.conversationsTable, createMessagesTable],
  ];
  await Promise.all(
    creators.filter(([name]) => !existing.has(name)).map(([name, create]) => create(client, name)),
  );
}

/**
 * Stops the workspace's warm DynamoDB Local (`stop`): resolves to whether one was running. Takes
 * the lock meanwhile, so that a command working on it is not cut off (it refuses instead).
 */
export async function stopWorkspace(options: {
  dir: string;
  note: (line: string) => void;
}): Promise<boolean> {
  const dir = resolve(options.dir);
  if (!existsSync(dir)) return false;
  const lock = await takeLock(join(dir, "lock"), dir, options.note);
  try {
    return await stopKeeper(dir);
  } finally {
    lock.release();
  }
}
