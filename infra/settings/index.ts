/**
 * The deployment's settings as one table, joined from the wings' own: segmentation, lifecycle,
 * the deployment as a whole, knowledge, intake and outlets (one file each). A setting is
 * declared once, in its wing (`Table`, kinds.ts): from that declaration come the stack props'
 * type ({@link ConvosegSettings}), the validated values' type, the reading and checking
 * ({@link readSettings}), the functions' environment variables ({@link environmentOf}) and the
 * deploy docs' settings table's test (`test/infra/settings-docs.test.ts`).
 */
import { deployment } from "./deployment.js";
import { intake } from "./intake.js";
import { type Flat, type FunctionName, type Setting, SettingProblem, Table } from "./kinds.js";
import { knowledge } from "./knowledge.js";
import { lifecycle } from "./lifecycle.js";
import { outlets } from "./outlets.js";
import { segmentation } from "./segmentation.js";

export type { FunctionName, Setting } from "./kinds.js";
export type { ExtractorSetting } from "./knowledge.js";
export { tickTimeoutMs } from "./segmentation.js";

/**
 * Every setting, in the order they are read: a setting's rules see the settings above it (the
 * table's types let them name no other).
 */
const TABLE = new Table()
  .with(segmentation)
  .with(lifecycle)
  .with(deployment)
  .with(knowledge)
  .with(intake)
  .with(outlets);

type Declared = typeof TABLE extends Table<infer V, infer P> ? { values: V; props: P } : never;

/**
 * What a deployment may configure. Each setting comes from the stack props, else from CDK
 * context under the same name (`cdk deploy -c settle=12h`), else from its default; see each
 * one's declaration in its wing (infra/settings/) and the deploy docs' table.
 */
export type ConvosegSettings = Flat<Declared["props"]>;
export type SettingName = keyof ConvosegSettings & string;
/** Each setting's value once read and checked: durations in milliseconds, absent ones undefined. */
export type SettingValues = Flat<Declared["values"]>;

export const SETTINGS: readonly Setting[] = TABLE.rows;

/** A setting at fault, and what is wrong with its value. */
export interface SettingFault {
  setting: SettingName;
  problem: string;
}

/** Thrown by a rule that needs a setting whose own value was refused: it is not run. */
const UNREAD = Symbol("unread");

/**
 * Reads every setting in the table's order: `given(name)` is its value (undefined: its default),
 * then its rules run over it and the settings above. Every problem is reported, not only the
 * first; a setting refused is left out of the rules that would need it (they would only repeat
 * it). A setting's fault may name another (`openaiBaseUrl` must be set, says `extractor`'s
 * group): it is the one reported.
 */
export function readSettings(
  given: (name: SettingName) => unknown,
): { values: SettingValues; faults: [] } | { values?: undefined; faults: SettingFault[] } {
  const values: Record<string, unknown> = {};
  const refused = new Set<string>();
  const faults: SettingFault[] = [];
  const view = new Proxy(values, {
    get: (target, key) => {
      if (typeof key === "string" && refused.has(key)) throw UNREAD;
      return target[key as string];
    },
  });
  const attempt = (name: string, step: () => void): boolean => {
    try {
      step();
      return true;
    } catch (error) {
      if (error === UNREAD) return false;
      if (!(error instanceof SettingProblem)) throw error;
      faults.push({ setting: (error.setting ?? name) as SettingName, problem: error.message });
      return false;
    }
  };
  for (const { name, read, check } of SETTINGS) {
    const ok =
      attempt(name, () => {
        values[name] = read(given(name as SettingName), view);
      }) &&
      (check === undefined || attempt(name, () => check(view)));
    if (!ok) refused.add(name);
  }
  return faults.length > 0 ? { faults } : { values: values as SettingValues, faults: [] };
}

/**
 * The variables `values` set in function `fn`'s environment, as each setting declares (a value
 * undefined or null sets none).
 */
export function environmentOf(fn: FunctionName, values: SettingValues): Record<string, string> {
  const environment: Record<string, string> = {};
  for (const { name, env } of SETTINGS) {
    const variable = env?.[fn];
    if (variable === undefined) continue;
    const value = (values as Record<string, unknown>)[name];
    if (typeof variable === "string") {
      if (value !== undefined && value !== null) environment[variable] = String(value);
    } else {
      const text = variable.value(value as never);
      if (text !== undefined) environment[variable.variable] = text;
    }
  }
  return environment;
}

/** The setting whose value becomes `variable` in function `fn`'s environment, if any. */
export function settingOf(fn: FunctionName, variable: string): SettingName | undefined {
  const row = SETTINGS.find(({ env }) => {
    const declared = env?.[fn];
    return (typeof declared === "string" ? declared : declared?.variable) === variable;
  });
  return row?.name as SettingName | undefined;
}
