/**
 * The kinds of setting, and the table they are declared in. Each setting is declared once, by
 * one call on a {@link Table}: its name, how a value is read (its kind, range and default), the
 * rules it must meet with the settings above it, and the function environment variables its
 * value becomes. Its documentation is the comment on that call. The stack props' type
 * (`ConvosegSettings`), the validated values' type, the deploy docs' table test and each
 * function's environment all come from the table; nothing else lists the settings.
 */
import { parseDuration } from "convoseg/duration";

/** A duration as `parseDuration` reads it (`90s`, `5m`, `24h`), or a number of milliseconds. */
export type DurationSetting = string | number;

/** How a setting's value is read: the docs' defaults are compared by kind. */
type SettingKind =
  | "integer"
  | "duration"
  | "choice"
  | "text"
  | "price"
  | "fraction"
  | "flag"
  | "roleArns";

/** The functions whose environment settings become (see {@link Environment}). */
export type FunctionName = "segment" | "extract" | "ingest" | "discord" | "digest";

/**
 * The variable a setting's value becomes in a function's environment: `String(value)`, nothing
 * when the value is undefined or null; or, with `value`, what that gives (undefined: nothing).
 */
type Variable<T> = string | { variable: string; value: (value: T) => string | undefined };
export type Environment<T> = Partial<Record<FunctionName, Variable<T>>>;

/** What is wrong with a value: the setting's own (or, for a rule over several, `setting`'s). */
export class SettingProblem extends Error {
  override readonly name: string = "SettingProblem";
  constructor(
    problem: string,
    readonly setting?: string,
  ) {
    super(problem);
  }
}

export const got = (value: unknown) => `(got ${JSON.stringify(value)})`;
export const fail = (problem: string, setting?: string): never => {
  throw new SettingProblem(problem, setting);
};

/** One row of the table, as the reader sees it. */
export interface Setting {
  readonly name: string;
  readonly kind: SettingKind;
  /** The default as CDK context would give it (`"24h"`, `"500"`); undefined: none. */
  readonly default?: string | number;
  /**
   * Reads the given value (undefined when neither props nor context set it) with the values of
   * the settings above it in the table; throws a {@link SettingProblem}.
   */
  readonly read: (given: unknown, earlier: Values) => unknown;
  /** Rules over this value and those above it, run once it is read; throws a SettingProblem. */
  readonly check?: (values: Values) => void;
  readonly env?: Environment<never>;
}
type Values = Readonly<Record<string, unknown>>;

/** What every kind of setting may add: its rules over the settings above, its variables. */
interface Common<V, T> {
  check?: (values: V) => void;
  env?: Environment<T>;
}

/** What a text setting must match. */
export interface TextRule {
  pattern: RegExp;
  rule: string;
  /** The value may be a key given by mistake: it is not echoed. */
  secret?: boolean;
}

/** A text setting's value: a string when it has a default, else possibly undefined. */
type TextValue<D> = D extends string ? string : string | undefined;
/** One object type of an intersection of many (what the stack props and values are shown as). */
export type Flat<T> = { [K in keyof T]: T[K] };
/** The table with setting `N` added: its value a `T` once read, given as an `I`. */
// Intersections, not a mapped type per step: TypeScript flattens `A & B & C` into one list, so
// a hundred settings do not nest a hundred instantiations deep (its limit). Flattened at the end.
type With<V, P, N extends string, T, I> = Table<V & { [K in N]: T }, P & { readonly [K in N]?: I }>;

const PRICE = /^\d+(\.\d+)?$/;

/**
 * The settings in the order they are read, each call adding one: `V` is what the ones so far
 * read to (what a rule of the next one may use), `P` how they are given (the stack props).
 */
export class Table<V = unknown, P = unknown> {
  constructor(readonly rows: readonly Setting[] = []) {}

  /** The settings of a wing added after these. */
  with<W, Q>(wing: (table: Table<V, P>) => Table<W, Q>): Table<W, Q> {
    return wing(this);
  }

