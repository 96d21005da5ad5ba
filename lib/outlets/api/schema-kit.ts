/**
 * What every API body schema is made with: the registry that names each one for the OpenAPI
 * document, and the shared field shapes.
 */
import { z } from "zod";

/** Each schema with the component name the OpenAPI document gives it. */
export const apiSchemas = z.registry<{ id: string; description?: string }>();

export const named = <T extends z.ZodType>(schema: T, id: string, description: string): T => {
  apiSchemas.add(schema, { id, description });
  return schema;
};

export const epochMs = z.number().int().describe("epoch milliseconds");
