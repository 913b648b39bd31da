// Elicitation shapes: a tool (an MCP server, through its tool) asks the user for input in the middle of a call.
// They follow MCP's form elicitation: a flat object schema of primitive fields, and an answer that accepts (with
// the fields), declines or cancels. One source for the wire, the session object and the MCP client.
import { z } from "zod";

const Choice = z.object({ const: z.string(), title: z.string() });

/** One field the user is asked for: a string (maybe of a format or an enum), a number, a boolean, a multi-select. */
export const ElicitationField = z.object({
  type: z.enum(["string", "number", "integer", "boolean", "array"]),
  title: z.string().optional(),
  description: z.string().optional(),
  format: z.string().optional(),
  enum: z.array(z.string()).optional(),
  enumNames: z.array(z.string()).optional(),
  oneOf: z.array(Choice).optional(),
  items: z
    .object({
      type: z.literal("string").optional(),
      enum: z.array(z.string()).optional(),
      anyOf: z.array(Choice).optional(),
    })
    .optional(),
  minLength: z.number().optional(),
  maxLength: z.number().optional(),
  minimum: z.number().optional(),
  maximum: z.number().optional(),
  minItems: z.number().optional(),
  maxItems: z.number().optional(),
  default: z.union([z.string(), z.number(), z.boolean(), z.array(z.string())]).optional(),
});

/** What the user is asked for: an object of fields, some required. */
export const ElicitationSchema = z.object({
  type: z.literal("object"),
  properties: z.record(z.string(), ElicitationField),
  required: z.array(z.string()).optional(),
});
export type ElicitationSchema = z.infer<typeof ElicitationSchema>;

export const ElicitationContent = z.record(
  z.string(),
  z.union([z.string(), z.number(), z.boolean(), z.array(z.string())]),
);

/** The user's answer: accept (with the fields), decline, or cancel. */
export const ElicitationAnswer = z.strictObject({
  action: z.enum(["accept", "decline", "cancel"]),
  content: ElicitationContent.optional(),
});
export type ElicitationAnswer = z.infer<typeof ElicitationAnswer>;
