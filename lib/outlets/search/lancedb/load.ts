/**
 * LanceDB's native module, loaded at first use: a function that keeps no index never loads it,
 * so a deployment without search needs no layer holding its binary.
 */
import { availableParallelism } from "node:os";
import type * as Lance from "@lancedb/lancedb";

/**
 * Lance sizes its compute pool by the cores; with 2 (a small machine, a Lambda of under 3.5 GB)
 * building a full-text index of a few hundred thousand documents waits on itself forever
 * (measured here: 228k messages and conversations). Four threads finish it; a person's own
 * setting stands.
 */
const MIN_LANCE_THREADS = 4;

let loading: Promise<typeof Lance> | undefined;

export function lance(): Promise<typeof Lance> {
  process.env.LANCE_CPU_THREADS ??= String(Math.max(MIN_LANCE_THREADS, availableParallelism()));
  // Its native log goes to stderr, where a command's own lines are: only its errors, unless a
  // person asks for more (training a vector index warns of empty clusters, which is no fault).
  process.env.LANCEDB_LOG ??= "error";
  loading ??= import("@lancedb/lancedb");
  return loading;
}
