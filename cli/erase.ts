/**
 * `erase`: removes a person from the local workspace or a deployment's tables (`eraseUser`,
 * lib/lifecycle/erasure): their messages, what was derived from them, their name in results; prints what
 * it removed and the audit item. Run again, it resumes an erasure that was interrupted.
 */
import { userInfo } from "node:os";
import { getSecret } from "@aws-lambda-powertools/parameters/secrets";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { S3Client } from "@aws-sdk/client-s3";
import {
  addAuthorIndex,
  authorIndexState,
  backfillAuthorKeys,
  dynamoDbErasure,
  type EraseOutcome,
  type EraseRequest,
  ErasureScopeError,
  eraseUser,
  s3DigestArchive,
} from "convoseg/erasure";
import type { AuthorRef } from "convoseg/history/changes";
import { KIND_COUNTS } from "convoseg/knowledge";
import type { SegmentLedger } from "../local/ledger.js";
import { type Command, command, EXIT } from "./shared/command.js";
import { CommandFailure, onTable, type TableRef } from "./shared/failures.js";
import { escapeControls, plural } from "./shared/format.js";
import { eraseWorkspaceFiles } from "./shared/on-disk.js";
import {
  WORKSPACE_HELP,
  WORKSPACE_OPTION,
  withWorkspace,
  workspaceDir,
} from "./shared/workspace-option.js";

const USAGE = `Usage: npm start -- erase (--user-id ID | --user NAME | both)
         [--channel ID... | --all-channels] [--dry-run] [--json] [--requested-by WHO]
         [--backfill] [--workspace DIR |
         --messages-table NAME --results-table NAME --channels-table NAME
         --audit-key-secret ARN [--digest-bucket NAME]]

Erases a person: deletes every message they wrote (those stored with their platform user ID,
and those stored without a user id under the display NAME), in every channel or the ones given,
as a deletion does (text, author and user id removed), redacts the results, topic entries and
window replies derived from them, removes their names from the results that still hold
them, and has the segmentation tick empty its reply linker window in each channel they wrote in
(it holds hashes of their words and names). A message stored with a user id is found by that
id only: --user NAME alone leaves it, and must say its channels (--channel or --all-channels).
Writes an audit item (who asked, when, counts, finished; the person by a keyed hash) to the
results table, and on a deployment removes the stored digests that cite them. Works on the
local workspace (.convoseg, or --workspace DIR) unless tables are named. Run it again to finish
one that was interrupted; after it finished, running it again erases nothing and says so.

Options:
${WORKSPACE_HELP}
  --user-id ID            the person's platform user id (Slack U…, Discord, Telegram)
  --user NAME             the person's stored display name (author), for their messages
                          stored without a user id
  --channel ID            only this channel (repeatable; default: every channel, but see
                          --all-channels)
  --all-channels          every channel: needed by --user NAME alone, as a display name is no
                          one person's (every community has its "sam"); without it or
                          --channel, erase names the channels it would touch and stops
  --dry-run               count their messages per channel, change nothing
  --json                  print the outcome as JSON (counts and the audit item)
  --requested-by WHO      who asked, for the audit item (default: this login's user name)
  --backfill              first give every message the author key of the current rule (one
                          Scan of the messages table; needed once after upgrading)
  --messages-table NAME   the messages table (default: $MESSAGES_TABLE)
  --results-table NAME    the results table (default: $RESULTS_TABLE)
  --channels-table NAME   the channels table (default: $CHANNELS_TABLE)
  --audit-key-secret ARN  the deployment's audit secret (AuditKeySecretArn; default:
                          $AUDIT_KEY_SECRET_ARN): the audit item's keys are hashed with it
  --digest-bucket NAME    the deployment's digest bucket (DigestBucketName; default:
                          $DIGEST_BUCKET): a scheduled digest citing the person goes, every
                          version (unset: digests are not looked at)
  -h, --help              this help`;