  private add<N extends string, T, I>(
    row: Omit<Setting, "read" | "check" | "env"> & {
      read: (given: unknown, earlier: V) => T;
      check?: (values: never) => void;
      env?: Environment<T>;
    },
  ): With<V, P, N, T, I> {
    return new Table([...this.rows, row as unknown as Setting]);
  }

  /** A whole number from `min` to `max`, a decimal string from the command line. */
  integer<N extends string>(
    name: N,
    o: { default: string; min: number; max?: number } & Common<V & Record<N, number>, number>,
  ): With<V, P, N, number, number> {
    return this.add({ name, kind: "integer", ...o, read: (given) => integer(given, o) });
  }

  /** An integer with no default: null when not given. */
  optionalInteger<N extends string>(
    name: N,
    o: { min: number; max: number } & Common<V & Record<N, number | null>, number | null>,
  ): With<V, P, N, number | null, number> {
    const { min, max, check, env } = o;
    return this.add({
      name,
      kind: "integer",
      check,
      env,
      read: (given) => (given === undefined ? null : integer(given, { default: "", min, max })),
    });
  }

  /** A duration, read in milliseconds. */
  duration<N extends string>(
    name: N,
    o: { default: string } & Common<V & Record<N, number>, number>,
  ): With<V, P, N, number, DurationSetting> {
    return this.add({
      name,
      kind: "duration",
      ...o,
      read: (given) => {
        const text = given === undefined ? o.default : given;
        if (typeof text !== "string" && typeof text !== "number") {
          return fail(`must be a duration such as 90s, 15m or 24h ${got(text)}`);
        }
        try {
          return parseDuration(String(text), name);
        } catch (error) {
          return fail((error as Error).message.replace(`${name} `, ""));
        }
      },
    });
  }

  /** One of `options`. */
  choice<N extends string, const O extends string>(
    name: N,
    o: { options: readonly O[]; default: NoInfer<O> } & Common<V & Record<N, O>, O>,
  ): With<V, P, N, O, O> {
    const { options, default: fallback } = o;
    return this.add({
      name,
      kind: "choice",
      ...o,
      read: (given) => {
        if (given === undefined) return fallback;
        if (!options.includes(given as O)) {
          const allowed =
            options.length > 2 ? `one of ${options.join(", ")}` : options.join(" or ");
          fail(`must be ${allowed} ${got(given)}`);
        }
        return given as O;
      },
    });
  }

  /**
   * A string matching a rule, which may depend on the settings above. When not given: what
   * `fallback` says if there is one, else `default`, else undefined.
   */
  text<N extends string, D extends string | undefined = undefined>(
    name: N,
    o: {
      rule: TextRule | ((earlier: V) => TextRule);
      default?: D;
      fallback?: (earlier: V) => string;
    } & Common<V & Record<N, TextValue<D>>, TextValue<D>>,
  ): With<V, P, N, TextValue<D>, string> {
    const { rule, fallback } = o;
    return this.add<N, TextValue<D>, string>({
      name,
      kind: "text",
      ...o,
      read: (given, earlier) => {
        if (given === undefined) return (fallback?.(earlier) ?? o.default) as TextValue<D>;
        const { pattern, rule: what, secret } = typeof rule === "function" ? rule(earlier) : rule;
        if (typeof given !== "string" || !pattern.test(given)) {
          fail(
            secret ? `must be ${what} (the value is not shown)` : `must be ${what} ${got(given)}`,
          );
        }
        return given as TextValue<D>;
      },
    });
  }

  /** USD per million tokens: a non-negative number up to `max` (a decimal string from the command line). */
  price<N extends string>(
    name: N,
    o: { default: number; max: number } & Common<V & Record<N, number>, number>,
  ): With<V, P, N, number, number> {
    return this.add({
      name,
      kind: "price",
      ...o,
      read: (given) => {
        if (given === undefined) return o.default;
        const n = decimal(given);
        if (!Number.isFinite(n) || n < 0 || n > o.max) {
          fail(`must be USD per million tokens, from 0 to ${o.max} ${got(given)}`);
        }
        return n;
      },
    });
  }

