/**
 * Runs the official DynamoDB Local (a JVM) for tests and the local pipeline. Unlike pure-JS
 * emulators it supports transactions, conditions with reasons and streams, which the pipeline
 * relies on. It listens on 127.0.0.1 only, on a free port, so parallel runs never clash; in
 * memory, or with `dbPath` in a SQLite file there (a local workspace's tables, kept between
 * commands).
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { DynamoDBClient, ListTablesCommand } from "@aws-sdk/client-dynamodb";

export interface DynamoDbLocal {
  endpoint: string;
  port: number;
  /** The JVM's process id (a workspace's lock names it, so that a successor waits for it). */
  pid: number;
  stop(): Promise<void>;
}

const toolDir = fileURLToPath(new URL("../tools/dynamodb-local/", import.meta.url));
const defaultInstallDir = fileURLToPath(new URL("../.tools/dynamodb-local/", import.meta.url));
const READY_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 5_000;
const OUTPUT_CHARS = 8_000;

/**
 * Starts DynamoDB Local. With `dbPath` (an existing directory) its tables are kept on disk there,
 * in a SQLite file this function creates in write-ahead-log mode (see `walDatabase`). SQLite
 * commits every write before DynamoDB Local answers it (the default synchronous mode), so an
 * answered write survives the JVM or this process being killed at any moment:
 * test/local/dynamodb-local-disk.emulator.test.ts kills both mid-write and reads back.
 */
export async function startDynamoDbLocal(
  options: { port?: number; installDir?: string; dbPath?: string } = {},
): Promise<DynamoDbLocal> {
  const installDir = options.installDir ?? defaultInstallDir;
  await ensureInstalled(installDir);
  const port = options.port ?? (await freePort());
  const endpoint = `http://127.0.0.1:${port}`;
  if (options.dbPath !== undefined) {
    const file = join(options.dbPath, SHARED_DB_FILE);
    if (!existsSync(file)) writeFileSync(file, walDatabase(), { flag: "wx" });
  }

  const child = spawn(
    "java",
    [
      // C1 only: measured ~1 s faster startup and faster short runs (3000 puts) than tiered C2.
      "-XX:TieredStopAtLevel=1",
      `-Djava.library.path=${join(installDir, "DynamoDBLocal_lib")}`,
      "-Dlauncher.exitWithParent=true",
      "-cp",
      join(installDir, "DynamoDBLocal.jar"),
      join(toolDir, "Launcher.java"),
      ...(options.dbPath === undefined ? ["-inMemory"] : ["-dbPath", options.dbPath]),
      "-sharedDb",
      "-disableTelemetry",
      "-port",
      String(port),
    ],
    // stdin is the launcher's lifeline: it exits when this process dies and the pipe closes.
    // Output is piped, not inherited: a JVM holding our stdout/stderr keeps a caller's pipe (CI
    // log, `| tee`) open, and the captured tail explains startup failures.
    { stdio: ["pipe", "pipe", "pipe"] },
  );
  const output = tailOf(child);
  // Even if stop() is never reached (uncaught error, process.exit), do not orphan the JVM.
  const killOnExit = () => child.kill("SIGKILL");
  process.on("exit", killOnExit);
  const exited = new Promise<void>((resolve) => child.once("close", () => resolve()));

  const stop = async () => {
    process.off("exit", killOnExit);
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
    }
  };

  try {
    await waitUntilReady(child, endpoint, output);
  } catch (error) {
    await stop();
    throw error;
  }
  return { endpoint, port, pid: child.pid ?? 0, stop };
}

/** The file `-sharedDb` keeps every table in. */
const SHARED_DB_FILE = "shared-local-instance.db";

/**
 * Rewrites the database at `dbPath` from its live rows only (tools/dynamodb-local/Compact.java:
 * the log folded in and emptied, VACUUM, secure_delete), so that deleted items leave no copy in
 * the file or its write-ahead log. No DynamoDB Local may have it open.
 */
export async function compactDatabase(
  dbPath: string,
  installDir: string = defaultInstallDir,
): Promise<void> {
  const file = join(dbPath, SHARED_DB_FILE);
  if (!existsSync(file)) return;
  await ensureInstalled(installDir);
  const lib = join(installDir, "DynamoDBLocal_lib");
  try {
    await promisify(execFile)("java", [
      `-Djava.library.path=${lib}`,
      "-cp",
      join(lib, "sqlite4java.jar"),
      join(toolDir, "Compact.java"),
      file,
    ]);
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr?.trim();
    throw new Error(`compacting ${file} failed: ${stderr || (error as Error).message}`);
  }
}

