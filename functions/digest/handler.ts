/** The scheduled digest (EventBridge): see lambda.ts. */
import { digestLambda } from "./lambda.js";
import { wiring } from "./wiring.js";

/** @public The Lambda runtime calls it: infra names this file as the function's entry. */
export const handler = digestLambda(wiring);
