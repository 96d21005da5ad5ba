/**
 * The results table's schema. Its key and TTL attribute names and its definition, what the CDK
 * stack and table set-up import. The items it holds (v1) are `./items.ts`; the sort key prefixes
 * of a channel's term statistics are exported for whoever erases derived data, and the result and
 * topic index keys for readers that page over them (lib/outlets/api).
 */
export { DEPLOYMENT_PARTITION, resultItemKey, TOPIC_PREFIX } from "./items.js";
export {
  RESULTS_PARTITION_KEY,
  RESULTS_SORT_KEY,
  RESULTS_TTL_ATTRIBUTE,
  resultsTableDefinition,
} from "./table.js";
