/**
 * `search`: what the local workspace knows, found by words: its messages, conversation segments,
 * topics and questions, best first, with filters. The index is built by the first search after
 * the workspace changed (docs/search.md).
 */
import { existsSync } from "node:fs";
import {
  MAX_HITS,
  QUESTION_STATUSES,
  SEARCH_KINDS,
  type SearchHit,
  type SearchKind,
  type SearchQuery,
} from "convoseg/search";
import type { Embedder } from "convoseg/topics";
import { channelArgument, messagesDirectory } from "./shared/channel-names.js";
import { type Command, command, EXIT } from "./shared/command.js";
import { escapeControls, isoMinute } from "./shared/format.js";
import { suggestChannels } from "./shared/near-channels.js";
import { searchFailure, workspaceSearchIndex } from "./shared/search-index.js";
import { timeOf } from "./shared/time-flag.js";
import {
  WORKSPACE_HELP,
  WORKSPACE_OPTION,
  withWorkspace,
  workspaceDir,
  workspaceFlag,
} from "./shared/workspace-option.js";
import {
  parseEmbedder,
  SEARCH_EMBEDDING_HELP,
  SEARCH_EMBEDDING_OPTIONS,
} from "./topics/embedding-options.js";

const SEARCH_USAGE = `Usage: npm start -- search "<query>" [--channel C]... [--kind K]... [--status S] [--since T] [--until T] [--author ID] [--limit N] [--embeddings M [--embeddings-url U]] [--json] [--workspace DIR]

Finds what the local workspace holds by its words: messages, conversations (segments, with
what was learned from them), topics and questions, best match first (BM25 over the words,
English stemming: "installing drivers" finds "install the driver"). Each hit says what it is,
its channel, its time, a snippet with the matched words in «», the message ids that are its
evidence and where to open it (the report's #segment= anchor; a Slack message's own link).
The first search after the workspace changed indexes it anew from its tables (the index itself
takes about 3 s per 100,000 messages: docs/search.md), the next ones answer at once. With
--embeddings it ranks by meaning too: hits by words and hits by nearness of embeddings are fused
(reciprocal rank fusion), so "gpu" can find "graphics card"; the index keeps the vectors, and a
rebuild embeds only texts it has not embedded before with that model.

Options:
${WORKSPACE_HELP}
  --channel C       only this channel (id or name); again for more
  --kind K          only this kind: ${SEARCH_KINDS.join(", ")}; again for more
  --status S        only questions of this status: ${QUESTION_STATUSES.join(", ")}
  --since T         only from this time: a duration back from the workspace's clock (30d,
                    12h, 2w) or an ISO date (2018-05-29)
  --until T         only before this time, the same way
  --author ID       only what this person (platform user id) wrote or asked
  --limit N         at most N hits (default 20, at most ${MAX_HITS})
${SEARCH_EMBEDDING_HELP}
  --json            one JSON object per hit per line: {"kind", "id", "channel", "ts", "author",
                    "authorId", "title", "status", "segment", "evidence", "permalink", "score",
                    "snippet", "marks", "anchor"} (marks: [start, end) of each match in snippet)
  -h, --help        this help`;

interface SearchArgs {
  dir: string;
  text: string;
  channels: string[];
  kinds: SearchKind[];
  status?: (typeof QUESTION_STATUSES)[number];
  since?: string;
  until?: string;
  author?: string;
  limit: number;
  json: boolean;
  embedder?: Embedder;
}