  /**
   * A share, a decimal string from the command line: above 0 (from 0 with `zero`) and up to 1
   * (below 1 without `one`).
   */
  fraction<N extends string>(
    name: N,
    o: { default: number; zero: boolean; one: boolean } & Common<V & Record<N, number>, number>,
  ): With<V, P, N, number, number> {
    return this.add({
      name,
      kind: "fraction",
      ...o,
      read: (given) => {
        if (given === undefined) return o.default;
        const n = decimal(given);
        if (!((o.zero ? n >= 0 : n > 0) && (o.one ? n <= 1 : n < 1))) {
          const from = o.zero ? "from 0" : "above 0";
          const to = o.one ? "at most 1" : "below 1";
          fail(`must be a share ${from} and ${to}, such as 0.5 ${got(given)}`);
        }
        return n;
      },
    });
  }

  /** On or off: a boolean in props, `true` or `false` in CDK context. */
  flag<N extends string>(
    name: N,
    o: { default: boolean } & Common<V & Record<N, boolean>, boolean>,
  ): With<V, P, N, boolean, boolean> {
    return this.add({
      name,
      kind: "flag",
      ...o,
      default: String(o.default),
      read: (given) => {
        if (given === undefined) return o.default;
        if (given === true || given === "true") return true;
        if (given === false || given === "false") return false;
        return fail(`must be true or false ${got(given)}`);
      },
    });
  }

  /** A list of IAM role ARNs: an array in props, comma-separated in CDK context. */
  roleArns<N extends string>(
    name: N,
    o: { pattern: RegExp } & Common<V & Record<N, string[]>, string[]>,
  ): With<V, P, N, string[], readonly string[]> {
    return this.add({
      name,
      kind: "roleArns",
      ...o,
      read: (given) => {
        if (given === undefined) return [];
        const list = typeof given === "string" ? given.split(",").map((v) => v.trim()) : given;
        if (
          !Array.isArray(list) ||
          !list.every((v) => typeof v === "string" && o.pattern.test(v))
        ) {
          fail(`must be IAM role ARNs (arn:aws:iam::<account>:role/<name>) ${got(given)}`);
        }
        return [...(list as string[])];
      },
    });
  }
}

function integer(given: unknown, o: { default: string; min: number; max?: number }): number {
  const text = String(given ?? o.default);
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n) || n < o.min || n > (o.max ?? n)) {
    const range = o.max === undefined ? `>= ${o.min}` : `from ${o.min} to ${o.max}`;
    fail(`must be an integer ${range} ${got(given)}`);
  }
  return n;
}

const decimal = (given: unknown) =>
  typeof given === "number" ? given : PRICE.test(String(given)) ? Number(given) : Number.NaN;

// What several wings' settings share.

export const MINUTE_MS = 60_000;
export const DAY_MS = 86_400_000;
export const LAMBDA_MAX_TIMEOUT_MS = 15 * 60_000;
/** Lambda's bounds on an SQS event source's maximum concurrency. */
export const EVENT_SOURCE_CONCURRENCY = { min: 2, max: 1000 };
/** SQS queue names, leaving room for the `-dlq` suffix. */
export const QUEUE_NAME = /^[A-Za-z0-9_-]{1,71}$/;
export const SECRET_ARN =
  /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[A-Za-z0-9/_+=.@-]{1,512}$/;

/** A schedule EventBridge can run as a rate: whole minutes from 1m to 60m. */
export function wholeMinutes(ms: number): void {
  if (ms % MINUTE_MS !== 0 || ms < MINUTE_MS || ms > 60 * MINUTE_MS) {
    fail(`must be whole minutes from 1m to 60m (EventBridge rates) ${got(ms)}`);
  }
}
