import { existsSync, statSync } from "node:fs";
import { mkdir, open, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { pathToFileURL } from "node:url";
import { parseDuration } from "convoseg/duration";
import { type ChatMessage, parseTimestamp } from "convoseg/messages";
import type { CandidatesLine } from "convoseg/pipeline/contract";
import {
  buildReport,
  InvalidRecordError,
  loadReportAssets,
  parseCandidatesRecord,
  parseSegmentRecord,
  type ReportInput,
  renderReportHtml,
  type SegmentRecord,
} from "convoseg/report";
import { DEFAULT_SETTLE_MS } from "convoseg/segmenter";
import { DEFAULT_WORKSPACE } from "../../local/workspace.js";
import { messagesDirectory } from "../shared/channel-names.js";
import { type Command, type CommandLine, command, EXIT } from "../shared/command.js";
import { CommandFailure } from "../shared/failures.js";
import { escapeControls, formatProblem, plural } from "../shared/format.js";
import type { CommandIO } from "../shared/io.js";
import { statsOptOut } from "../shared/opt-out.js";
import { Progress } from "../shared/progress.js";
import { type InputProblem, readMessages } from "../shared/read-messages.js";
import {
  noteUnextracted,
  WORKSPACE_OPTION,
  withWorkspace,
  workspaceDir,
} from "../shared/workspace-option.js";
import { openInBrowser } from "./browser.js";
import { inputDirectory, keepChannels } from "./report-channels.js";
import { workspaceReportInput } from "./report-workspace.js";

const REPORT_USAGE = `Usage: npm start -- report [--workspace DIR | --segments FILE] [--open] [options]

Writes one self-contained HTML page (open it from disk: nothing is fetched) that shows each
channel's segments on a timeline, what cut each one (a silence longer than settle, or the size
cap at the largest gap), late segments, messages still open or in no segment, and each segment's
messages and extracted topics. Without --segments it reads them, their topics and their messages
straight from the local workspace that run writes (.convoseg in the current directory, or
--workspace DIR).

Options:
  --workspace DIR    the local workspace to read (default: .convoseg in the current directory,
                     unless --segments is given)
  --segments FILE    the segments as JSON lines: what run --out or segment --json writes
  --candidates FILE  what extraction found: what run --candidates writes
  --input FILE       the chat messages that were segmented (the segment command's format); with
                     them the page shows every message and its text, what is still open or in no
                     segment, and the silence before each cut to the message
  --channel C        only this channel (repeat for more): its id, or its name where one
                     channel has it (the channelName of its messages: the workspace's, or --input's)
  --out FILE         where to write the page (default: report.html in the workspace, .convoseg/
                     unless --workspace says otherwise; never the current directory)
  --settle D         the settle the segments were made with (default 24h): a cut in a longer
                     silence is a silence cut, any other a size cut
  --now T            when a channel's last conversation is judged open (ISO-8601 or epoch ms;
                     default: the clock; on a workspace, its simulated clock)
  --skip-invalid     report bad lines and go on without them (default: stop, write nothing)
  --open             then open the page in the default browser (BROWSER, or xdg-open or open);
                     without one, say where it is
  -h, --help         this help

A FILE of - is standard input (for one of them).`;

const REPORT_OPTIONS = {
  ...WORKSPACE_OPTION,
  segments: { type: "string" },
  candidates: { type: "string" },
  input: { type: "string" },
  channel: { type: "string", multiple: true },
  out: { type: "string" },
  settle: { type: "string" },
  now: { type: "string" },
  "skip-invalid": { type: "boolean" },
  open: { type: "boolean" },
} as const;

interface ReportOptions {
  /** Read from this workspace (`segments` then undefined). */
  workspace?: string;
  segments?: string;
  candidates?: string;
  input?: string;
  /** Only these channels (ids or names); undefined: every one. */
  channels?: string[];
  out: string;
  /** The out file is the default one in the workspace: its folder is made if missing. */
  outInWorkspace: boolean;
  settle: number;
  /** Undefined: the clock, or on a workspace its simulated clock. */
  now?: number;
  skipInvalid: boolean;
  open: boolean;
}

/** A problem with a line of one of the input files. */
interface FileProblem extends InputProblem {
  file: string;
}

class CannotRead extends Error {
  constructor(file: string, cause: unknown) {
    super(`cannot read ${file}: ${(cause as Error).message}`);
  }
}

/** `report`: one self-contained HTML page of the segments, their cuts and topics. */
export const reportCommand: Command = command({
  name: "report",
  usage: REPORT_USAGE,
  options: REPORT_OPTIONS,
  parse: (line) => parseReportArgs(line),
  run: async (options, io) => {
    if (options.workspace !== undefined) return reportOfWorkspace(options.workspace, options, io);
    const problems: FileProblem[] = [];
    let input: Omit<ReportInput, "settle" | "now" | "generatedAt">;
    try {
      input = {
        segments: await readSegments(options.segments as string, io.stdin, problems),
        candidates:
          options.candidates === undefined
            ? undefined
            : await readCandidates(options.candidates, io.stdin, problems),
        messages:
          options.input === undefined ? undefined : await readInput(options.input, io, problems),
        sources: sources(options),
      };
    } catch (error) {
      if (!(error instanceof CannotRead)) throw error;
      io.stderr.write(`report: ${error.message}\n`);
      return EXIT.failed;
    }
    for (const problem of problems) {
      io.stderr.write(
        `${options.skipInvalid ? "skipped " : ""}${escapeControls(problem.file)}: ${formatProblem(problem)}\n`,
      );
    }
    if (problems.length > 0 && !options.skipInvalid) {
      io.stderr.write(
        `report: ${plural(problems.length, "invalid line")}; no report was written (fix them, or pass --skip-invalid)\n`,
      );
      return EXIT.failed;
    }
    const kept = await keepChannels(input, options.channels, inputDirectory(input), io);
    if (kept === undefined) return EXIT.usage;
    try {
      if (options.outInWorkspace) await mkdir(dirname(options.out), { recursive: true });
      const written = await writeReport(options.out, {
        ...kept,
        settle: options.settle,
        now: options.now ?? io.now(),
        generatedAt: io.now(),
      });
      io.stderr.write(`${written}\n`);
    } catch (error) {
      io.stderr.write(`report: ${(error as Error).message}\n`);
      return EXIT.failed;
    }
    if (options.open) io.stderr.write(`${await openReport(options.out)}\n`);
    return EXIT.ok;
  },
});

/** The report of a workspace's tables: its segments, their results and messages. */
async function reportOfWorkspace(
  dir: string,
  options: ReportOptions,
  io: CommandIO,
): Promise<number> {
  const written = await withWorkspace({ dir, create: false }, io, async (workspace) => {
    await noteUnextracted("report", workspace, io);
    const directory = messagesDirectory(workspace.dynamodb(), workspace.tables.messagesTable);
    const input = await keepChannels(
      await workspaceReportInput(workspace),
      options.channels,
      directory,
      io,
    );
    if (input === undefined) return undefined;
    try {
      return await writeReport(options.out, {
        ...input,
        settle: options.settle,
        now: options.now ?? workspace.clock ?? io.now(),
        generatedAt: io.now(),
        sources: [{ label: "workspace", value: workspace.dir }],
        sampleChannels: workspace.sampleChannels,
      });
    } catch (error) {
      throw new CommandFailure((error as Error).message);
    }
  });
  if (written === undefined) return EXIT.usage;
  io.stderr.write(`${written}\n`);
  if (options.open) io.stderr.write(`${await openReport(options.out)}\n`);
  return EXIT.ok;
}

/**
 * Opens the written page in a browser, or says where it is when none can be found: either way
 * a line to print, never a failure.
 */
async function openReport(path: string): Promise<string> {
  const file = resolve(path);
  const opened = await openInBrowser(file);
  return opened.opened
    ? `report: opened it in the browser (${opened.by})`
    : `report: no browser to open it (${opened.why}); open ${pathToFileURL(file)} in one`;
}

/** Builds the report of `input` and writes it to `path`; returns a line saying what it holds. */
export async function writeReport(path: string, input: ReportInput): Promise<string> {
  const report = buildReport({ ...input, optOut: input.optOut ?? statsOptOut() });
  const html = renderReportHtml(report, await loadReportAssets());
  try {
    await writeFile(path, html);
  } catch (error) {
    throw new Error(`cannot write ${path}: ${(error as Error).message}`);
  }
  const { summary } = report.data;
  const megabytes = (Buffer.byteLength(html) / 1e6).toFixed(1);
  const missing =
    summary.missing > 0 ? `, ${plural(summary.missing, "segment message")} not in the input` : "";
  return `report: wrote ${path} (${megabytes} MB): ${plural(summary.channels, "channel")}, ${plural(summary.segments, "segment")}${missing}`;
}

function parseReportArgs({
  values,
  positionals,
}: CommandLine<typeof REPORT_OPTIONS>): ReportOptions {
  if (positionals.length > 0)
    throw new Error(`unexpected argument ${JSON.stringify(positionals[0])}`);
  if (values.workspace !== undefined && values.segments !== undefined) {
    throw new Error("--workspace and --segments name two sources: give one");
  }
  const workspace = workspaceDir(values.workspace, values.segments !== undefined);
  if (workspace !== undefined) {
    const files = (["candidates", "input", "skip-invalid"] as const).find(
      (flag) => values[flag] !== undefined,
    );
    if (files) throw new Error(`--${files} goes with --segments (a workspace has its own)`);
  }
  const fromStdin = [values.segments, values.candidates, values.input].filter((f) => f === "-");
  if (fromStdin.length > 1) throw new Error("only one of the files can be - (standard input)");
  let now: number | undefined;
  if (values.now !== undefined) {
    try {
      now = parseTimestamp(values.now);
    } catch {
      throw new Error(
        `--now must be ISO-8601 with a time zone or epoch ms (got ${JSON.stringify(values.now)})`,
      );
    }
  }
  if (values.out !== undefined) {
    // Checked before the work: a report of a large workspace takes a while to build.
    const folder = dirname(resolve(values.out));
    if (!existsSync(folder) || !statSync(folder).isDirectory()) {
      throw new Error(`--out ${values.out}: there is no folder ${folder} to write it in`);
    }
  }
  return {
    workspace,
    segments: values.segments,
    candidates: values.candidates,
    input: values.input,
    channels: values.channel,
    // Into the workspace, not the current directory (often a source tree, whose linter and
    // git would then see a generated page).
    out: values.out ?? join(workspace ?? DEFAULT_WORKSPACE, "report.html"),
    outInWorkspace: values.out === undefined,
    settle:
      values.settle === undefined ? DEFAULT_SETTLE_MS : parseDuration(values.settle, "--settle"),
    now,
    skipInvalid: values["skip-invalid"] ?? false,
    open: values.open ?? false,
  };
}

function sources(options: ReportOptions): { label: string; value: string }[] {
  return [
    { label: "segments", value: options.segments ?? "" },
    ...(options.candidates === undefined
      ? []
      : [{ label: "candidates", value: options.candidates }]),
    ...(options.input === undefined ? [] : [{ label: "messages", value: options.input }]),
  ];
}

/**
 * The segment lines of `file`; a line that is not a segment, repeats a segment, or puts a message
 * in a second segment of its channel is a problem.
 */
async function readSegments(
  file: string,
  stdin: Readable,
  problems: FileProblem[],
): Promise<SegmentRecord[]> {
  const segments: SegmentRecord[] = [];
  const segmentLines = new Map<string, number>();
  const messageLines = new Map<string, number>();
  for await (const { line, value } of jsonLines(file, stdin, problems)) {
    const record = parseOrReport(file, line, problems, () => parseSegmentRecord(value));
    if (record === undefined) continue;
    const key = `${record.channel}\u0000${record.segmentId}`;
    const earlier = segmentLines.get(key);
    if (earlier !== undefined) {
      problems.push({ file, line, field: "segmentId", problem: `repeats line ${earlier}` });
      continue;
    }
    const taken = record.messageIds.findIndex((id) =>
      messageLines.has(`${record.channel}\u0000${id}`),
    );
    if (taken >= 0) {
      const id = record.messageIds[taken];
      problems.push({
        file,
        line,
        field: `messageIds[${taken}]`,
        problem: `${JSON.stringify(id)} is also in the segment on line ${messageLines.get(`${record.channel}\u0000${id}`)}`,
      });
      continue;
    }
    segmentLines.set(key, line);
    for (const id of record.messageIds) messageLines.set(`${record.channel}\u0000${id}`, line);
    segments.push(record);
  }
  return segments;
}

async function readCandidates(
  file: string,
  stdin: Readable,
  problems: FileProblem[],
): Promise<CandidatesLine[]> {
  const records: CandidatesLine[] = [];
  const lines = new Map<string, number>();
  for await (const { line, value } of jsonLines(file, stdin, problems)) {
    const record = parseOrReport(file, line, problems, () => parseCandidatesRecord(value));
    if (record === undefined) continue;
    const key = `${record.channel}\u0000${record.segmentId}`;
    const earlier = lines.get(key);
    if (earlier !== undefined) {
      problems.push({ file, line, field: "segmentId", problem: `repeats line ${earlier}` });
      continue;
    }
    lines.set(key, line);
    records.push(record);
  }
  return records;
}

/** The messages of `file`, read as `segment` reads them; their problems join `problems`. */
async function readInput(
  file: string,
  io: CommandIO,
  problems: FileProblem[],
): Promise<ChatMessage[]> {
  const progress = new Progress(io.stderr);
  try {
    const read = await readMessages(file, progress, io.stdin);
    problems.push(...read.problems.map((p) => ({ file, ...p })));
    return read.messages.map((entry) => entry.message);
  } catch (error) {
    throw new CannotRead(file, error);
  } finally {
    progress.finish();
  }
}

function parseOrReport<T>(
  file: string,
  line: number,
  problems: FileProblem[],
  parse: () => T,
): T | undefined {
  try {
    return parse();
  } catch (error) {
    if (!(error instanceof InvalidRecordError)) throw error;
    problems.push({ file, line, field: error.field, problem: error.reason });
    return undefined;
  }
}

/** Each non-blank line of `file` (`-`: standard input) decoded as JSON, with its line number. */
async function* jsonLines(
  file: string,
  stdin: Readable,
  problems: FileProblem[],
): AsyncIterable<{ line: number; value: unknown }> {
  let input: Readable = stdin;
  if (file !== "-") {
    // Opened first, so that a missing file is an error here rather than an event nobody hears.
    try {
      input = (await open(file)).createReadStream();
    } catch (error) {
      throw new CannotRead(file, error);
    }
  }
  const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  let line = 0;
  for await (const text of lines) {
    line++;
    const json = line === 1 ? text.replace(/^\uFEFF/, "") : text;
    if (json.trim() === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(json);
    } catch (error) {
      const problem = `not valid JSON (${(error as Error).message})`;
      problems.push({ file, line, field: "json", problem });
      continue;
    }
    yield { line, value };
  }
}