export const searchCommand: Command = command({
  name: "search",
  usage: SEARCH_USAGE,
  options: {
    ...WORKSPACE_OPTION,
    channel: { type: "string", multiple: true },
    kind: { type: "string", multiple: true },
    status: { type: "string" },
    since: { type: "string" },
    until: { type: "string" },
    author: { type: "string" },
    limit: { type: "string" },
    json: { type: "boolean" },
    ...SEARCH_EMBEDDING_OPTIONS,
  },
  parse: ({ values, positionals }): SearchArgs => {
    if (positionals.length !== 1) {
      throw new Error(
        positionals.length === 0
          ? 'expected the words to look for: npm start -- search "wifi driver"'
          : `expected one query; quote it when it has spaces: npm start -- search "${positionals.join(" ")}"`,
      );
    }
    const kinds = (values.kind ?? []) as SearchKind[];
    for (const kind of kinds) {
      if (!SEARCH_KINDS.includes(kind))
        throw new Error(
          `--kind must be one of ${SEARCH_KINDS.join(", ")} (got ${JSON.stringify(kind)})`,
        );
    }
    const status = values.status as SearchArgs["status"];
    if (status !== undefined && !QUESTION_STATUSES.includes(status))
      throw new Error(
        `--status must be one of ${QUESTION_STATUSES.join(", ")} (got ${JSON.stringify(status)})`,
      );
    const limit = values.limit === undefined ? 20 : Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_HITS)
      throw new Error(
        `--limit must be a whole number from 1 to ${MAX_HITS} (got ${JSON.stringify(values.limit)})`,
      );
    for (const [flag, value] of [
      ["--since", values.since],
      ["--until", values.until],
    ] as const) {
      if (value !== undefined) timeOf(flag, value, 0);
    }
    const embedder = parseEmbedder(values);
    return {
      dir: workspaceDir(values.workspace, false) as string,
      text: positionals[0],
      channels: values.channel ?? [],
      kinds,
      status,
      since: values.since,
      until: values.until,
      author: values.author,
      limit,
      json: values.json ?? false,
      ...(embedder !== undefined && { embedder }),
    };
  },
  run: async (args, io) => {
    const found = await withWorkspace({ dir: args.dir, create: false }, io, async (workspace) => {
      const now = workspace.clock ?? io.now();
      const directory = messagesDirectory(workspace.dynamodb(), workspace.tables.messagesTable);
      const channels: string[] = [];
      for (const given of args.channels) {
        const resolved = await channelArgument("search", given, directory, io);
        if (resolved === undefined) return undefined;
        if (!resolved.stored) {
          io.stderr.write(
            `search: no channel ${escapeControls(JSON.stringify(given))} in the workspace (npm start -- channels lists them)\n`,
          );
          // Read again only here, on the way out, for the channels near it.
          suggestChannels(
            "search",
            `search ${JSON.stringify(args.text)} --channel`,
            resolved.channel,
            new Set(await directory.conversations()),
            io,
          );
          return undefined;
        }
        channels.push(resolved.channel);
      }
      const query: SearchQuery = {
        text: args.text,
        limit: args.limit,
        channels,
        kinds: args.kinds,
        ...(args.status !== undefined && { status: args.status }),
        ...(args.since !== undefined && { since: timeOf("--since", args.since, now) }),
        ...(args.until !== undefined && { until: timeOf("--until", args.until, now) }),
        ...(args.author !== undefined && { authorId: args.author }),
      };
      const { embedder } = args;
      const index = await workspaceSearchIndex(workspace, io, { embedder });
      try {
        return {
          hits: await searchFailure(() => index.search(query, { embedder })),
          reportPath: `${workspace.dir}/report.html`,
        };
      } finally {
        index.close();
      }
    });
    if (found === undefined) return EXIT.usage;
    const { hits, reportPath } = found;
    if (args.json) {
      for (const hit of hits) {
        io.stdout.write(`${JSON.stringify({ ...hit, anchor: anchorOf(hit) })}\n`);
      }
      return EXIT.ok;
    }
    if (hits.length === 0) {
      io.stdout.write(`Nothing found for ${escapeControls(JSON.stringify(args.text))}.\n`);
      return EXIT.ok;
    }
    io.stdout.write(
      `${hits.length} ${hits.length === 1 ? "hit" : "hits"} for ${escapeControls(JSON.stringify(args.text))}, best first:\n\n`,
    );
    for (const hit of hits) io.stdout.write(`${hitText(hit, reportPath)}\n`);
    // The links name the workspace's page, which only `report` writes (`run --report` writes
    // where it is told): a link to no file would open nothing.
    if (hits.some((hit) => hit.segment !== "") && !existsSync(reportPath)) {
      io.stdout.write(
        `${escapeControls(reportPath)} is not written yet: npm start -- report${workspaceFlag(args.dir)} writes it, for the links above.\n`,
      );
    }
    return EXIT.ok;
  },
});

/** The report's anchor of the hit's segment (`#segment=<channel>/<segment>`), or "". */
function anchorOf(hit: SearchHit): string {
  return hit.segment === ""
    ? ""
    : `#segment=${encodeURIComponent(hit.channel)}/${encodeURIComponent(hit.segment)}`;
}

/** A hit as two or three lines: what, where and when; the snippet, matches in «»; where to open it. */
function hitText(hit: SearchHit, reportPath: string): string {
  let marked = "";
  let at = 0;
  for (const [start, end] of hit.marks) {
    marked += `${escapeControls(hit.snippet.slice(at, start))}«${escapeControls(hit.snippet.slice(start, end))}»`;
    at = end;
  }
  marked += escapeControls(hit.snippet.slice(at));
  const who = hit.author === "" ? "" : ` ${escapeControls(hit.author)}`;
  const status = hit.status === "" ? "" : ` (${hit.status})`;
  const head = `${hit.kind}${status} in ${escapeControls(hit.channel)}, ${isoMinute(hit.ts)}${who}`;
  const open = [
    hit.segment === "" ? "" : `${escapeControls(reportPath)}${escapeControls(anchorOf(hit))}`,
    escapeControls(hit.permalink),
  ].filter((p) => p !== "");
  const evidence =
    hit.evidence.length > 0
      ? `messages ${escapeControls(hit.evidence.slice(0, 5).join(", "))}${hit.evidence.length > 5 ? ", …" : ""}`
      : "";
  return [
    head,
    `  ${marked}`,
    ...[evidence, ...open.map((o) => `open ${o}`)].filter((l) => l !== "").map((l) => `  ${l}`),
    "",
  ].join("\n");
}
