/**
 * DynamoDB capacity units as DynamoDB bills them, measured on DynamoDB Local: each request asks
 * for `ReturnConsumedCapacity: INDEXES`, and what Local reports wrong is computed from item sizes
 * by DynamoDB's published rules instead:
 *
 * - a failed conditional write reports nothing; DynamoDB bills it as a write of the item that is
 *   there (at least one unit): the request also asks for that item (`ALL_OLD` on failure);
 * - a transaction reports each distinct per-item value once (and index writes twice); DynamoDB
 *   bills every item twice: 2 units per KB of each item written;
 * - an empty Query page reports 0; DynamoDB bills 1 unit (0.5 when eventually consistent).
 */
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { READ_UNIT_BYTES, type WireValue, WRITE_UNIT_BYTES, wireItemSize } from "convoseg/dynamodb";

type AttributeMap = Record<string, WireValue>;

/** Write units of writing an item of `bytes` (an update: the larger of before and after). */
export const writeUnits = (bytes: number): number =>
  Math.max(1, Math.ceil(bytes / WRITE_UNIT_BYTES));

/** Read units of reading `bytes` in one request (strongly consistent; half when eventual). */
export const readUnits = (bytes: number, consistent: boolean): number =>
  Math.max(1, Math.ceil(bytes / READ_UNIT_BYTES)) * (consistent ? 1 : 0.5);

/** What a failed conditional write costs: a write of the item it found (nothing found: one). */
export function failedWriteUnits(existing: AttributeMap | undefined): number {
  return writeUnits(existing === undefined ? 0 : wireItemSize(existing));
}

/** One action of a TransactWriteItems request, as the request carries it. */
export interface TransactAction {
  Put?: { Item?: AttributeMap };
  Update?: { Key?: AttributeMap; ExpressionAttributeValues?: AttributeMap };
  Delete?: { Key?: AttributeMap };
  ConditionCheck?: { Key?: AttributeMap };
}

/**
 * What a transaction of writes costs: two units per KB of every item it writes. A put is
 * measured by its item, an update by its key and the values it sets (the convoseg updates set
 * an item's whole content), a delete or condition check by its key (one unit at least).
 */
export function transactionWriteUnits(actions: readonly TransactAction[]): number {
  let units = 0;
  for (const action of actions) {
    const written = action.Put?.Item
      ? wireItemSize(action.Put.Item)
      : action.Update
        ? wireItemSize({ ...action.Update.Key, ...action.Update.ExpressionAttributeValues })
        : wireItemSize(action.Delete?.Key ?? action.ConditionCheck?.Key ?? {});
    units += 2 * writeUnits(written);
  }
  return units;
}

/** Units of one request, split by table, index and kind. */
export interface Consumed {
  table: string;
  /** The index, or undefined for the table itself. */
  index?: string;
  read: number;
  write: number;
}

interface CapacityReport {
  TableName?: string;
  CapacityUnits?: number;
  ReadCapacityUnits?: number;
  WriteCapacityUnits?: number;
  Table?: { CapacityUnits?: number; ReadCapacityUnits?: number; WriteCapacityUnits?: number };
  LocalSecondaryIndexes?: Record<string, { CapacityUnits?: number }>;
  GlobalSecondaryIndexes?: Record<string, { CapacityUnits?: number }>;
}

const READS = new Set(["GetItemCommand", "BatchGetItemCommand", "QueryCommand", "ScanCommand"]);
const CONDITIONAL_WRITES = new Set(["PutItemCommand", "UpdateItemCommand", "DeleteItemCommand"]);

/**
 * The units one request consumed by DynamoDB's billing: Local's report for what it gets right,
 * the rules above for the rest. `error` is the request's failure, if it failed.
 */