/**
 * An empty SQLite database whose header says write-ahead log (bytes 18 and 19 are 2: SQLite keeps
 * the journal mode in the file, https://www.sqlite.org/fileformat.html). DynamoDB Local offers no
 * way to choose it, and its default rollback journal syncs several times per write: a local run
 * on disk took about 1.7 times as long as in memory, in WAL mode about 1.2 times.
 */
function walDatabase(): Buffer {
  const pageSize = 4096;
  const page = Buffer.alloc(pageSize);
  page.write("SQLite format 3\0", 0, "latin1");
  page.writeUInt16BE(pageSize, 16);
  page[18] = 2; // write version: WAL
  page[19] = 2; // read version: WAL
  page[21] = 64; // payload fractions, fixed by the format
  page[22] = 32;
  page[23] = 32;
  page.writeUInt32BE(1, 24); // file change counter
  page.writeUInt32BE(1, 28); // size in pages
  page.writeUInt32BE(4, 44); // schema format
  page.writeUInt32BE(1, 56); // text encoding: UTF-8
  page.writeUInt32BE(1, 92); // version-valid-for: the change counter
  page.writeUInt32BE(3_045_000, 96); // the SQLite version that wrote it
  page[100] = 0x0d; // page 1: an empty leaf table b-tree (the schema)
  page.writeUInt16BE(pageSize, 105); // its cell content starts at the page's end
  return page;
}

/** Installs through tools/dynamodb-local/install.mjs, the single source of the install steps. */
async function ensureInstalled(installDir: string): Promise<void> {
  if (existsSync(join(installDir, "DynamoDBLocal.jar"))) {
    return;
  }
  try {
    await promisify(execFile)(process.execPath, [join(toolDir, "install.mjs"), installDir]);
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr?.trim();
    throw new Error(stderr || `DynamoDB Local install failed: ${(error as Error).message}`);
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === "string") {
    throw new Error("could not determine a free port");
  }
  return address.port;
}

/** Keeps the end of the child's output for error messages; draining also avoids blocking it. */
function tailOf(child: ChildProcess): () => string {
  let tail = "";
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString("utf8")).slice(-OUTPUT_CHARS);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  return () => tail.trim();
}

/** Ready means it answers a real API call, not merely that the port is open. */
async function waitUntilReady(
  child: ChildProcess,
  endpoint: string,
  output: () => string,
): Promise<void> {
  const failed = new Promise<never>((_, reject) => {
    child.once("error", (error: NodeJS.ErrnoException) => {
      reject(
        error.code === "ENOENT"
          ? new Error("DynamoDB Local needs Java 17+; install e.g. openjdk-17-jre-headless")
          : error,
      );
    });
    child.once("exit", (code, signal) => {
      reject(
        new Error(
          `DynamoDB Local exited during startup (${signal ?? `exit code ${code}`}):\n${output()}`,
        ),
      );
    });
  });
  failed.catch(() => {});

  const client = new DynamoDBClient({
    endpoint,
    region: "us-east-1",
    credentials: { accessKeyId: "local", secretAccessKey: "local" },
    maxAttempts: 1,
    // A port held by something else may accept and never answer; do not wait on it forever.
    requestHandler: {
      connectionTimeout: 1_000,
      requestTimeout: 2_000,
      throwOnRequestTimeout: true,
    },
  });
  const deadline = Date.now() + READY_TIMEOUT_MS;
  try {
    for (;;) {
      const ready = await Promise.race([
        client.send(new ListTablesCommand({})).then(
          () => true,
          () => false,
        ),
        failed,
      ]);
      if (ready) {
        return;
      }
      if (Date.now() > deadline) {
        throw new Error(
          `DynamoDB Local did not answer on ${endpoint} within ${READY_TIMEOUT_MS} ms:\n${output()}`,
        );
      }
      await Promise.race([new Promise((resolve) => setTimeout(resolve, 100)), failed]);
    }
  } finally {
    client.destroy();
  }
}
