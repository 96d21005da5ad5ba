/**
 * `STATS_OPT_OUT`: the people the report's and the digest's health figures never name among the
 * answerers, as the deployed API's `apiStatsOptOut` setting does there. Names or user ids, any
 * case, comma-separated, or a JSON array of them as the deployed functions get it.
 */
export function statsOptOut(value: string | undefined = process.env.STATS_OPT_OUT): string[] {
  if (value === undefined || value.trim() === "") return [];
  let names: unknown;
  if (value.trim().startsWith("[")) {
    try {
      names = JSON.parse(value);
    } catch {
      // Not JSON after all: a name may begin with a bracket.
    }
  }
  const list = Array.isArray(names) ? names.map(String) : value.split(",");
  return list.map((name) => name.trim()).filter((name) => name !== "");
}
