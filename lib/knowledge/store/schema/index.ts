/**
 * The results table's schema. Its key and TTL attribute names and its definition, what the CDK
 * stack and table set-up import. The items it holds (v1) are `./items.ts` (what each kind holds
 * and how it is redacted and erased: the registry, `lib/knowledge/kinds.ts`); the result and topic
 * index keys are exported for readers that page over them (lib/outlets/api), the deployment's
 * partition and the erasure audit's prefix for the erasure.
 */
export { CORRECTION_ATTRIBUTES } from "../correction-item.js";
export {
  DEPLOYMENT_PARTITION,
  ERASURE_AUDIT_PREFIX,
  resultItemKey,
  TOPIC_PREFIX,
} from "./items.js";
export {
  RESULTS_PARTITION_KEY,
  RESULTS_SORT_KEY,
  RESULTS_TTL_ATTRIBUTE,
  resultsTableDefinition,
} from "./table.js";