export function consumedBy(
  command: string,
  input: Record<string, unknown>,
  output: Record<string, unknown> | undefined,
  error: unknown,
): Consumed[] {
  const table = String(input.TableName ?? "");
  if (error !== undefined) {
    const name = (error as Error).name;
    if (CONDITIONAL_WRITES.has(command) && name === "ConditionalCheckFailedException") {
      return [{ table, read: 0, write: failedWriteUnits((error as { Item?: AttributeMap }).Item) }];
    }
    return [];
  }
  if (command === "TransactWriteItemsCommand") {
    const actions = (input.TransactItems ?? []) as (TransactAction &
      Record<string, { TableName?: string }>)[];
    const byTable = new Map<string, TransactAction[]>();
    for (const action of actions) {
      const name = Object.values(action)[0]?.TableName ?? "";
      byTable.set(name, [...(byTable.get(name) ?? []), action]);
    }
    return [...byTable].map(([name, list]) => ({
      table: name,
      read: 0,
      write: transactionWriteUnits(list),
    }));
  }
  const reports = ([] as CapacityReport[]).concat(
    (output?.ConsumedCapacity as CapacityReport | CapacityReport[] | undefined) ?? [],
  );
  const isRead = READS.has(command);
  const consumed: Consumed[] = [];
  for (const report of reports) {
    const name = report.TableName ?? table;
    const units = (value: number | undefined) => ({
      read: isRead ? (value ?? 0) : 0,
      write: isRead ? 0 : (value ?? 0),
    });
    const tableUnits = report.Table?.CapacityUnits ?? (report.Table ? 0 : report.CapacityUnits);
    consumed.push({ table: name, ...units(tableUnits) });
    for (const [index, value] of Object.entries({
      ...report.LocalSecondaryIndexes,
      ...report.GlobalSecondaryIndexes,
    })) {
      consumed.push({ table: name, index, ...units(value.CapacityUnits) });
    }
  }
  if (command === "QueryCommand" && ((output?.Items as unknown[]) ?? []).length === 0) {
    // An empty page is billed as the smallest read.
    const units = readUnits(0, input.ConsistentRead === true);
    const index = input.IndexName as string | undefined;
    return [{ table, index, read: units, write: 0 }];
  }
  return consumed;
}

type Handler = (args: {
  input: Record<string, unknown>;
}) => Promise<{ output: Record<string, unknown> }>;
interface MiddlewareStack {
  add(
    middleware: (next: Handler, context: { commandName?: string }) => Handler,
    options: { step: "initialize"; name: string; priority?: "high" },
  ): void;
}

/** A request's units with what it was: command, table role, the kind of item it touched. */
export interface Measured extends Consumed {
  operation: string;
}

/**
 * Measures every request of the clients it is attached to. `label` names an operation from its
 * command and input (for instance "UpdateItem channels/marks").
 */
export class CapacityMeter {
  readonly measured: Measured[] = [];

  constructor(
    private readonly label: (command: string, input: Record<string, unknown>) => string,
  ) {}

  attach(client: DynamoDBClient): this {
    (client.middlewareStack as unknown as MiddlewareStack).add(
      (next, context) => async (args) => {
        const command = context.commandName ?? "unknown";
        const input = args.input;
        input.ReturnConsumedCapacity = "INDEXES";
        if (CONDITIONAL_WRITES.has(command) && input.ConditionExpression !== undefined) {
          input.ReturnValuesOnConditionCheckFailure ??= "ALL_OLD";
        }
        let result: Awaited<ReturnType<Handler>>;
        try {
          result = await next(args);
        } catch (error) {
          this.record(command, input, undefined, error);
          throw error;
        }
        this.record(command, input, result.output, undefined);
        return result;
      },
      // After the document client has marshalled the input.
      { step: "initialize", name: "capacityMeter" },
    );
    return this;
  }

  private record(
    command: string,
    input: Record<string, unknown>,
    output: Record<string, unknown> | undefined,
    error: unknown,
  ) {
    const operation = this.label(command, input);
    for (const consumed of consumedBy(command, input, output, error)) {
      this.measured.push({ operation, ...consumed });
    }
  }
}
