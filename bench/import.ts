/**
 * How fast the export readers parse a large Slack workspace export, and how much memory they
 * hold: a generated export ZIP of `--messages` messages (default 1,000,000) over `--channels`
 * channels (default 40), day files of about 500 messages with thread replies, bot messages, joins,
 * mentions and links, read through `readExports` (ZIP entry by entry, each channel sorted, merged
 * and deduplicated by id) in a child process that does nothing else, so that its peak RSS is the
 * reader's. Targets (issue 22): at least 50,000 messages/s, peak RSS at most 300 MB.
 *
 *   npm run bench:import                         generate 1,000,000 messages, read them
 *   npm run bench:import -- --messages 200000    a smaller export
 *   npm run bench:import -- --zip FILE           read an existing Slack export ZIP instead
 *   npm run bench:import -- --keep FILE          also keep the generated ZIP at FILE
 *   npm run bench:import -- --json               the figures as one JSON object
 *   npm run bench:import -- --tables             also import an export through the local tables
 *
 * `--tables` then imports a generated export of `--tables-messages` messages (default 20,000:
 * DynamoDB Local stores a few hundred a second, so a million would take hours; with `--zip`, that
 * ZIP) as `import-chat` does into a fresh workspace (DynamoDB Local's tables, through the ingest
 * client), in a child process of its own: messages per second stored and that process's peak RSS
 * (DynamoDB Local's own memory is another process's).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { readExports } from "convoseg/exports";
import { random } from "../local/sample.js";
import { ZipWriter } from "../test/support/zip.js";
import { benchArgs, usageError } from "./args.js";

const USAGE = `
npm run bench:import [-- options]

Generates a Slack workspace export ZIP and measures how fast lib/intake/exports parses it (messages/s)
and its peak RSS, in a child process. Targets: >= 50,000 messages/s, <= 300 MB.

  --messages N    messages to generate (default 1000000)
  --channels N    channels to spread them over (default 40)
  --zip FILE      read this Slack export ZIP instead of generating one
  --keep FILE     write the generated ZIP to FILE and keep it
  --json          print the figures as one JSON object
  --tables        also import an export through the local tables (import-chat into a fresh
                  workspace: DynamoDB Local, the ingest client), and measure that
  --tables-messages N
                  the messages of the export --tables imports (default 20000; with --zip,
                  the whole ZIP)
  --help          this text
`;

const PER_DAY = 500;
const USERS = 200;
const WORDS =
  "the build deploy failed again after merging branch cache timeout retry works fine now please check logs tomorrow release notes review".split(
    " ",
  );

async function generateSlackExport(
  path: string,
  messages: number,
  channels: number,
): Promise<void> {
  const zip = new ZipWriter(path);
  const rand = random(22);
  const pick = <T>(list: readonly T[]) => list[Math.floor(rand() * list.length)];
  const users = Array.from({ length: USERS }, (_, i) => ({
    id: `U${String(i).padStart(8, "0")}`,
    name: `user${i}`,
    real_name: `User Number ${i}`,
    profile: { display_name: i % 3 === 0 ? "" : `user.${i}`, real_name: `User Number ${i}` },
  }));
  const list = Array.from({ length: channels }, (_, i) => ({
    id: `C${String(i).padStart(8, "0")}`,
    name: `channel-${i}`,
    members: [],
  }));
  await zip.add("users.json", JSON.stringify(users));
  await zip.add("channels.json", JSON.stringify(list));
  const start = Date.UTC(2023, 0, 1) / 1000;
  for (let c = 0; c < channels; c++) {
    const count = Math.floor(messages / channels) + (c < messages % channels ? 1 : 0);
    const roots: string[] = [];
    for (let day = 0, written = 0; written < count; day++) {
      const size = Math.min(PER_DAY, count - written);
      const batch: unknown[] = [];
      for (let k = 0; k < size; k++) {
        const ts = `${start + day * 86_400 + Math.floor((k * 86_000) / size)}.${String(100_000 + k).padStart(6, "0")}`;
        const user = pick(users).id;
        const words = Array.from({ length: 6 + Math.floor(rand() * 14) }, () => pick(WORDS)).join(
          " ",
        );
        const roll = rand();
        if (roll < 0.02)
          batch.push({
            type: "message",
            subtype: "channel_join",
            ts,
            user,
            text: `<@${user}> has joined the channel`,
          });
        else if (roll < 0.07)
          batch.push({
            type: "message",
            subtype: "bot_message",
            ts,
            bot_id: "B00000001",
            username: "ci",
            text: `Deploy ${k} ${words}`,
          });
        else if (roll < 0.2 && roots.length > 0)
          batch.push({
            type: "message",
            ts,
            user,
            text: words,
            thread_ts: pick(roots),
            parent_user_id: user,
          });
        else {
          const text =
            roll < 0.3 ? `<@${pick(users).id}> ${words} <https://example.org/${k}|link>` : words;
          batch.push({
            client_msg_id: `m${c}-${day}-${k}`,
            type: "message",
            ts,
            user,
            text,
            team: "T0001",
            blocks: [],
          });
          if (roll > 0.95) roots.push(ts);
        }
      }
      const date = new Date((start + day * 86_400) * 1000).toISOString().slice(0, 10);
      await zip.add(`channel-${c}/${date}.json`, JSON.stringify(batch, null, 4));
      written += size;
    }
  }
  await zip.close();
}

/** In the child: read the ZIP, and report messages, seconds and peak RSS. */
async function measure(zip: string): Promise<void> {
  const idleRssMb = process.memoryUsage().rss / 1024 / 1024;
  const started = process.hrtime.bigint();
  const cpuBefore = process.cpuUsage();
  let messages = 0;
  const reading = readExports([zip], { timezone: "UTC" });
  for await (const batch of reading.batches()) messages += batch.length;
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const cpu = process.cpuUsage(cpuBefore);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  const peakRssMb = process.resourceUsage().maxRSS / 1024;
  process.stdout.write(
    `${JSON.stringify({ messages, seconds, cpuSeconds, peakRssMb, idleRssMb, duplicates: reading.report.duplicates })}\n`,
  );
}

