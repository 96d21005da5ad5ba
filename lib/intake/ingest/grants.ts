/**
 * What a producer may send: which channels it may write to, and whether it may send edits and
 * deletions. The ingest function learns a producer from the queue a line came through (one queue
 * per producer, only its role may send to it: docs/security.md "Producers"), so a grant cannot
 * be claimed by the line itself.
 */
import { PLATFORM_CHANNEL_SHAPES, type ShapedPlatform } from "../../base/identity/index.js";

/**
 * Channels a producer may write to: any of `ids`, any id starting with one of `prefixes`, and,
 * with `platform`, any id of that platform's shape. `prefixes: [""]` is every channel.
 */
export interface ChannelScope {
  readonly ids?: readonly string[];
  readonly prefixes?: readonly string[];
  readonly platform?: ShapedPlatform;
}

export interface ProducerGrant {
  /** The producer's name in logs and metrics (`slack`, `telegram`, `discord`, `queue`). */
  readonly name: string;
  readonly channels: ChannelScope;
  /** May send `edit` and `delete` lines; without it a producer only adds messages. */
  readonly changes: boolean;
}

/** Why a line is refused: its channel is outside the grant, or it is a change without the right. */
export type RefusalReason = "channel" | "changes";

/** Whether `channel` is within `scope`. */
export function inScope(scope: ChannelScope, channel: string): boolean {
  if (scope.ids?.includes(channel)) return true;
  if (scope.prefixes?.some((prefix) => channel.startsWith(prefix))) return true;
  return scope.platform !== undefined && PLATFORM_CHANNEL_SHAPES[scope.platform].test(channel);
}

/** Why `grant` refuses a line of `op` to `channel`, or undefined when it allows it. */
export function refusal(
  grant: ProducerGrant,
  channel: string,
  op: "add" | "edit" | "delete",
): RefusalReason | undefined {
  if (!inScope(grant.channels, channel)) return "channel";
  if (op !== "add" && !grant.changes) return "changes";
  return undefined;
}

/**
 * A channel scope as settings write it, comma-separated: exact ids, `prefix*` for every id that
 * starts so, `*` for every channel. Throws a RangeError naming what is wrong.
 */
export function parseChannelScope(text: string): ChannelScope {
  const entries = text
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "");
  if (entries.length === 0) {
    throw new RangeError("expected channel ids, prefixes ending in * or * (got nothing)");
  }
  const ids: string[] = [];
  const prefixes: string[] = [];
  for (const entry of entries) {
    const star = entry.indexOf("*");
    if (star === -1) ids.push(entry);
    else if (star === entry.length - 1) prefixes.push(entry.slice(0, -1));
    else throw new RangeError(`a * may only end an entry (got ${JSON.stringify(entry)})`);
  }
  return { ...(ids.length > 0 ? { ids } : {}), ...(prefixes.length > 0 ? { prefixes } : {}) };
}

/**
 * The ingest function's grants by queue ARN, from its `PRODUCERS` variable: a JSON list of
 * `{queue, name, channels, changes}` written by the stack. Throws a RangeError naming the entry
 * and field at fault.
 */
export function parseProducerGrants(json: string): Map<string, ProducerGrant> {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw new RangeError("expected a JSON list of producer grants");
  }
  if (!Array.isArray(value)) throw new RangeError("expected a JSON list of producer grants");
  const grants = new Map<string, ProducerGrant>();
  value.forEach((raw, index) => {
    const at = (field: string, problem: string) =>
      new RangeError(`producer grant [${index}]: ${field} ${problem}`);
    const grant = raw as Partial<Record<"queue" | keyof ProducerGrant, unknown>> | null;
    if (typeof grant?.queue !== "string" || !grant.queue.startsWith("arn:")) {
      throw at("queue", "must be a queue ARN");
    }
    if (grants.has(grant.queue)) throw at("queue", "names a queue granted before");
    if (typeof grant.name !== "string" || grant.name === "") {
      throw at("name", "must be a non-empty string");
    }
    if (typeof grant.changes !== "boolean") throw at("changes", "must be true or false");
    grants.set(grant.queue, {
      name: grant.name,
      changes: grant.changes,
      channels: scopeOf(grant.channels, at),
    });
  });
  return grants;
}

function scopeOf(raw: unknown, at: (field: string, problem: string) => RangeError): ChannelScope {
  const scope = raw as Partial<Record<keyof ChannelScope, unknown>> | null;
  if (typeof scope !== "object" || scope === null || Array.isArray(scope)) {
    throw at("channels", "must be an object");
  }
  const strings = (field: "ids" | "prefixes") => {
    const list = scope[field];
    if (list === undefined) return undefined;
    if (!Array.isArray(list) || !list.every((entry) => typeof entry === "string")) {
      throw at(`channels.${field}`, "must be a list of strings");
    }
    return list as string[];
  };
  const ids = strings("ids");
  const prefixes = strings("prefixes");
  const { platform } = scope;
  if (
    platform !== undefined &&
    (typeof platform !== "string" || !Object.hasOwn(PLATFORM_CHANNEL_SHAPES, platform))
  ) {
    throw at(
      "channels.platform",
      `must be one of ${Object.keys(PLATFORM_CHANNEL_SHAPES).join(", ")}`,
    );
  }
  return {
    ...(ids ? { ids } : {}),
    ...(prefixes ? { prefixes } : {}),
    ...(platform ? { platform: platform as ShapedPlatform } : {}),
  };
}
