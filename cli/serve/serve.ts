import { type DynamoDBClient, paginateQuery } from "@aws-sdk/client-dynamodb";
import {
  API_ROUTES,
  API_WRITE_ROUTES,
  apiHandler,
  dynamoDbApiSources,
  type SearchSource,
  storeCorrections,
  storeStatsSource,
} from "convoseg/api";
import { channelDigests, dynamoDbDigestSources } from "convoseg/digest";
import { DynamoDbStore } from "convoseg/history/dynamodb";
import { DELETED, PARTITION_KEY, POSITION } from "convoseg/history/schema";
import { KnowledgeReader } from "convoseg/knowledge/read";
import { DynamoDbResultStore } from "convoseg/knowledge/store";
import type { Embedder } from "convoseg/topics";
import type { Workspace } from "../../local/workspace.js";
import { type Command, command, EXIT } from "../shared/command.js";
import { statsOptOut } from "../shared/opt-out.js";
import {
  WORKSPACE_HELP,
  WORKSPACE_OPTION,
  withWorkspace,
  workspaceDir,
} from "../shared/workspace-option.js";
import {
  parseEmbedder,
  SEARCH_EMBEDDING_OPTIONS,
  servedEmbeddingHelp,
} from "../topics/embedding-options.js";
import { type ApiServer, isLoopback, startApiServer } from "./serve-http.js";

const DEFAULT_PORT = 8787;
const DEFAULT_HOST = "127.0.0.1";

const SERVE_USAGE = `Usage: npm start -- serve [--port N] [--host ADDRESS] [--workspace DIR] [--allow-remote] [--embeddings M [--embeddings-url U]]

Serves the read API (docs/api.md) on the local workspace's tables over HTTP, with no
authentication, until interrupted (Ctrl-C): GET and HEAD of each route,
${API_ROUTES.map((route) => `  ${route}`).join("\n")}
and POST (a JSON body, application/json) of
${API_WRITE_ROUTES.map((route) => `  ${route}`).join("\n")}
(the digest takes ?since=7d, or dates: ?since=2018-05-23&until=2018-05-30). The same handler
the deployed API runs, where IAM (or JWT) guards it; here only this machine may reach it. The
digest's period ends by default at the workspace's simulated clock (where its last run left
it); imported history, which ended long before, is asked for in dates. It holds the workspace
while it serves: stop it before a run on the same workspace.

Options:
${WORKSPACE_HELP}
  --port N          the port (default: ${DEFAULT_PORT}; 0: any free port)
  --host ADDRESS    the address to listen on (default: ${DEFAULT_HOST}); only a loopback
                    address (127.0.0.0/8, ::1, localhost) unless --allow-remote
  --allow-remote    listen on a non-loopback address: anyone who reaches it reads every
                    channel's topics and message ids, and corrects its questions, without
                    authentication; without it,
                    a request whose Host is not this machine's name and port is refused
                    (a web page that rebinds its own name to 127.0.0.1 cannot read it)
${servedEmbeddingHelp("GET /search")}
  -h, --help        this help`;

/**
 * The read API over node:http on an opened workspace's results and channels tables. Its digest
 * route's "now" is the workspace's simulated clock: `?since=7d` is the last week of the chat
 * replayed, not of the machine's calendar (one clock for every channel; dates for the rest).
 */
export function serveWorkspace(
  opened: Pick<Workspace, "dir" | "dynamodb" | "tables" | "clock" | "ledger">,
  options: {
    host: string;
    port: number;
    anyHost?: boolean;
    log?: (line: string) => void;
    /** GET /search ranks hybrid with this model's embeddings (the index built with them). */
    embedder?: Embedder;
  },
): Promise<ApiServer> {
  const client = opened.dynamodb();
  const tableName = opened.tables.resultsTable;
  const optOut = statsOptOut();
  const handler = apiHandler(
    dynamoDbApiSources({
      client,
      resultsTable: tableName,
      channelsTable: opened.tables.channelsTable,
      messagesTable: opened.tables.messagesTable,
      countMessages: (channel) => keptMessages(client, opened.tables.messagesTable, channel),
      questions: new KnowledgeReader({ client, tableName }),
      // A person's correction, as `questions mark` makes it: when they made it, the wall clock.
      corrections: storeCorrections(new DynamoDbResultStore({ client, tableName }), {
        messages: new DynamoDbStore({ client, tableName: opened.tables.messagesTable }),
      }),
      search: workspaceSearch(opened, options.log, options.embedder),
      stats: workspaceStats(client, tableName, opened.tables.messagesTable),
      digest: channelDigests(
        dynamoDbDigestSources({
          client,
          resultsTable: tableName,
          messagesTable: opened.tables.messagesTable,
        }),
        { answerers: { optOut } },
      ),
    }),
    // STATS_OPT_OUT, as `digest` and `report` read it: never named among the answerers.
    { now: () => opened.clock ?? Date.now(), statsOptOut: optOut },
  );
  return startApiServer({ handler, ...options });
}