export const eraseCommand: Command = command({
  name: "erase",
  usage: USAGE,
  options: {
    ...WORKSPACE_OPTION,
    user: { type: "string" },
    "user-id": { type: "string" },
    channel: { type: "string", multiple: true },
    "all-channels": { type: "boolean" },
    "dry-run": { type: "boolean" },
    json: { type: "boolean" },
    "requested-by": { type: "string" },
    backfill: { type: "boolean" },
    "messages-table": { type: "string" },
    "results-table": { type: "string" },
    "channels-table": { type: "string" },
    "digest-bucket": { type: "string" },
    "audit-key-secret": { type: "string" },
  },
  parse: ({ positionals, values }) => {
    if (positionals.length > 0)
      throw new Error(`unexpected argument ${JSON.stringify(positionals[0])}`);
    const { user, "user-id": userId } = values;
    if (user === "") throw new Error("--user NAME: give a non-empty name");
    if (userId === "") throw new Error("--user-id ID: give a non-empty id");
    if (user === undefined && userId === undefined) {
      throw new Error("--user-id ID or --user NAME is required (or both)");
    }
    if (values["all-channels"] && values.channel !== undefined) {
      throw new Error("--channel and --all-channels say two scopes: give one");
    }
    const named = [
      values["messages-table"],
      values["results-table"],
      values["channels-table"],
    ].some((t) => t !== undefined);
    if (values.workspace !== undefined && named) {
      throw new Error("--workspace and a table flag name two places: give one");
    }
    const messagesTable =
      values["messages-table"] ?? (values.workspace ? undefined : process.env.MESSAGES_TABLE);
    const resultsTable =
      values["results-table"] ?? (values.workspace ? undefined : process.env.RESULTS_TABLE);
    const channelsTable =
      values["channels-table"] ?? (values.workspace ? undefined : process.env.CHANNELS_TABLE);
    const workspace = workspaceDir(
      values.workspace,
      [messagesTable, resultsTable, channelsTable].some((t) => t !== undefined),
    );
    if (
      workspace === undefined &&
      (messagesTable === undefined || resultsTable === undefined || channelsTable === undefined)
    ) {
      throw new Error(
        "erase on a deployment needs its three tables: --messages-table and --results-table, and --channels-table (or MESSAGES_TABLE, RESULTS_TABLE and CHANNELS_TABLE)",
      );
    }
    const requestedBy = values["requested-by"] ?? `cli:${loginName()}`;
    return {
      request: {
        ...(userId === undefined ? {} : { userId }),
        ...(user === undefined ? {} : { user }),
        channels: values.channel,
        ...(values["all-channels"] ? { allChannels: true } : {}),
        requestedBy,
        dryRun: values["dry-run"] ?? false,
      },
      json: values.json ?? false,
      backfill: values.backfill ?? false,
      workspace,
      tables: { messagesTable, resultsTable, channelsTable },
      auditKeySecret:
        workspace === undefined
          ? (values["audit-key-secret"] ?? process.env.AUDIT_KEY_SECRET_ARN)
          : undefined,
      digestBucket:
        workspace === undefined
          ? (values["digest-bucket"] ?? process.env.DIGEST_BUCKET)
          : undefined,
    };
  },
  run: async ({ request, json, backfill, workspace, tables, digestBucket, auditKeySecret }, io) => {
    const act = async (
      client: DynamoDBClient,
      messagesTable: string,
      resultsTable: string,
      channelsTable: string,
      auditSecret: () => Promise<string>,
      ledger?: SegmentLedger,
    ) => {
      const local = ledger !== undefined;
      const ref: TableRef = {
        table: `${messagesTable}, ${resultsTable}, ${channelsTable}`,
        role: "the messages, results and channels tables",
        fix: local
          ? "run npm start -- run on the workspace first"
          : "pass the stack's MessagesTableName, ResultsTableName and ChannelsTableName",
      };
      await onTable(ref, async () => {
        const state = await authorIndexState(client, messagesTable);
        if (state === "active") return;
        if (!local) {
          throw new CommandFailure(
            `the messages table ${JSON.stringify(messagesTable)} has no active byAuthor index (${state}): deploy the stack's current version, wait for the index, then run with --backfill once`,
          );
        }
        // A workspace made before the index: add it, and key the messages it already holds.
        io.stderr.write("erase: adding the byAuthor index to the workspace's messages table\n");
        await addAuthorIndex(client, messagesTable);
        backfill = true;
      });
      // A workspace's messages stored with a user id by a version before keys followed it carry
      // their name's key: a workspace is small, so an erasure by id re-keys it every time.
      if (local && request.userId !== undefined) backfill = true;
      if (backfill && !request.dryRun) {
        const updated = await onTable(ref, () => backfillAuthorKeys(client, messagesTable));
        io.stderr.write(`erase: gave ${plural(updated, "message")} an author key\n`);
      }
      const deps = dynamoDbErasure(
        {
          client,
          messagesTable,
          resultsTable,
          channelsTable,
          // A dry run writes no audit item: it needs no secret.
          auditSecret: request.dryRun ? "" : await auditSecret(),
        },
        local || digestBucket === undefined
          ? {}
          : { digests: s3DigestArchive({ client: new S3Client({}), bucket: digestBucket }) },
      );
      let outcome: EraseOutcome;
      try {
        outcome = await onTable(ref, () => eraseUser(deps, request));
      } catch (failure) {
        // onTable says every failure as a command's; this one is the operator's to fix.
        const error = failure instanceof CommandFailure ? failure.cause : failure;
        if (!(error instanceof ErasureScopeError)) throw failure;
        const channels = Object.entries(error.byChannel);
        const total = channels.reduce((sum, [, n]) => sum + n, 0);
        io.stderr.write(
          `erase: --user ${whom(request)} alone matches that display name in every channel, whoever wrote there: it would erase ${plural(total, "message")} in ${plural(channels.length, "channel")}:\n${channels
            .map(([channel, n]) => `  ${escapeControls(channel)}: ${plural(n, "message")}`)
            .join(
              "\n",
            )}\nerase: nothing erased; give --channel ID for each channel that is this person's (or --user-id ID), or --all-channels if every one is\n`,
        );
        return EXIT.usage;
      }
      if (ledger !== undefined && !request.dryRun) {
        // The workspace's ledger keeps delivered bodies, with text: they follow the messages.
        const rewritten = await ledger.eraseAuthor(refsOf(request), request.channels);
        if (rewritten > 0) {
          io.stderr.write(
            `erase: removed them from ${plural(rewritten, "delivered segment")} of the workspace's ledger\n`,
          );
        }
      }
      io.stdout.write(
        json ? `${JSON.stringify(outcome, null, 2)}\n` : describe(whom(request), outcome),
      );
      if (!json && request.userId === undefined && outcome.counts.messages === 0) {
        // The likeliest surprise: the person's messages were imported with their platform id.
        io.stderr.write(
          "erase: --user finds only messages stored without a user id; messages an export stored with one are found by --user-id\n",
        );
      }
      return EXIT.ok;
    };
    if (workspace === undefined) {
      return act(
        new DynamoDBClient({}),
        tables.messagesTable as string,
        tables.resultsTable as string,
        tables.channelsTable as string,
        () => deploymentAuditSecret(auditKeySecret),
      );
    }
    return withWorkspace({ dir: workspace, create: false }, io, async (opened) => {
      const code = await act(
        opened.dynamodb(),
        opened.tables.messagesTable,
        opened.tables.resultsTable,
        opened.tables.channelsTable,
        async () => opened.auditSecret,
        opened.ledger,
      );
      if (code === EXIT.ok && !request.dryRun) {
        await eraseWorkspaceFiles(opened, io, "erase", "their messages");
      }
      return code;
    });
  },
});