/** In the child: import the ZIP into a fresh workspace, and report messages, seconds and peak RSS. */
async function measureTables(zip: string): Promise<void> {
  // Loaded here only: the CLI (and the AWS SDK under it) would add to the parsing child's RSS.
  const { main: cli } = await import("../cli/commands.js");
  const workspace = mkdtempSync(join(tmpdir(), "convoseg-bench-import-ws-"));
  let stdout = "";
  let stderr = "";
  try {
    const idleRssMb = process.memoryUsage().rss / 1024 / 1024;
    const started = process.hrtime.bigint();
    const cpuBefore = process.cpuUsage();
    const code = await cli(
      ["import-chat", zip, "--workspace", workspace, "--timezone", "UTC", "--json"],
      {
        stdin: Readable.from([]),
        stdout: { write: (text: string) => (stdout += text) },
        stderr: { write: (text: string) => (stderr += text) },
        now: () => Date.now(),
      },
    );
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const cpu = process.cpuUsage(cpuBefore);
    if (code !== 0) throw new Error(`import-chat exited ${code}:\n${stderr}`);
    const { messages, store } = JSON.parse(stdout) as {
      messages: number;
      store: { stored: number };
    };
    process.stdout.write(
      `${JSON.stringify({ messages, stored: store.stored, seconds, cpuSeconds: (cpu.user + cpu.system) / 1e6, peakRssMb: process.resourceUsage().maxRSS / 1024, idleRssMb })}\n`,
    );
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
}

/** A generated export of `--tables-messages` messages for `--tables` to import. */
async function tablesZip(dir: string, text: string | undefined, channels: number): Promise<string> {
  const count = Number(text ?? 20_000);
  if (!Number.isSafeInteger(count) || count < 1)
    usageError(USAGE, `--tables-messages must be a positive integer (got ${text})`);
  const zip = join(dir, "tables.zip");
  await generateSlackExport(zip, count, Math.min(channels, count));
  return zip;
}

/** Runs this file in a child process with `flag` on `zip`: its last line of JSON. */
function child<T>(flag: string, zip: string): T {
  const run = spawnSync(
    process.execPath,
    ["--import", "tsx", fileURLToPath(import.meta.url), flag, zip],
    { encoding: "utf8", maxBuffer: 1 << 20 },
  );
  if (run.status !== 0) throw new Error(`the measuring process failed:\n${run.stderr}`);
  return JSON.parse(run.stdout.trim().split("\n").at(-1) as string) as T;
}

async function main(): Promise<void> {
  const args = benchArgs(USAGE, {
    messages: { type: "string" },
    channels: { type: "string" },
    zip: { type: "string" },
    keep: { type: "string" },
    json: { type: "boolean" },
    tables: { type: "boolean" },
    "tables-messages": { type: "string" },
    measure: { type: "string" },
    "measure-tables": { type: "string" },
  });
  if (args.measure) return measure(args.measure);
  if (args["measure-tables"]) return measureTables(args["measure-tables"]);
  const count = Number(args.messages ?? 1_000_000);
  const channels = Number(args.channels ?? 40);
  if (!Number.isSafeInteger(count) || count < 1)
    usageError(USAGE, `--messages must be a positive integer (got ${args.messages})`);
  if (!Number.isSafeInteger(channels) || channels < 1 || channels > count)
    usageError(USAGE, `--channels must be an integer from 1 to --messages (got ${args.channels})`);
  let zip = args.zip;
  const dir = mkdtempSync(join(tmpdir(), "convoseg-bench-import-"));
  let generated: { seconds: number; bytes: number } | undefined;
  try {
    if (zip === undefined) {
      zip = args.keep ?? join(dir, "export.zip");
      const started = Date.now();
      await generateSlackExport(zip, count, channels);
      generated = { seconds: (Date.now() - started) / 1000, bytes: statSync(zip).size };
    }
    const result = child<{
      messages: number;
      seconds: number;
      cpuSeconds: number;
      peakRssMb: number;
      idleRssMb: number;
    }>("--measure", zip);
    const tables = args.tables
      ? child<{
          messages: number;
          stored: number;
          seconds: number;
          cpuSeconds: number;
          peakRssMb: number;
          idleRssMb: number;
        }>(
          "--measure-tables",
          args.zip ?? (await tablesZip(dir, args["tables-messages"], channels)),
        )
      : undefined;
    const perSecond = result.messages / result.seconds;
    // On a shared machine the wall clock also counts other processes' turns: CPU time does not.
    const perCpuSecond = result.messages / result.cpuSeconds;
    const figures = {
      ...result,
      messagesPerSecond: Math.round(perSecond),
      messagesPerCpuSecond: Math.round(perCpuSecond),
      load: loadavg()[0],
      zipBytes: statSync(zip).size,
      generated,
      node: process.version,
      targets: { messagesPerSecond: 50_000, peakRssMb: 300 },
      tables: tables && {
        ...tables,
        messagesPerSecond: Math.round(tables.messages / tables.seconds),
        messagesPerCpuSecond: Math.round(tables.messages / tables.cpuSeconds),
      },
    };
    if (args.json) {
      process.stdout.write(`${JSON.stringify(figures)}\n`);
      return;
    }
    const ok = (pass: boolean) => (pass ? "meets target" : "MISSES target");
    process.stdout.write(
      `${[
        `Slack export ZIP: ${result.messages.toLocaleString("en-US")} messages, ${(figures.zipBytes / 1e6).toFixed(1)} MB${generated ? ` (generated in ${generated.seconds.toFixed(1)} s)` : ""}`,
        `parsed in ${result.seconds.toFixed(2)} s: ${Math.round(perSecond).toLocaleString("en-US")} messages/s (${ok(perSecond >= 50_000)} >= 50,000)`,
        `CPU time ${result.cpuSeconds.toFixed(2)} s: ${Math.round(perCpuSecond).toLocaleString("en-US")} messages per CPU second (load average ${figures.load.toFixed(1)})`,
        `peak RSS of the reading process: ${result.peakRssMb.toFixed(0)} MB (${ok(result.peakRssMb <= 300)} <= 300 MB; ${result.idleRssMb.toFixed(0)} MB before reading)`,
        ...(tables === undefined
          ? []
          : [
              `through the local tables (import-chat into a fresh workspace): ${tables.stored.toLocaleString("en-US")} stored in ${tables.seconds.toFixed(1)} s, ${Math.round(tables.messages / tables.seconds).toLocaleString("en-US")} messages/s (CPU ${tables.cpuSeconds.toFixed(1)} s, DynamoDB Local's start included), peak RSS ${tables.peakRssMb.toFixed(0)} MB`,
            ]),
      ].join("\n")}\n`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