/** The stats route's results and answering messages (when, by whom: never the text). */
function workspaceStats(client: DynamoDBClient, resultsTable: string, messagesTable: string) {
  const messages = new DynamoDbStore({ client, tableName: messagesTable });
  return storeStatsSource(new DynamoDbResultStore({ client, tableName: resultsTable }), {
    getMessages: (channel, ids) => messages.messageFacts(channel, ids),
  });
}

/**
 * How many messages a channel keeps, counted as `channels` counts them (a position, not marked
 * deleted): the local workspace has no stream to keep a count from, and is small enough to read.
 */
async function keptMessages(
  client: DynamoDBClient,
  tableName: string,
  channel: string,
): Promise<number> {
  let count = 0;
  const pages = paginateQuery(
    { client },
    {
      TableName: tableName,
      KeyConditionExpression: "#c = :c",
      FilterExpression: "attribute_exists(#p) AND NOT #d = :yes",
      ExpressionAttributeNames: { "#c": PARTITION_KEY, "#p": POSITION, "#d": DELETED },
      ExpressionAttributeValues: { ":c": { S: channel }, ":yes": { BOOL: true } },
      Select: "COUNT",
    },
  );
  for await (const page of pages) count += page.Count ?? 0;
  return count;
}

/**
 * The workspace's search index for `GET /search`, built on the first search (serve holds the
 * workspace: nothing changes its tables meanwhile), LanceDB loaded only then.
 */
function workspaceSearch(
  opened: Pick<Workspace, "dir" | "dynamodb" | "tables" | "ledger">,
  log: ((line: string) => void) | undefined,
  embedder: Embedder | undefined,
): SearchSource {
  let index: ReturnType<typeof open> | undefined;
  const open = async () => {
    const { workspaceSearchIndex } = await import("../shared/search-index.js");
    return workspaceSearchIndex(
      opened,
      { stderr: { write: (text: string) => log?.(text.trimEnd()) }, now: Date.now },
      { embedder },
    );
  };
  return {
    async search(query) {
      index ??= open().catch((error: unknown) => {
        // A failed build is tried again by the next search, not kept.
        index = undefined;
        throw error;
      });
      return (await index).search(query, { embedder });
    },
  };
}

/** `serve`: the read API over node:http on the local workspace. */
export const serveCommand: Command = command({
  name: "serve",
  usage: SERVE_USAGE,
  options: {
    ...WORKSPACE_OPTION,
    port: { type: "string" },
    host: { type: "string" },
    "allow-remote": { type: "boolean" },
    ...SEARCH_EMBEDDING_OPTIONS,
  },
  parse: ({ values, positionals }) => {
    if (positionals.length > 0) throw new Error("serve takes no arguments");
    const port = values.port === undefined ? DEFAULT_PORT : Number(values.port);
    if (!(values.port === undefined || /^\d{1,5}$/.test(values.port)) || port > 65535) {
      throw new Error(
        `--port must be a whole number from 0 to 65535 (got ${JSON.stringify(values.port)})`,
      );
    }
    const host = values.host ?? DEFAULT_HOST;
    if (!isLoopback(host) && !values["allow-remote"]) {
      throw new Error(
        `--host ${JSON.stringify(host)} is not a loopback address: the local API has no authentication, so it listens only on this machine (127.0.0.1, ::1, localhost) unless --allow-remote says to open it to whoever can reach ${JSON.stringify(host)}`,
      );
    }
    const embedder = parseEmbedder(values);
    return {
      port,
      ...(embedder && { embedder }),
      host: host === "[::1]" ? "::1" : host,
      anyHost: values["allow-remote"] ?? false,
      workspace: workspaceDir(values.workspace, false) as string,
    };
  },
  run: ({ port, host, anyHost, workspace, embedder }, io) =>
    withWorkspace({ dir: workspace, create: false }, io, async (opened) => {
      const server = await serveWorkspace(opened, {
        host,
        port,
        anyHost,
        embedder,
        log: (line) => io.stderr.write(`serve: ${line}\n`),
      });
      io.stdout.write(`serving the read API on ${server.url} (Ctrl-C to stop)\n`);
      await new Promise<void>((resolve) => {
        process.once("SIGINT", resolve);
        process.once("SIGTERM", resolve);
      });
      await server.close();
      return EXIT.ok;
    }),
});