/** The stack's audit secret (`AuditKeySecretArn`), read with the operator's credentials. */
async function deploymentAuditSecret(secretId: string | undefined): Promise<string> {
  if (secretId === undefined) {
    throw new CommandFailure(
      "erase on a deployment needs its audit secret: --audit-key-secret <the stack's AuditKeySecretArn> (or AUDIT_KEY_SECRET_ARN); the audit item's keys are hashed with it",
    );
  }
  const value = await getSecret(secretId).catch((error: unknown) => {
    throw new CommandFailure(
      `cannot read the audit secret ${JSON.stringify(secretId)} (${(error as Error).name}): check --audit-key-secret and that your credentials may read it`,
      { cause: error },
    );
  });
  if (typeof value !== "string") {
    throw new CommandFailure(`the audit secret ${JSON.stringify(secretId)} is not a string`);
  }
  return value;
}

function refsOf(request: EraseRequest): AuthorRef[] {
  const refs: AuthorRef[] = [];
  if (request.userId !== undefined) refs.push({ userId: request.userId });
  if (request.user !== undefined) refs.push({ user: request.user });
  return refs;
}

/** How the output names the person: as the operator gave them. */
function whom(request: EraseRequest): string {
  const parts = [];
  if (request.userId !== undefined) parts.push(`user id ${JSON.stringify(request.userId)}`);
  if (request.user !== undefined) parts.push(JSON.stringify(request.user));
  return escapeControls(parts.join(" and "));
}

function loginName(): string {
  try {
    return userInfo().username;
  } catch {
    return "unknown";
  }
}

/** What an erasure did, in a few lines: counts, never text. */
function describe(name: string, outcome: EraseOutcome): string {
  const { counts } = outcome;
  if (outcome.dryRun) {
    const channels = Object.entries(outcome.byChannel ?? {});
    const lines = channels.map(
      ([channel, n]) => `  ${escapeControls(channel)}: ${plural(n, "message")}`,
    );
    return `${name} wrote ${plural(counts.messages, "message")} in ${plural(channels.length, "channel")} (dry run: nothing erased)${lines.length > 0 ? `:\n${lines.join("\n")}` : ""}\n`;
  }
  const audit = outcome.audit;
  const lines = [
    `${name} ${counts.messages === 0 ? "had no messages left to erase" : `erased: ${plural(counts.messages, "message")} deleted`}`,
    // Each knowledge kind's counts that the audit keeps, as the registry labels them.
    `  ${[...KIND_COUNTS]
      .flatMap(([count, { erasure, label }]) =>
        erasure ? [`${label}: ${counts[count as keyof typeof counts]}`] : [],
      )
      .join("; ")}`,
  ];
  if (audit !== undefined) {
    lines.push(
      `  audit: erasure#${audit.authorKey}#${audit.requestedAt}, asked for by ${escapeControls(audit.requestedBy)}, ${audit.state}${audit.finishedAt ? ` at ${audit.finishedAt}` : ""}${audit.runs > 1 ? ` (resumed: ${audit.runs} runs)` : ""}`,
    );
  }
  return `${lines.join("\n")}\n`;
}
